package org.jdlpack.python.internal.capi;

import java.lang.System.Logger.Level;
import java.lang.foreign.Arena;
import java.util.concurrent.atomic.AtomicLong;

import org.jdlpack.abi.plumbing.Diagnostics;

/**
 * Holding the GIL for one call: {@code PyGILState_Ensure} before, {@code PyGILState_Release} after,
 * on whichever thread calls, so that the GIL is never held while control is back in user code.
 *
 * <p><b>Virtual threads.</b> The GIL state {@code PyGILState_Ensure} takes belongs to the OS thread,
 * for a virtual thread its carrier. A virtual thread that unmounts between Ensure and Release
 * (blocking on a contended monitor or lock, parking, sleeping, blocking I/O) may resume on another
 * carrier and release a thread state that is not that carrier's, while another virtual thread on
 * the first carrier runs Python under the first one's thread state: a Fatal Python error. So a
 * {@link Body} makes only downcalls and non-blocking Java (reads, allocation, exceptions): no
 * locks, no ledger registration, no logging, no writes to concurrent maps, no user code. Whatever
 * needs those (wrapping a result in a {@code PythonObject}, a registration, a deleter guard)
 * happens after {@code call} returns, and drops the reference again under the GIL if it fails.
 * Java code in an upcall that Python makes inside a body is different: the native frames below it
 * pin the virtual thread to its carrier, so it cannot migrate there.
 *
 * <p>Once the interpreter has been finalized (by whoever embeds it) nothing may touch Python any
 * more: calls then fail with {@link IllegalStateException}, and cleanups leak their reference and
 * count it instead of crashing the process, as NumPy does with its deleters.
 *
 * <p>Thread safety: every method may be called from any thread.
 */
public final class Gil {

    /** Python references and foreign deleters skipped because the interpreter was finalized. */
    public static final AtomicLong LEAKED_AFTER_FINALIZATION = new AtomicLong();

    /**
     * A body run with the GIL held and a confined arena for its C strings: downcalls and
     * non-blocking Java only (see the class comment).
     */
    public interface Body<T> {
        T run(Arena arena);
    }

    private Gil() {
    }

    /** {@return whether Python may be called: initialized and not finalized} Never throws. */
    public static boolean pythonAlive() {
        try {
            return LibPythonGil.isInitialized();
        } catch (RuntimeException e) {
            return false;
        }
    }

    /**
     * Runs {@code body} with the GIL held.
     *
     * @throws IllegalStateException if the interpreter was finalized
     */
    public static <T> T call(Body<T> body) {
        if (!pythonAlive()) {
            throw new IllegalStateException("the embedded Python interpreter has been finalized");
        }
        int state = LibPythonGil.gilEnsure();
        try (Arena arena = Arena.ofConfined()) {
            return body.run(arena);
        } finally {
            LibPythonGil.gilRelease(state);
        }
    }

    /**
     * Runs a cleanup with the GIL held, or leaks and counts it when the interpreter is gone.
     * Never throws.
     */
    public static void cleanup(Body<?> body) {
        if (!pythonAlive()) {
            LEAKED_AFTER_FINALIZATION.incrementAndGet();
            return;
        }
        try {
            call(body);
        } catch (Throwable t) {
            Diagnostics.report(Level.ERROR, "a Python cleanup failed", t);
        }
    }
}
