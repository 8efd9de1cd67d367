package org.jdlpack.abi;

import java.lang.ref.ReferenceQueue;

import org.jdlpack.abi.plumbing.Diagnostics;

/**
 * Releases owned pointers whose owner was forgotten: a handle that became unreachable, or an
 * imported tensor whose scope (and so every segment of it) did. Each {@link OwnershipCell} is a
 * phantom reference; the garbage collector queues it, and one daemon thread calls the deleter and
 * reports the leak.
 *
 * <p>Why not the JDK {@code Cleaner}: a Cleaner registration allocates a cleanable and an action
 * per object and links it into one list under one lock, which every importing thread contends
 * for. Here the cell is the reference, and the live cells are kept reachable in lists striped by
 * the registering thread, so the importing thread takes an uncontended lock of its own stripe.
 * A cell is unlinked when its state leaves OWNED, by whichever thread does that.
 */
final class SafetyNet {

    private static final int STRIPE_BITS = 6;
    private static final int STRIPES = 1 << STRIPE_BITS;
    private static final ReferenceQueue<Object> QUEUE = new ReferenceQueue<>();
    private static final Stripe[] TABLE = new Stripe[STRIPES];

    static {
        for (int i = 0; i < STRIPES; i++) {
            TABLE[i] = new Stripe();
        }
        Thread thread = new Thread(SafetyNet::releaseForgotten, "jdlpack-safety-net");
        thread.setDaemon(true);
        thread.start();
    }

    private SafetyNet() {
    }

    static ReferenceQueue<Object> queue() {
        return QUEUE;
    }

    /** Links a new cell into the current thread's stripe and returns that stripe. */
    static Stripe register(OwnershipCell cell) {
        // Fibonacci hashing: consecutive thread ids land on distant stripes.
        long id = Thread.currentThread().threadId();
        Stripe stripe = TABLE[(int) ((id * 0x9E37_79B9_7F4A_7C15L) >>> (64 - STRIPE_BITS))];
        stripe.add(cell);
        return stripe;
    }

    /** The daemon loop: a queued cell's owner is unreachable; release what is still OWNED. */
    private static void releaseForgotten() {
        while (true) {
            try {
                OwnershipCell cell = (OwnershipCell) QUEUE.remove();
                String what = cell.describe(); // before release: the report must not depend on the deleter
                if (cell.release()) {
                    LeakTracking.reportLeak(what, cell.creationSite);
                }
            } catch (InterruptedException e) {
                // A daemon with nothing else to do: keep serving the queue.
            } catch (Throwable t) {
                Diagnostics.report(System.Logger.Level.ERROR, "jdlpack safety net failed to release a forgotten tensor", t);
            }
        }
    }

    /**
     * One doubly linked list of live cells; its monitor guards the links. Padded: the stripes are
     * allocated one after the other, and two threads writing the lock word and head of neighbours
     * on one cache line made every import a cache miss once two threads imported at once.
     */
    @SuppressWarnings("unused") // the padding fields exist only to take space
    static final class Stripe {
        private long p0, p1, p2, p3, p4, p5, p6, p7;
        private OwnershipCell head;
        private long q0, q1, q2, q3, q4, q5, q6, q7;

        synchronized void add(OwnershipCell cell) {
            cell.netNext = head;
            if (head != null) {
                head.netPrev = cell;
            }
            head = cell;
            cell.linked = true;
        }

        synchronized void remove(OwnershipCell cell) {
            if (!cell.linked) {
                return;
            }
            cell.linked = false;
            if (cell.netPrev != null) {
                cell.netPrev.netNext = cell.netNext;
            } else {
                head = cell.netNext;
            }
            if (cell.netNext != null) {
                cell.netNext.netPrev = cell.netPrev;
            }
            cell.netPrev = null;
            cell.netNext = null;
        }
    }
}
