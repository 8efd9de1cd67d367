package org.jdlpack.abi;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;

import org.jdlpack.abi.internal.Counters;
import org.jdlpack.abi.internal.LeakTracking;

/**
 * The live exports, in a table of slots indexed by the id written into their {@code manager_ctx}.
 * The slot, not the struct, says what to free and whom to release: a consumer may scribble over
 * the struct, but not over this table.
 *
 * <p>An id is {@code generation << 28 | slot}. Each slot's state ({@code generation << 2 | phase})
 * moves FREE, RESERVED, LIVE, FREE, ..., and the generation grows on every reuse, so a second
 * deleter call for a struct whose slot was reused finds another generation and is refused. Removal
 * is one compare-and-set on that state: exactly one caller wins. Free slots form a lock-free stack
 * with a tagged head. Nothing is allocated per export (pages of 4096 slots are added as needed, up
 * to 2^28 live exports), which keeps the export hot path free of garbage.
 */
final class ExportRegistry {

    private static final int SLOT_BITS = 28;
    private static final long SLOT_MASK = (1L << SLOT_BITS) - 1;
    private static final int PAGE_BITS = 12;
    private static final int PAGE_SIZE = 1 << PAGE_BITS;
    private static final int MAX_PAGES = 1 << (SLOT_BITS - PAGE_BITS);
    private static final long FREE = 0;
    private static final long RESERVED = 1;
    private static final long LIVE = 2;

    /** The fields of 4096 slots. Plain arrays: the state's volatile write and read publish them. */
    private static final class Page {
        final ExportOwner[] owners = new ExportOwner[PAGE_SIZE];
        final long[] addresses = new long[PAGE_SIZE];
        final long[] headerBytes = new long[PAGE_SIZE];
        final byte[] kinds = new byte[PAGE_SIZE];
        final AtomicLongArray states = new AtomicLongArray(PAGE_SIZE);
        /** Free-stack links: the next free slot + 1, 0 at the bottom. */
        final AtomicIntegerArray next = new AtomicIntegerArray(PAGE_SIZE);
    }

    private static final AtomicReferenceArray<Page> PAGES = new AtomicReferenceArray<>(MAX_PAGES);
    /** The next slot never used yet. */
    private static final AtomicInteger FRESH = new AtomicInteger();
    /** The free stack: {@code tag << 32 | (slot + 1)}, 0 when empty; the tag defeats ABA. */
    private static final AtomicLong FREE_HEAD = new AtomicLong();

    private ExportRegistry() {
    }

    /** Claims a slot for an export being built; its id goes into {@code manager_ctx}. */
    static long reserve() {
        int slot = popFree();
        if (slot < 0) {
            slot = FRESH.getAndIncrement();
            if (slot >= MAX_PAGES * PAGE_SIZE) {
                throw new IllegalStateException("more than 2^28 exports are live at once");
            }
            int pageIndex = slot >>> PAGE_BITS;
            if (PAGES.get(pageIndex) == null) {
                PAGES.compareAndSet(pageIndex, null, new Page());
            }
        }
        Page page = PAGES.get(slot >>> PAGE_BITS);
        int i = slot & (PAGE_SIZE - 1);
        long generation = (page.states.get(i) >>> 2) + 1;
        page.states.set(i, generation << 2 | RESERVED); // the slot is ours alone: it came off the stack or was fresh
        return generation << SLOT_BITS | slot;
    }

    /** Makes a reserved slot live: from now on a deleter call with its id can remove it. */
    static void publish(long id, ExportOwner owner, ManagedTensorKind kind, long address, long headerBytes) {
        int slot = (int) (id & SLOT_MASK);
        Page page = PAGES.get(slot >>> PAGE_BITS);
        int i = slot & (PAGE_SIZE - 1);
        page.owners[i] = owner;
        page.addresses[i] = address;
        page.headerBytes[i] = headerBytes;
        page.kinds[i] = (byte) kind.ordinal();
        page.states.set(i, (id >>> SLOT_BITS) << 2 | LIVE); // volatile: publishes the fields above
        Counters.LIVE_EXPORTS.increment();
        Counters.EXPORT_HEADER_BYTES.add(headerBytes);
        if (LeakTracking.isEnabled()) {
            LeakTracking.track(id, () -> "export " + id + " (" + kind.structName() + " at 0x" + Long.toHexString(address) + ")");
        }
    }

    /** Gives back a reserved slot whose export could not be built. */
    static void cancel(long id) {
        int slot = (int) (id & SLOT_MASK);
        PAGES.get(slot >>> PAGE_BITS).states.set(slot & (PAGE_SIZE - 1), (id >>> SLOT_BITS) << 2 | FREE);
        pushFree(slot);
    }

    /**
     * Removes the live export with this id if it is the struct at {@code address} of this kind;
     * exactly one caller can succeed for each export.
     *
     * @return its owner, or null for an unknown id, a mismatched address or kind, or a second call
     */
    static ExportOwner remove(long id, ManagedTensorKind kind, long address) {
        if (id <= 0) {
            return null;
        }
        long slot = id & SLOT_MASK;
        if (slot >= FRESH.get()) {
            return null;
        }
        Page page = PAGES.get((int) (slot >>> PAGE_BITS));
        if (page == null) {
            return null;
        }
        int i = (int) (slot & (PAGE_SIZE - 1));
        long generation = id >>> SLOT_BITS;
        long live = generation << 2 | LIVE;
        // The volatile read makes the fields written before publication visible.
        if (page.states.get(i) != live || page.addresses[i] != address || page.kinds[i] != kind.ordinal()) {
            return null;
        }
        if (!page.states.compareAndSet(i, live, generation << 2 | FREE)) {
            return null; // another deleter call won
        }
        ExportOwner owner = page.owners[i];
        long headerBytes = page.headerBytes[i];
        page.owners[i] = null; // no longer keeps the owner reachable
        pushFree((int) slot);
        Counters.LIVE_EXPORTS.decrement();
        Counters.EXPORT_HEADER_BYTES.add(-headerBytes);
        if (LeakTracking.isEnabled()) {
            LeakTracking.untrack(id);
        }
        return owner;
    }

    private static int popFree() {
        while (true) {
            long head = FREE_HEAD.get();
            int top = (int) head;
            if (top == 0) {
                return -1;
            }
            int slot = top - 1;
            int below = PAGES.get(slot >>> PAGE_BITS).next.get(slot & (PAGE_SIZE - 1));
            long tag = (head >>> 32) + 1;
            if (FREE_HEAD.compareAndSet(head, tag << 32 | (below & 0xFFFF_FFFFL))) {
                return slot;
            }
        }
    }

    private static void pushFree(int slot) {
        AtomicIntegerArray next = PAGES.get(slot >>> PAGE_BITS).next;
        while (true) {
            long head = FREE_HEAD.get();
            next.set(slot & (PAGE_SIZE - 1), (int) head);
            long tag = (head >>> 32) + 1;
            if (FREE_HEAD.compareAndSet(head, tag << 32 | (slot + 1))) {
                return;
            }
        }
    }
}
