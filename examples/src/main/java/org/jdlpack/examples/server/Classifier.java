package org.jdlpack.examples.server;

/**
 * What the server computes and how a request can fail, shared by both routes: {@code scorer.onnx}
 * gives logits = x @ W + b for rows of {@link #FEATURES} float32 ({@link #CLASSES} logits a row);
 * before it each value is normalized, (x - 0.5) / 2, and a row with NaN or infinity is refused;
 * after it a softmax, and the {@link #TOP} most probable classes with their probabilities.
 *
 * <p>The answer's bytes: {@code rows x 2} int32 classes, then {@code rows x 2} float32
 * probabilities, little-endian (the order of the machine's memory, written as it lies).
 */
final class Classifier {

    static final int FEATURES = 16;
    static final int CLASSES = 4;
    static final int TOP = 2;
    static final float MEAN = 0.5f;
    static final float STD = 2.0f;

    private Classifier() {
    }

    /** A request the pipeline refuses: answered 400. */
    static final class BadRequestException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        BadRequestException(String message) {
            super(message);
        }
    }

    /** A step of the pipeline that failed: answered 500, naming the step. */
    static final class StepFailedException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        StepFailedException(String step, Throwable cause) {
            super(step + " failed: " + String.valueOf(cause.getMessage()).strip().lines().reduce((a, b) -> b).orElse(""), cause);
        }
    }

    /** What a request asks to break, for tests of the error paths (only when the server allows it). */
    enum Failure { NONE, ORT, PYTHON }
}
