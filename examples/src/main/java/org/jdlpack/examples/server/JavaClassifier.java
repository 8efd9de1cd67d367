package org.jdlpack.examples.server;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.MemorySegment;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.cpu.HostTensorPool;
import org.jdlpack.cpu.OwnedHostTensor;

/**
 * The default route's pipeline, all in Java over native memory: the NaN check and normalization in
 * place in the slot's body tensor, ONNX Runtime reading it there and writing the slot's logits
 * tensor, softmax and top-2 from those into the slot's answer tensor. No array and no copy of the
 * rows on the heap, and nothing made per request ({@link ScoringSlots}).
 *
 * <p>Thread safety: stateless but for the pool and the scorer, which any thread may use.
 */
final class JavaClassifier {

    private final HostTensorPool pool;
    private final Scorer scorer;

    JavaClassifier(HostTensorPool pool, Scorer scorer) {
        this.pool = pool;
        this.scorer = scorer;
    }

    /**
     * Classifies the rows of {@code slot.x} ([rows, 16] float32, normalized here in place) into
     * {@code slot.answer}: [2, rows, 2] int32, the classes, then the probabilities' float32 bits.
     *
     * @throws Classifier.BadRequestException if a row holds NaN or infinity
     * @throws Classifier.StepFailedException if ONNX Runtime fails
     */
    void classify(ScoringSlots.Slot slot, Classifier.Failure failure) throws InterruptedException {
        normalize(slot.x.host().segment(), slot.rows);
        if (failure == Classifier.Failure.ORT) {
            // An injected ONNX Runtime failure: logits one row too long, which the run refuses.
            try (OwnedHostTensor wrong = pool.take(DLDataType.FLOAT32, slot.rows + 1, Classifier.CLASSES)) {
                scorer.score(slot.x, wrong);
            }
        }
        scorer.score(slot.bound);
        top(slot.logits.host().segment(), slot.answer.host().segment(), slot.rows);
    }

    /** (x - mean) / std in place, refusing the first row with NaN or infinity. */
    static void normalize(MemorySegment x, int rows) {
        for (int r = 0; r < rows; r++) {
            long row = (long) r * Classifier.FEATURES * Float.BYTES;
            boolean finite = true;
            for (int i = 0; i < Classifier.FEATURES; i++) {
                long at = row + (long) i * Float.BYTES;
                float v = x.get(JAVA_FLOAT, at);
                finite &= Float.isFinite(v);
                x.set(JAVA_FLOAT, at, (v - Classifier.MEAN) / Classifier.STD);
            }
            if (!finite) {
                throw new Classifier.BadRequestException("row " + r + " holds NaN or infinity");
            }
        }
    }

    /**
     * Softmax and the two most probable classes of each row of logits, into {@code answer}: the
     * classes as int32 from byte 0, the probabilities as float32 after them. Ties keep the lower
     * class first, as a stable sort would.
     */
    static void top(MemorySegment logits, MemorySegment answer, int rows) {
        long probabilities = (long) rows * Classifier.TOP * Integer.BYTES;
        float[] e = new float[Classifier.CLASSES]; // escape analysis keeps it off the heap
        for (int r = 0; r < rows; r++) {
            long row = (long) r * Classifier.CLASSES * Float.BYTES;
            float max = Float.NEGATIVE_INFINITY;
            for (int j = 0; j < Classifier.CLASSES; j++) {
                e[j] = logits.get(JAVA_FLOAT, row + (long) j * Float.BYTES);
                max = Math.max(max, e[j]);
            }
            float sum = 0;
            for (int j = 0; j < Classifier.CLASSES; j++) {
                e[j] = (float) Math.exp(e[j] - max);
                sum += e[j];
            }
            int first = 0;
            for (int j = 1; j < Classifier.CLASSES; j++) {
                if (e[j] > e[first]) {
                    first = j;
                }
            }
            int second = first == 0 ? 1 : 0;
            for (int j = second + 1; j < Classifier.CLASSES; j++) {
                if (j != first && e[j] > e[second]) {
                    second = j;
                }
            }
            long at = (long) r * Classifier.TOP * Integer.BYTES;
            answer.set(JAVA_INT, at, first);
            answer.set(JAVA_INT, at + Integer.BYTES, second);
            answer.set(JAVA_FLOAT, probabilities + at, e[first] / sum);
            answer.set(JAVA_FLOAT, probabilities + at + Float.BYTES, e[second] / sum);
        }
    }
}
