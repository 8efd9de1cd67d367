package org.jdlpack.abi;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.System.Logger.Level;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import org.jdlpack.abi.plumbing.Diagnostics;

/**
 * Calls the deleter of a managed tensor Java owns: the consumer's side of the contract.
 */
final class ForeignDeleters {

    /**
     * One address-less downcall serves every foreign deleter: {@code void (*)(void* self)}, the
     * pointer passed as a 64-bit integer (the same register on LP64 ABIs), so that no segment is
     * boxed for it.
     */
    private static final MethodHandle CALL = NativeMemory.addresslessDowncall(FunctionDescriptor.ofVoid(JAVA_LONG));

    private ForeignDeleters() {
    }

    /**
     * Calls {@code self->deleter(self)} unless it is NULL. Our own exports short-cut the
     * downcall-upcall round trip. Never throws: it runs from arena closes and the safety net.
     */
    static void call(ManagedTensorKind kind, long address) {
        try {
            long deleter = NativeMemory.readLong(address + kind.deleterOffset());
            if (deleter == 0) {
                return;
            }
            if (ExportDeleterUpcalls.isOwnDeleter(kind, deleter)) {
                ExportDeleterUpcalls.delete(kind, address);
                return;
            }
            CALL.invokeExact(MemorySegment.ofAddress(deleter), address);
        } catch (Throwable t) {
            Counters.DELETER_FAILURES.increment();
            Diagnostics.report(Level.ERROR, "calling the deleter of " + kind.structName() + " at 0x"
                    + Long.toHexString(address) + " failed", t);
        }
    }
}
