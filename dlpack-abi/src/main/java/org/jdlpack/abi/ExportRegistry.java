package org.jdlpack.abi;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import org.jdlpack.abi.internal.Counters;
import org.jdlpack.abi.internal.LeakTracking;

/**
 * The live exports, by the id written into their {@code manager_ctx}. The record, not the struct,
 * says what to free and whom to release: a consumer may scribble over the struct, but not over
 * this map.
 */
final class ExportRegistry {

    /** What one export allocated and keeps alive. */
    record Export(ExportOwner owner, ManagedTensorKind kind, long address, long headerBytes) {
    }

    private static final ConcurrentHashMap<Long, Export> LIVE = new ConcurrentHashMap<>();
    private static final AtomicLong NEXT_ID = new AtomicLong(1);

    private ExportRegistry() {
    }

    static long nextId() {
        return NEXT_ID.getAndIncrement();
    }

    static void add(long id, Export export) {
        LIVE.put(id, export);
        LeakTracking.track(export, () -> "export " + id + " (" + export.kind().structName() + " at 0x"
                + Long.toHexString(export.address()) + ")");
        Counters.LIVE_EXPORTS.increment();
        Counters.EXPORT_HEADER_BYTES.add(export.headerBytes());
    }

    /**
     * Removes the export with this id if it is the struct at {@code address} of this kind; exactly
     * one caller can succeed for each export.
     *
     * @return the export, or null for an unknown id, a mismatched address or kind, or a second call
     */
    static Export remove(long id, ManagedTensorKind kind, long address) {
        Export export = LIVE.get(id);
        if (export == null || export.address() != address || export.kind() != kind || !LIVE.remove(id, export)) {
            return null;
        }
        Counters.LIVE_EXPORTS.decrement();
        Counters.EXPORT_HEADER_BYTES.add(-export.headerBytes());
        LeakTracking.untrack(export);
        return export;
    }

    static int size() {
        return LIVE.size();
    }
}
