package org.jdlpack.abi;

import java.util.concurrent.atomic.LongAdder;

/**
 * The process-wide counters behind {@code org.jdlpack.abi.DLPackStats}. Updated from any thread,
 * upcalls included; {@link LongAdder} keeps contended updates cheap.
 */
final class Counters {

    /** Exports whose deleter has not run yet. */
    public static final LongAdder LIVE_EXPORTS = new LongAdder();
    /** Bytes of export headers (struct, shape, strides) allocated with malloc and not yet freed. */
    public static final LongAdder EXPORT_HEADER_BYTES = new LongAdder();
    /** Managed tensors Java owns and has neither released nor handed on. */
    public static final LongAdder OWNED_MANAGED_TENSORS = new LongAdder();
    /** Deleter calls for a pointer that is not a live export of ours. */
    public static final LongAdder BOGUS_DELETER_CALLS = new LongAdder();
    /** Failures inside a deleter, ours (upcall) or a foreign one called from Java. */
    public static final LongAdder DELETER_FAILURES = new LongAdder();
    /** Exceptions thrown by user release callbacks. */
    public static final LongAdder RELEASE_CALLBACK_FAILURES = new LongAdder();

    private Counters() {
    }
}
