package org.jdlpack.abi;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;

import org.jdlpack.abi.plumbing.Ledger;
import org.jdlpack.abi.stripes.ThreadStripes;


/**
 * The live exports, in a table of slots indexed by the id written into their {@code manager_ctx}.
 * The slot, not the struct, says what to free and whom to release: a consumer may scribble over
 * the struct, but not over this table. Whom to release is an {@link ExportHolder}: the slot keeps
 * it (the export's owner) reachable until the deleter runs, and knows no more of it than how to
 * drop the export's reference, so the table and the deleter sit below the export side.
 *
 * <p>An id is {@code generation << 28 | slot}, always positive. Each slot's state
 * ({@code generation << 2 | phase}) moves FREE, RESERVED, LIVE, FREE, ..., and the generation
 * grows on every reuse, wrapping from {@link #MAX_GENERATION} to 1 (never 0, so that no id is 0 or
 * negative), so a second deleter call for a struct whose slot was reused finds another generation
 * and is refused. Removal is one compare-and-set on that state: exactly one caller wins.
 *
 * <p>Free slots are kept on {@link ThreadStripes#COUNT} lock-free stacks, one per thread stripe,
 * and a stripe takes never-used slots {@value #CHUNK} at a time: threads exporting at once touch
 * different stack heads, and no two slots share a cache line. A freed slot goes to the
 * stack of the thread that freed it; a stripe that runs dry takes another stripe's whole stack
 * before it takes fresh slots, so a producer thread fed by a consumer thread does not grow the
 * table. Nothing is allocated per export (pages of 4096 slots, 1 MiB each, are added as needed, up
 * to 2^28 live exports).
 */
final class ExportRegistry {

    private static final int SLOT_BITS = 28;
    private static final long SLOT_MASK = (1L << SLOT_BITS) - 1;
    /** The largest generation that keeps an id positive; the next one is 1. */
    static final long MAX_GENERATION = (1L << (63 - SLOT_BITS)) - 1;
    private static final int PAGE_BITS = 12;
    private static final int PAGE_SIZE = 1 << PAGE_BITS;
    private static final int MAX_PAGES = 1 << (SLOT_BITS - PAGE_BITS);
    /** Fresh slots a stripe claims at once, so that the shared counter of fresh slots is rarely touched. */
    private static final int CHUNK = 64;
    private static final long FREE = 0;
    private static final long RESERVED = 1;
    private static final long LIVE = 2;

    /**
     * The fields of 4096 slots, each slot's 128 bytes apart. Threads exporting at once work on
     * different slots, but not on distant ones: a stripe that runs dry takes another stripe's free
     * slots, the neighbours of the slot that stripe keeps reusing. In one array per field,
     * neighbours share every cache line they write. Objects are only 8-byte aligned, so a 64-byte
     * stride would still let a slot's words spill into the line where the next slot's begin; 128
     * bytes apart, with 40 bytes used, no 64-byte line holds words of two slots, and slot 0 keeps
     * clear of the line each array's length is read from. 1 MiB a page (1.5 MiB without
     * compressed references), allocated by the export that first needs it.
     */
    private static final class Page {
        /** Longs per slot: 128 bytes. */
        private static final int STRIDE = 16;
        private static final int STATE = 0;
        private static final int ADDRESS = 1;
        private static final int HEADER_BYTES = 2;
        private static final int KIND = 3;
        /** Free-stack link: the next free slot + 1, 0 at the bottom; published by the head's CAS. */
        private static final int NEXT = 4;
        /** References per owner: 128 bytes with compressed references, 256 without. */
        private static final int OWNER_STRIDE = 32;
        private static final VarHandle WORDS = MethodHandles.arrayElementVarHandle(long[].class);

        /**
         * Room before slot 0 in each array: its first cache line also holds the array's length,
         * which every thread's range check reads on every access. With slot 0 written there, one
         * thread's exports made every other thread's accesses miss the cache (three times the CPU
         * per export at two threads, measured).
         */
        private static final int ROOM = STRIDE;
        private static final int OWNER_ROOM = OWNER_STRIDE;

        /** Plain words, but for the state: its release write and volatile read publish the others. Words 0-4 of a slot are used. */
        private final long[] words = new long[ROOM + PAGE_SIZE * STRIDE];
        private final ExportHolder[] owners = new ExportHolder[OWNER_ROOM + PAGE_SIZE * OWNER_STRIDE];

        long state(int i) {
            return (long) WORDS.getVolatile(words, ROOM + i * STRIDE + STATE);
        }

        /** A release store (no fence on x86): it publishes the slot's fields to whoever reads the state. */
        void setState(int i, long state) {
            WORDS.setRelease(words, ROOM + i * STRIDE + STATE, state);
        }

        boolean replaceState(int i, long expected, long state) {
            return WORDS.compareAndSet(words, ROOM + i * STRIDE + STATE, expected, state);
        }

        /** Fills a reserved slot; {@link #setState} then publishes it. */
        void fill(int i, ExportHolder owner, long address, long headerBytes, ManagedTensorKind kind) {
            owners[OWNER_ROOM + i * OWNER_STRIDE] = owner;
            words[ROOM + i * STRIDE + ADDRESS] = address;
            words[ROOM + i * STRIDE + HEADER_BYTES] = headerBytes;
            words[ROOM + i * STRIDE + KIND] = kind.ordinal();
        }

        long address(int i) {
            return words[ROOM + i * STRIDE + ADDRESS];
        }

        long headerBytes(int i) {
            return words[ROOM + i * STRIDE + HEADER_BYTES];
        }

        int kind(int i) {
            return (int) words[ROOM + i * STRIDE + KIND];
        }

        /** Takes the owner out, so that the table no longer keeps it reachable. */
        ExportHolder takeOwner(int i) {
            ExportHolder owner = owners[OWNER_ROOM + i * OWNER_STRIDE];
            owners[OWNER_ROOM + i * OWNER_STRIDE] = null;
            return owner;
        }

        int next(int i) {
            return (int) words[ROOM + i * STRIDE + NEXT];
        }

        void setNext(int i, int next) {
            words[ROOM + i * STRIDE + NEXT] = next;
        }
    }

    /**
     * One stripe's stack of free slots: {@code tag << 32 | (slot + 1)}, 0 slot part when empty; the
     * tag defeats ABA. Padded so that two heads never share a cache line.
     */
    @SuppressWarnings("unused") // the padding fields exist only to take space
    private static final class FreeStack {
        private static final VarHandle HEAD;

        static {
            try {
                HEAD = MethodHandles.lookup().findVarHandle(FreeStack.class, "head", long.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        long p0, p1, p2, p3, p4, p5, p6;
        volatile long head;
        long q0, q1, q2, q3, q4, q5, q6;

        long head() {
            return head;
        }

        boolean replace(long expected, long next) {
            return HEAD.compareAndSet(this, expected, next);
        }
    }

    private static final AtomicReferenceArray<Page> PAGES = new AtomicReferenceArray<>(MAX_PAGES);
    /** The next slot never used yet; moves {@value #CHUNK} at a time. */
    private static final AtomicInteger FRESH = new AtomicInteger();
    private static final FreeStack[] STACKS = new FreeStack[ThreadStripes.COUNT];

    /** The shutdown hook that disarms live exports; registered by the first export, removed by a release. */
    private static Thread disarmHook;

    static {
        for (int i = 0; i < STACKS.length; i++) {
            STACKS[i] = new FreeStack();
        }
    }

    /** Registers {@link #disarmAll} to run at JVM shutdown, once; called with the first deleter stub. */
    static synchronized void armShutdownHook() {
        if (disarmHook != null) {
            return;
        }
        // Nothing inherited from the exporting thread: its context class loader (a job's, in an
        // engine) would stay reachable from the hook until the JVM ends.
        Thread hook = Thread.ofPlatform().name("jdlpack-disarm-deleters").inheritInheritableThreadLocals(false)
                .unstarted(ExportRegistry::disarmAll);
        hook.setContextClassLoader(ExportRegistry.class.getClassLoader());
        try {
            Runtime.getRuntime().addShutdownHook(hook);
            disarmHook = hook;
        } catch (IllegalStateException shuttingDown) {
            // First export during shutdown: nothing live yet to disarm.
        }
    }

    /** Removes the shutdown hook, which would otherwise keep this class, and its class loader, reachable. */
    static synchronized void removeShutdownHook() {
        if (disarmHook != null) {
            try {
                Runtime.getRuntime().removeShutdownHook(disarmHook);
            } catch (IllegalStateException shuttingDown) {
                // The hooks are running: nothing to unregister.
            }
            disarmHook = null;
        }
    }

    private ExportRegistry() {
    }

    /** Claims a slot for an export being built; its id goes into {@code manager_ctx}. */
    static long reserve() {
        FreeStack stack = STACKS[ThreadStripes.current()];
        int slot = pop(stack);
        if (slot < 0) {
            slot = refill(stack);
        }
        Page page = PAGES.get(slot >>> PAGE_BITS);
        int i = slot & (PAGE_SIZE - 1);
        long generation = (page.state(i) >>> 2) + 1;
        if (generation > MAX_GENERATION) {
            generation = 1; // wrap, skipping 0: an id must stay positive
        }
        page.setState(i, generation << 2 | RESERVED); // the slot is ours alone: it came off a stack or was fresh
        return generation << SLOT_BITS | slot;
    }

    /** Makes a reserved slot live: from now on a deleter call with its id can remove it. */
    static void publish(long id, ExportHolder owner, ManagedTensorKind kind, long address, long headerBytes) {
        int slot = (int) (id & SLOT_MASK);
        Page page = PAGES.get(slot >>> PAGE_BITS);
        int i = slot & (PAGE_SIZE - 1);
        page.fill(i, owner, address, headerBytes, kind);
        page.setState(i, (id >>> SLOT_BITS) << 2 | LIVE); // publishes the fields above
        Counters.exportPublished(headerBytes);
        if (Ledger.trackingEnabled()) {
            Ledger.track(id, () -> "export " + id + " (" + kind.structName() + " at 0x" + Long.toHexString(address) + ")");
        }
    }

    /** Gives back a reserved slot whose export could not be built. */
    static void cancel(long id) {
        int slot = (int) (id & SLOT_MASK);
        page(slot).setState(slot & (PAGE_SIZE - 1), (id >>> SLOT_BITS) << 2 | FREE);
        push(STACKS[ThreadStripes.current()], slot);
    }

    /**
     * Removes the live export with this id if it is the struct at {@code address} of this kind, and
     * hands its header to the {@link HeaderQuarantine}, which frees it later; exactly one caller can
     * succeed for each export. Allocates nothing (it runs in deleter upcalls,
     * possibly with the heap exhausted).
     *
     * @return its owner, or null for an unknown id, a mismatched address or kind, or a second call
     */
    static ExportHolder remove(long id, ManagedTensorKind kind, long address) {
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
        if (page.state(i) != live || page.address(i) != address || page.kind(i) != kind.ordinal()) {
            return null;
        }
        if (!page.replaceState(i, live, generation << 2 | FREE)) {
            return null; // another deleter call won
        }
        ExportHolder owner = page.takeOwner(i);
        long headerBytes = page.headerBytes(i);
        push(STACKS[ThreadStripes.current()], (int) slot);
        HeaderQuarantine.retire(address, headerBytes);
        Counters.exportRemoved(headerBytes);
        if (Ledger.trackingEnabled()) {
            Ledger.untrack(id);
        }
        return owner;
    }

    /**
     * At JVM shutdown: takes every live export out of the table and sets its {@code deleter} to
     * NULL. A deleter upcall after the JVM is gone (from a C atexit handler or a static destructor)
     * aborts the process inside the JVM's upcall entry, before any Java code could intervene; the
     * DLPack spec makes consumers check for a NULL deleter, so a consumer that frees at exit skips
     * the call instead. The headers and the owners' memory are left to the process exit. A consumer
     * that loaded the deleter before this ran can still call it: the call is then refused as not
     * live, harmlessly, as long as the JVM still runs.
     */
    static void disarmAll() {
        int fresh = FRESH.get();
        for (int slot = 0; slot < fresh; slot++) {
            Page page = PAGES.get(slot >>> PAGE_BITS);
            if (page == null) {
                slot |= PAGE_SIZE - 1; // skip the missing page
                continue;
            }
            int i = slot & (PAGE_SIZE - 1);
            long state = page.state(i);
            // Winning the removal makes the header ours: no deleter call will quarantine or free it.
            if ((state & 3) == LIVE && page.replaceState(i, state, state & ~3L | FREE)) {
                ManagedTensorKind kind = ManagedTensorKind.values()[page.kind(i)];
                NativeMemory.writeLong(page.address(i) + kind.deleterOffset(), 0);
            }
        }
    }

    /** {@return the slot an id names} For tests. */
    static int slotOf(long id) {
        return (int) (id & SLOT_MASK);
    }

    /** {@return the generation an id carries} For tests. */
    static long generationOf(long id) {
        return id >>> SLOT_BITS;
    }

    /**
     * Test seam: sets the generation of a free slot, so that a test can reach the wrap-around
     * without 2^35 reuses.
     *
     * @throws IllegalStateException if the slot is not free
     */
    static void setFreeSlotGeneration(int slot, long generation) {
        Page page = page(slot);
        int i = slot & (PAGE_SIZE - 1);
        long state = page.state(i);
        if ((state & 3) != FREE || !page.replaceState(i, state, generation << 2 | FREE)) {
            throw new IllegalStateException("slot " + slot + " is not free");
        }
    }

    private static Page page(int slot) {
        return PAGES.get(slot >>> PAGE_BITS);
    }

    private static int pop(FreeStack stack) {
        while (true) {
            long head = stack.head();
            int top = (int) head;
            if (top == 0) {
                return -1;
            }
            int slot = top - 1;
            int below = page(slot).next(slot & (PAGE_SIZE - 1));
            long tag = (head >>> 32) + 1;
            if (stack.replace(head, tag << 32 | (below & 0xFFFF_FFFFL))) {
                return slot;
            }
        }
    }

    private static void push(FreeStack stack, int slot) {
        pushChain(stack, slot, slot);
    }

    /** Pushes the chain top..bottom (already linked through {@code next}) onto a stack. */
    private static void pushChain(FreeStack stack, int top, int bottom) {
        Page page = page(bottom);
        while (true) {
            long head = stack.head();
            page.setNext(bottom & (PAGE_SIZE - 1), (int) head);
            long tag = (head >>> 32) + 1;
            if (stack.replace(head, tag << 32 | (top + 1))) {
                return;
            }
        }
    }

    /** Takes the whole stack, or returns -1 when it is empty; the caller owns the detached chain. */
    private static int takeAll(FreeStack stack) {
        while (true) {
            long head = stack.head();
            int top = (int) head;
            if (top == 0) {
                return -1;
            }
            long tag = (head >>> 32) + 1;
            if (stack.replace(head, tag << 32)) {
                return top - 1;
            }
        }
    }

    /**
     * For a stripe whose stack is empty: takes another stripe's whole stack, or else claims
     * {@value #CHUNK} fresh slots; returns one slot and pushes the rest onto {@code own}.
     */
    private static int refill(FreeStack own) {
        for (FreeStack other : STACKS) {
            if (other == own) {
                continue;
            }
            int top = takeAll(other);
            if (top >= 0) {
                int rest = page(top).next(top & (PAGE_SIZE - 1)) - 1;
                if (rest >= 0) {
                    int bottom = rest;
                    for (int below; (below = page(bottom).next(bottom & (PAGE_SIZE - 1)) - 1) >= 0; ) {
                        bottom = below;
                    }
                    pushChain(own, rest, bottom);
                }
                return top;
            }
        }
        int first = FRESH.getAndAdd(CHUNK);
        if (first < 0 || first > MAX_PAGES * PAGE_SIZE - CHUNK) {
            FRESH.getAndAdd(-CHUNK);
            throw new IllegalStateException("more than 2^28 exports are live at once");
        }
        int pageIndex = first >>> PAGE_BITS;
        if (PAGES.get(pageIndex) == null) {
            PAGES.compareAndSet(pageIndex, null, new Page());
        }
        Page page = PAGES.get(pageIndex);
        for (int slot = first + 1; slot < first + CHUNK - 1; slot++) {
            page.setNext(slot & (PAGE_SIZE - 1), slot + 2); // links slot to slot + 1
        }
        pushChain(own, first + 1, first + CHUNK - 1);
        return first;
    }
}
