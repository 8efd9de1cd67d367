package org.jdlpack.onnxruntime;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtSession;
import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLPackStats;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.testsupport.ChildJvm;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * An {@link OwnedHostTensor#wrap wrapped} tensor whose memory's arena its caller closes, given to
 * ONNX Runtime through the bridge. The tensor's references cannot keep memory alive that the
 * tensor does not own, so before the first fix the run read or wrote freed memory: SIGSEGV in
 * libc's memcpy under {@code OrtSession.run} (exit 134), for the input and for the output alike,
 * and, with the arena closed while runs were going on, wherever the close landed. The first fix
 * checked the segment before each run and held its scope for the run (ScopeHold, a libc
 * {@code bsearch} comparator upcall); now such memory never reaches ONNX Runtime in place: an
 * input is copied once through the FFM runtime's checks (so a close after it is harmless, and a
 * close during the copy is the FFM runtime's exception), and an output is refused. 16 Mi floats
 * (64 MiB) per tensor: memory that size is unmapped when freed, so a read after the close faults
 * instead of reading stale values. Runs in a child JVM, because the failure mode is the process's
 * death.
 */
@ExtendWith(NothingLeftBehind.class)
class WrappedMemoryCrashTest {

    private static final long N = 1L << 24; // 64 MiB of float32
    private static final long SMALL = 1L << 20; // 4 MiB: still unmapped when freed, and runs short enough to race many

    /** Child JVM: {@code input}, {@code output} or {@code during-runs}. One RESULT line. */
    public static void main(String[] args) throws Exception {
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        OrtBridge ort = OrtBridge.of(env);
        try (OrtSession identity = Models.session(env, "id_float.onnx")) {
            String result = switch (args[0]) {
                case "input" -> {
                    Arena arena = Arena.ofShared();
                    OwnedHostTensor wrapped = OwnedHostTensor.wrap(arena.allocate(N * 4, 256), DLDataType.FLOAT32, new long[] {N}, () -> { });
                    try (OrtInput x = ort.input(wrapped); OrtOutput y = ort.allocateOutput(DLDataType.FLOAT32, N)) {
                        arena.close(); // the caller frees the memory the tensor wraps
                        ort.run(identity, Map.of("x", x), Map.of("y", y)); // reads the input's copy
                        yield x.isCopy() ? "ran over a copy" : "ran in place";
                    } finally {
                        wrapped.close();
                    }
                }
                case "output" -> {
                    Arena arena = Arena.ofShared();
                    OwnedHostTensor wrapped = OwnedHostTensor.wrap(arena.allocate(N * 4, 256), DLDataType.FLOAT32, new long[] {N}, () -> { });
                    try (OwnedHostTensor source = OwnedHostTensor.allocate(DLDataType.FLOAT32, N); OrtInput x = ort.input(source)) {
                        try (OrtOutput y = ort.output(wrapped)) {
                            arena.close(); // ONNX Runtime would write 64 MiB into unmapped memory
                            ort.run(identity, Map.of("x", x), Map.of("y", y));
                            yield "ran";
                        } catch (IllegalArgumentException e) {
                            yield e.getMessage().contains("cannot be an output") ? "refused" : "other: " + e.getMessage();
                        }
                    } finally {
                        wrapped.close();
                    }
                }
                case "during-runs" -> duringRuns(ort, identity);
                default -> throw new IllegalArgumentException(args[0]);
            };
            System.out.println("RESULT " + result + " exports=" + DLPackStats.liveExports() + " owners=" + DLPackStats.liveExportOwners());
        }
    }

    /**
     * One thread makes an input of a wrapped tensor and runs the identity model over it, in a
     * loop; another closes the tensor's arena while it does. The close lands during a copy (the
     * FFM runtime's {@link IllegalStateException}), before one ({@code input} refuses, naming the
     * tensor), or after one (the run reads the copy): never under ONNX Runtime.
     */
    private static String duringRuns(OrtBridge ort, OrtSession identity) throws Exception {
        Arena arena = Arena.ofShared();
        OwnedHostTensor in = OwnedHostTensor.wrap(arena.allocate(SMALL * 4, 256), DLDataType.FLOAT32, new long[] {SMALL}, () -> { });
        AtomicLong runs = new AtomicLong();
        String ending;
        try (OrtOutput y = ort.allocateOutput(DLDataType.FLOAT32, SMALL)) {
            Thread closer = Thread.ofPlatform().start(() -> {
                while (runs.get() < 20) {
                    Thread.onSpinWait(); // let some runs go first
                }
                arena.close();
            });
            try {
                while (true) {
                    try (OrtInput x = ort.input(in)) {
                        ort.run(identity, Map.of("x", x), Map.of("y", y));
                    }
                    runs.incrementAndGet();
                }
            } catch (IllegalStateException closed) {
                ending = "refused";
                System.out.println("ended by: " + closed.getMessage());
            }
            closer.join();
        } finally {
            in.close();
        }
        System.out.println("runs=" + runs);
        return ending;
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"input", "output", "during-runs"})
    void aWrappedTensorsClosedArenaIsNeverReadByOnnxRuntime(String scenario) {
        ChildJvm.Outcome outcome = ChildJvm.create().options("-Xmx256m").timeoutSeconds(180).run(WrappedMemoryCrashTest.class, scenario);
        assertThat(outcome.exitCode()).as(outcome.output()).isZero();
        String expected = switch (scenario) {
            case "input" -> "ran over a copy";
            default -> "refused";
        };
        assertThat(outcome.result()).as(outcome.output()).isEqualTo("RESULT " + expected + " exports=0 owners=0");
    }
}
