package org.jdlpack.abi.plumbing;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.function.IntFunction;
import java.util.function.IntSupplier;

/**
 * Runs Java code while the scopes of some memory segments are held, so that no thread can close
 * their arenas meanwhile: for code that hands the memory's address to a library outside the FFM
 * runtime's checks (ONNX Runtime's JNI reads and writes through raw pointers), when the memory
 * belongs to someone else whose {@code Arena.close()} could otherwise free it mid-read.
 *
 * <p>How: the FFM runtime holds the scope of every segment passed to a downcall until the call
 * returns, and a shared arena's {@code close()} on another thread then throws
 * {@link IllegalStateException} ("acquired") instead of freeing the memory. So the action runs
 * inside a downcall that takes the segments as arguments: libc's {@code bsearch(key, base, 1, 1,
 * compare)}, which touches neither pointer and calls {@code compare(key, base)} exactly once; the
 * comparator is an upcall into the action. One call holds two segments; more are held by nesting
 * calls. This is the one native-call layer for libc's {@code bsearch}.
 *
 * <p>The upcall stub is made once, in the global arena, and reaches only JDK classes (a
 * {@link ThreadLocal} and {@link IntSupplier}): it keeps no class loader of jdlpack's reachable.
 * The action's exceptions are caught inside the upcall (one escaping an upcall would end the JVM)
 * and rethrown after the downcall returns.
 *
 * <p>Cost: one downcall and one upcall per two segments (a few hundred nanoseconds; see
 * docs/onnxruntime.md for the figure). Thread safety: any thread; the action runs on the calling
 * thread, which stays in a native frame (a virtual thread pinned to its carrier) for the action's
 * duration.
 */
@SuppressWarnings("restricted")
public final class ScopeHold {

    /**
     * Code run while the scopes are held.
     *
     * @param <X> the checked exception it may throw
     */
    @FunctionalInterface
    public interface Action<X extends Exception> {
        /**
         * Runs.
         *
         * @throws X what the action throws; rethrown by {@link #during}
         */
        void run() throws X;
    }

    /** The frame of the {@code during} call running on this thread: what the comparator upcall continues. */
    private static final ThreadLocal<IntSupplier> CURRENT = new ThreadLocal<>();
    private static final MethodHandle BSEARCH;
    private static final MemorySegment COMPARE;

    static {
        boolean disabled = NativeAccess.disabled(ScopeHold.class);
        MethodHandle bsearch;
        MemorySegment compare;
        try {
            Linker linker = Linker.nativeLinker();
            bsearch = linker.downcallHandle(linker.defaultLookup().find("bsearch").orElseThrow(),
                    FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG, ADDRESS));
            // compare(key, element) = CURRENT.get().getAsInt(): JDK classes only, so the stub pins no class loader of ours.
            MethodHandles.Lookup jdk = MethodHandles.publicLookup();
            MethodHandle current = jdk.findVirtual(ThreadLocal.class, "get", MethodType.methodType(Object.class)).bindTo(CURRENT);
            MethodHandle step = jdk.findVirtual(IntSupplier.class, "getAsInt", MethodType.methodType(int.class))
                    .asType(MethodType.methodType(int.class, Object.class));
            MethodHandle target = MethodHandles.dropArguments(MethodHandles.collectArguments(step, 0, current), 0,
                    MemorySegment.class, MemorySegment.class);
            compare = linker.upcallStub(target, FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), Arena.global());
            NativeAccess.warnIfWasDisabled(ScopeHold.class, disabled);
        } catch (IllegalCallerException e) {
            IllegalCallerException denied = NativeAccess.denied(ScopeHold.class, e);
            bsearch = Downcalls.failing(MethodType.methodType(MemorySegment.class, MemorySegment.class, MemorySegment.class,
                    long.class, long.class, MemorySegment.class), () -> denied);
            compare = MemorySegment.NULL;
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
        BSEARCH = bsearch;
        COMPARE = compare;
    }

    private ScopeHold() {
    }

    /**
     * Runs {@code action} while the scopes of {@code segments} are held: until it returns, closing
     * any of their arenas from another thread throws {@link IllegalStateException} and frees
     * nothing. A segment whose scope is already closed when the hold begins is refused before the
     * action runs, with the exception {@code ifClosed} makes for its index. The action must not
     * close those arenas itself (it would fail for the same reason).
     *
     * @param segments the memory to hold (native segments; {@link MemorySegment#NULL} holds nothing)
     * @param action   what to run
     * @param ifClosed the exception for the index of a segment whose scope was closed (or that is
     *                 confined to another thread)
     * @param <X>      the action's checked exception
     * @throws X                what the action threw
     * @throws RuntimeException what {@code ifClosed} made, if a scope was closed
     */
    public static <X extends Exception> void during(MemorySegment[] segments, Action<X> action,
                                                    IntFunction<? extends RuntimeException> ifClosed) throws X {
        Frame frame = new Frame(segments, action, ifClosed);
        IntSupplier outer = CURRENT.get(); // a hold inside a held action: put the outer frame back afterwards
        try {
            frame.getAsInt();
        } finally {
            // set, not remove: the entry stays for the next hold on this thread (a removed one is a new
            // weak reference per run). It holds nothing after a hold but the outer frame, or null.
            CURRENT.set(outer);
        }
        frame.rethrow();
    }

    /** One {@code during} call: holds two segments per nested {@code bsearch}, then runs the action. */
    private static final class Frame implements IntSupplier {
        private final MemorySegment[] segments;
        private final Action<?> action;
        private final IntFunction<? extends RuntimeException> ifClosed;
        private int next;
        private Throwable thrown;

        Frame(MemorySegment[] segments, Action<?> action, IntFunction<? extends RuntimeException> ifClosed) {
            this.segments = segments;
            this.action = action;
            this.ifClosed = ifClosed;
        }

        /** The comparator's body (and the first step, from Java): hold the next pair, or run the action. Never throws. */
        @Override
        public int getAsInt() {
            try {
                if (next < segments.length) {
                    holdNextPair();
                } else {
                    action.run();
                }
            } catch (Throwable t) {
                thrown = t;
            }
            return 0;
        }

        private void holdNextPair() {
            int first = next;
            MemorySegment key = segments[first];
            MemorySegment base = first + 1 < segments.length ? segments[first + 1] : MemorySegment.NULL;
            next = first + 2;
            CURRENT.set(this); // again: an action's own hold may have replaced it in between
            // The upcall's first frames (the stub, the target's adapters) run before getAsInt's try:
            // a StackOverflowError there would leave the upcall and end the JVM. Claim their stack in
            // Java first, so that a thread near its stack's end gets the error here, in Java.
            requireStack();
            try {
                MemorySegment found = (MemorySegment) BSEARCH.invokeExact(key, base, 1L, 1L, COMPARE);
            } catch (IllegalStateException | WrongThreadException notHeld) {
                // Only the downcall's own prologue throws here (the action's exceptions stay in the frame):
                // a scope was closed, or belongs to another thread.
                boolean keyHeld = key.scope().isAlive() && key.isAccessibleBy(Thread.currentThread());
                RuntimeException refusal = ifClosed.apply(keyHeld ? first + 1 : first);
                refusal.addSuppressed(notHeld);
                throw refusal;
            } catch (Throwable t) {
                throw Downcalls.rethrow(t);
            }
        }

        /** Throws what the action (or the hold) threw, as it was thrown. */
        void rethrow() {
            if (thrown != null) {
                ScopeHold.<RuntimeException>sneaky(thrown);
            }
        }
    }

    /**
     * Frames of {@link #claimStack}, enough for one bsearch level and its upcall's frames up to
     * getAsInt's try (ScopeHoldStackCrashTest at -Xss512k: 32 crashed, 64 passed; benchmarks/notes.md).
     */
    private static final int STACK_FRAMES = 128;

    /**
     * Throws {@link StackOverflowError} here, in Java, unless the stack below the caller has room
     * for about {@value #STACK_FRAMES} small frames more than a call needs anyway: for a caller
     * whose next steps (an upcall's first frames, a {@code finally} that gives back what a run
     * held) must not be the ones to overflow.
     */
    public static void requireStack() {
        claimStack(STACK_FRAMES, 1, 2, 3, 4, 5, 6, 7, 8);
    }

    /** Written so that the JIT keeps the calls of {@link #claimStack}. */
    private static long claimed;

    /** Recurses {@code frames} deep; the longs beyond the six passed in registers take stack in every frame. */
    private static void claimStack(int frames, long a, long b, long c, long d, long e, long f, long g, long h) {
        if (frames > 0) {
            claimStack(frames - 1, b, c, d, e, f, g, h, a);
        } else {
            claimed = a ^ h;
        }
    }

    @SuppressWarnings("unchecked")
    private static <T extends Throwable> void sneaky(Throwable t) throws T {
        throw (T) t; // the action's checked exception, declared by during() as X
    }
}
