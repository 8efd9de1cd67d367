package org.jdlpack.abi;

import java.lang.System.Logger.Level;

import org.jdlpack.abi.plumbing.Diagnostics;
import org.jdlpack.abi.plumbing.NativeAccess;

/**
 * Calls the deleter of a managed tensor Java owns: the consumer's side of the contract.
 */
final class ForeignDeleters {

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
            NativeMemory.callDeleter(deleter, address);
        } catch (IllegalCallerException denied) {
            // Native access is denied: an import that got here throws the refusal with the whole
            // explanation, so this one line only names the flag, without a second copy of it.
            Counters.DELETER_FAILURES.increment();
            Diagnostics.report(Level.ERROR, "the deleter of " + kind.structName() + " at 0x" + Long.toHexString(address)
                    + " was not called: native access is denied; run java with " + NativeAccess.flagFor(NativeMemory.class), null);
        } catch (Throwable t) {
            Counters.DELETER_FAILURES.increment();
            Diagnostics.report(Level.ERROR, "calling the deleter of " + kind.structName() + " at 0x"
                    + Long.toHexString(address) + " failed", t);
        }
    }
}
