package org.jdlpack.examples;

import java.io.PrintStream;
import java.lang.foreign.MemorySegment;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.TensorLayout;
import org.jdlpack.cuda.CudaMemory;
import org.jdlpack.cuda.CudaRuntime;
import org.jdlpack.cuda.CudaStream;
import org.jdlpack.cuda.StreamContract;

/**
 * Recipe: handing a CUDA tensor to a native consumer that will use it on its own stream. The
 * producer makes the consumer's stream wait for the work it queued (an event, not a device-wide
 * synchronisation), then hands over the pointer; the consumer calls the deleter when done, on any
 * thread, and jdlpack frees the device memory then.
 */
public final class CudaRecipe {

    private CudaRecipe() {
    }

    /**
     * Runs the recipe.
     *
     * @param args ignored
     */
    public static void main(String[] args) {
        run(System.out);
    }

    /**
     * Runs the recipe, narrating to {@code out}.
     *
     * @param out where the story goes
     */
    public static void run(PrintStream out) {
        out.println(CudaRuntime.status());
        if (!CudaRuntime.hasDevice()) {
            out.println("No CUDA device here: nothing to hand over.");
            return;
        }
        try (CudaStream producer = CudaStream.create(0); CudaStream consumer = CudaStream.create(0)) {
            CudaMemory memory = CudaMemory.allocate(CudaMemory.Kind.DEVICE, 0, 1024 * 4);
            // ... kernels writing `memory` would be queued on `producer` here ...
            StreamContract.prepareForConsumer(producer, consumer.handle());
            MemorySegment managed = memory.export(TensorLayout.of(DLDataType.FLOAT32, 1024)).consume();
            memory.close(); // the consumer's export keeps the memory alive
            out.println("Handed " + Long.toHexString(managed.address()) + " to the consumer, ordered after the producer's stream");
            // A real consumer calls the deleter when it is done; this one is done at once.
            ImportedTensor.discard(ManagedTensorKind.VERSIONED, managed);
            out.println("Deleter ran; device memory freed: " + (memory.references() == 0));
        }
    }
}
