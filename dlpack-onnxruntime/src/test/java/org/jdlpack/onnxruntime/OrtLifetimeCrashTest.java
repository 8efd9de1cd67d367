package org.jdlpack.onnxruntime;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteOrder;
import java.util.Map;

import ai.onnxruntime.OnnxJavaType;
import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtSession;
import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLPackStats;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.testsupport.CPeer;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.testsupport.ChildJvm;
import org.jdlpack.testsupport.PeerTensor;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The wrong order (the tensor's owner closes it first, then the session runs) in a child JVM, with
 * a 4 MiB tensor: {@code calloc} maps memory that size and {@code free} unmaps it, so ONNX Runtime
 * reading or writing it afterwards faults instead of reading stale values. Wired by hand (an
 * {@code OnnxTensor} over {@code hostSegment().asByteBuffer()}), the child dies of SIGSEGV in
 * libonnxruntime (exit 134); through {@link OrtBridge} the memory outlives the owner's close and
 * the values are right. (The child's exit status after the JVM's fatal error handler is 1 here.)
 */
@ExtendWith(NothingLeftBehind.class)
class OrtLifetimeCrashTest {

    private static final int ROWS = 1 << 18; // x [ROWS, 4] float32: 4 MiB

    /** Child JVM: {@code naive-import}, {@code naive-owned}, {@code naive-output} or the {@code bridge-} twins. One RESULT line. */
    public static void main(String[] args) throws Exception {
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        CPeer peer = CPeer.get();
        try (OrtSession tiny = Models.session(env, "tiny.onnx")) {
            OrtBridge ort = OrtBridge.of(env);
            float y0;
            float yLast;
            switch (args[0]) {
                case "naive-import", "bridge-import" -> {
                    // The peer's float elements are 0, 1, 2, ...
                    CPeer.Produced produced = peer.make(PeerTensor.versioned().shape(ROWS, 4));
                    ImportedTensor imported = ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer());
                    try (OwnedHostTensor y = OwnedHostTensor.allocate(DLDataType.FLOAT32, ROWS, 3)) {
                        if (args[0].startsWith("naive")) {
                            OnnxTensor x = OnnxTensor.createTensor(env, imported.hostSegment().asByteBuffer().order(ByteOrder.nativeOrder()),
                                    new long[] {ROWS, 4}, OnnxJavaType.FLOAT);
                            OnnxTensor out = OnnxTensor.createTensor(env, y.host().segment().asByteBuffer().order(ByteOrder.nativeOrder()),
                                    new long[] {ROWS, 3}, OnnxJavaType.FLOAT);
                            imported.close();  // the wrong order: the producer's deleter runs...
                            peer.reset();      // ...and the producer frees the memory, as a real one does in its deleter
                            tiny.run(Map.of("x", x), Map.of("y", out)).close();
                            x.close();
                            out.close();
                            y0 = y.host().getFloat(0);
                            yLast = y.host().getFloat(ROWS * 3L - 1);
                        } else {
                            try (OrtInput x = ort.input(imported); OrtOutput out = ort.output(y)) {
                                imported.close(); // the same wrong order: does nothing, the input owns the import
                                if (peer.deleterCalls(produced.id()) > 0) {
                                    peer.reset();
                                }
                                ort.run(tiny, Map.of("x", x), Map.of("y", out));
                                y0 = y.host().getFloat(0);
                                yLast = y.host().getFloat(ROWS * 3L - 1);
                            }
                        }
                    }
                }
                case "naive-owned", "bridge-owned" -> {
                    OwnedHostTensor input = OwnedHostTensor.allocate(DLDataType.FLOAT32, ROWS, 4);
                    for (long i = 0; i < ROWS * 4L; i++) {
                        input.host().setFloat(i, i);
                    }
                    try (OwnedHostTensor y = OwnedHostTensor.allocate(DLDataType.FLOAT32, ROWS, 3)) {
                        if (args[0].startsWith("naive")) {
                            OnnxTensor x = OnnxTensor.createTensor(env, input.host().segment().asByteBuffer().order(ByteOrder.nativeOrder()),
                                    new long[] {ROWS, 4}, OnnxJavaType.FLOAT);
                            OnnxTensor out = OnnxTensor.createTensor(env, y.host().segment().asByteBuffer().order(ByteOrder.nativeOrder()),
                                    new long[] {ROWS, 3}, OnnxJavaType.FLOAT);
                            input.close(); // frees the memory: nothing else holds it
                            tiny.run(Map.of("x", x), Map.of("y", out)).close();
                            x.close();
                            out.close();
                        } else {
                            try (OrtInput x = ort.input(input); OrtOutput out = ort.output(y)) {
                                input.close(); // the memory lives on: the input holds a reference
                                ort.run(tiny, Map.of("x", x), Map.of("y", out));
                            }
                        }
                        y0 = y.host().getFloat(0);
                        yLast = y.host().getFloat(ROWS * 3L - 1);
                    }
                }
                case "naive-output", "bridge-output" -> {
                    OwnedHostTensor y = OwnedHostTensor.allocate(DLDataType.FLOAT32, ROWS, 3);
                    try (OwnedHostTensor input = OwnedHostTensor.allocate(DLDataType.FLOAT32, ROWS, 4)) {
                        for (long i = 0; i < ROWS * 4L; i++) {
                            input.host().setFloat(i, i);
                        }
                        if (args[0].startsWith("naive")) {
                            OnnxTensor x = OnnxTensor.createTensor(env, input.host().segment().asByteBuffer().order(ByteOrder.nativeOrder()),
                                    new long[] {ROWS, 4}, OnnxJavaType.FLOAT);
                            OnnxTensor out = OnnxTensor.createTensor(env, y.host().segment().asByteBuffer().order(ByteOrder.nativeOrder()),
                                    new long[] {ROWS, 3}, OnnxJavaType.FLOAT);
                            y.close(); // ONNX Runtime now writes 3 MiB into freed memory
                            tiny.run(Map.of("x", x), Map.of("y", out)).close();
                            x.close();
                            out.close();
                            y0 = Float.NaN;
                            yLast = Float.NaN;
                        } else {
                            try (OrtInput x = ort.input(input); OrtOutput out = ort.output(y)) {
                                y.close(); // the memory lives on: the output holds a reference
                                ort.run(tiny, Map.of("x", x), Map.of("y", out));
                                y0 = out.host().getFloat(0);
                                yLast = out.host().getFloat(ROWS * 3L - 1);
                            }
                        }
                    }
                }
                default -> throw new IllegalArgumentException(args[0]);
            }
            System.out.println("RESULT y0=" + y0 + " yLast=" + yLast + " owned=" + DLPackStats.ownedManagedTensors()
                    + " exports=" + DLPackStats.liveExports());
        }
    }

    /** tiny.onnx of rows 0 and ROWS-1 of x = 0, 1, 2, ...: y0 and the last value of y. */
    private static String expected() {
        float[] first = Models.tiny(new float[] {0, 1, 2, 3});
        long base = (ROWS - 1) * 4L;
        float[] last = Models.tiny(new float[] {base, base + 1, base + 2, base + 3});
        return "RESULT y0=" + first[0] + " yLast=" + last[2] + " owned=0 exports=0";
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"bridge-import", "bridge-owned", "bridge-output"})
    void theOwnersEarlyCloseLeavesOnnxRuntimesMemoryAlone(String scenario) {
        ChildJvm.Outcome outcome = ChildJvm.create().options("-Xmx256m").run(OrtLifetimeCrashTest.class, scenario);
        assertThat(outcome.exitCode()).as(outcome.output()).isZero();
        assertThat(outcome.result()).as(outcome.output()).isEqualTo(expected());
    }

    /**
     * The same wrong order wired by hand, to show what the bridge prevents: ONNX Runtime reads (or
     * writes) unmapped memory and the child dies (here every time: SIGSEGV in libonnxruntime.so,
     * reading the input at +0xe77cd4, writing the output at +0x5ce8e6), or, were the memory still
     * mapped, it would compute from freed memory and the values would be wrong.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"naive-import", "naive-owned", "naive-output"})
    void wiredByHandTheSameOrderCrashesOrComputesGarbage(String scenario) {
        ChildJvm.Outcome outcome = ChildJvm.create().options("-Xmx256m").run(OrtLifetimeCrashTest.class, scenario);
        System.out.println(scenario + ": exit " + outcome.exitCode() + " " + outcome.result() + outcome.output().lines()
                .filter(l -> l.contains("SIGSEGV") || l.contains("Problematic frame") || l.startsWith("# C ")).toList());
        // The demonstration needs free() to unmap the 4 MiB (glibc does for a block that size unless
        // earlier frees raised its mmap threshold); if the memory stayed mapped and unchanged there is
        // nothing to show, which is not the bridge's failure.
        Assumptions.assumeTrue(outcome.exitCode() != 0 || !outcome.result().equals(expected()),
                "the freed memory stayed mapped and unchanged in this child: " + outcome.result());
        assertThat(outcome.output()).containsAnyOf("SIGSEGV", "RESULT");
    }
}
