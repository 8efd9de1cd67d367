package org.jdlpack.examples.server;

import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.LongAdder;

import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtLoggingLevel;
import ai.onnxruntime.OrtSession;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.onnxruntime.OrtBridge;
import org.jdlpack.onnxruntime.OrtInput;
import org.jdlpack.onnxruntime.OrtOutput;

/**
 * The model, run in place: ONNX Runtime reads the rows where they lie ({@link OrtBridge#input}) and
 * writes the logits into a pinned tensor ({@link OrtBridge#output}), nothing copied either way.
 *
 * <p>Thread safety: one instance serves every request thread. At most {@code permits} runs happen
 * at once: a virtual thread stays on its carrier during the native run, so more would only queue
 * carriers. {@link #score(OwnedHostTensor, OwnedHostTensor)} makes each run's input and output,
 * runs and closes them on the calling thread (a confined bridge, the default);
 * {@link #score(ScoringSlots.Slot)} runs a slot's, made once by {@link #sharedBridge()}.
 */
final class Scorer implements AutoCloseable {

    private final OrtEnvironment env = OrtEnvironment.getEnvironment();
    private final OrtSession session;
    private final OrtBridge ort = OrtBridge.of(env).zeroCopyOnly();
    private final OrtBridge shared = ort.shared();
    private final Semaphore runs;
    private final LongAdder nanos = new LongAdder();

    Scorer(byte[] model, int permits) throws OrtException {
        try (OrtSession.SessionOptions options = new OrtSession.SessionOptions()) {
            options.setIntraOpNumThreads(1);
            options.setInterOpNumThreads(1);
            options.setSessionLogLevel(OrtLoggingLevel.ORT_LOGGING_LEVEL_FATAL);
            this.session = env.createSession(model, options);
        }
        this.runs = new Semaphore(permits);
    }

    /**
     * Scores {@code x} ([rows, 16] float32) into {@code logits} ([rows, 4] float32).
     *
     * @throws Classifier.StepFailedException if ONNX Runtime refuses or fails (a logits tensor of
     *                                        another shape, as the failure injection sends)
     * @throws InterruptedException           if interrupted while waiting for a run permit
     */
    void score(OwnedHostTensor x, OwnedHostTensor logits) throws InterruptedException {
        underPermit(() -> {
            try (OrtInput in = ort.input(x);
                 OrtOutput out = ort.output(logits)) {
                ort.run(session, Map.of("x", in), Map.of("logits", out));
            }
        });
    }

    /**
     * Scores a slot's {@code x} into its {@code logits}, through the input and output it keeps.
     *
     * @throws Classifier.StepFailedException if ONNX Runtime fails
     * @throws InterruptedException           if interrupted while waiting for a run permit
     */
    void score(ScoringSlots.Slot slot) throws InterruptedException {
        underPermit(() -> shared.run(session, slot.inputs, slot.outputs));
    }

    /** A run of ONNX Runtime, as {@link #underPermit} takes it. */
    @FunctionalInterface
    private interface Run {
        void run() throws OrtException;
    }

    /** Runs {@code run} under a run permit, timed, with ONNX Runtime's failure as a step failure. */
    private void underPermit(Run run) throws InterruptedException {
        runs.acquire();
        long start = System.nanoTime();
        try {
            run.run();
        } catch (OrtException e) {
            throw new Classifier.StepFailedException("inference (ONNX Runtime)", e);
        } finally {
            nanos.add(System.nanoTime() - start);
            runs.release();
        }
    }

    /** {@return the bridge for inputs and outputs kept across requests: zero-copy only, shared between threads} */
    OrtBridge sharedBridge() {
        return shared;
    }

    /** {@return the nanoseconds spent in ONNX Runtime runs so far, all threads together} */
    long inferenceNanos() {
        return nanos.sum();
    }

    @Override
    public void close() throws OrtException {
        session.close();
    }
}
