package org.jdlpack.examples.server;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.util.Map;
import java.util.concurrent.Semaphore;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.cpu.HostTensorView;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.onnxruntime.OrtBridge;
import org.jdlpack.onnxruntime.OrtInput;
import org.jdlpack.onnxruntime.OrtOutput;
import org.jdlpack.python.DLPackSource;
import org.jdlpack.python.PythonException;
import org.jdlpack.python.PythonObject;
import org.jdlpack.python.PythonRuntime;

/**
 * The server's pipeline: normalize in NumPy, score with ONNX Runtime ({@code scorer.onnx}: logits
 * = x @ W + b, x [rows, 16], logits [rows, 4]), softmax and top-2 in NumPy. Two routes compute the
 * same answer:
 * <ul>
 *   <li>zero-copy: the request body is read into native memory once; NumPy normalizes it in
 *       place through DLPack, ONNX Runtime reads it there and writes the logits into memory
 *       jdlpack owns, NumPy reads those through DLPack and writes the top-2 classes and
 *       probabilities into two more Java tensors, which are written to the response;</li>
 *   <li>copying, the same-run baseline: every boundary copies, as without DLPack: the body into a
 *       {@code float[]}, Java to Python and back through Python lists ({@code tolist()} and
 *       {@code np.array}), a heap buffer into ONNX Runtime, its output out as {@code float[][]}.</li>
 * </ul>
 * Thread safety: one instance serves all request threads; Python holds the GIL for each step, and
 * at most {@code inferencePermits} ONNX Runtime runs happen at once (a virtual thread stays on its
 * carrier during the native run, so more would only queue carriers).
 */
final class Classifier implements AutoCloseable {

    static final int FEATURES = 16;
    static final int CLASSES = 4;
    static final int TOP = 2;

    /** The Python side: raises BadRequest for input it refuses, any other exception for its own failure. */
    private static final String PYTHON = """
            import numpy as np

            class BadRequest(ValueError):
                pass

            MEAN = np.float32(0.5)
            STD = np.float32(2.0)
            TOP = %d

            def _check(a):
                finite = np.isfinite(a).all(axis=1)
                if not finite.all():
                    raise BadRequest("row %%d holds NaN or infinity" %% int(np.argmin(finite)))

            def _softmax_top(z):
                e = np.exp(z - z.max(axis=1, keepdims=True))
                p = e / e.sum(axis=1, keepdims=True)
                idx = np.argsort(-p, axis=1, kind="stable")[:, :TOP]
                return idx.astype(np.int32), np.take_along_axis(p, idx, axis=1).astype(np.float32)

            def pre(x):
                a = np.from_dlpack(x)
                _check(a)
                np.subtract(a, MEAN, out=a)
                np.divide(a, STD, out=a)

            def post(logits, top, prob):
                i, p = _softmax_top(np.from_dlpack(logits))
                np.from_dlpack(top)[...] = i
                np.from_dlpack(prob)[...] = p

            def pre_copy(x):
                a = np.array(np.from_dlpack(x).tolist(), dtype=np.float32)
                _check(a)
                return np.array(((a - MEAN) / STD).tolist(), dtype=np.float32)

            def post_copy(logits):
                z = np.array(np.from_dlpack(logits).tolist(), dtype=np.float32)
                i, p = _softmax_top(z)
                return np.array(np.concatenate([i.astype(np.float32), p], axis=1).tolist(), dtype=np.float32)

            def fail(x):
                raise RuntimeError("a failure injected into the Python step")
            """.formatted(TOP);

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
            super(step + " failed: " + cause.getMessage().strip().lines().reduce((a, b) -> b).orElse(""), cause);
        }
    }

    /** What a request asks to break, for tests of the error paths (only when the server allows it). */
    enum Failure { NONE, ORT, PYTHON }

    /** The answer: for each row, the top-2 classes and their probabilities. */
    interface Answer extends AutoCloseable {
        int rows();

        /** Writes rows*2 int32 classes, then rows*2 float32 probabilities, little-endian, through {@code chunk}. */
        void writeTo(OutputStream out, byte[] chunk) throws IOException;

        @Override
        void close();
    }

    private final OrtEnvironment env = OrtEnvironment.getEnvironment();
    private final OrtSession session;
    private final OrtBridge ort = OrtBridge.of(env).zeroCopyOnly();
    private final PythonRuntime python;
    private final PythonObject pre;
    private final PythonObject post;
    private final PythonObject preCopy;
    private final PythonObject postCopy;
    private final PythonObject fail;
    private final Semaphore inferences;
    private final BufferPool pool;
    private final java.util.concurrent.atomic.LongAdder inferenceNanos = new java.util.concurrent.atomic.LongAdder();

    Classifier(byte[] model, int inferencePermits, BufferPool pool) throws OrtException {
        OrtSession.SessionOptions options = new OrtSession.SessionOptions();
        options.setIntraOpNumThreads(1);
        options.setInterOpNumThreads(1);
        options.setSessionLogLevel(ai.onnxruntime.OrtLoggingLevel.ORT_LOGGING_LEVEL_FATAL);
        this.session = env.createSession(model, options);
        this.python = PythonRuntime.get();
        python.exec("import types\n_jdlpack_server = types.ModuleType('_jdlpack_server')\nexec(" + pythonString(PYTHON)
                + ", _jdlpack_server.__dict__)");
        this.pre = python.eval("_jdlpack_server.pre");
        this.post = python.eval("_jdlpack_server.post");
        this.preCopy = python.eval("_jdlpack_server.pre_copy");
        this.postCopy = python.eval("_jdlpack_server.post_copy");
        this.fail = python.eval("_jdlpack_server.fail");
        this.inferences = new Semaphore(inferencePermits);
        this.pool = pool;
    }

    private static String pythonString(String text) {
        return "'" + text.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n") + "'";
    }

    /** Zero-copy: {@code body} is the request's rows x 16 float32, already in a pooled tensor this call closes. */
    Answer zeroCopy(OwnedHostTensor body, Failure failure) throws OrtException, InterruptedException {
        int rows = Math.toIntExact(body.spec().layout().shape(0));
        try (body) {
            pythonStep("pre-processing (NumPy)", failure == Failure.PYTHON ? fail : pre, body);
            // An injected ONNX Runtime failure: an output one row too long, which the run refuses.
            try (OrtInput x = ort.input(body);
                 OwnedHostTensor logitsMemory = pool.tensor(DLDataType.FLOAT32, rows + (failure == Failure.ORT ? 1 : 0), CLASSES);
                 OrtOutput logits = ort.output(logitsMemory)) {
                infer(() -> ort.run(session, Map.of("x", x), Map.of("logits", logits)));
                OwnedHostTensor top = pool.tensor(DLDataType.INT32, rows, TOP);
                OwnedHostTensor prob = pool.tensor(DLDataType.FLOAT32, rows, TOP);
                try {
                    pythonStep("post-processing (NumPy)", post, logits.tensor(), top, prob);
                } catch (RuntimeException e) {
                    top.close();
                    prob.close();
                    throw e;
                }
                return new TensorAnswer(rows, top, prob);
            }
        }
    }

    /** The copying route: {@code body} is the request's bytes on the heap. */
    Answer copying(byte[] body, int rows, Failure failure) throws OrtException, InterruptedException {
        float[] values = new float[rows * FEATURES];
        ByteBuffer.wrap(body).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(values);
        float[] normalized = new float[values.length];
        try (OwnedHostTensor x = OwnedHostTensor.copyOf(values, rows, FEATURES)) {
            try (PythonObject px = python.toPython(DLPackSource.of(x));
                 PythonObject result = callPython("pre-processing (NumPy)", failure == Failure.PYTHON ? fail : preCopy, px);
                 ImportedTensor back = python.importTensor(result)) {
                HostTensorView.of(back).copyTo(normalized);
            }
        }
        float[][] logits;
        try (OnnxTensor x = OnnxTensor.createTensor(env, FloatBuffer.wrap(normalized),
                new long[] {rows + (failure == Failure.ORT ? 1 : 0), FEATURES})) {
            float[][][] holder = new float[1][][];
            infer(() -> {
                try (OrtSession.Result result = session.run(Map.of("x", x))) {
                    holder[0] = (float[][]) result.get(0).getValue();
                }
            });
            logits = holder[0];
        } catch (OrtException e) {
            throw new StepFailedException("inference (ONNX Runtime)", e);
        }
        float[] flat = new float[rows * CLASSES];
        for (int r = 0; r < rows; r++) {
            System.arraycopy(logits[r], 0, flat, r * CLASSES, CLASSES);
        }
        float[] answer = new float[rows * 2 * TOP];
        try (OwnedHostTensor l = OwnedHostTensor.copyOf(flat, rows, CLASSES);
             PythonObject pl = python.toPython(DLPackSource.of(l));
             PythonObject result = callPython("post-processing (NumPy)", postCopy, pl);
             ImportedTensor back = python.importTensor(result)) {
            HostTensorView.of(back).copyTo(answer);
        }
        return new ArrayAnswer(rows, answer);
    }

    @FunctionalInterface
    private interface Inference {
        void run() throws OrtException;
    }

    private void infer(Inference run) throws InterruptedException {
        inferences.acquire();
        long start = System.nanoTime();
        try {
            run.run();
        } catch (OrtException e) {
            throw new StepFailedException("inference (ONNX Runtime)", e);
        } finally {
            inferenceNanos.add(System.nanoTime() - start);
            inferences.release();
        }
    }

    /** {@return the nanoseconds spent inside ONNX Runtime runs so far, all threads together} */
    long inferenceNanos() {
        return inferenceNanos.sum();
    }

    private void pythonStep(String step, PythonObject function, OwnedHostTensor... tensors) {
        PythonObject[] arguments = new PythonObject[tensors.length];
        try {
            for (int i = 0; i < tensors.length; i++) {
                arguments[i] = python.toPython(DLPackSource.of(tensors[i]));
            }
            callPython(step, function, arguments).close();
        } finally {
            for (PythonObject argument : arguments) {
                if (argument != null) {
                    argument.close();
                }
            }
        }
    }

    private PythonObject callPython(String step, PythonObject function, PythonObject... arguments) {
        try {
            return python.call(function, arguments);
        } catch (PythonException e) {
            // The Python class is _jdlpack_server.BadRequest: refused input, not a failure of the step.
            if (e.lastLine().matches("^([A-Za-z_]+\\.)*BadRequest: .*")) {
                throw new BadRequestException(e.lastLine().substring(e.lastLine().indexOf(':') + 1).strip());
            }
            throw new StepFailedException(step, e);
        }
    }

    /** The zero-copy answer: two pooled tensors, written to the socket from native memory. */
    private record TensorAnswer(int rows, OwnedHostTensor top, OwnedHostTensor prob) implements Answer {
        @Override
        public void writeTo(OutputStream out, byte[] chunk) throws IOException {
            for (MemorySegment part : new MemorySegment[] {top.host().segment(), prob.host().segment()}) {
                for (long at = 0; at < part.byteSize(); at += chunk.length) {
                    int n = (int) Math.min(chunk.length, part.byteSize() - at);
                    MemorySegment.copy(part, ValueLayout.JAVA_BYTE, at, chunk, 0, n);
                    out.write(chunk, 0, n);
                }
            }
        }

        @Override
        public void close() {
            top.close();
            prob.close();
        }
    }

    /** The copying answer: rows x [2 classes as floats, 2 probabilities], turned into the same bytes. */
    private record ArrayAnswer(int rows, float[] values) implements Answer {
        @Override
        public void writeTo(OutputStream out, byte[] chunk) throws IOException {
            ByteBuffer bytes = ByteBuffer.allocate(rows * TOP * 8).order(ByteOrder.LITTLE_ENDIAN);
            for (int r = 0; r < rows; r++) {
                for (int k = 0; k < TOP; k++) {
                    bytes.putInt((int) values[r * 2 * TOP + k]);
                }
            }
            for (int r = 0; r < rows; r++) {
                for (int k = 0; k < TOP; k++) {
                    bytes.putFloat(values[r * 2 * TOP + TOP + k]);
                }
            }
            out.write(bytes.array());
        }

        @Override
        public void close() {
        }
    }

    @Override
    public void close() throws OrtException {
        for (PythonObject function : new PythonObject[] {pre, post, preCopy, postCopy, fail}) {
            function.close();
        }
        session.close();
    }
}
