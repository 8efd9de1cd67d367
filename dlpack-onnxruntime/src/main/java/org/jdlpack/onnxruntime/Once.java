package org.jdlpack.onnxruntime;

import java.util.concurrent.atomic.AtomicReference;

/**
 * The release of one ONNX Runtime object (a value, a session, a binding) while the Java object
 * that will own it is being made: runs its action at most once, whoever runs it first. The owner
 * (its {@link Release}, or the tensor of an exported value) and the factory's cleanup when making
 * the owner throws both hold this one object, so a throw anywhere in between (a refusal, an
 * {@link OutOfMemoryError} after the owner's ledger entry was opened) can neither release the
 * object twice, once by each, nor leave it to nobody. Any thread.
 */
final class Once implements Runnable {

    /** The release; null once taken. */
    private final AtomicReference<Runnable> action;

    /** @param action the release; must not reach the owner, which the safety net watches */
    Once(Runnable action) {
        this.action = new AtomicReference<>(action);
    }

    /**
     * A factory's cleanup after making the owner threw {@code failure}: runs this release (at most
     * once, though the owner's ledger entry may hold it already), and adds what it throws to
     * {@code failure} as suppressed; the caller throws {@code failure}. Allocates nothing.
     *
     * @param failure what making the owner threw
     */
    void runAfter(Throwable failure) {
        try {
            run();
        } catch (RuntimeException | Error e) {
            Lease.firstOf(failure, e);
        }
    }

    /** Runs the action if no run took it before; what it throws reaches the caller. */
    @Override
    public void run() {
        Runnable taken = action.getAndSet(null);
        if (taken != null) {
            taken.run();
        }
    }
}
