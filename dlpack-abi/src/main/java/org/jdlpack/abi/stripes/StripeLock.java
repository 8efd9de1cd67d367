package org.jdlpack.abi.stripes;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The lock of one thread stripe (the export registry's free slots and headers, the ledger's lists),
 * padded before its lock word; a subclass declares the state the lock guards and 64 bytes of
 * padding after it ({@code long q0, ..., q7}), so that two stripes written by two threads never
 * share a cache line. A spin lock: one compare-and-set to take it and a release store to give it
 * back, where a monitor's exit is a second compare-and-set. It is held for a few field updates,
 * nothing that waits for another thread.
 *
 * <p><b>It must not stay held when the holder runs out of stack.</b> Deleter upcalls run on nearly
 * exhausted native stacks, and there any call can throw {@link StackOverflowError}: the JVM checks
 * the stack on entry to every method it runs without inlining (interpreted, or compiled but not
 * inlined into the caller). Taking the lock is safe: the compare-and-set is the last thing its call
 * does, so an overflow leaves the lock either not taken or taken and returned. Giving it back is
 * a call that can overflow before its store, and a monitor would be released by the JVM as the
 * frame unwinds, but this lock would stay held, and every later thread would spin on it for ever.
 * So every holder gives the lock back as the last call inside a {@code try} whose {@code catch}
 * writes {@link #locked} itself, a {@code putfield} of a volatile field, which calls nothing and
 * so cannot overflow, and then rethrows:
 *
 * {@snippet :
 * stripe.lock();          // or tryLock(): taken, or not, never half
 * try {
 *     ...                 // the guarded updates
 *     stripe.unlock();    // the last call in the try
 * } catch (Throwable t) {
 *     stripe.locked = 0;  // no call: cannot overflow the stack
 *     throw t;
 * }
 * }
 *
 * <p>Compiled code inlines {@link #unlock()} into the holder, and the catch costs nothing until it
 * runs. StripeLockStackOverflowTest overflows the stack at every point of an export, a deleter call
 * and a ledger entry, and checks that every stripe can be taken afterwards.
 *
 * @since 0.1
 */
public abstract class StripeLock extends StripePadding {

    private static final VarHandle LOCKED;

    static {
        try {
            LOCKED = MethodHandles.lookup().findVarHandle(StripeLock.class, "locked", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * 1 while held, else 0. Written through {@link #unlock()}, or directly (a volatile store) by a
     * holder's {@code catch} when that call failed: see the class comment.
     */
    protected volatile int locked;

    /** Makes an unlocked stripe. */
    protected StripeLock() {
    }

    /** {@return whether this call took the lock; it never waits} */
    public final boolean tryLock() {
        return locked == 0 && LOCKED.compareAndSet(this, 0, 1);
    }

    /** Takes the lock, spinning, then yielding: its holder is inside a few field updates, or was descheduled there. */
    public final void lock() {
        for (int spins = 0; locked != 0 || !LOCKED.compareAndSet(this, 0, 1); spins++) {
            if (spins < 64) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
    }

    /** Gives the lock back: a release store (no fence on x86). The last call inside the holder's {@code try}: see the class comment. */
    public final void unlock() {
        LOCKED.setRelease(this, 0);
    }
}
