package org.jdlpack.examples.server;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.cpu.HostTensorPool;
import org.jdlpack.cpu.OwnedHostTensor;

/**
 * Gathers requests' rows into batches. A request {@link #join joins} only once its whole body is
 * in native memory of its own (a pooled tensor): its rows are copied into the forming batch's
 * pooled input tensor, or, for a request of {@code maxRows} or more, its tensor becomes the input
 * of a batch of its own, without a copy. So no member of a batch is waiting on its client: a slow
 * or stalled body holds its own tensor and its own thread, never a batch, another request's answer
 * or a run slot (issue 41: a slow member sealed into a batch once held that batch and its run slot
 * for a read grace of 200 ms, and bodies that never came held the forming batch).
 *
 * <p>The first member to wait for the answer ({@link Member#await}) runs the batch once it is
 * sealed. A batch is sealed, and stops taking members, when a run slot is free and one of: it is
 * full ({@code maxRows}, or the next request did not fit), {@code maxWait} has passed since it was
 * made, or no batch is running (an idle server: nobody is known to be coming, so waiting would only
 * add latency; at one connection a batch is one request and waits for nothing). Under load, then, a
 * batch takes whoever comes within {@code maxWait}, while the batches before it run.
 *
 * <p>The batch's tensors are closed when its last member has left ({@link Member#leave}), so each
 * member writes its answer from its own rows of the outputs, without a copy.
 *
 * <p>Thread safety: one lock guards every batch's membership and state, held for bookkeeping and
 * for a joining request's copy into the batch (at most {@code maxRows - 1} rows: 4 KiB for a 64-row
 * request, 512 KiB at most with the server's 8,192), never during a read from a client or a run;
 * each batch has its own condition, so a change wakes only that batch's members.
 */
final class Batcher {

    /** What runs a sealed batch: pre-processing, inference, post-processing over rows 0 to {@link Batch#rows()}. */
    interface Pipeline {
        void run(Batch batch) throws InterruptedException;
    }

    private final HostTensorPool pool;
    private final Pipeline pipeline;
    private final int maxRows;
    private final long maxWaitNanos;
    private final int slots;
    private final ReentrantLock lock = new ReentrantLock();
    private Batch forming; // guarded by lock
    private final List<Batch> waitingForSlot = new ArrayList<>(); // guarded by lock
    private int running; // batches in their pipeline, guarded by lock
    private long batches; // guarded by lock
    private long batchedRequests; // guarded by lock
    private long ownBatches; // requests of maxRows or more, their body the batch's input; guarded by lock
    // Where batches spend their time, for the stats line: forming (made to sealed), running.
    private long formingNanos; // guarded by lock
    private long runNanos; // guarded by lock

    /**
     * @param pool         where batches' input tensors come from
     * @param pipeline     what runs a sealed batch
     * @param maxRows      a batch's rows; a request of this many or more is a batch of its own
     * @param maxWaitNanos how long a batch takes members while another batch runs
     * @param slots        how many batches run at once
     */
    Batcher(HostTensorPool pool, Pipeline pipeline, int maxRows, long maxWaitNanos, int slots) {
        this.pool = pool;
        this.pipeline = pipeline;
        this.maxRows = maxRows;
        this.maxWaitNanos = maxWaitNanos;
        this.slots = slots;
    }

    /** One batch: its input rows, its members, its outputs once run, and where it stands. */
    final class Batch {
        final OwnedHostTensor input;
        private final long created = System.nanoTime();
        private final Condition changed = lock.newCondition();
        private final List<Member> members = new ArrayList<>();
        private int rows;
        private int left;
        private boolean full;
        private boolean sealed;
        private boolean running;
        private boolean done;
        private Classifier.Failure failure = Classifier.Failure.NONE;
        // Written by the pipeline before done, read by members after: the lock orders them.
        OwnedHostTensor finite;
        OwnedHostTensor top;
        OwnedHostTensor probabilities;
        RuntimeException error;

        private Batch(OwnedHostTensor input) {
            this.input = input;
        }

        /** {@return the rows of the sealed batch: every member's} */
        int rows() {
            return rows;
        }

        /** {@return the failure a member asked to inject, for the whole batch (a test of the error paths)} */
        Classifier.Failure failure() {
            return failure;
        }

        private void close() {
            for (OwnedHostTensor t : new OwnedHostTensor[] {input, finite, top, probabilities}) {
                if (t != null) {
                    t.close();
                }
            }
        }
    }

    /** A request's place in a batch, its rows in: {@code rows} rows from {@code offset}. Its methods are called on the request's thread. */
    final class Member {
        final Batch batch;
        final int offset;
        final int rows;
        private boolean gone;

        private Member(Batch batch, int offset, int rows) {
            this.batch = batch;
            this.offset = offset;
            this.rows = rows;
        }

        /**
         * Waits for the batch's outputs; the first member to get here before the batch runs seals
         * and runs it, on this thread.
         */
        void await() throws InterruptedException {
            lock.lock();
            try {
                while (!batch.done) {
                    if (!batch.running && !batch.sealed) {
                        runAsLeader();
                        return;
                    }
                    batch.changed.await();
                }
            } finally {
                lock.unlock();
            }
        }

        /** Seals the batch when it should be and runs it; called and returns holding the lock. */
        private void runAsLeader() throws InterruptedException {
            batch.running = true; // this member leads: no other member tries
            try {
                awaitSealing();
            } catch (InterruptedException e) {
                batch.running = false; // another member may lead: its waiters must not wait for a run that never comes
                batch.changed.signalAll();
                throw e;
            }
            long ran = System.nanoTime();
            formingNanos += ran - batch.created;
            seal(batch);
            running++;
            batches++;
            batchedRequests += batch.members.size();
            lock.unlock();
            try {
                pipeline.run(batch);
            } catch (RuntimeException e) {
                batch.error = e;
            } catch (InterruptedException e) {
                batch.error = new IllegalStateException("the server is stopping", e);
                throw e;
            } finally {
                lock.lock();
                runNanos += System.nanoTime() - ran;
                running--;
                batch.done = true;
                batch.changed.signalAll();
                for (Batch waiting : waitingForSlot) {
                    waiting.changed.signalAll();
                }
                if (forming != null) {
                    forming.changed.signalAll(); // its leader may be waiting out maxWait only because this one ran
                }
            }
        }

        /** Waits, the lock held between waits, until the batch should be sealed and a run slot is free. */
        private void awaitSealing() throws InterruptedException {
            while (true) {
                long waited = System.nanoTime() - batch.created;
                boolean idle = running == 0; // nobody is known to be coming, so waiting would only add latency
                boolean ready = batch.full || idle || waited >= maxWaitNanos;
                if (ready && running < slots) {
                    break;
                }
                if (!ready) {
                    batch.changed.awaitNanos(maxWaitNanos - waited); // a member joins, a run ends, or the wait ends
                } else {
                    waitingForSlot.add(batch); // still taking members while it waits
                    try {
                        batch.changed.await();
                    } finally {
                        waitingForSlot.remove(batch);
                    }
                }
            }
        }

        /** Leaves the batch; the last member to leave closes its tensors. Once. */
        void leave() {
            boolean last;
            lock.lock();
            try {
                if (gone) {
                    return;
                }
                gone = true;
                last = ++batch.left == batch.members.size(); // a leader running it has not left
                if (last) {
                    seal(batch); // nobody may join a batch whose tensors are going
                }
            } finally {
                lock.unlock();
            }
            if (last) {
                batch.close();
            }
        }
    }

    /**
     * Puts a request whose body is in into a batch. Takes {@code body}, a {@code rows x 16} float32
     * tensor: its rows are copied into the forming batch (a new one if there is none or they do not
     * fit) and it is closed; a body of {@code maxRows} rows or more becomes the input of a batch of
     * its own. Closed too if this throws.
     *
     * @param body    the request's rows, read whole
     * @param failure a failure to inject into the batch's pipeline, or NONE
     * @return the request's place in its batch; {@link Member#leave} it when done
     */
    Member join(OwnedHostTensor body, Classifier.Failure failure) {
        int rows = Math.toIntExact(body.layout().shape(0));
        boolean handedOver = false;
        lock.lock();
        try {
            Batch batch;
            if (rows >= maxRows) {
                batch = new Batch(body); // a batch of its own, never forming: nobody joins it
                handedOver = true;
                batch.full = true;
                ownBatches++;
            } else {
                batch = forming;
                if (batch == null || batch.sealed || batch.rows + rows > maxRows) {
                    if (batch != null && !batch.sealed) {
                        batch.full = true;
                        batch.changed.signalAll();
                    }
                    batch = new Batch(pool.take(DLDataType.FLOAT32, maxRows, Classifier.FEATURES)); // a few atomic operations
                    forming = batch;
                }
                // Native to native, no heap: the bytes went from the socket into `body` through the request's chunk.
                // Through the views, not raw segments: a pooled tensor's raw segment costs its release a handshake.
                body.host().copyTo(batch.input.host().rows(batch.rows, batch.rows + rows));
            }
            Member member = new Member(batch, batch.rows, rows);
            batch.members.add(member);
            batch.rows += rows;
            if (failure != Classifier.Failure.NONE) {
                batch.failure = failure;
            }
            if (batch.rows == maxRows) {
                batch.full = true;
            }
            batch.changed.signalAll();
            return member;
        } finally {
            lock.unlock();
            if (!handedOver) {
                body.close();
            }
        }
    }

    private void seal(Batch batch) {
        batch.sealed = true;
        if (forming == batch) {
            forming = null;
        }
    }

    /** {@return batches run and the requests in them, for the stats line} */
    String stats() {
        lock.lock();
        try {
            return "batches=" + batches + " batchedRequests=" + batchedRequests + " ownBatches=" + ownBatches + " formingRows="
                    + (forming == null ? 0 : forming.rows) + " batchFormingNanos=" + formingNanos + " batchRunNanos=" + runNanos;
        } finally {
            lock.unlock();
        }
    }
}
