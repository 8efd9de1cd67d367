package org.jdlpack.onnxruntime;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A run of an {@link OrtCApiSession} prepared once and run many times: the names and values in
 * native arrays, for the thread that prepared it ({@link OrtCApiSession#prepare}). Each
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
    /** The outputs ONNX Runtime allocates, after the pinned ones in the arrays. */
    private final String[] allocated;
    private final Arena arena = Arena.ofConfined();
    private final Thread thread = Thread.currentThread();
    private final long inputNames;
    private final long inputValues;
    private final long outputNames;
    /** The pinned outputs' values, then one slot per allocated output, NULL before each run. */
    private final MemorySegment outputValues;
    /** {@link #callOnce}, made once: a run allocates nothing on a platform thread. */
    private final NativeRuns.NativeCall call = this::callOnce;

    OrtCApiRun(OrtCApiSession session, Map<String, OrtCApiTensor> inputs, Map<String, OrtCApiTensor> outputs, List<String> allocated) {
        this.session = session;
        this.inputs = inputs.values().toArray(OrtCApiTensor[]::new);
        this.outputs = outputs.values().toArray(OrtCApiTensor[]::new);
        this.allocated = allocated.toArray(String[]::new);
        try {
            this.inputNames = names(inputs.keySet());
            this.inputValues = values(this.inputs, 0).address();
            List<String> outputNames = new ArrayList<>(outputs.keySet());
            outputNames.addAll(allocated);
            this.outputNames = names(outputNames);
            this.outputValues = values(this.outputs, this.allocated.length);
        } catch (RuntimeException | Error e) {
            arena.close();
            throw e;
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
     * @throws IllegalStateException    if this run, its session or a tensor was closed, or an output is in another run
     * @throws WrongThreadException     on a thread other than the one that prepared this run
     */
    public AllocatedOutputs run() {
        if (!arena.scope().isAlive()) {
            throw new IllegalStateException("this OrtCApiRun was closed; prepare a new one");
        }
        if (Thread.currentThread() != thread) {
            throw new WrongThreadException("an OrtCApiRun belongs to " + thread + ", which prepared it; prepare one on "
                    + Thread.currentThread() + " (runs of one session may go on on many threads at once)");
        }
        try {
            session.admit(call);
        } catch (RuntimeException | Error e) {
            AllocatedOutputs.discard(outputValues, outputs.length, allocated.length); // whatever a failed run left there
            throw e;
        }
        return allocated.length == 0 ? AllocatedOutputs.NONE : AllocatedOutputs.take(allocated, outputValues, outputs.length);
    }

    /**
     * One run's borrows and native call, on this thread or on a platform thread of
     * {@link NativeRuns}'s (the leases are shared; the arrays are reached by address only).
     */
    private void callOnce() {
        int in = 0;
        int out = 0;
        try {
            for (; in < inputs.length; in++) {
                inputs[in].lease().borrow(false);
            }
            for (; out < outputs.length; out++) {
                outputs[out].lease().borrow(true);
            }
            OrtApi.run(session.handle(), inputNames, inputValues, inputs.length, outputNames, outputs.length + allocated.length,
                    outputValues.address());
        } finally {
            while (out > 0) {
                outputs[--out].lease().giveBack();
            }
            while (in > 0) {
                inputs[--in].lease().giveBack();
            }
        }
    }

    /** Frees the native arrays; the tensors and the session stay open. */
    @Override
    public void close() {
        if (arena.scope().isAlive()) {
            arena.close();
        }
    }
}
