package org.jdlpack.abi.plumbing;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;

/**
 * C function pointers onto Java methods (FFM upcall stubs), made for one owner and freed together:
 * the stubs a module hands to native code (the DLPack deleters, Python's built-in functions and
 * capsule destructors) live in one arena of their own, which only {@link #close()} ends.
 *
 * <p>A stub keeps its target's class, and so its class loader, reachable until its arena closes;
 * native code may call a stub for as long as it holds the pointer, and calling a freed stub ends
 * the process. So the owner closes this only once no native code can call any of its stubs any
 * more, and otherwise keeps it for the life of the process on purpose.
 *
 * <p>Every target must never throw: an exception leaving an upcall ends the JVM. Thread safety:
 * {@link #stub} may be called from any thread; {@link #close()} once, when nothing can call the
 * stubs.
 */
@SuppressWarnings("restricted")
public final class Upcalls implements AutoCloseable {

    private static final Linker LINKER = Linker.nativeLinker();

    private final Class<?> owner;
    private final Arena arena = Arena.ofShared();

    private Upcalls(Class<?> owner) {
        this.owner = owner;
    }

    /**
     * Opens an arena for stubs.
     *
     * @param owner the class on whose behalf the stubs are made: its module is the one
     *              native-access messages name
     * @return the stubs' owner
     */
    public static Upcalls open(Class<?> owner) {
        NativeAccess.warnIfDisabled(owner);
        return new Upcalls(owner);
    }

    /**
     * A stub for the static method {@code name} of {@code lookup}'s class, whose Java type is
     * {@code descriptor}'s.
     *
     * @param lookup     a lookup with access to the method
     * @param name       the method's name
     * @param descriptor the C signature
     * @return the function pointer, valid until {@link #close()}
     * @throws IllegalStateException  if there is no such method
     * @throws IllegalCallerException naming the flag, if native access is denied
     */
    public MemorySegment stub(MethodHandles.Lookup lookup, String name, FunctionDescriptor descriptor) {
        MethodHandle target;
        try {
            target = lookup.findStatic(lookup.lookupClass(), name, descriptor.toMethodType());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("no upcall target " + name + descriptor.toMethodType() + " in " + lookup.lookupClass(), e);
        }
        try {
            return LINKER.upcallStub(target, descriptor, arena);
        } catch (IllegalCallerException e) {
            throw NativeAccess.denied(owner, e);
        }
    }

    /** {@return whether the stubs are still valid: {@link #close()} has not run} */
    public boolean isOpen() {
        return arena.scope().isAlive();
    }

    /** Frees every stub made here. Call only when no native code can call any of them any more. */
    @Override
    public void close() {
        arena.close();
    }
}
