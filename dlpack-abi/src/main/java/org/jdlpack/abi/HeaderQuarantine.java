package org.jdlpack.abi;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import org.jdlpack.abi.stripes.ThreadStripes;


/**
 * Holds freed export headers for a while before {@code free()}, first in, first out.
 *
 * <p>Why: the deleter gets nothing but the struct pointer, and reads the registry id from the
 * struct. If the header were freed at once, malloc would hand the same address to the next export,
 * which writes its own id there; a buggy second deleter call with the old pointer would then read
 * the new id and free the new export while its consumer reads it. While a header waits here its
 * bytes still hold the old id, whose registry slot is no longer live, so a second call is refused.
 * The protection ends when the header is finally freed: a second call that comes later than
 * {@value #MAX_HEADERS} deletions on the same stripe (or {@value #MAX_BYTES} bytes of headers) can
 * still hit a reused address. The ABI leaves no way to close that gap.
 *
 * <p>One FIFO per thread stripe, each bounded by count and bytes, so that deleters on different
 * threads do not share a lock or a cache line. A stripe's FIFO is taken with a try-lock; when it is
 * busy the next stripe is tried, so no thread ever waits.
 */
final class HeaderQuarantine {

    /** Headers a stripe holds at most. */
    static final int MAX_HEADERS = 256;
    /** Header bytes a stripe holds at most. */
    static final long MAX_BYTES = 64 * 1024;

    /** Padding before a FIFO's state, the 4-byte gap after the header taken (see {@link Fifo}). */
    @SuppressWarnings("unused") // the padding fields exist only to take space
    private static class FifoLeftPad {
        int gap;
        long p0, p1, p2, p3, p4, p5, p6, p7;
    }

    /** What the try-lock guards. */
    private static class FifoState extends FifoLeftPad {
        volatile int locked;
        int oldest;
        int count;
        long bytes;
        final long[] addresses = new long[MAX_HEADERS];
        final long[] sizes = new long[MAX_HEADERS];
    }

    /**
     * One stripe: a ring of (address, bytes), guarded by {@code locked}. Padded on both sides
     * through its superclasses: the JVM lays out superclass fields first and sorts each class's
     * fields by size, so padding fields declared around the state in one class would not surround it.
     */
    @SuppressWarnings("unused") // the padding fields exist only to take space
    private static final class Fifo extends FifoState {
        private static final VarHandle LOCKED;

        static {
            try {
                LOCKED = MethodHandles.lookup().findVarHandle(FifoState.class, "locked", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        long q0, q1, q2, q3, q4, q5, q6, q7;

        boolean tryLock() {
            return locked == 0 && LOCKED.compareAndSet(this, 0, 1);
        }

        void unlock() {
            LOCKED.setRelease(this, 0); // a release store: no fence on x86, and nothing after it must wait for it
        }
    }

    private static final Fifo[] FIFOS = new Fifo[ThreadStripes.COUNT];

    static {
        for (int i = 0; i < FIFOS.length; i++) {
            FIFOS[i] = new Fifo();
        }
    }

    private HeaderQuarantine() {
    }

    /**
     * Takes a header that is no longer live; frees the oldest headers beyond the bounds. Allocates
     * nothing and never blocks.
     */
    static void retire(long address, long bytes) {
        int start = ThreadStripes.current();
        for (int n = 0; n < FIFOS.length; n++) {
            Fifo fifo = FIFOS[(start + n) & (FIFOS.length - 1)];
            if (fifo.tryLock()) {
                try {
                    add(fifo, address, bytes);
                } finally {
                    fifo.unlock();
                }
                return;
            }
        }
        NativeMemory.free(address); // every stripe busy at this instant: not worth waiting for
    }

    /** Frees every quarantined header: from now on a stale second deleter call finds no trace of them. */
    static void flush() {
        for (Fifo fifo : FIFOS) {
            while (!fifo.tryLock()) {
                Thread.onSpinWait();
            }
            try {
                while (fifo.count > 0) {
                    int i = fifo.oldest;
                    NativeMemory.free(fifo.addresses[i]);
                    fifo.bytes -= fifo.sizes[i];
                    fifo.oldest = (i + 1) % MAX_HEADERS;
                    fifo.count--;
                }
            } finally {
                fifo.unlock();
            }
        }
    }

    private static void add(Fifo fifo, long address, long bytes) {
        while (fifo.count == MAX_HEADERS || (fifo.count > 0 && fifo.bytes + bytes > MAX_BYTES)) {
            int i = fifo.oldest;
            NativeMemory.free(fifo.addresses[i]);
            fifo.bytes -= fifo.sizes[i];
            fifo.oldest = (i + 1) % MAX_HEADERS;
            fifo.count--;
        }
        int i = (fifo.oldest + fifo.count) % MAX_HEADERS;
        fifo.addresses[i] = address;
        fifo.sizes[i] = bytes;
        fifo.count++;
        fifo.bytes += bytes;
    }
}
