package org.jdlpack.onnxruntime;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtSession;
import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLPackStats;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.testsupport.ChildJvm;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Closing the session while bridge runs are in flight on other threads: a shared bridge, three
 * threads running a 1 Mi-float identity model in a loop, the main thread closing the session
 * once both have run. A bare {@link OrtSession}'s close frees its native state under the runs
 * (SIGSEGV in libonnxruntime.so, the JVM dies); a {@link GuardedSession}'s close refuses new
 * runs, waits for those in flight, and only then closes: every run either completed with the
 * right values or was refused before ONNX Runtime saw it. In a child JVM, because the failure mode
 * is the process's death.
 */
@ExtendWith(NothingLeftBehind.class)
class SessionCloseCrashTest {

    private static final long N = 1L << 20;
    /** Runner threads: more make it likelier that the bare session's close lands inside a run. */
    private static final int THREADS = 3;

    /** Child JVM: {@code guarded} or {@code bare}. One RESULT line. */
    public static void main(String[] args) throws Exception {
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        OrtBridge ort = OrtBridge.of(env).shared();
        boolean guarded = args[0].equals("guarded");
        OrtSession session = Models.session(env, "id_float.onnx");
        GuardedSession guard = GuardedSession.of(session);
        AtomicLong runs = new AtomicLong();
        AtomicLong wrong = new AtomicLong();
        AtomicLong refused = new AtomicLong();
        AtomicLong other = new AtomicLong();
        try (OwnedHostTensor source = OwnedHostTensor.allocate(DLDataType.FLOAT32, N); OrtInput x = ort.input(source)) {
            for (long i = 0; i < N; i++) {
                source.host().setFloat(i, i);
            }
            List<Thread> runners = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                runners.add(Thread.ofPlatform().start(() -> {
                    try (OrtOutput y = ort.allocateOutput(DLDataType.FLOAT32, N)) {
                        while (true) {
                            if (guarded) {
                                ort.run(guard, Map.of("x", x), Map.of("y", y));
                            } else {
                                ort.run(session, Map.of("x", x), Map.of("y", y));
                            }
                            if (y.host().getFloat(N - 1) != N - 1) {
                                wrong.incrementAndGet();
                            }
                            y.host().setFloat(N - 1, 0);
                            runs.incrementAndGet();
                        }
                    } catch (IllegalStateException e) {
                        // The guard's refusal, or ONNX Runtime's own for a session closed before the run began.
                        (e.getMessage().startsWith("GuardedSession[clos") || e.getMessage().contains("closed OrtSession") ? refused : other)
                                .incrementAndGet();
                    } catch (Exception e) {
                        other.incrementAndGet();
                        e.printStackTrace();
                    }
                }));
            }
            while (runs.get() < 10) {
                Thread.onSpinWait();
            }
            if (guarded) {
                guard.close(); // waits for the runs in flight
            } else {
                session.close(); // frees the session under them
            }
            for (Thread runner : runners) {
                runner.join();
            }
        }
        System.out.println("runs=" + runs);
        System.out.println("RESULT refused=" + refused + " wrong=" + wrong + " other=" + other + " inFlight=" + guard.runsInFlight()
                + " exports=" + DLPackStats.liveExports() + " owners=" + DLPackStats.liveExportOwners());
    }

    @Test
    void closingAGuardedSessionWaitsForTheRunsInFlight() {
        ChildJvm.Outcome outcome = ChildJvm.create().options("-Xmx256m").timeoutSeconds(180).run(SessionCloseCrashTest.class, "guarded");
        assertThat(outcome.exitCode()).as(outcome.output()).isZero();
        assertThat(outcome.result()).as(outcome.output())
                .isEqualTo("RESULT refused=" + THREADS + " wrong=0 other=0 inFlight=0 exports=0 owners=0");
    }

    /**
     * The same with the bare session, to show what the guard prevents: here the child died (SIGSEGV
     * in libonnxruntime.so+0x24c0f0) in 3 of 5 runs; a close that lands between
     * runs (each thread then gets ONNX Runtime's own "closed OrtSession" refusal) leaves nothing to
     * show, which is not the guard's failure.
     */
    @Test
    void closingABareSessionUnderItsRunsCrashes() {
        // Up to five children: one whose close lands between runs shows nothing, so try again.
        ChildJvm.Outcome outcome = null;
        for (int child = 0; child < 5 && (outcome == null || outcome.exitCode() == 0); child++) {
            outcome = ChildJvm.create().options("-Xmx256m").timeoutSeconds(180).run(SessionCloseCrashTest.class, "bare");
        }
        System.out.println("bare: exit " + outcome.exitCode() + " " + outcome.result() + outcome.output().lines()
                .filter(l -> l.contains("SIGSEGV") || l.contains("Problematic frame") || l.startsWith("# C ") || l.contains("Exception"))
                .toList());
        Assumptions.assumeTrue(outcome.exitCode() != 0, "the close landed between runs in five children: " + outcome.result());
        assertThat(outcome.output()).doesNotContain("RESULT refused=" + THREADS + " wrong=0 other=0");
    }
}
