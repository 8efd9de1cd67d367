package org.jdlpack.onnxruntime;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;

import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.cpu.HostTensorPool;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.testsupport.ChildJvm;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Runs entered with the stack nearly full: the thread must get its StackOverflowError in Java,
 * and a run must give back everything it held, so that the guarded session's close does not wait
 * for ever. Found by review when each run sat inside a libc {@code bsearch} comparator upcall
 * (ScopeHold, since removed): a server running ONNX Runtime over pooled tensors at the bottom of a
 * deep recursion died with exit 134, the error thrown in the upcall's first frames. Runs in a child
 * JVM with a small stack, at every level of a recursion down to the stack's end.
 */
@ExtendWith(NothingLeftBehind.class)
class RunStackCrashTest {

    private static final int ROUNDS = 10;

    private static OrtBridge ort;
    private static GuardedSession session;
    private static OrtInput x;
    private static OrtOutput y;
    private static long runs;

    private static void runAtEveryLevel() throws OrtException {
        try {
            ort.run(session, Map.of("x", x), Map.of("y", y));
            runs++;
        } catch (StackOverflowError expected) {
            // the point: thrown in Java, with everything given back
        }
        runAtEveryLevel();
    }

    /** Child JVM: {@value #ROUNDS} recursions to the stack's end, a run at every level, then the session's close. */
    public static void main(String[] args) throws Exception {
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        ort = OrtBridge.of(env);
        try (HostTensorPool pool = HostTensorPool.create(1 << 16);
             OwnedHostTensor input = pool.take(DLDataType.FLOAT32, 2, 4);
             OwnedHostTensor output = pool.take(DLDataType.FLOAT32, 2, 3)) {
            session = GuardedSession.of(Models.session(env, "tiny.onnx"));
            x = ort.input(input);
            y = ort.output(output);
            int overflows = 0;
            for (int round = 0; round < ROUNDS; round++) {
                try {
                    runAtEveryLevel();
                } catch (StackOverflowError e) {
                    overflows++;
                }
            }
            long inFlight = session.runsInFlight();
            session.close(); // waits for runs in flight: one left held would hang here (the parent's timeout)
            x.close();
            y.close();
            System.out.println("runs=" + runs);
            System.out.println("RESULT overflows=" + overflows + " inFlight=" + inFlight + " ran=" + (runs > 0));
        }
    }

    @Test
    void aRunNearTheEndOfTheStackThrowsInJavaAndGivesEverythingBack() {
        ChildJvm.Outcome outcome = ChildJvm.create().options("-Xss512k").timeoutSeconds(120).run(RunStackCrashTest.class);
        assertThat(outcome.exitCode()).as(outcome.output()).isZero();
        assertThat(outcome.result()).as(outcome.output()).isEqualTo("RESULT overflows=" + ROUNDS + " inFlight=0 ran=true");
    }
}
