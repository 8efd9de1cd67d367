package org.jdlpack.arrow;

import java.lang.foreign.MemorySegment;

import org.jdlpack.abi.ExportOptions;
import org.jdlpack.abi.ExportOwner;
import org.jdlpack.abi.ImportLifetime;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.ManagedTensorHandle;
import org.jdlpack.abi.TensorSpec;

/**
 * Every call this module makes into the jdlpack export and import core, in one place, so that a
 * change of that API is adapted here and nowhere else.
 */
final class AbiBridge {

    private AbiBridge() {
    }

    /**
     * Exports {@code spec} once. {@code release} runs exactly once, from whichever thread calls the
     * consumer's deleter (or now, if the export fails); {@code keepAlive} stays reachable until then.
     */
    static ManagedTensorHandle export(ExportOptions options, TensorSpec spec, Object keepAlive, Runnable release) {
        ExportOwner owner = ExportOwner.of(keepAlive, release);
        try {
            // Arrow's buffers are addressed directly, with byte_offset 0: folding changes nothing here.
            return owner.export(spec, options);
        } finally {
            owner.close(); // the export, if made, now holds the only reference
        }
    }

    /**
     * Takes ownership of the managed tensor and validates it. The tensor gets a lifetime of its own
     * that any thread may end with {@link ImportedTensor#close()} ({@link ImportLifetime#SHARED},
     * not the default, confined one): the last Arrow buffer over it may be released on any thread,
     * including a native one inside a deleter.
     *
     * @throws org.jdlpack.abi.InvalidTensorException if a field is malformed (the deleter has run)
     */
    static ImportedTensor importAnyThread(ManagedTensorHandle handle) {
        return handle.importTensor(ImportLifetime.SHARED);
    }

    /**
     * A segment over memory that Arrow owns (an {@code ArrowBuf}'s address and length). Its scope
     * is global: the caller guarantees the memory outlives every use, by holding a reference on the
     * buffer.
     */
    @SuppressWarnings("restricted")
    static MemorySegment segmentAt(long address, long bytes) {
        return MemorySegment.ofAddress(address).reinterpret(bytes);
    }
}
