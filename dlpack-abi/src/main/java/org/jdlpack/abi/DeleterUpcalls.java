package org.jdlpack.abi;

import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

import org.jdlpack.abi.internal.Counters;
import org.jdlpack.abi.internal.Diagnostics;
import org.jdlpack.abi.internal.NativeMemory;
import org.jdlpack.abi.layout.DLManagedTensorLayout;
import org.jdlpack.abi.layout.DLManagedTensorVersionedLayout;

/**
 * The deleters jdlpack writes into its exports: one upcall stub per struct kind, made once for the
 * life of the process.
 *
 * <p>A deleter may be called on any thread, including native threads the JVM did not start, with
 * any locks held by the caller. It takes no lock of its own beyond the registry's, and it never
 * lets an exception escape: an exception leaving an upcall ends the JVM. Failures are counted in
 * {@link DLPackStats} and logged.
 */
final class DeleterUpcalls {

    private static final MemorySegment VERSIONED_STUB;
    private static final MemorySegment LEGACY_STUB;

    static {
        try {
            var lookup = MethodHandles.lookup();
            var type = MethodType.methodType(void.class, MemorySegment.class);
            VERSIONED_STUB = NativeMemory.globalUpcall(lookup.findStatic(DeleterUpcalls.class, "deleteVersioned", type),
                    DLManagedTensorVersionedLayout.DELETER_DESCRIPTOR);
            LEGACY_STUB = NativeMemory.globalUpcall(lookup.findStatic(DeleterUpcalls.class, "deleteLegacy", type),
                    DLManagedTensorLayout.DELETER_DESCRIPTOR);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private DeleterUpcalls() {
    }

    static long stubAddress(ManagedTensorKind kind) {
        return (kind == ManagedTensorKind.VERSIONED ? VERSIONED_STUB : LEGACY_STUB).address();
    }

    static boolean isOwnDeleter(ManagedTensorKind kind, long deleter) {
        return deleter == stubAddress(kind);
    }

    @SuppressWarnings("unused") // the upcall target
    private static void deleteVersioned(MemorySegment self) {
        delete(ManagedTensorKind.VERSIONED, self.address());
    }

    @SuppressWarnings("unused") // the upcall target
    private static void deleteLegacy(MemorySegment self) {
        delete(ManagedTensorKind.LEGACY, self.address());
    }

    /** Frees one export and drops its reference on the owner. Never throws. */
    static void delete(ManagedTensorKind kind, long address) {
        try {
            ExportOwner owner = null;
            long id = 0;
            if (address != 0) {
                id = NativeMemory.at(address, kind.structSize()).get(JAVA_LONG_UNALIGNED, kind.managerCtxOffset());
                owner = ExportRegistry.remove(id, kind, address);
            }
            if (owner == null) {
                Counters.BOGUS_DELETER_CALLS.increment();
                Diagnostics.report(Level.ERROR, "deleter called for " + kind.structName() + " at 0x" + Long.toHexString(address)
                        + " (manager_ctx " + id + "), which is not a live jdlpack export: a second call, or a bogus pointer; ignored",
                        null);
                return;
            }
            NativeMemory.free(address);
            owner.release();
        } catch (Throwable t) {
            Counters.DELETER_FAILURES.increment();
            Diagnostics.report(Level.ERROR, "jdlpack deleter failed for " + kind.structName() + " at 0x" + Long.toHexString(address), t);
        }
    }
}
