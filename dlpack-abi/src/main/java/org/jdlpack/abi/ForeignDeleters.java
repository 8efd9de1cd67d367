package org.jdlpack.abi;

import java.lang.System.Logger.Level;

import org.jdlpack.abi.plumbing.Diagnostics;
import org.jdlpack.abi.plumbing.NativeAccess;

/**
 * Calls the deleter of a managed tensor Java owns: the consumer's side of the contract, and the
 * one place that dispatches on who made the tensor. A tensor of our own (an export imported back,
 * or an {@code ExportedTensor} withdrawn) goes straight to {@link ExportDeleterUpcalls#delete},
 * skipping a downcall that would only upcall back; any other goes to its deleter by downcall. Both
 * this and the deleter it short-cuts to sit below the import and the export sides: the deleter
 * reaches an export's owner only through the registry's {@link ExportHolder}, so the import side
 * calling it here never names the export side.
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
