package org.jdlpack.onnxruntime;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A run of an {@link OrtCApiSession} prepared once and run many times: the names and values in
 * native arrays ({@link OrtCApiSession#prepare}). Any thread may run it, one run at a time: a
 * server keeps one per scoring slot and runs it on each request's virtual thread; a second
 * thread that calls {@link #run()} while a run is in flight gets an exception, never a share of
 * the arrays (runs of one session on many threads at once take one prepared run each). Each
 * {@link #run()} is one {@code Run} of the C API: it waits for one of the session's run slots
 * ({@link OrtCApiSession.Options#concurrentRuns()}), holds the session and every tensor for the
 * duration of the call (a tensor closed meanwhile is released at its end), and refuses a closed
 * one. Pinned outputs are written in place; outputs ONNX Runtime allocates (those whose shape the
 * model decides) come back from each run as {@link AllocatedOutputs}, over ONNX Runtime's own
 * memory, no copy.
 *
 * {@snippet :
 * try (OrtCApiRun run = session.prepare(Map.of("x", xt), Map.of("y", yt))) {
 *     for (int i = 0; i < 1000; i++) {
 *         run.run();
 *     }
 * }
 * }
 *
 * @since 0.1
 */
public final class OrtCApiRun implements AutoCloseable {

    private final OrtCApiSession session;
    private final OrtCApiTensor[] inputs;
    private final OrtCApiTensor[] outputs;
    /** The inputs' leases, then the outputs': what a run borrows, in that order. */
    private final Lease[] leases;
    /** The outputs ONNX Runtime allocates, after the pinned ones in the arrays. */
    private final String[] allocated;
    /**
     * The arrays: shared for a prepared run (made on any thread), confined for one made and run at
     * once; closed once, by {@link #close()} or at the end of the run in flight.
     */
    private final Arena arena;
    /** {@link #IDLE}, {@link #RUNNING}, {@link #CLOSE_AT_END} or {@link #CLOSED}: one run at a time, and no close under it. */
    @SuppressWarnings("unused") // through STATE
    private volatile int state;
    private static final int IDLE = 0;
    private static final int RUNNING = 1;
    private static final int CLOSE_AT_END = 2;
    private static final int CLOSED = 3;
    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(OrtCApiRun.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final long inputNames;
    private final long inputValues;
    private final long outputNames;
    /** The pinned outputs' values, then one slot per allocated output, NULL before each run. */
    private final MemorySegment outputValues;
    /** {@link #callOnce}, made once: a run allocates nothing on a platform thread. */
    private final NativeRuns.NativeCall call = this::callOnce;

    OrtCApiRun(OrtCApiSession session, Map<String, OrtCApiTensor> inputs, Map<String, OrtCApiTensor> outputs, List<String> allocated,
               Arena arena) {
        this.session = session;
        this.arena = arena;
        this.inputs = inputs.values().toArray(OrtCApiTensor[]::new);
        this.outputs = outputs.values().toArray(OrtCApiTensor[]::new);
        this.allocated = allocated.toArray(String[]::new);
        // On a failure here the caller, OrtCApiSession.prepare, closes the arena.
        this.inputNames = names(inputs.keySet());
        this.inputValues = values(this.inputs, 0).address();
        List<String> outputNames = new ArrayList<>(outputs.keySet());
        outputNames.addAll(allocated);
        this.outputNames = names(outputNames);
        this.outputValues = values(this.outputs, this.allocated.length);
        this.leases = new Lease[this.inputs.length + this.outputs.length];
        for (int i = 0; i < leases.length; i++) {
            leases[i] = (i < this.inputs.length ? this.inputs[i] : this.outputs[i - this.inputs.length]).lease;
        }
    }

    private long names(Iterable<String> names) {
        List<MemorySegment> strings = new ArrayList<>();
        names.forEach(n -> strings.add(arena.allocateFrom(n)));
        MemorySegment array = arena.allocate(JAVA_LONG, Math.max(strings.size(), 1));
        for (int i = 0; i < strings.size(); i++) {
            array.setAtIndex(JAVA_LONG, i, strings.get(i).address());
        }
        return array.address();
    }

    /** {@return the tensors' values, then {@code slots} NULL slots} */
    private MemorySegment values(OrtCApiTensor[] tensors, int slots) {
        MemorySegment array = arena.allocate(JAVA_LONG, Math.max(tensors.length + slots, 1)); // zeroed
        for (int i = 0; i < tensors.length; i++) {
            array.setAtIndex(JAVA_LONG, i, Objects.requireNonNull(tensors[i], "a tensor in the run's maps").value());
        }
        return array;
    }

    /**
     * Runs the session once: ONNX Runtime reads the inputs, writes the pinned outputs in place and
     * allocates the others.
     *
     * @return the outputs ONNX Runtime allocated, as tensors over its memory (close them); empty,
     *         with nothing to close, for a run whose outputs are all pinned
     * @throws OrtStatusException       if ONNX Runtime fails (a wrong element type or shape, an output of another shape)
     * @throws IllegalArgumentException if an allocated output has a type DLPack lacks (every value is released)
     * @throws IllegalStateException    if this run, its session or a tensor was closed, if this run is in flight
     *                                  on another thread, or if an output is in another run
     */
    public AllocatedOutputs run() {
        begin();
        try {
            try {
                session.admit(call);
            } catch (RuntimeException | Error e) {
                AllocatedOutputs.discard(outputValues, outputs.length, allocated.length); // whatever a failed run left there
                throw e;
            }
            return allocated.length == 0 ? AllocatedOutputs.NONE : AllocatedOutputs.take(allocated, outputValues, outputs.length);
        } finally {
            end();
        }
    }

    /** Takes the run for one call: refuses a closed run, and one in flight on another thread. */
    void begin() {
        int seen = (int) STATE.compareAndExchange(this, IDLE, RUNNING);
        if (seen != IDLE) { // what the failed exchange saw, not a later read: a call ending meanwhile is no close
            if (seen == RUNNING) {
                throw new IllegalStateException("this OrtCApiRun is running on another thread; a prepared run makes one "
                        + "call at a time (prepare one per thread or per slot: runs of one session may go on at once)");
            }
            throw new IllegalStateException("this OrtCApiRun was closed; prepare a new one");
        }
    }

    /** Gives the run back after a call, and frees the arrays if it was closed meanwhile. */
    void end() {
        if (!STATE.compareAndSet(this, RUNNING, IDLE)) { // CLOSE_AT_END: close() came during the call
            STATE.setVolatile(this, CLOSED);
            arena.close();
        }
    }

    /** {@return whether the native arrays are still allocated} */
    boolean isAllocated() {
        return arena.scope().isAlive();
    }

    /**
     * One run's borrows and native call, on this thread or on a platform thread of
     * {@link NativeRuns}'s (the leases are shared; the arrays are reached by address only).
     */
    private void callOnce() {
        int held = 0;
        Throwable failure = null;
        try {
            for (; held < leases.length; held++) {
                leases[held].borrow(held >= inputs.length); // an output exclusive: ONNX Runtime writes it
            }
            OrtApi.run(session.handle(), inputNames, inputValues, inputs.length, outputNames, outputs.length + allocated.length,
                    outputValues.address());
        } catch (RuntimeException | Error e) {
            failure = e;
        }
        Lease.giveBack(leases, held, failure); // every one, even if a release throws; then the run's failure, if any
    }

    /**
     * Frees the native arrays now, or at the end of the run in flight; the tensors and the session
     * stay open. A second close does nothing.
     */
    @Override
    public void close() {
        while (true) {
            int s = (int) STATE.getVolatile(this);
            if (s == IDLE && STATE.compareAndSet(this, IDLE, CLOSED)) {
                arena.close();
                return;
            }
            if (s == RUNNING && STATE.compareAndSet(this, RUNNING, CLOSE_AT_END)) {
                return;
            }
            if (s == CLOSE_AT_END || s == CLOSED) {
                return;
            }
        }
    }
}
