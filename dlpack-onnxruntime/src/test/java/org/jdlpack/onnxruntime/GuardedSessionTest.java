package org.jdlpack.onnxruntime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;

import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.cpu.OwnedHostTensor;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link GuardedSession}: a run through the bridge holds the session; {@code close()} refuses new
 * runs at once and closes the session only when the runs in flight have returned. A run in flight
 * is played by the bridge's own borrow, so the test decides when it ends. (The crash this
 * prevents, with real concurrent runs: SessionCloseCrashTest.)
 */
@ExtendWith(NothingLeftBehind.class)
class GuardedSessionTest {

    private static final float[] X = {1, 2, 3, 4, 5, 6, 7, 8};
    private static OrtEnvironment env;
    private static OrtBridge ort;

    @BeforeAll
    static void bridge() {
        env = OrtEnvironment.getEnvironment();
        ort = OrtBridge.of(env);
    }

    @Test
    void aCloseRefusesNewRunsAndWaitsForTheOneInFlight() throws Exception {
        GuardedSession guard = GuardedSession.of(Models.session(env, "tiny.onnx"));
        try (OwnedHostTensor source = OwnedHostTensor.copyOf(X, 2, 4);
             OrtInput x = ort.input(source);
             OrtOutput y = ort.allocateOutput(DLDataType.FLOAT32, 2, 3)) {
            ort.run(guard, Map.of("x", x), Map.of("y", y));
            assertThat(guard.runsInFlight()).isZero();

            guard.borrow(); // a run in flight on another thread
            Thread closer = Thread.ofPlatform().start(() -> {
                try {
                    guard.close();
                } catch (OrtException e) {
                    throw new IllegalStateException(e);
                }
            });
            waitFor(() -> closer.getState() == Thread.State.WAITING);
            assertThat(guard.isOpen()).isFalse();
            assertThat(guard.toString()).contains("closing, 1 run(s) in flight");
            assertThatThrownBy(() -> ort.run(guard, Map.of("x", x), Map.of("y", y))).isInstanceOf(IllegalStateException.class)
                    .hasMessageStartingWith("GuardedSession[closing").hasMessageContaining("refused before ONNX Runtime saw it");
            // The session itself is not closed while the run is in flight: ONNX Runtime still runs it.
            ort.run(guard.session(), Map.of("x", x), Map.of("y", y));
            assertThat(closer.isAlive()).as("the close waits for the run in flight").isTrue();

            guard.giveBack(); // the run returns
            closer.join();
            assertThat(guard.toString()).isEqualTo("GuardedSession[closed]");
            assertThatThrownBy(() -> ort.run(guard.session(), Map.of("x", x), Map.of("y", y)))
                    .as("now the session is closed").isInstanceOf(IllegalStateException.class);
            guard.close(); // again: nothing more to do
        }
    }

    /** Two closes waiting for one run: both return once it is closed, and neither closes it twice (failed before). */
    @Test
    void twoClosesWaitingForARunBothReturn() throws Exception {
        GuardedSession guard = GuardedSession.of(Models.session(env, "tiny.onnx"));
        guard.borrow(); // a run in flight on another thread
        java.util.List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
        Thread[] closers = new Thread[2];
        for (int i = 0; i < closers.length; i++) {
            closers[i] = Thread.ofPlatform().start(() -> {
                try {
                    guard.close();
                } catch (Throwable e) {
                    failures.add(e);
                }
            });
        }
        waitFor(() -> closers[0].getState() == Thread.State.WAITING && closers[1].getState() == Thread.State.WAITING);
        guard.giveBack();
        for (Thread closer : closers) {
            closer.join();
        }
        assertThat(failures).isEmpty();
        assertThat(guard.toString()).isEqualTo("GuardedSession[closed]");
    }

    @Test
    void anIdleGuardClosesAtOnceAndCopiedOutputsRunGuardedToo() throws Exception {
        GuardedSession guard = GuardedSession.of(Models.session(env, "nonzero.onnx"));
        try (OwnedHostTensor source = OwnedHostTensor.copyOf(new float[] {0, 1, 0, 2, 3}, 5); OrtInput x = ort.input(source)) {
            try (CopiedOutputs copies = ort.run(guard, Map.of("x", x), Map.of(), java.util.Set.of("y"))) {
                assertThat(copies.get("y").spec().layout().shape()).containsExactly(1, 3);
            }
            guard.close();
            assertThatThrownBy(() -> ort.run(guard, Map.of("x", x), Map.of(), java.util.Set.of("y")))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("was closed");
            assertThat(guard.runsInFlight()).isZero();
        }
    }

    /**
     * Where the caller's code runs inside a run: reading the inputs map, the outputs map, or the set
     * of copied outputs (ONNX Runtime iterates it). Each closes the guard on the run's own thread.
     */
    enum CloseFrom { INPUTS, OUTPUTS, COPIED_OUTPUTS }

    /**
     * A close on the run's own thread, from the caller's map or set the run reads, must not make
     * the run wait for itself (issue 41 item 6: it hung for ever, interrupts did not end it, and
     * the session was never closed). The run reads them before the session is admitted: the close
     * finds no run in flight and closes the session, and the run is refused. The run is made on a
     * thread joined with a deadline, so that a hang fails the test instead of the build.
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.EnumSource(CloseFrom.class)
    void aCloseFromCodeTheRunCallsIsNeverAwaitedByThatRun(CloseFrom where) throws Exception {
        OrtBridge shared = OrtBridge.of(env).shared(); // the run is made on a thread of its own
        GuardedSession guard = GuardedSession.of(Models.session(env, "nonzero.onnx"));
        try (OwnedHostTensor source = OwnedHostTensor.copyOf(new float[] {0, 1, 0, 2, 3}, 5); OrtInput x = shared.input(source)) {
            Runnable close = () -> {
                try {
                    guard.close();
                } catch (OrtException e) {
                    throw new IllegalStateException(e);
                }
            };
            Map<String, OrtInput> inputs = where == CloseFrom.INPUTS ? closingOnRead(Map.of("x", x), close) : Map.of("x", x);
            Map<String, OrtOutput> outputs = where == CloseFrom.OUTPUTS ? closingOnRead(Map.of(), close) : Map.of();
            java.util.Set<String> copied = where == CloseFrom.COPIED_OUTPUTS ? closingOnRead(java.util.Set.of("y"), close)
                    : java.util.Set.of("y");
            java.util.concurrent.atomic.AtomicReference<Throwable> thrown = new java.util.concurrent.atomic.AtomicReference<>();
            Thread run = Thread.ofPlatform().daemon().start(() -> {
                try {
                    shared.run(guard, inputs, outputs, copied).close();
                } catch (Throwable e) {
                    thrown.set(e);
                }
            });
            run.join(Duration.ofSeconds(60));
            assertThat(run.isAlive()).as("the run returned: it did not wait for a close on its own thread (%s)", guard).isFalse();
            assertThat(thrown.get()).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("was closed").hasMessageContaining("refused before ONNX Runtime saw it");
            assertThat(guard.toString()).isEqualTo("GuardedSession[closed]");
            assertThatThrownBy(() -> guard.session().getInputNames()).as("the session itself was closed")
                    .isInstanceOf(IllegalStateException.class);
        }
    }

    /** {@code map}, whose {@code entrySet()} first runs {@code sideEffect}. */
    private static <V> Map<String, V> closingOnRead(Map<String, V> map, Runnable sideEffect) {
        return new java.util.AbstractMap<>() {
            @Override
            public java.util.Set<Entry<String, V>> entrySet() {
                sideEffect.run();
                return map.entrySet();
            }

            @Override
            public int size() {
                return map.size(); // not through entrySet(): the side effect belongs to the iteration
            }
        };
    }

    /** {@code set}, whose {@code iterator()} first runs {@code sideEffect}. */
    private static java.util.Set<String> closingOnRead(java.util.Set<String> set, Runnable sideEffect) {
        return new java.util.AbstractSet<>() {
            @Override
            public java.util.Iterator<String> iterator() {
                sideEffect.run();
                return set.iterator();
            }

            @Override
            public int size() {
                return set.size();
            }
        };
    }

    /** Waits (no timing is asserted) for another thread to reach a state. */
    private static void waitFor(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime() - deadline).as("waited 60 s").isNegative();
            Thread.sleep(1);
        }
    }
}
