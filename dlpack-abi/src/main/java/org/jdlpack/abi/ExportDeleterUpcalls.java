package org.jdlpack.abi;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.System.Logger.Level;
import java.lang.foreign.FunctionDescriptor;
import java.lang.invoke.MethodHandles;

import org.jdlpack.abi.plumbing.Diagnostics;
import org.jdlpack.abi.plumbing.Upcalls;

/**
 * The deleters jdlpack writes into its exports: one upcall stub per struct kind, made by the first
 * export and kept until {@link DLPackRuntime#release()} finds no export live.
 *
 * <p>A deleter may be called on any thread, including native threads the JVM did not start, with
 * any locks held by the caller. It takes no lock of its own, and it never lets an exception
 * escape: an exception leaving an upcall ends the JVM. Failures are counted in {@link DLPackStats}
 * and logged.
 *
 * <p>The path through a deleter allocates nothing on the Java heap (the stub passes the pointer as
 * a {@code long}, the registry and the quarantine are preallocated, free() takes a {@code long}),
 * so it works with the heap exhausted, and the failure paths log constant messages so that they
 * work where little stack is left: on a small native stack, the first thing to fail is the deleter,
 * and its catch block must not fail again while building a message. Only the owner's release
 * action, user code, may allocate.
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
    private record Stubs(Upcalls upcalls, long versioned, long legacy) {
        long of(ManagedTensorKind kind) {
            return kind == ManagedTensorKind.VERSIONED ? versioned : legacy;
        }
    }

    /**
     * Null until the first export, and again after {@link DLPackRuntime#release()}, which frees
     * the stubs only when no export is live: a consumer may call a deleter for as long as it holds
     * an export.
     */
    private static volatile Stubs stubs;

    private ExportDeleterUpcalls() {
    }

    static long stubAddress(ManagedTensorKind kind) {
        Stubs made = stubs;
        return (made != null ? made : start()).of(kind);
    }

    static boolean isOwnDeleter(ManagedTensorKind kind, long deleter) {
        Stubs made = stubs;
        return made != null && deleter == made.of(kind);
    }

    private static synchronized Stubs start() {
        Stubs made = stubs;
        if (made == null) {
            Upcalls upcalls = Upcalls.open(ExportDeleterUpcalls.class);
            made = new Stubs(upcalls, upcalls.stub(MethodHandles.lookup(), "deleteVersioned", DELETER).address(),
                    upcalls.stub(MethodHandles.lookup(), "deleteLegacy", DELETER).address());
            ExportRegistry.armShutdownHook();
            stubs = made;
        }
        return made;
    }

    /** Frees the stubs; the caller has made sure that no export is live and none is being made. */
    static synchronized void release() {
        Stubs made = stubs;
        if (made != null) {
            stubs = null;
            made.upcalls().close();
        }
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
            ExportOwner owner = null;
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
