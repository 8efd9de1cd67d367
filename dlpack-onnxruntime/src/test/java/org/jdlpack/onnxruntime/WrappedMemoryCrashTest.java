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
 * ONNX Runtime through the bridge. The tensor's references (the bridge's export) cannot keep
 * memory alive that the tensor does not own, so before the fix the run read or wrote freed memory:
 * SIGSEGV in libc's memcpy under {@code OrtSession.run} (exit 134), for the input and for the
 * output alike, and, with the arena closed while runs were going on, wherever the close landed.
 * Now a run checks the wrapped segment first (a clean {@link IllegalStateException} naming the
 * input or output) and holds its scope for its duration (a close on another thread meanwhile
 * throws "acquired" and frees nothing). 16 Mi floats (64 MiB) per tensor: memory that size is
 * unmapped when freed, so a read after the close faults instead of reading stale values. Runs in
 * a child JVM, because the failure mode is the process's death.
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
                        yield refusal(() -> ort.run(identity, Map.of("x", x), Map.of("y", y)), "OrtInput[");
                    } finally {
                        wrapped.close();
                    }
                }
                case "output" -> {
                    Arena arena = Arena.ofShared();
                    OwnedHostTensor wrapped = OwnedHostTensor.wrap(arena.allocate(N * 4, 256), DLDataType.FLOAT32, new long[] {N}, () -> { });
                    try (OwnedHostTensor source = OwnedHostTensor.allocate(DLDataType.FLOAT32, N);
                         OrtInput x = ort.input(source); OrtOutput y = ort.output(wrapped)) {
                        arena.close(); // ONNX Runtime would write 64 MiB into unmapped memory
                        yield refusal(() -> ort.run(identity, Map.of("x", x), Map.of("y", y)), "OrtOutput[");
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

    @FunctionalInterface
    private interface Run {
        void run() throws Exception;
    }

    /** {@return how the run ended: refused naming {@code who} and the closed arena, or something else} */
    private static String refusal(Run run, String who) throws Exception {
        try {
            run.run();
            return "ran";
        } catch (IllegalStateException e) {
            return e.getMessage().startsWith(who) && e.getMessage().contains("wraps a segment whose arena was closed")
                    ? "refused" : "other: " + e.getMessage();
        }
    }

    /**
     * One thread runs the identity model over a wrapped input and a wrapped output in a loop; another
     * closes their arena while it does, retrying while a run holds it. The close lands between two
     * runs (the next one is refused) or is refused itself: never under ONNX Runtime.
     */
    private static String duringRuns(OrtBridge ort, OrtSession identity) throws Exception {
        Arena arena = Arena.ofShared();
        OwnedHostTensor in = OwnedHostTensor.wrap(arena.allocate(SMALL * 4, 256), DLDataType.FLOAT32, new long[] {SMALL}, () -> { });
        OwnedHostTensor out = OwnedHostTensor.wrap(arena.allocate(SMALL * 4, 256), DLDataType.FLOAT32, new long[] {SMALL}, () -> { });
        AtomicLong runs = new AtomicLong();
        AtomicLong closeRefusals = new AtomicLong();
        String ending;
        try (OrtInput x = ort.input(in); OrtOutput y = ort.output(out)) {
            Thread closer = Thread.ofPlatform().start(() -> {
                while (runs.get() < 20) {
                    Thread.onSpinWait(); // let some runs go first
                }
                while (true) {
                    try {
                        arena.close();
                        return;
                    } catch (IllegalStateException acquired) {
                        closeRefusals.incrementAndGet(); // a run holds the memory: try again
                    }
                }
            });
            ending = refusal(() -> {
                while (true) {
                    ort.run(identity, Map.of("x", x), Map.of("y", y));
                    runs.incrementAndGet();
                }
            }, "Ort");
            closer.join();
        } finally {
            in.close();
            out.close();
        }
        System.out.println("runs=" + runs + " closeRefusals=" + closeRefusals);
        return ending;
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"input", "output", "during-runs"})
    void aWrappedTensorsClosedArenaIsRefusedNeverReadByOnnxRuntime(String scenario) {
        ChildJvm.Outcome outcome = ChildJvm.create().options("-Xmx256m").timeoutSeconds(180).run(WrappedMemoryCrashTest.class, scenario);
        assertThat(outcome.exitCode()).as(outcome.output()).isZero();
        assertThat(outcome.result()).as(outcome.output()).isEqualTo("RESULT refused exports=0 owners=0");
    }
}
