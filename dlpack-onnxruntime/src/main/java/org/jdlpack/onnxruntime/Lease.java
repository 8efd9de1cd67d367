package org.jdlpack.onnxruntime;

import java.lang.ref.Reference;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The use count behind an {@link OrtInput} or {@link OrtOutput} (and the C route's sessions, values
 * and bindings): runs borrow the object, and its
 * memory is released (the {@code OnnxTensor} closed first, then whatever holds the memory) only
 * when it is closed and no run holds it. A confined lease admits its creating thread only, so a
 * close can never overlap a run; a shared one admits any thread and defers the release of a close
 * that comes during a run to the end of that run. An object forgotten unclosed cannot be in a run
 * (a run holds it), and its {@link Release} is run by the safety net instead.
 */
final class Lease {

    private static final long CLOSED = 1L << 62;
    /** An output is being written by a run: nobody else may borrow it. */
    private static final long WRITING = 1L << 61;
    private static final long COUNT = WRITING - 1;

    private final AtomicLong state = new AtomicLong();
    /** The one thread that may use a confined lease; null for a shared one. */
    private final Thread thread;
    /** Named in messages, made only when one is thrown. */
    private final Object owner;
    /** Also the safety net's entry for {@link #owner}: whichever of the two runs it first runs it alone. */
    private final Release release;

    /** Why an exclusive borrow was refused while another run holds it: follows the owner's name. */
    private final String busy;

    Lease(boolean shared, Object owner, Release release) {
        this(shared, owner, release, "is the pinned output of another run that has not finished: ONNX Runtime would write both "
                + "results into the same memory. Give each concurrent run an output of its own");
    }

    /** @param busy what a refused exclusive borrow says after the owner's name */
    Lease(boolean shared, Object owner, Release release, String busy) {
        this.thread = shared ? null : Thread.currentThread();
        this.owner = owner;
        this.release = release;
        this.busy = busy;
    }

    /**
     * The lease of an object that puts ONNX Runtime's value over some memory before a hold on
     * that memory: its release lets go of the value first ({@code value}) and of the hold second
     * ({@code memory}), the second even when the first throws, so that ONNX Runtime never reads
     * memory that is gone. Its {@link Release} is the safety net's entry for {@code owner}.
     *
     * @param name   what reports call the owner; must not reach {@code owner}
     * @param value  releases ONNX Runtime's value (an {@code OnnxTensor}, an {@code OrtValue}); must not reach {@code owner}
     * @param memory lets go of the memory the value reads; must not reach {@code owner}
     */
    static Lease valueThenMemory(boolean shared, Object owner, Supplier<String> name, Runnable value, Runnable memory) {
        return new Lease(shared, owner, new Release(owner, name, valueThenMemory(value, memory)));
    }

    /** {@return the release of a value over some memory: the value first, then the memory, the second even when the first throws} */
    static Runnable valueThenMemory(Runnable value, Runnable memory) {
        return () -> {
            try {
                value.run();
            } finally {
                memory.run();
            }
        };
    }

    boolean isShared() {
        return thread == null;
    }

    boolean isOpen() {
        return (state.get() & CLOSED) == 0;
    }

    /**
     * Borrows for one run: shared by many runs of an input, exclusive for an output (ORT writes it).
     *
     * @throws IllegalStateException if closed, or an output another run is writing
     * @throws WrongThreadException  if confined to another thread
     */
    void borrow(boolean exclusive) {
        checkThread("use");
        while (true) {
            long s = state.get();
            if ((s & CLOSED) != 0) {
                throw new IllegalStateException(owner + " was closed; create a new one to run with it");
            }
            if ((s & WRITING) != 0 || (exclusive && (s & COUNT) != 0)) {
                throw new IllegalStateException(owner + " " + busy);
            }
            long next = exclusive ? s | WRITING | 1 : s + 1;
            if (state.compareAndSet(s, next)) {
                return;
            }
        }
    }

    /**
     * Ends a borrow; releases the memory if this was the last one of a closed object. The owner
     * stays reachable until then: the safety net must not see it forgotten while its release runs.
     */
    void giveBack() {
        try {
            while (true) {
                long s = state.get();
                long next = ((s & COUNT) - 1) | (s & CLOSED);
                if (state.compareAndSet(s, next)) {
                    if (next == CLOSED) {
                        release.run();
                    }
                    return;
                }
            }
        } finally {
            Reference.reachabilityFence(owner);
        }
    }

    /**
     * Gives back {@code leases[0..count)}, the last first, each one even where one before it
     * throws: a give-back that fails (its release threw) must not leave the others held for ever
     * (a tensor closed meanwhile never released, a session whose release never comes). Then throws
     * {@code failure}, the caller's own, or else the first give-back's failure, with the later
     * ones added to it as suppressed; returns if there is none.
     *
     * @param leases  the borrowed leases, in the order they were borrowed
     * @param count   how many of them were borrowed
     * @param failure what the caller's own work threw (a run, a release: an unchecked throwable), or null
     */
    static void giveBack(Lease[] leases, int count, Throwable failure) {
        for (int i = count - 1; i >= 0; i--) {
            failure = leases[i].giveBack(failure);
        }
        rethrow(failure);
    }

    /**
     * {@link #giveBack()} after the borrower's own work, which threw {@code failure} or nothing.
     *
     * @param failure what the borrower's work threw (unchecked), or null
     * @return {@code failure}, with this give-back's failure added as suppressed; or this
     *         give-back's failure where there was none before; or null
     */
    Throwable giveBack(Throwable failure) {
        try {
            giveBack();
        } catch (RuntimeException | Error e) {
            return firstOf(failure, e);
        }
        return failure;
    }

    /** Throws {@code failure} (unchecked) if there is one. */
    static void rethrow(Throwable failure) {
        if (failure instanceof RuntimeException e) {
            throw e;
        }
        if (failure instanceof Error e) {
            throw e;
        }
    }

    /** {@return {@code first}, with {@code next} added as suppressed, or {@code next} if there is no first} */
    static Throwable firstOf(Throwable first, Throwable next) {
        if (first == null) {
            return next;
        }
        if (first != next) { // the JVM may throw one preallocated OutOfMemoryError twice; it cannot suppress itself
            first.addSuppressed(next);
        }
        return first;
    }

    /**
     * Closes: releases now, or at the end of the last run that holds it. A second close does
     * nothing. The owner stays reachable until the release has run, as in {@link #giveBack()}.
     */
    void close() {
        try {
            checkThread("close");
            while (true) {
                long s = state.get();
                if ((s & CLOSED) != 0) {
                    return;
                }
                if (state.compareAndSet(s, s | CLOSED)) {
                    if ((s & COUNT) == 0) {
                        release.run();
                    }
                    return;
                }
            }
        } finally {
            Reference.reachabilityFence(owner);
        }
    }

    void checkThread(String action) {
        if (thread != null && thread != Thread.currentThread()) {
            throw new WrongThreadException("cannot " + action + " " + owner + " on " + Thread.currentThread() + ": it is confined "
                    + "to " + thread + ", which created it; create it there, or with OrtBridge.shared() to use it from any thread");
        }
    }

    @Override
    public String toString() {
        long s = state.get();
        return (s & CLOSED) != 0 ? "closed" : (s & COUNT) == 0 ? "open" : "in " + (s & COUNT) + " run(s)";
    }
}
