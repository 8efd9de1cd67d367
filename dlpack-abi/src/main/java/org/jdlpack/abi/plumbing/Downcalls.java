package org.jdlpack.abi.plumbing;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.UndeclaredThrowableException;
import java.util.function.Supplier;

/**
 * What the device modules' native-call layers (libcudart, libOpenCL) share: a stand-in for a
 * function the loaded library lacks, the one policy for what a downcall throws, the out-parameter
 * call shape both libraries use, and native handles bound to a lifetime.
 *
 * <p>Everything here is stateless and safe from any thread.
 *
 * @since 0.1
 */
@SuppressWarnings("restricted")
public final class Downcalls {

    private static final MethodHandle SUPPLIER_GET;

    static {
        try {
            SUPPLIER_GET = MethodHandles.publicLookup().findVirtual(Supplier.class, "get", MethodType.methodType(Object.class));
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private Downcalls() {
    }

    /**
     * A handle of the given type that throws a fresh exception from {@code failure} whenever it is
     * called: bound in place of a function the library lacks (or of every function when the library
     * is missing), so that a call names what is missing instead of failing with a
     * {@code NullPointerException}, and call sites need no check of their own.
     *
     * @param type    the downcall's type
     * @param failure makes the exception, for example one naming the symbol
     * @return the handle
     */
    public static MethodHandle failing(MethodType type, Supplier<? extends RuntimeException> failure) {
        MethodHandle make = SUPPLIER_GET.bindTo(failure).asType(MethodType.methodType(RuntimeException.class));
        MethodHandle thrower = MethodHandles.throwException(type.returnType(), RuntimeException.class);
        return MethodHandles.dropArguments(MethodHandles.collectArguments(thrower, 0, make), 0, type.parameterList());
    }

    /**
     * What a call layer throws for a {@code Throwable} out of {@code invokeExact}: an {@link Error}
     * (out of memory, stack overflow) is thrown as it is, a runtime exception (a closed scope's
     * {@link IllegalStateException}, a native-call error) is returned for the caller to throw. A
     * downcall declares no checked exception, so anything else is a bug, wrapped as undeclared.
     *
     * @param thrown what {@code invokeExact} threw
     * @return the exception to throw
     */
    public static RuntimeException rethrow(Throwable thrown) {
        if (thrown instanceof Error error) {
            throw error;
        }
        if (thrown instanceof RuntimeException runtime) {
            return runtime;
        }
        return new UndeclaredThrowableException(thrown);
    }

    /** A native function that returns a status code, and its result through the out-parameter {@code slot}. */
    @FunctionalInterface
    public interface OutCall {
        /**
         * Invokes the downcall.
         *
         * @param slot the out-parameter
         * @return the status code
         * @throws Throwable whatever {@code invokeExact} throws
         */
        int call(MemorySegment slot) throws Throwable;
    }

    /** A call layer's rule for a status code: throws its module's exception unless the code means success. */
    @FunctionalInterface
    public interface StatusCheck {
        /**
         * Checks one code.
         *
         * @param code the status code
         * @param call names the function in the exception
         */
        void check(int code, String call);
    }

    /**
     * Runs {@code function} with a fresh out-parameter and checks the status it returns, under
     * the policy of {@link #rethrow}.
     *
     * @param slot     {@code JAVA_INT} for an {@code int}; an 8-byte layout for a {@code size_t} or pointer
     * @param call     names the function in the exception
     * @param function the downcall
     * @param check    the call layer's status check
     * @return what the function wrote to the out-parameter
     */
    public static long out(ValueLayout slot, String call, OutCall function, StatusCheck check) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment value = arena.allocate(slot);
            check.check(function.call(value), call);
            return slot.byteSize() == 4 ? value.get(JAVA_INT, 0) : value.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * A native handle ({@code cl_mem}, {@code cudaStream_t}, a device pointer) as a zero-length
     * segment bound to {@code scope}. Passed to a downcall, it makes the FFM runtime check the
     * lifetime on every call: the call fails with {@link IllegalStateException} once the scope has
     * ended, and the scope cannot end while the call runs (closing a shared arena then fails
     * instead). The segment grants no access to any byte.
     *
     * @param address the handle
     * @param scope   the lifetime of whoever owns the handle
     * @return the bound handle
     */
    public static MemorySegment bound(long address, MemorySegment.Scope scope) {
        return MemorySegment.ofAddress(address).reinterpret(new ScopeOnly(scope), null);
    }

    /**
     * Returns {@code handle} if its scope is alive, for a clear message in the common case; the
     * race-free check is the one the FFM runtime makes when the handle is passed to a downcall.
     *
     * @param handle a handle from {@link #bound}
     * @param owner  what owns it, for the message ("OpenCLBuffer")
     * @return {@code handle}
     * @throws IllegalStateException if the scope has ended
     */
    public static MemorySegment requireAlive(MemorySegment handle, String owner) {
        if (!handle.scope().isAlive()) {
            throw new IllegalStateException(owner + " is closed");
        }
        return handle;
    }

    /**
     * Ends an owner's lifetime, the one step that decides a close: afterwards every downcall with
     * its bound handles fails. The caller releases the native object only when this returns, so a
     * second or concurrent close never releases it twice.
     *
     * @param lifetime the owner's shared arena
     * @param owner    what it is, for the message
     * @throws IllegalStateException if already closed, or while a native call on another thread
     *                               holds one of its handles (the owner then stays open)
     */
    public static void close(Arena lifetime, String owner) {
        try {
            lifetime.close();
        } catch (IllegalStateException e) {
            throw new IllegalStateException(lifetime.scope().isAlive()
                    ? owner + " is in use by a native call on another thread; close it after that call returns"
                    : owner + " already closed", e);
        }
    }

    /**
     * An arena that is only a view of someone else's scope: {@code reinterpret} takes an arena, and
     * an imported tensor shares its scope, not its arena. It allocates nothing and cannot close.
     */
    private record ScopeOnly(MemorySegment.Scope scope) implements Arena {

        @Override
        public MemorySegment allocate(long byteSize, long byteAlignment) {
            throw new UnsupportedOperationException("a scope view allocates nothing");
        }

        @Override
        public void close() {
            throw new UnsupportedOperationException("a scope view cannot close its owner's scope");
        }
    }
}
