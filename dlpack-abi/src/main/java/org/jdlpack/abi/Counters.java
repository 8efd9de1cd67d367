package org.jdlpack.abi;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.LongAdder;

import org.jdlpack.abi.stripes.ThreadStripes;

/**
 * The process-wide counters behind {@code org.jdlpack.abi.DLPackStats}. Updated from any thread,
 * upcalls included; {@link LongAdder} keeps contended updates cheap. What can be counted where it
 * already lies is counted there when asked, not on the hot path, and not here: the owned managed
 * tensors are the claims in {@code OwnedPointers}, the live exports and their header bytes the
 * live slots of {@code ExportRegistry}, which {@code DLPackStats} counts itself, so that the
 * counters, which both sides update, know neither side.
 */
final class Counters {

    /** Export owners whose release action has not run: opened minus released. */
    private static final StripedSum EXPORT_OWNERS = new StripedSum();
    /** Deleter calls for a pointer that is not a live export of ours. */
    public static final LongAdder BOGUS_DELETER_CALLS = new LongAdder();
    /** Failures inside a deleter, ours (upcall) or a foreign one called from Java. */
    public static final LongAdder DELETER_FAILURES = new LongAdder();
    /** Exceptions thrown by user release callbacks. */
    public static final LongAdder RELEASE_CALLBACK_FAILURES = new LongAdder();

    private Counters() {
    }

    /**
     * A sum kept in one counter per thread stripe ({@link ThreadStripes}), each on cache lines of
     * its own: a thread always adds to its own stripe's, so two threads share a line only when
     * their ids share a stripe. A {@link LongAdder} picks its cell by a random probe and moves only
     * when a compare-and-set fails: two threads that take turns on one cell never fail, and pass
     * the line between their cores on every update for as long as they run.
     */
    private static final class StripedSum {
        /** Longs between two stripes' counters: 128 bytes, so that no two share a 64-byte line. */
        private static final int STRIDE = 16;
        private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);
        private final long[] sums = new long[(ThreadStripes.COUNT + 1) * STRIDE];

        void add(long delta) {
            LONGS.getAndAdd(sums, (ThreadStripes.current() + 1) * STRIDE, delta);
        }

        long sum() {
            long total = 0;
            for (int stripe = 1; stripe <= ThreadStripes.COUNT; stripe++) {
                total += (long) LONGS.getVolatile(sums, stripe * STRIDE);
            }
            return total;
        }
    }

    /** An export owner was made. */
    static void exportOwnerOpened() {
        EXPORT_OWNERS.add(1);
    }

    /** An export owner's release action ran (or is running). */
    static void exportOwnerReleased() {
        EXPORT_OWNERS.add(-1);
    }

    /** {@return export owners whose release action has not run} */
    static long liveExportOwners() {
        return EXPORT_OWNERS.sum();
    }
}
