package org.jdlpack.abi;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.jdlpack.abi.plumbing.Ledger;

/**
 * The addresses of every managed tensor Java owns right now, so that the same foreign pointer is
 * never taken twice: two owners of one {@code DLManagedTensorVersioned*} would call its deleter
 * twice (a retry, two code paths reading one out-parameter). Java's own exports are protected by
 * the export registry; this covers every pointer, foreign or not, while a Java object owns it.
 *
 * <p>An open hash of {@value #BUCKETS} buckets, each one lock word and {@value #ENTRIES} addresses
 * in one {@code long[]} (longs, not references: a reference store into a table every thread writes
 * would mark GC cards that two threads share). Claiming takes the bucket's spin lock for a scan of
 * seven words, so two claims of one address are decided one after the other; dropping a claim is
 * one release store, made before the deleter is called, so that an address the producer reuses
 * for its next tensor is free again by the time that tensor arrives. A full bucket spills into a
 * concurrent map (its count in the lock word tells claims to look there).
 *
 * <p>Thread safety: every method may be called from any thread, including native threads inside
 * upcalls; nothing in the common path allocates, blocks or can unmount a virtual thread.
 */
final class OwnedPointers {

    /** What {@link #claim} returns for an address that spilled into the overflow map. */
    static final int SPILLED = -1;

    private static final int BUCKET_BITS = 11;
    private static final int BUCKETS = 1 << BUCKET_BITS;
    /** Longs per bucket: the lock word, then the addresses. */
    private static final int WIDTH = 8;
    private static final int ENTRIES = WIDTH - 1;
    /** Lock word: bit 0 held, the rest the number of this bucket's addresses in {@link #SPILL}. */
    private static final long LOCKED = 1;
    private static final long ONE_SPILLED = 2;

    private static final VarHandle WORDS = MethodHandles.arrayElementVarHandle(long[].class);
    /**
     * Room before bucket 0: the table's first cache line also holds the array's length, which
     * every claim's range checks read; a lock word written there would make them miss.
     */
    private static final int ROOM = WIDTH;
    /** 128 KiB: 2048 buckets of 64 bytes, after the room. */
    private static final long[] TABLE = new long[ROOM + BUCKETS * WIDTH];
    private static final Map<Long, Boolean> SPILL = new ConcurrentHashMap<>();

    private OwnedPointers() {
    }

    /**
     * Records that Java now owns {@code address}.
     *
     * @return a ticket for {@link #drop}: the entry's index, or {@link #SPILLED}
     * @throws IllegalStateException naming the address if Java already owns it; nothing is called
     */
    static int claim(ManagedTensorKind kind, long address) {
        int bucket = bucketOf(address);
        long lock = lock(bucket);
        int written = -1; // the entry this claim wrote, for the catch below
        try {
            int free = -1;
            for (int i = bucket + 1; i < bucket + WIDTH; i++) {
                long entry = (long) WORDS.getVolatile(TABLE, i);
                if (entry == address) {
                    throw alreadyOwned(kind, address);
                }
                if (entry == 0 && free < 0) {
                    free = i;
                }
            }
            if (lock >= ONE_SPILLED && SPILL.containsKey(address)) {
                throw alreadyOwned(kind, address);
            }
            if (free >= 0) {
                written = free;
                WORDS.setOpaque(TABLE, free, address); // published by the unlock's release store
                WORDS.setRelease(TABLE, bucket, lock); // unlocks: the last call in the try
                return free;
            }
            SPILL.put(address, Boolean.TRUE);
            lock += ONE_SPILLED;
            WORDS.setRelease(TABLE, bucket, lock); // unlocks, keeping the spill count: the last call in the try
            return SPILLED;
        } catch (Throwable t) {
            // A refusal, or a StackOverflowError anywhere above, the unlock's own call included
            // (an interpreted claim goes through the VarHandle's frames, which can overflow where
            // a compiled lock() did not). Plain array stores call nothing, so cannot overflow:
            // the claim is withdrawn (the caller gets the throwable, not a ticket) and the bucket
            // unlocked, never left held for every later claim in it to spin on.
            if (written >= 0) {
                TABLE[written] = 0;
            }
            TABLE[bucket] = lock;
            throw t;
        }
    }

    /**
     * Forgets a claim. Never throws.
     *
     * @param address the address claimed
     * @param ticket  what {@link #claim} returned for it
     */
    static void drop(long address, int ticket) {
        if (ticket >= 0) {
            // No fence needed: this store comes before the deleter in program order, and whoever
            // reuses the address synchronizes with the free() inside that deleter, so sees it.
            WORDS.setRelease(TABLE, ticket, 0L);
            return;
        }
        int bucket = bucketOf(address);
        long lock = lock(bucket);
        try {
            if (SPILL.remove(address) != null) {
                lock -= ONE_SPILLED;
            }
            WORDS.setRelease(TABLE, bucket, lock); // unlocks: the last call in the try
        } catch (Throwable t) { // a StackOverflowError: unlock without a call, as in claim
            TABLE[bucket] = lock;
            throw t;
        }
    }

    /**
     * {@return how many addresses are claimed} A scan of the table (128 KiB) and the spill map,
     * for statistics: the claims are the count of managed tensors Java owns, and counting them here
     * keeps a counter update off every import.
     */
    static long count() {
        long claimed = SPILL.size();
        for (int bucket = ROOM; bucket < TABLE.length; bucket += WIDTH) {
            for (int i = bucket + 1; i < bucket + WIDTH; i++) {
                if ((long) WORDS.getOpaque(TABLE, i) != 0) {
                    claimed++;
                }
            }
        }
        return claimed;
    }

    /** {@return the index of the lock word of the bucket {@code address} hashes to} */
    private static int bucketOf(long address) {
        // Fibonacci hashing: malloc'ed structs are 16-byte aligned, so the low bits alone would crowd.
        return ROOM + (int) ((address * 0x9E37_79B9_7F4A_7C15L) >>> (64 - BUCKET_BITS)) * WIDTH;
    }

    /** Takes a bucket's lock; {@return the lock word as it was, unlocked} Held for a scan of seven words. */
    private static long lock(int bucket) {
        for (int spins = 0; ; spins++) {
            long word = (long) WORDS.getVolatile(TABLE, bucket);
            if ((word & LOCKED) == 0 && WORDS.compareAndSet(TABLE, bucket, word, word | LOCKED)) {
                return word;
            }
            if (spins < 64) {
                Thread.onSpinWait();
            } else {
                Thread.yield(); // the holder was descheduled inside its few instructions
            }
        }
    }

    /**
     * What this table asks of the Java object that claimed an address, for the message that
     * refuses a second claim: which address it holds and whether it still owns it. Every owner
     * ({@link Ownership}) is one; defined here so that the table names no kind of owner.
     */
    interface Owner {
        /** {@return the managed tensor's address} */
        long address();

        /** {@return whether this owner still owns the address: neither handed it on nor called its deleter} */
        boolean ownsAddress();
    }

    /** {@return where the owner of {@code address} was created, when leak tracking recorded it; else null} */
    private static Throwable creationSiteOf(long address) {
        return Ledger.siteOf(o -> o instanceof Owner owner && owner.address() == address && owner.ownsAddress());
    }

    private static IllegalStateException alreadyOwned(ManagedTensorKind kind, long address) {
        Throwable firstOwner = creationSiteOf(address);
        String message = "the " + kind.structName() + " at 0x" + Long.toHexString(address) + " is already owned by Java (an "
                + "ImportedTensor or ExportedTensor took it and has not released it); taking it again would call its "
                + "deleter twice, so nothing was taken and nothing was called"
                + (firstOwner != null ? "; the first owner's creation site is the cause"
                        : " (run with -Dorg.jdlpack.leakTracking=true to see where the first owner was created)");
        return firstOwner != null ? new IllegalStateException(message, firstOwner) : new IllegalStateException(message);
    }
}
