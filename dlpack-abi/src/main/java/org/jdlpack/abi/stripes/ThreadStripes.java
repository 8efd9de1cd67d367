package org.jdlpack.abi.stripes;

/**
 * Spreads threads over a fixed number of stripes, so that state every export and import touches
 * (free slots, the header quarantine, the ledger's lists) is split into parts that different
 * threads rarely share: a single shared
 * cache line made every export a cache miss as soon as two threads exported at once.
 *
 * @since 0.1
 */
public final class ThreadStripes {

    private static final int BITS = 5;
    /** The number of stripes, a power of two; more than the cores of most machines. */
    public static final int COUNT = 1 << BITS;

    private ThreadStripes() {
    }

    /** {@return the stripe of the calling thread, in [0, COUNT)} Stable for the life of a thread. */
    public static int current() {
        // Fibonacci hashing: consecutive thread ids land on distant stripes.
        return (int) ((Thread.currentThread().threadId() * 0x9E37_79B9_7F4A_7C15L) >>> (64 - BITS));
    }
}
