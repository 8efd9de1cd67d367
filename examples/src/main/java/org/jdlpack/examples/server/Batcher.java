package org.jdlpack.examples.server;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.cpu.HostTensorPool;
import org.jdlpack.cpu.HostTensorView;
import org.jdlpack.cpu.OwnedHostTensor;

/**
 * Gathers requests' rows into batches: a request {@link #join joins} the forming batch, which
 * reserves its rows in the batch's pooled input tensor; the request reads its body straight into
 * those rows ({@link Member#rows()}) and {@link Member#arrive arrives}; the first member to wait
 * for the answer runs the batch once it is sealed. A batch is sealed, and stops taking members,
 * when a run slot is free and one of: it is full ({@code maxRows}, or the next request did not
 * fit), {@code maxWait} has passed since it was made, or every member has its body in and no batch
 * is running (an idle server: nobody is known to be coming, so waiting would only add latency; at
 * one connection a batch is one request and waits for nothing). Under load, then, a batch takes
 * whoever comes within {@code maxWait}, while the batches before it run. Members still reading when it is sealed get {@code readGrace} more;
 * then the batch runs without them, and they are answered 408 (their rows ran half-read).
 *
 * <p>A request larger than {@code maxRows} gets a batch of its own. The batch's tensors are
 * closed when its last member has left ({@link Member#leave}), so each member writes its answer
 * from its own rows of the outputs, without a copy.
 *
 * <p>Thread safety: one lock guards every batch's membership and state (held for bookkeeping
 * only, never during a read or a run); each batch has its own condition, so a change wakes only
 * that batch's members.
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
    private final long readGraceNanos;
    private final int slots;
    private final ReentrantLock lock = new ReentrantLock();
    private Batch forming; // guarded by lock
    private final List<Batch> waitingForSlot = new ArrayList<>(); // guarded by lock
    private int running; // batches in their pipeline, guarded by lock
    private long batches; // guarded by lock
    private long batchedRequests; // guarded by lock
    // Where batches spend their time, for the stats line: forming (made to sealed), waiting for late bodies, running.
    private long formingNanos; // guarded by lock
    private long graceNanos; // guarded by lock
    private long runNanos; // guarded by lock

    Batcher(HostTensorPool pool, Pipeline pipeline, int maxRows, long maxWaitNanos, long readGraceNanos, int slots) {
        this.pool = pool;
        this.pipeline = pipeline;
        this.maxRows = maxRows;
        this.maxWaitNanos = maxWaitNanos;
        this.readGraceNanos = readGraceNanos;
        this.slots = slots;
    }

    /** One batch: its input rows, its members, its outputs once run, and where it stands. */
    final class Batch {
        final OwnedHostTensor input;
        private final long created = System.nanoTime();
        private final Condition changed = lock.newCondition();
        private final List<Member> members = new ArrayList<>();
        private int rows;
        private int arrived;
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

        private Batch(int capacity) {
            this.input = pool.take(DLDataType.FLOAT32, capacity, Classifier.FEATURES);
        }

        /** {@return the rows of the sealed batch: every member's, evicted ones' included} */
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

    /** A request's place in a batch. Its methods are called on the request's thread. */
    final class Member {
        final Batch batch;
        final int offset;
        final int rows;
        private boolean arrived;
        private boolean readOk;
        private boolean evicted;
        private boolean gone;

        private Member(Batch batch, int offset, int rows) {
            this.batch = batch;
            this.offset = offset;
            this.rows = rows;
        }

        /** {@return this request's rows of the batch's input, to read its body into} */
        HostTensorView rows() {
            return batch.input.host().rows(offset, offset + rows);
        }

        /** Says the body is in ({@code ok}) or will not come (the read failed); once. */
        void arrive(boolean ok) {
            lock.lock();
            try {
                if (!arrived) {
                    arrived = true;
                    readOk = ok;
                    batch.arrived++;
                    batch.changed.signalAll();
                }
            } finally {
                lock.unlock();
            }
        }

        /**
         * Waits for the batch's outputs; the first member to get here before the batch runs seals
         * and runs it, on this thread.
         *
         * @return false if this member was left out (its body came after the batch was sealed and its grace)
         */
        boolean await() throws InterruptedException {
            lock.lock();
            try {
                while (!batch.done && !evicted) {
                    if (!batch.running && !batch.sealed) {
                        runAsLeader();
                        return !evicted;
                    }
                    batch.changed.await();
                }
                return !evicted;
            } finally {
                lock.unlock();
            }
        }

        /** Seals the batch when it should be, lets its late members in or out, and runs it; called and returns holding the lock. */
        private void runAsLeader() throws InterruptedException {
            batch.running = true; // this member leads: no other member tries
            while (true) {
                long waited = System.nanoTime() - batch.created;
                // Every member in and nothing running: nobody is known to be coming, so waiting would only add latency.
                boolean idle = batch.arrived == batch.members.size() && running == 0;
                boolean ready = batch.full || idle || waited >= maxWaitNanos;
                if (ready && running < slots) {
                    break;
                }
                if (!ready) {
                    batch.changed.awaitNanos(maxWaitNanos - waited); // a member arrives or joins, or the wait ends
                } else {
                    waitingForSlot.add(batch); // still taking members while it waits
                    try {
                        batch.changed.await();
                    } finally {
                        waitingForSlot.remove(batch);
                    }
                }
            }
            long sealed = System.nanoTime();
            formingNanos += sealed - batch.created;
            seal(batch);
            running++;
            long graceEnd = System.nanoTime() + readGraceNanos;
            for (long left = readGraceNanos; batch.arrived < batch.members.size() && left > 0; left = graceEnd - System.nanoTime()) {
                batch.changed.awaitNanos(left);
            }
            for (Member m : batch.members) {
                m.evicted = !m.arrived;
            }
            batches++;
            batchedRequests += batch.members.size();
            long ran = System.nanoTime();
            graceNanos += ran - sealed;
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
            }
        }

        /** {@return whether this member's body was read whole} */
        boolean readOk() {
            return readOk;
        }

        /** Leaves the batch; the last member to leave closes its tensors. Once; after {@link #arrive}. */
        void leave() {
            boolean last;
            lock.lock();
            try {
                if (gone) {
                    return;
                }
                gone = true;
                if (!arrived) {
                    arrived = true;
                    batch.arrived++;
                    batch.changed.signalAll();
                }
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

    /** Reserves {@code rows} in the forming batch (a new one if there is none or they do not fit). */
    Member join(int rows, Classifier.Failure failure) {
        lock.lock();
        try {
            Batch batch = forming;
            if (batch == null || batch.sealed || batch.rows + rows > batch.input.spec().layout().shape(0)) {
                if (batch != null && !batch.sealed) {
                    batch.full = true;
                    batch.changed.signalAll();
                }
                batch = new Batch(Math.max(maxRows, rows)); // a pool take: a few atomic operations
                forming = batch;
            }
            Member member = new Member(batch, batch.rows, rows);
            batch.members.add(member);
            batch.rows += rows;
            if (failure != Classifier.Failure.NONE) {
                batch.failure = failure;
            }
            if (batch.rows == batch.input.spec().layout().shape(0)) {
                batch.full = true;
            }
            batch.changed.signalAll();
            return member;
        } finally {
            lock.unlock();
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
            return "batches=" + batches + " batchedRequests=" + batchedRequests + " formingRows=" + (forming == null ? 0 : forming.rows)
                    + " batchFormingNanos=" + formingNanos + " batchGraceNanos=" + graceNanos + " batchRunNanos=" + runNanos;
        } finally {
            lock.unlock();
        }
    }
}
