package org.jdlpack.abi;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.System.Logger.Level;
import java.lang.foreign.FunctionDescriptor;
import java.lang.invoke.MethodHandles;
import java.util.function.Supplier;

import org.jdlpack.abi.plumbing.Diagnostics;
import org.jdlpack.abi.plumbing.Upcalls;

/**
 * The deleters jdlpack writes into its exports: one upcall stub per struct kind, made by the first
 * export and never freed. {@link DLPackRuntime#release()} switches them off instead (a call then
 * does nothing, and the stubs keep no jdlpack class reachable); the next export switches them on
 * again. A stub is never freed because a consumer may call a deleter at any time, and a freed stub
 * ends the process: an export racing a release, or a consumer's stale second call, must find code
 * there.
 *
 * <p>This class knows of an export only its registry slot and the {@link ExportHolder} the slot
 * keeps: it lies below the export side ({@code ExportOwner}, which writes the stubs' addresses
 * through {@code ManagedTensorWriter}) and below the import side, whose {@link ForeignDeleters}
 * calls {@link #delete} directly for an export of ours.
 *
 * <p>A deleter may be called on any thread, including native threads the JVM did not start, with
 * any locks held by the caller. It takes no lock of its own, and it never lets an exception
 * escape: an exception leaving an upcall ends the JVM. Failures are counted in {@link DLPackStats}
 * and logged.
 *
 * <p>The path through a deleter allocates nothing on the Java heap (the stub passes the pointer as
 * a {@code long}, the registry and its quarantine are preallocated, free() takes a {@code long}),
 * so it works with the heap exhausted, and the failure paths log constant messages so that they
 * work where little stack is left: on a small native stack, the first thing to fail is the deleter,
 * and its catch block must not fail again while building a message. Only the owner's release
 * action, user code, may allocate.
 *
 * <p>A release against an export on another thread: the export makes its registry slot live (a
 * volatile store, {@link ExportRegistry#publish}) before it checks that the stubs are on
 * ({@link #ensureOn}), and the release switches them off before it counts the live slots again. Both are sequentially
 * consistent, so one of the two sees the other: either the release finds the export and switches
 * the stubs back on, or the export finds them off and waits on this class's lock until the
 * release is done, then switches them on.
 */
final class ExportDeleterUpcalls {

    /**
     * {@code void (*)(void* self)}, with the pointer declared as a 64-bit integer: on LP64 ABIs
     * both travel in the same register, and the stub then boxes no segment per call.
     */
    private static final FunctionDescriptor DELETER = FunctionDescriptor.ofVoid(JAVA_LONG);
    private static final String BOGUS_CALL = "jdlpack deleter called with a pointer that is not a live jdlpack export "
            + "(a second call, or a bogus pointer); ignored. DLPackStats.bogusDeleterCalls() counts these";
    private static final String FAILED = "jdlpack deleter failed; the export may have leaked. DLPackStats.deleterFailures() counts these";

    /** The two stubs, made by the first export; immutable, so a reader sees both addresses or none. */
    private record Stubs(Upcalls.Switchable versioned, Upcalls.Switchable legacy) {
        long of(ManagedTensorKind kind) {
            return (kind == ManagedTensorKind.VERSIONED ? versioned : legacy).address();
        }
    }

    /** Null until the first export; then the same two stubs for as long as this class is loaded. */
    private static volatile Stubs stubs;
    /** Whether the stubs reach {@link #delete}: false before the first export and after a release. */
    private static volatile boolean on;

    private ExportDeleterUpcalls() {
    }

    static long stubAddress(ManagedTensorKind kind) {
        Stubs made = stubs;
        return (made != null ? made : switchOn()).of(kind);
    }

    static boolean isOwnDeleter(ManagedTensorKind kind, long deleter) {
        Stubs made = stubs;
        return made != null && deleter == made.of(kind);
    }

    /**
     * Called by every export after it was counted live: makes sure its deleter will reach Java. One
     * volatile read on the hot path; the slow path waits for a release in progress.
     */
    static void ensureOn() {
        if (!on) {
            switchOn();
        }
    }

    /** Makes the stubs (the first time) and switches them on, with the shutdown hook that disarms live exports. */
    private static synchronized Stubs switchOn() {
        Stubs made = stubs;
        if (made == null) {
            made = new Stubs(Upcalls.switchable(MethodHandles.lookup(), "deleteVersioned", DELETER),
                    Upcalls.switchable(MethodHandles.lookup(), "deleteLegacy", DELETER));
            stubs = made;
        } else if (!on) {
            made.versioned().switchOn();
            made.legacy().switchOn();
        }
        if (!on) {
            ExportRegistry.armShutdownHook();
            on = true;
        }
        return made;
    }

    /**
     * Switches the stubs off, unless an export is live after the switch; the caller holds
     * {@link DLPackRuntime}'s lock and found nothing live before.
     *
     * @param stillLive what is live after the switch, in words; empty if nothing is
     * @return what {@code stillLive} said: when not empty, the stubs are on again
     */
    static synchronized String switchOff(Supplier<String> stillLive) {
        Stubs made = stubs;
        if (made == null || !on) {
            return stillLive.get();
        }
        on = false;
        String live = stillLive.get(); // after the write of on: see the class comment
        if (!live.isEmpty()) {
            on = true;
            return live;
        }
        made.versioned().switchOff();
        made.legacy().switchOff();
        ExportRegistry.removeShutdownHook();
        return "";
    }

    @SuppressWarnings("unused") // the upcall target
    private static void deleteVersioned(long self) {
        delete(ManagedTensorKind.VERSIONED, self);
    }

    @SuppressWarnings("unused") // the upcall target
    private static void deleteLegacy(long self) {
        delete(ManagedTensorKind.LEGACY, self);
    }

    /**
     * Retires one export (the registry hands its header to the quarantine) and drops its reference
     * on the owner. Never throws, not even when the stack or the heap runs out inside its own catch
     * block.
     */
    static void delete(ManagedTensorKind kind, long address) {
        try {
            ExportHolder owner = null;
            if (address != 0) {
                long id = NativeMemory.readLong(address + kind.managerCtxOffset());
                owner = ExportRegistry.remove(id, kind, address);
            }
            if (owner == null) {
                Counters.BOGUS_DELETER_CALLS.increment();
                Diagnostics.report(Level.ERROR, BOGUS_CALL, null);
                return;
            }
            owner.dropReference();
        } catch (Throwable t) {
            failed(t);
        }
    }

    /** The catch path: constant message, and a guard of its own in case even that fails. */
    private static void failed(Throwable t) {
        try {
            Counters.DELETER_FAILURES.increment();
            Diagnostics.report(Level.ERROR, FAILED, t);
        } catch (Throwable ignored) {
            // Out of stack or heap even here: nothing more can be done without ending the JVM.
        }
    }
}
