package org.jdlpack.arrow;

import java.lang.foreign.MemorySegment;

import org.jdlpack.abi.plumbing.NativeAccess;

/**
 * This module's one restricted call: a segment over memory that Arrow owns (an {@code ArrowBuf}'s
 * address and length), so that jdlpack can read, write and export it.
 *
 * <p>Thread safety: stateless.
 */
final class ArrowMemory {

    static {
        // A first restricted call that warns if access is only allowed; denied, segmentAt says so.
        boolean disabled = NativeAccess.disabled(ArrowMemory.class);
        try {
            probe();
            NativeAccess.warnIfWasDisabled(ArrowMemory.class, disabled);
        } catch (IllegalCallerException denied) {
            // segmentAt throws NativeAccess.denied at the first use
        }
    }

    private ArrowMemory() {
    }

    @SuppressWarnings("restricted")
    private static void probe() {
        MemorySegment.NULL.reinterpret(0);
    }

    /**
     * {@return a segment of {@code bytes} at {@code address}, in the global scope} The caller
     * guarantees the memory outlives every use, by holding a reference on the buffer.
     *
     * @throws IllegalCallerException naming the flag, if native access is denied to this module
     */
    @SuppressWarnings("restricted")
    static MemorySegment segmentAt(long address, long bytes) {
        try {
            return MemorySegment.ofAddress(address).reinterpret(bytes);
        } catch (IllegalCallerException e) {
            throw NativeAccess.denied(ArrowMemory.class, e);
        }
    }
}
