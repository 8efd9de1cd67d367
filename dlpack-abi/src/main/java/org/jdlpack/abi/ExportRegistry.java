package org.jdlpack.abi;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;

import org.jdlpack.abi.plumbing.Ledger;
import org.jdlpack.abi.stripes.StripeLock;
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
 * and is refused. Removal is one compare-and-set on that state: exactly one caller wins. The state
 * words are also the counts: {@link #liveExports()} and {@link #exportHeaderBytes()} are read off
 * the LIVE slots when asked, so that no export and no deleter updates a counter.
 *
 * <p><b>Headers are used again, after a quarantine.</b> The header (struct, shape, strides) an
 * export is written into is malloc'ed once and used again by later exports, so that an export and
 * its deleter call neither malloc nor free. A freed header must not be used again at once, though:
 * the deleter gets nothing but the struct pointer and reads the id from the struct, so a buggy
 * second deleter call with the old pointer would read the next export's id and free it while its
 * consumer reads it. So a freed header waits, with the old id in it, in its thread stripe's
 * quarantine, first in, first out: only after {@value #QUARANTINE} later deletions on the same
 * stripe (or {@value #QUARANTINE_BYTES} bytes of later headers) is it handed out again. Until then a second call reads the old id, whose slot is not
 * live (or lives in a later generation), and is refused. A later one can still hit the reused
 * header; the ABI leaves no way to close that gap. Slots themselves are used again at once, last
 * freed first, so that a thread's exports keep touching the same few cache lines: the generation
 * refuses a stale id.
 *
 * <p>Slots and headers are kept per thread stripe ({@link ThreadStripes#COUNT}), each stripe under
 * a try-lock of its own: a stack of free slots, the quarantine, and the headers that have waited it
 * out. An export takes the lock once to take a slot and a header, a deleter call once to give them
 * back: threads exporting at once take different locks, and no two slots share a cache line. A
 * stripe that runs out of slots or headers takes another stripe's before it makes new ones (fresh
 * slots {@value #CHUNK} at a time, headers by malloc), so a producer thread fed by a consumer thread
 * neither grows the table nor mallocs per export. Nothing is allocated on the Java heap per export
 * (pages of 4096 slots, 1 MiB each, are added as needed, up to 2^28 live exports); a stripe keeps at
 * most {@value #KEPT_HEADERS} headers past the quarantine, none larger than a versioned struct of
 * eight dimensions, and frees the rest.
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
    /** Freed headers a stripe holds back, first in, first out, before they are used again. */
    static final int QUARANTINE = 256;
    /** Header bytes a stripe's quarantine holds at most (headers of many dimensions are large). */
    static final long QUARANTINE_BYTES = 64 * 1024;
    /** Headers past the quarantine a stripe keeps for reuse; beyond, a header is freed. */
    static final int KEPT_HEADERS = 256;
    /** The header malloc'ed at least, and the largest kept for reuse: a versioned struct of eight dimensions. */
    static final long KEPT_HEADER_BYTES = ManagedTensorKind.VERSIONED.structSize() + 16L * 8;
    private static final long FREE = 0;
    private static final long RESERVED = 1;
    private static final long LIVE = 2;

    /**
     * The fields of 4096 slots, each slot's 128 bytes apart. Threads exporting at once work on
     * different slots, but not on distant ones: a stripe that runs dry takes another stripe's free
     * slots, the neighbours of the slot that stripe keeps reusing. In one array per field,
     * neighbours share every cache line they write. Objects are only 8-byte aligned, so a 64-byte
     * stride would still let a slot's words spill into the line where the next slot's begin; 128
     * bytes apart, with 48 bytes used, no 64-byte line holds words of two slots, and slot 0 keeps
     * clear of the line each array's length is read from. 1 MiB a page (1.5 MiB without
     * compressed references), allocated by the export that first needs it.
     */
    private static final class Page {
        /** Longs per slot: 128 bytes. */
        private static final int STRIDE = 16;
        private static final int STATE = 0;
        /** The header of the slot's export, while reserved or live (after: the last one's, stale). */
        private static final int ADDRESS = 1;
        /** The bytes of the header the live export uses. */
        private static final int HEADER_BYTES = 2;
        private static final int KIND = 3;
        /** Free-stack link: the next free slot + 1, 0 at the bottom; written and read under a stripe's lock. */
        private static final int NEXT = 4;
        /** The bytes malloc'ed at {@link #ADDRESS}. */
        private static final int CAPACITY = 5;
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

        /** Plain words, but for the state: its volatile write and read publish the others. Words 0-5 of a slot are used. */
        private final long[] words = new long[ROOM + PAGE_SIZE * STRIDE];
        private final ExportHolder[] owners = new ExportHolder[OWNER_ROOM + PAGE_SIZE * OWNER_STRIDE];

        long state(int i) {
            return (long) WORDS.getVolatile(words, ROOM + i * STRIDE + STATE);
        }

        /** A release store (no fence on x86): publishes the slot's fields to whoever reads the state. */
        void setState(int i, long state) {
            WORDS.setRelease(words, ROOM + i * STRIDE + STATE, state);
        }

        /**
         * A volatile store: publishes the slot's fields, and is ordered before the volatile reads
         * that follow it, as {@link ExportDeleterUpcalls}' handshake with a release needs.
         */
        void setStateVolatile(int i, long state) {
            WORDS.setVolatile(words, ROOM + i * STRIDE + STATE, state);
        }

        boolean replaceState(int i, long expected, long state) {
            return WORDS.compareAndSet(words, ROOM + i * STRIDE + STATE, expected, state);
        }

        /** Fills a reserved slot; {@link #setStateVolatile} then publishes it. */
        void fill(int i, ExportHolder owner, long headerBytes, ManagedTensorKind kind) {
            owners[OWNER_ROOM + i * OWNER_STRIDE] = owner;
            words[ROOM + i * STRIDE + HEADER_BYTES] = headerBytes;
            words[ROOM + i * STRIDE + KIND] = kind.ordinal();
        }

        long address(int i) {
            return words[ROOM + i * STRIDE + ADDRESS];
        }

        long capacity(int i) {
            return words[ROOM + i * STRIDE + CAPACITY];
        }

        /** Gives the slot a header; only whoever took the slot writes it. */
        void setHeader(int i, long address, long capacity) {
            words[ROOM + i * STRIDE + ADDRESS] = address;
            words[ROOM + i * STRIDE + CAPACITY] = capacity;
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
     * One stripe: its free slots (a stack linked through the slots), its quarantine (a ring of
     * headers) and its spare headers (a stack), each header an address and its malloc'ed size,
     * under the stripe's lock ({@link StripeLock}). Every method that takes a lock is here, because
     * each gives it back as {@link StripeLock} says: as the last call in a {@code try} whose
     * {@code catch} writes the lock word itself, which only the stripe's own code may.
     */
    @SuppressWarnings("unused") // the padding fields exist only to take space
    private static final class Stripe extends StripeLock {
        /** The top free slot + 1; 0 when none is free. */
        int readyTop;
        int readyCount;
        /** The quarantine's oldest entry, and how many it holds. */
        int oldest;
        int quarantined;
        long quarantinedBytes;
        final long[] quarantineAddress = new long[QUARANTINE];
        final long[] quarantineCapacity = new long[QUARANTINE];
        int spareCount;
        final long[] spareAddress = new long[KEPT_HEADERS];
        final long[] spareCapacity = new long[KEPT_HEADERS];
        long q0, q1, q2, q3, q4, q5, q6, q7;

        /** {@return the top ready slot, taken off the stack, or -1} */
        int popReady() {
            int top = readyTop - 1;
            if (top >= 0) {
                readyTop = page(top).next(top & (PAGE_SIZE - 1));
                readyCount--;
            }
            return top;
        }

        void pushReady(int slot) {
            page(slot).setNext(slot & (PAGE_SIZE - 1), readyTop);
            readyTop = slot + 1;
            readyCount++;
        }

        /**
         * Locks a stripe: this thread's, or when another thread holds it, the next free one; so no
         * thread waits while another stripe is free. Returns only with the lock taken (a stack
         * overflow leaves none taken: {@link StripeLock#tryLock()}).
         */
        static Stripe lockAny() {
            int start = ThreadStripes.current();
            for (int spins = 0; ; spins++) {
                for (int n = 0; n < STRIPES.length; n++) {
                    Stripe stripe = STRIPES[(start + n) & (STRIPES.length - 1)];
                    if (stripe.tryLock()) {
                        return stripe;
                    }
                }
                if (spins < 64) {
                    Thread.onSpinWait(); // every stripe busy at this instant: their holders are inside a few instructions
                } else {
                    Thread.yield();
                }
            }
        }

        /**
         * Takes a free slot and, when the stripe has one large enough, a spare header, which the slot
         * then holds: a stripe's own, else another stripe's, else {@value #CHUNK} fresh slots (and no
         * header: the caller mallocs one).
         *
         * @return {@code slot << 32}, plus 0 when the slot got a header, or -1 in the low half when not
         */
        static long take(long headerBytes) {
            Stripe stripe = null;
            try {
                stripe = lockAny();
                int slot = stripe.popReady();
                if (slot < 0) {
                    slot = stripe.refill();
                }
                if (stripe.spareCount == 0) {
                    stripe.stealSpares();
                }
                int top = stripe.spareCount - 1;
                long taken = (long) slot << 32 | 0xFFFF_FFFFL;
                if (top >= 0 && stripe.spareCapacity[top] >= headerBytes) {
                    stripe.spareCount = top;
                    page(slot).setHeader(slot & (PAGE_SIZE - 1), stripe.spareAddress[top], stripe.spareCapacity[top]);
                    taken = (long) slot << 32;
                }
                stripe.unlock();
                return taken;
            } catch (Throwable t) {
                if (stripe != null) {
                    stripe.locked = 0; // no call: cannot overflow the stack (StripeLock)
                }
                throw t;
            }
        }

        /**
         * Frees a slot (it is used again first) and its header. A header that was handed out goes
         * into the stripe's quarantine; when that is full ({@value #QUARANTINE} headers or
         * {@value #QUARANTINE_BYTES} bytes), its oldest headers become spares, or are freed. One
         * that never was (an export that could not be built) becomes a spare at once. Allocates
         * nothing; in the common case (one header leaves, a spare) nothing is freed, else the last
         * free() runs after the unlock. An {@code address} of 0: no header.
         */
        static void putBack(int slot, long address, long capacity, boolean handedOut) {
            long toFree = 0;
            Stripe stripe = null;
            try {
                stripe = lockAny();
                stripe.pushReady(slot);
                if (!handedOut) {
                    toFree = address == 0 ? 0 : stripe.keep(address, capacity);
                } else {
                    while (stripe.quarantined == QUARANTINE
                            || stripe.quarantined > 0 && stripe.quarantinedBytes + capacity > QUARANTINE_BYTES) {
                        if (toFree != 0) {
                            NativeMemory.free(toFree); // a second header out at once: only after large ones
                        }
                        int oldest = stripe.oldest;
                        stripe.oldest = (oldest + 1) % QUARANTINE;
                        stripe.quarantined--;
                        stripe.quarantinedBytes -= stripe.quarantineCapacity[oldest];
                        toFree = stripe.keep(stripe.quarantineAddress[oldest], stripe.quarantineCapacity[oldest]);
                    }
                    int at = (stripe.oldest + stripe.quarantined) % QUARANTINE;
                    stripe.quarantineAddress[at] = address;
                    stripe.quarantineCapacity[at] = capacity;
                    stripe.quarantined++;
                    stripe.quarantinedBytes += capacity;
                }
                stripe.unlock();
            } catch (Throwable t) {
                if (stripe != null) {
                    stripe.locked = 0; // as in take
                }
                throw t;
            }
            if (toFree != 0) {
                NativeMemory.free(toFree);
            }
        }

        /** Frees every header this stripe keeps (quarantined or spare), waiting for its lock. */
        void flush() {
            lock();
            try {
                while (quarantined > 0) {
                    NativeMemory.free(quarantineAddress[oldest]);
                    quarantinedBytes -= quarantineCapacity[oldest];
                    oldest = (oldest + 1) % QUARANTINE;
                    quarantined--;
                }
                while (spareCount > 0) {
                    NativeMemory.free(spareAddress[--spareCount]);
                }
                unlock();
            } catch (Throwable t) {
                locked = 0; // as in take
                throw t;
            }
        }

        /** Keeps a header that may be used again as a spare; {@return 0, or its address when the caller must free it instead} */
        private long keep(long address, long capacity) {
            if (spareCount == KEPT_HEADERS || capacity > KEPT_HEADER_BYTES) {
                return address;
            }
            spareAddress[spareCount] = address;
            spareCapacity[spareCount] = capacity;
            spareCount++;
            return 0;
        }

        /** For this stripe, locked and without spares: takes another stripe's, all of them, if one has any. */
        private void stealSpares() {
            for (Stripe other : STRIPES) {
                if (other == this || other.spareCount == 0 || !other.tryLock()) {
                    continue;
                }
                try {
                    int n = other.spareCount;
                    System.arraycopy(other.spareAddress, 0, spareAddress, 0, n);
                    System.arraycopy(other.spareCapacity, 0, spareCapacity, 0, n);
                    spareCount = n;
                    other.spareCount = 0;
                    other.unlock();
                } catch (Throwable t) {
                    other.locked = 0; // as in take
                    throw t;
                }
                if (spareCount > 0) {
                    return;
                }
            }
        }

        /**
         * For this stripe, locked and with an empty stack: takes another stripe's whole stack, or
         * else claims {@value #CHUNK} fresh slots; returns one slot and leaves the rest on the stack.
         */
        private int refill() {
            for (Stripe other : STRIPES) {
                if (other == this || other.readyCount == 0 || !other.tryLock()) {
                    continue;
                }
                try {
                    if (other.readyCount > 0) {
                        readyTop = other.readyTop; // this stack is empty: the whole chain moves
                        readyCount = other.readyCount;
                        other.readyTop = 0;
                        other.readyCount = 0;
                    }
                    other.unlock();
                } catch (Throwable t) {
                    other.locked = 0; // as in take
                    throw t;
                }
                int slot = popReady();
                if (slot >= 0) {
                    return slot;
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
            for (int slot = first + CHUNK - 1; slot > first; slot--) {
                pushReady(slot);
            }
            return first;
        }
    }

    private static final AtomicReferenceArray<Page> PAGES = new AtomicReferenceArray<>(MAX_PAGES);
    /** The next slot never used yet; moves {@value #CHUNK} at a time. */
    private static final AtomicInteger FRESH = new AtomicInteger();
    private static final Stripe[] STRIPES = new Stripe[ThreadStripes.COUNT];

    /** The shutdown hook that disarms live exports; registered by the first export, removed by a release. */
    private static Thread disarmHook;

    static {
        for (int i = 0; i < STRIPES.length; i++) {
            STRIPES[i] = new Stripe();
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

    /**
     * Claims a slot for an export being built, with a header of at least {@code headerBytes} at
     * {@link #headerAddress}; its id goes into {@code manager_ctx}.
     *
     * @throws OutOfMemoryError if malloc returns NULL for a new header (nothing is taken)
     */
    static long reserve(long headerBytes) {
        long slotAndSpare = Stripe.take(headerBytes);
        int slot = (int) (slotAndSpare >>> 32);
        Page page = page(slot);
        int i = slot & (PAGE_SIZE - 1);
        if ((int) slotAndSpare < 0) {
            long capacity = Math.max(headerBytes, KEPT_HEADER_BYTES);
            long address;
            try {
                address = NativeMemory.malloc(capacity);
            } catch (Throwable t) {
                Stripe.putBack(slot, 0, 0, false);
                throw t;
            }
            page.setHeader(i, address, capacity);
        }
        long generation = (page.state(i) >>> 2) + 1;
        if (generation > MAX_GENERATION) {
            generation = 1; // wrap, skipping 0: an id must stay positive
        }
        page.setState(i, generation << 2 | RESERVED); // the slot is ours alone: it came off a stack or was fresh
        return generation << SLOT_BITS | slot;
    }

    /** {@return the address of a reserved slot's header} */
    static long headerAddress(long id) {
        int slot = (int) (id & SLOT_MASK);
        return page(slot).address(slot & (PAGE_SIZE - 1));
    }

    /**
     * Fills a reserved slot's owner, size and kind, and records its creation site (leak tracking):
     * everything a publication needs but the state's store, which {@link #publish} makes alone, so
     * that the exporter can take its reference after everything that goes deep and right before it.
     */
    static void prepare(long id, ExportHolder owner, ManagedTensorKind kind, long headerBytes) {
        int slot = (int) (id & SLOT_MASK);
        Page page = page(slot);
        int i = slot & (PAGE_SIZE - 1);
        page.fill(i, owner, headerBytes, kind);
        if (Ledger.trackingEnabled()) {
            long address = page.address(i);
            Ledger.track(id, () -> "export " + id + " (" + kind.structName() + " at 0x" + Long.toHexString(address) + ")");
        }
    }

    /** Makes a prepared slot live: from now on a deleter call with its id can remove it. */
    static void publish(long id) {
        int slot = (int) (id & SLOT_MASK);
        page(slot).setStateVolatile(slot & (PAGE_SIZE - 1), (id >>> SLOT_BITS) << 2 | LIVE); // publishes the fields; counted live from here
    }

    /**
     * Takes back an export whose building or publication threw before its address was handed out:
     * a reserved slot is cancelled, a live one removed as a deleter call would remove it, and either
     * way its owner let go and its leak-tracking record dropped. Its header was never handed out, so it becomes a spare
     * at once. Only the removal's compare-and-set decides, so that a (bogus) deleter call that
     * found the id first keeps its win.
     *
     * @param id the export's id
     * @return whether this call withdrew it; false when a deleter call removed the export (and
     *         dropped its reference) first
     */
    static boolean withdraw(long id) {
        int slot = (int) (id & SLOT_MASK);
        Page page = page(slot);
        int i = slot & (PAGE_SIZE - 1);
        long generation = id >>> SLOT_BITS;
        if (!page.replaceState(i, generation << 2 | RESERVED, generation << 2 | FREE)
                && !page.replaceState(i, generation << 2 | LIVE, generation << 2 | FREE)) {
            return false; // a deleter call removed it
        }
        page.takeOwner(i); // prepare may have filled it: the free slot must not keep the owner reachable
        Stripe.putBack(slot, page.address(i), page.capacity(i), false);
        Ledger.untrack(id);
        return true;
    }

    /**
     * Removes the live export with this id if it is the struct at {@code address} of this kind,
     * frees its slot and puts its header into the quarantine; exactly one caller can succeed for
     * each export. Allocates nothing (it runs in deleter upcalls, possibly with the heap exhausted).
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
        Stripe.putBack((int) slot, address, page.capacity(i), true);
        if (Ledger.trackingEnabled()) {
            Ledger.untrack(id);
        }
        return owner;
    }

    /** {@return the exports whose deleter has not run: the LIVE slots, counted} */
    static long liveExports() {
        return sumOverLive((page, i) -> 1);
    }

    /** {@return the header bytes (struct, shape, strides) of the exports whose deleter has not run} */
    static long exportHeaderBytes() {
        // headerBytes is written before the state's volatile store, so seen after its read
        return sumOverLive(Page::headerBytes);
    }

    /** What {@link #sumOverLive} adds up for one LIVE slot: entry {@code i} of {@code page}. */
    private interface SlotValue {
        long of(Page page, int i);
    }

    /** {@return {@code value} summed over the LIVE slots} A walk of every slot made so far, for statistics, off the hot path. */
    private static long sumOverLive(SlotValue value) {
        long sum = 0;
        int fresh = FRESH.get();
        for (int slot = 0; slot < fresh; slot++) {
            Page page = page(slot);
            if (page == null) {
                slot |= PAGE_SIZE - 1; // skip the missing page
                continue;
            }
            int i = slot & (PAGE_SIZE - 1);
            if ((page.state(i) & 3) == LIVE) {
                sum += value.of(page, i);
            }
        }
        return sum;
    }

    /**
     * Frees every header that is not in use (quarantined or spare): from now on a stale second
     * deleter call finds no trace of them. Reserved and live slots keep theirs.
     */
    static void flush() {
        for (Stripe stripe : STRIPES) {
            stripe.flush();
        }
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

    /** {@return how many slots were ever handed out: the table's size} For tests. */
    static int slotsEverUsed() {
        return FRESH.get();
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
}
