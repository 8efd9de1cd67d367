package org.jdlpack.onnxruntime;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;

/**
 * An {@link OrtSession} whose close waits for the bridge's runs in flight: the session is held
 * by every {@link OrtBridge#run(GuardedSession, java.util.Map, java.util.Map)} as its inputs and
 * outputs are, for the duration of the run. ONNX Runtime frees a session's native state in
 * {@link OrtSession#close()} without waiting for the {@code run} calls other threads are inside,
 * which then crash the JVM (SIGSEGV in libonnxruntime); through this guard, {@link #close()}
 * refuses new runs at once, waits for those in flight to return, and only then closes the
 * session.
 *
 * {@snippet :
 * OrtBridge ort = OrtBridge.of(env).shared();
 * try (GuardedSession session = GuardedSession.of(env.createSession("model.onnx"))) {
 *     executor.submit(() -> {                                     // any thread, many runs at once
 *         ort.run(session, Map.of("x", x), Map.of("y", y));
 *         return null;
 *     });
 * }   // waits for the runs in flight, then closes the OrtSession; later runs are refused
 * }
 *
 * <p>The guard owns the session: close the guard, never the session itself (that would bring the
 * crash back). {@link #session()} is there for its metadata (input and output names and types).
 * Runs through {@link OrtBridge#run(OrtSession, java.util.Map, java.util.Map)} with the bare
 * session are not held: there, closing the session while a run is in flight is the caller's bug.
 *
 * <p>While a run holds the session, only the bridge's code and ONNX Runtime's run on its thread:
 * the run reads the caller's maps of inputs and outputs and set of copied outputs before it is
 * admitted, so a {@code close()} from their methods (misuse, but possible) finds no run of its own
 * thread in flight. It closes the session, and the run that called it is refused.
 *
 * <p>Thread safety: every method may be called from any thread. A run costs two atomic updates of
 * one counter more than an unguarded one (see docs/onnxruntime.md for the figure).
 *
 * @since 0.1
 */
public final class GuardedSession implements AutoCloseable {

    /** Set by the first close: runs are refused from then on. */
    private static final long CLOSING = 1L << 62;
    private static final long RUNS = CLOSING - 1;

    private final OrtSession session;
    /** {@link #CLOSING} and the number of runs in flight. */
    private final AtomicLong state = new AtomicLong();
    /** Whether the session was closed; guarded by this object's monitor, on which a close waits for the last run. */
    private boolean closed;

    private GuardedSession(OrtSession session) {
        this.session = session;
    }

    /**
     * Guards a session; the guard owns it from now on.
     *
     * @param session an open session; close it only through the guard
     * @return the guard
     */
    public static GuardedSession of(OrtSession session) {
        return new GuardedSession(Objects.requireNonNull(session, "session"));
    }

    /** {@return the session, for its metadata; run it through {@link OrtBridge} with this guard, and never close it yourself} */
    public OrtSession session() {
        return session;
    }

    /** {@return whether runs are still admitted: {@link #close()} has not begun} */
    public boolean isOpen() {
        return (state.get() & CLOSING) == 0;
    }

    /** {@return the number of runs in flight now; a snapshot, for monitoring and tests} */
    public long runsInFlight() {
        return state.get() & RUNS;
    }

    /**
     * Admits one run.
     *
     * @throws IllegalStateException if the guard is closing or closed
     */
    void borrow() {
        while (true) {
            long s = state.get();
            if ((s & CLOSING) != 0) {
                throw new IllegalStateException(this + " was closed; the run was refused before ONNX Runtime saw it. Open a "
                        + "new session (and guard it) to run again");
            }
            if (state.compareAndSet(s, s + 1)) {
                return;
            }
        }
    }

    /** Ends a run; wakes a close waiting for the last one. */
    void giveBack() {
        if (state.decrementAndGet() == CLOSING) {
            synchronized (this) {
                notifyAll();
            }
        }
    }

    /**
     * Refuses every new run, waits for the runs in flight to return, then closes the session. An
     * interrupt does not cut the wait short (the session cannot be closed under a run); it is
     * kept for the caller. Closing again, or concurrently, returns once the session is closed.
     *
     * @throws OrtException if ONNX Runtime fails to close the session (the guard is closed anyway)
     */
    @Override
    public void close() throws OrtException {
        synchronized (this) {
            if (closed) {
                return;
            }
            long s;
            do {
                s = state.get();
            } while (!state.compareAndSet(s, s | CLOSING));
            boolean interrupted = false;
            while ((state.get() & RUNS) != 0) {
                try {
                    wait(); // giveBack notifies under this monitor, after its decrement: no wake-up is lost
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (closed) {
                // Another close closed it while this one waited (wait() releases the monitor).
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
                return;
            }
            closed = true;
            try {
                session.close();
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    @Override
    public String toString() {
        long s = state.get();
        long runs = s & RUNS;
        String status = (s & CLOSING) == 0 ? "open" : runs == 0 ? "closed" : "closing";
        return "GuardedSession[" + status + (runs == 0 ? "" : ", " + runs + " run(s) in flight") + "]";
    }
}
