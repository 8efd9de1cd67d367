package org.jdlpack.abi.plumbing;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MutableCallSite;

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
 *
 * @since 0.1
 */
@SuppressWarnings("restricted")
public final class Upcalls implements AutoCloseable {

    private static final Linker LINKER = Linker.nativeLinker();

    static {
        // Upcall targets report their failures through Diagnostics (an exception must never leave an
        // upcall): loaded before any stub exists, so a deleter called after the class loader was
        // closed (a finished Flink job) does not need to load it.
        Diagnostics.ready();
    }

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
        MethodHandle target = target(lookup, name, descriptor);
        boolean disabled = NativeAccess.disabled(owner);
        try {
            MemorySegment stub = LINKER.upcallStub(target, descriptor, arena);
            NativeAccess.warnIfWasDisabled(owner, disabled);
            return stub;
        } catch (IllegalCallerException e) {
            throw NativeAccess.denied(owner, e);
        }
    }

    /**
     * A stub that is never freed and whose Java target can be switched off and on again: for a
     * function pointer that native code may call at any time, even after its owner released
     * everything else (a DLPack deleter a consumer calls late). The stub lives in the global arena
     * and calls its target through a call site; switched off, the call site holds a no-op handle
     * made by the JDK, so the stub keeps no class of the owner's, and its class loader can be
     * unloaded. A call while it is off does nothing. What stays for the life of the process is the
     * stub's code and the call site: a few hundred bytes per stub.
     *
     * <p>Thread safety: any thread; {@link #switchOff()} and {@link #switchOn()} are meant for one
     * caller at a time (the owner's lock). A thread that loaded the old target just before a switch
     * may still run it once: the stub never jumps into freed code either way.
     */
    public static final class Switchable {
        private final MutableCallSite site;
        private final MethodHandle on;
        private final MethodHandle off;
        private final long address;

        private Switchable(MutableCallSite site, MethodHandle on, long address) {
            this.site = site;
            this.on = on;
            this.off = MethodHandles.empty(on.type());
            this.address = address;
        }

        /** {@return the function pointer; the same for the life of the process} */
        public long address() {
            return address;
        }

        /** Makes calls reach the target. */
        public void switchOn() {
            site.setTarget(on);
            MutableCallSite.syncAll(new MutableCallSite[] {site});
        }

        /** Makes calls do nothing, and drops the stub's only path to the owner's classes. */
        public void switchOff() {
            site.setTarget(off);
            MutableCallSite.syncAll(new MutableCallSite[] {site});
        }
    }

    /**
     * A {@link Switchable} stub for the static method {@code name} of {@code lookup}'s class, whose
     * Java type is {@code descriptor}'s, switched on.
     *
     * @param lookup     a lookup with access to the method
     * @param name       the method's name
     * @param descriptor the C signature
     * @return the stub, never freed
     * @throws IllegalStateException  if there is no such method
     * @throws IllegalCallerException naming the flag, if native access is denied
     */
    public static Switchable switchable(MethodHandles.Lookup lookup, String name, FunctionDescriptor descriptor) {
        Class<?> owner = lookup.lookupClass();
        MethodHandle target = target(lookup, name, descriptor);
        MutableCallSite site = new MutableCallSite(target);
        boolean disabled = NativeAccess.disabled(owner);
        try {
            long address = LINKER.upcallStub(site.dynamicInvoker(), descriptor, Arena.global()).address();
            NativeAccess.warnIfWasDisabled(owner, disabled);
            return new Switchable(site, target, address);
        } catch (IllegalCallerException e) {
            throw NativeAccess.denied(owner, e);
        }
    }

    private static MethodHandle target(MethodHandles.Lookup lookup, String name, FunctionDescriptor descriptor) {
        try {
            return lookup.findStatic(lookup.lookupClass(), name, descriptor.toMethodType());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("no upcall target " + name + descriptor.toMethodType() + " in " + lookup.lookupClass(), e);
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
