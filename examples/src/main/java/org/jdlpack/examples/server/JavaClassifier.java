package org.jdlpack.examples.server;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.MemorySegment;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.cpu.HostTensorPool;
import org.jdlpack.cpu.OwnedHostTensor;

/**
 * The default route's pipeline, all in Java over native memory: the NaN check and normalization in
 * place in the request's tensor, ONNX Runtime reading it there and writing the logits into a
 * pooled tensor, softmax and top-2 from those into the answer's pooled tensor. No array and no
 * copy of the rows on the heap.
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
     * Classifies the rows of {@code body} ([rows, 16] float32, normalized here in place).
     *
     * @return the answer: [2, rows, 2] int32, the classes, then the probabilities' float32 bits; close it
     * @throws Classifier.BadRequestException if a row holds NaN or infinity
     * @throws Classifier.StepFailedException if ONNX Runtime fails
     */
    OwnedHostTensor classify(OwnedHostTensor body, Classifier.Failure failure) throws InterruptedException {
        int rows = Math.toIntExact(body.spec().layout().shape(0));
        normalize(body.host().segment(), rows);
        // An injected ONNX Runtime failure: logits one row too long, which the run refuses.
        try (OwnedHostTensor logits = pool.take(DLDataType.FLOAT32, rows + (failure == Classifier.Failure.ORT ? 1 : 0),
                Classifier.CLASSES)) {
            scorer.score(body, logits);
            OwnedHostTensor answer = pool.take(DLDataType.INT32, 2, rows, Classifier.TOP);
            top(logits.host().segment(), answer.host().segment(), rows);
            return answer;
        }
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
