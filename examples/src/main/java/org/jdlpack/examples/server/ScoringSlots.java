package org.jdlpack.examples.server;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import ai.onnxruntime.OrtException;
import org.jdlpack.abi.DLDataType;
import org.jdlpack.cpu.HostTensorPool;
import org.jdlpack.cpu.OwnedHostTensor;

/**
 * What a default-route request of one row count needs, kept from request to request: pooled
 * tensors for the body, the logits and the answer, the ONNX Runtime input and output over the
 * first two ({@link Scorer#bind}), and the heap chunk the socket streams copy through. Making the
 * input and output per request costs two ONNX Runtime values, two holds on the memory and two
 * safety-net entries (6% of the 4 KiB profile in benchmarks/notes.md, on ONNX Runtime Java); a
 * slot pays that once, as a hand-written ONNX Runtime Java server keeps its {@code OnnxTensor}s
 * per buffer.
 *
 * <p>Ownership: a slot belongs to one request between {@link #take} and {@link #giveBack}; idle
 * slots belong to this object. Their tensors come from the server's {@link HostTensorPool} and go
 * back to it when a slot closes: when more than {@code maxIdleBytes} would be idle, or at
 * {@link #close()}.
 *
 * <p>Thread safety: any thread. A slot made on one request's virtual thread is run on another's,
 * which {@link Scorer#bind}'s input and output allow. The idle slots wait in lock-free
 * deques, as the hand-written peer's do: with a lock-based queue (a virtual thread that meets
 * the lock held parks) the route served 0.93x that peer at 4 KiB and 64 connections, with these
 * 1.00x, one sitting each (benchmarks/notes.md).
 */
final class ScoringSlots implements AutoCloseable {

    /**
     * Idle slots kept, all row counts together; more are closed on give-back. There is no eviction:
     * row counts that come when the bounds are full get a slot made and closed per request.
     */
    private static final int MAX_IDLE_SLOTS = 1024;

    /** One request's tensors and the ONNX Runtime values over them. */
    static final class Slot implements AutoCloseable {
        final int rows;
        /** [rows, 16] float32: the body, normalized in place. */
        final OwnedHostTensor x;
        /** [rows, 4] float32: ONNX Runtime's output. */
        final OwnedHostTensor logits;
        /** [2, rows, 2] int32: the classes, then the probabilities' float32 bits. */
        final OwnedHostTensor answer;
        /** ONNX Runtime's input over {@link #x} and pinned output over {@link #logits}. */
        final Scorer.Bound bound;
        /**
         * The heap buffer the body and the answer pass through: the larger of the two, or a pooled
         * {@link Chunks#SIZE} chunk for a slot of more (taken at the slot's making, given back at its
         * close, so that a slot of large requests made and closed again allocates no chunk).
         */
        final byte[] chunk;
        private final Chunks chunks;
        final long bytes;

        private Slot(HostTensorPool pool, Scorer scorer, Chunks chunks, int rows) throws OrtException {
            this.rows = rows;
            this.chunks = chunks;
            OwnedHostTensor[] made = new OwnedHostTensor[3];
            try {
                x = made[0] = pool.take(DLDataType.FLOAT32, rows, Classifier.FEATURES);
                logits = made[1] = pool.take(DLDataType.FLOAT32, rows, Classifier.CLASSES);
                answer = made[2] = pool.take(DLDataType.INT32, 2, rows, Classifier.TOP);
                bound = scorer.bind(x, logits);
            } catch (OrtException | RuntimeException | Error e) {
                for (OwnedHostTensor t : made) {
                    if (t != null) {
                        t.close();
                    }
                }
                throw e;
            }
            long body = x.host().segment().byteSize();
            long largest = Math.max(body, answer.host().segment().byteSize());
            chunk = largest >= Chunks.SIZE ? chunks.take() : new byte[(int) largest];
            bytes = body + logits.host().segment().byteSize() + answer.host().segment().byteSize();
        }

        /** Closes the input and output, then gives the tensors back to the pool. */
        @Override
        public void close() {
            try {
                bound.close();
            } finally {
                x.close();
                logits.close();
                answer.close();
                if (chunk.length == Chunks.SIZE) {
                    chunks.giveBack(chunk);
                }
            }
        }
    }

    private final HostTensorPool pool;
    private final Scorer scorer;
    private final Chunks chunks;
    private final long maxIdleBytes;
    private final Map<Integer, ConcurrentLinkedDeque<Slot>> idle = new ConcurrentHashMap<>();
    private final AtomicLong idleBytes = new AtomicLong();
    private final AtomicInteger idleCount = new AtomicInteger();
    private volatile boolean closed;

    /**
     * @param pool         where the slots' tensors come from
     * @param scorer       what makes the inputs and outputs, and runs them
     * @param chunks       where the chunks of slots of large requests come from
     * @param maxIdleBytes the most tensor bytes kept in idle slots (their heap chunks not counted)
     */
    ScoringSlots(HostTensorPool pool, Scorer scorer, Chunks chunks, long maxIdleBytes) {
        this.pool = pool;
        this.scorer = scorer;
        this.chunks = chunks;
        this.maxIdleBytes = maxIdleBytes;
    }

    /**
     * {@return an idle slot for {@code rows}, or a new one} Give it back with {@link #giveBack}.
     *
     * @throws OrtException          if ONNX Runtime Java refuses a new slot's tensors
     * @throws org.jdlpack.onnxruntime.OrtStatusException if ONNX Runtime's C API refuses them
     * @throws IllegalStateException if the slots (or the pool) were closed
     */
    Slot take(int rows) throws OrtException {
        if (closed) {
            throw new IllegalStateException("the scoring slots were closed: the server is stopping");
        }
        ConcurrentLinkedDeque<Slot> slots = idle.get(rows);
        Slot slot = slots == null ? null : slots.pollFirst();
        if (slot == null) {
            return new Slot(pool, scorer, chunks, rows);
        }
        idleBytes.addAndGet(-slot.bytes);
        idleCount.decrementAndGet();
        return slot;
    }

    /** Keeps {@code slot} for the next request of its row count, or closes it if too much is idle already. */
    void giveBack(Slot slot) {
        if (idleBytes.addAndGet(slot.bytes) > maxIdleBytes || closed) {
            idleBytes.addAndGet(-slot.bytes);
            slot.close();
            return;
        }
        if (idleCount.incrementAndGet() > MAX_IDLE_SLOTS) {
            idleCount.decrementAndGet();
            idleBytes.addAndGet(-slot.bytes);
            slot.close();
            return;
        }
        idle.computeIfAbsent(slot.rows, r -> new ConcurrentLinkedDeque<>()).addFirst(slot);
        if (closed) {
            drain(); // a close that ran between the check and the offer left this one behind
        }
    }

    /**
     * {@return the idle slots} Each keeps its three tensors, two of them held by its ONNX Runtime
     * input's and output's retains (no exports), until the slot closes.
     */
    int idleSlots() {
        return idleCount.get();
    }

    /** Closes the idle slots; slots taken now are closed when given back. */
    @Override
    public void close() {
        closed = true;
        drain();
    }

    private void drain() {
        for (ConcurrentLinkedDeque<Slot> slots : idle.values()) {
            for (Slot slot; (slot = slots.pollFirst()) != null; ) {
                idleBytes.addAndGet(-slot.bytes);
                idleCount.decrementAndGet();
                slot.close();
            }
        }
    }
}
