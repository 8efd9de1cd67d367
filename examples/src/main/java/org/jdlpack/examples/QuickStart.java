package org.jdlpack.examples;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED;

import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicReference;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLPackStats;
import org.jdlpack.abi.ExportOwner;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.ExportedTensor;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.TensorSpec;
import org.jdlpack.cpu.HostTensorView;
import org.jdlpack.python.PythonException;
import org.jdlpack.python.PythonObject;
import org.jdlpack.python.PythonRuntime;
import org.jdlpack.python.PythonUnavailableException;
import org.jdlpack.testsupport.CPeer;
import org.jdlpack.testsupport.PeerTensor;

/**
 * The README's quick start: a Java tensor shared with a native library without a copy, in both
 * directions. The "native library" is jdlpack's C test peer, compiled on the fly with gcc.
 */
public final class QuickStart {

    private QuickStart() {
    }

    /**
     * Runs the demo.
     *
     * @param args ignored
     */
    public static void main(String[] args) {
        run(System.out);
    }

    /**
     * Runs the demo, narrating to {@code out}.
     *
     * @param out where the story goes
     */
    public static void run(PrintStream out) {
        CPeer peer = CPeer.get();
        out.println("jdlpack quick start: DLPack tensors shared between Java and C without copying");
        out.println();

        // 1. Java owns some native memory: a 2x3 float32 matrix.
        Arena arena = Arena.ofShared();
        MemorySegment data = arena.allocate(JAVA_FLOAT, 6);
        for (int i = 0; i < 6; i++) {
            data.setAtIndex(JAVA_FLOAT, i, i + 1);
        }
        out.println("1. Java allocated a 2x3 float32 tensor at 0x" + Long.toHexString(data.address()) + ": "
                + Arrays.toString(data.toArray(JAVA_FLOAT)));

        // 2. Export it. The owner closes the arena once Java and every consumer are done with it.
        AtomicReference<String> releasedOn = new AtomicReference<>();
        ExportOwner owner = ExportOwner.of(arena, () -> {
            releasedOn.set(Thread.currentThread().toString());
            arena.close();
        });
        ExportedTensor handle = owner.export(TensorSpec.of(data, DLDataType.FLOAT32, 2, 3));
        MemorySegment managed = handle.consume(); // from here on, C owns this DLManagedTensorVersioned*
        out.println("2. Exported as DLManagedTensorVersioned* 0x" + Long.toHexString(managed.address())
                + "; C reads data pointer 0x" + Long.toHexString(peer.field(managed, false, 10))
                + " (the same memory) and sums it: " + peer.sumF32(managed, false));

        // 3. C writes; Java sees it, because there is only one copy of the data.
        peer.fillF32(managed, false, 10, 10);
        out.println("3. C wrote 10, 20, ... into the tensor; Java now reads " + Arrays.toString(data.toArray(JAVA_FLOAT)));

        // 4. Java is done early; C still holds the export, so the memory stays.
        owner.close();
        out.println("4. Java closed its owner; memory still alive for C: " + data.scope().isAlive());

        // 5. C releases the tensor from a thread of its own.
        peer.deleteOnNewThread(managed, false);
        out.println("5. C called the deleter from a native pthread; Java's release ran on " + releasedOn.get()
                + "; memory alive: " + data.scope().isAlive());

        // 6. The other direction: C produces a tensor, Java imports it and reads it in place.
        CPeer.Produced produced = peer.make(PeerTensor.versioned().shape(2, 3));
        try (ImportedTensor tensor = ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer())) {
            MemorySegment view = tensor.hostSegment();
            float[] values = new float[(int) tensor.layout().elementCount()];
            MemorySegment.copy(view, JAVA_FLOAT_UNALIGNED, 0, values, 0, values.length);
            out.println("6. Imported a C tensor: " + tensor + " -> " + Arrays.toString(values));
        }
        out.println("   Closing it called C's deleter " + peer.deleterCalls(produced.id()) + " time(s)");

        // 7. A NumPy array, read in Java without a copy (NumPy runs inside this JVM, when installed).
        PythonRuntime python = numPyOrNull();
        if (python != null) {
            python.exec("qs = np.arange(6, dtype=np.float32).reshape(2, 3) ** 2");
            try (PythonObject qs = python.get("qs"); ImportedTensor tensor = python.importTensor(qs)) {
                float[] values = new float[6];
                HostTensorView.of(tensor).copyTo(values);
                out.println("7. Read a NumPy array in place: " + tensor.layout().shape().length + "-d, " + Arrays.toString(values)
                        + " (NumPy's data pointer 0x" + Long.toHexString(tensor.dataAddress()) + ")");
            }
            python.exec("del qs");
        } else {
            out.println("7. (NumPy not found: skipping the NumPy part)");
        }
        out.println();
        out.println("Live exports: " + DLPackStats.liveExports() + ", managed tensors Java still owns: "
                + DLPackStats.ownedManagedTensors());
    }

    /** {@return the embedded Python with NumPy imported as np, or null when there is none} */
    static PythonRuntime numPyOrNull() {
        try {
            PythonRuntime python = PythonRuntime.get();
            python.exec("import numpy as np");
            return python;
        } catch (PythonUnavailableException | PythonException e) {
            return null;
        }
    }
}
