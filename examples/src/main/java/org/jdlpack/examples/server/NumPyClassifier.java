package org.jdlpack.examples.server;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.cpu.HostTensorPool;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.python.DLPackSource;
import org.jdlpack.python.PythonException;
import org.jdlpack.python.PythonObject;
import org.jdlpack.python.PythonRuntime;

/**
 * The {@code ?route=numpy} pipeline, run once per batch ({@link Batcher}): one Python call
 * normalizes the whole batch in place through DLPack and marks its finite rows, ONNX Runtime
 * scores the batch where it lies, one Python call computes softmax and top-2 for every row into
 * two pooled tensors, from which each request's answer is written. Per batch, not per request:
 * two Python calls, each one GIL entry with its tensors (passed as {@link DLPackSource}s, made
 * Python objects inside it) and one for its result's close, and one ONNX Runtime run.
 *
 * <p>Thread safety: the pipeline runs on the batch leader's thread; Python takes the GIL for each
 * step, so batches' Python steps run one at a time, their ONNX Runtime runs side by side.
 */
final class NumPyClassifier implements Batcher.Pipeline, AutoCloseable {

    /** The Python side: marks rows, normalizes in place, softmax and top-2 into the tensors given. */
    private static final String PYTHON = """
            import numpy as np

            MEAN = np.float32(%s)
            STD = np.float32(%s)

            def pre(x, finite):
                a = np.from_dlpack(x)
                np.from_dlpack(finite)[...] = np.isfinite(a).all(axis=1)
                np.subtract(a, MEAN, out=a)
                np.divide(a, STD, out=a)

            def post(logits, top, prob):
                z = np.from_dlpack(logits)
                e = np.exp(z - z.max(axis=1, keepdims=True))
                p = e / e.sum(axis=1, keepdims=True)
                # Top 2 by two argmax passes, not a sort of every row: argmax takes the lowest
                # index of a tie, as a stable sort would put it first.
                rows = np.arange(len(p))
                first = p.argmax(axis=1)
                p_first = p[rows, first]
                p[rows, first] = -1.0
                second = p.argmax(axis=1)
                t = np.from_dlpack(top)
                t[:, 0] = first
                t[:, 1] = second
                q = np.from_dlpack(prob)
                q[:, 0] = p_first
                q[:, 1] = p[rows, second]

            def fail(*tensors):
                raise RuntimeError("a failure injected into the Python step")
            """.formatted(Classifier.MEAN, Classifier.STD);

    private final HostTensorPool pool;
    private final Scorer scorer;
    private final PythonRuntime python;
    private final PythonObject pre;
    private final PythonObject post;
    private final PythonObject fail;

    /** @throws org.jdlpack.python.PythonUnavailableException if there is no Python; PythonException if no NumPy */
    NumPyClassifier(HostTensorPool pool, Scorer scorer) {
        this.pool = pool;
        this.scorer = scorer;
        this.python = PythonRuntime.get();
        python.exec("import types\n_jdlpack_server = types.ModuleType('_jdlpack_server')\nexec(" + pythonString(PYTHON)
                + ", _jdlpack_server.__dict__)");
        this.pre = python.eval("_jdlpack_server.pre");
        this.post = python.eval("_jdlpack_server.post");
        this.fail = python.eval("_jdlpack_server.fail");
    }

    private static String pythonString(String text) {
        return "'" + text.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n") + "'";
    }

    @Override
    public void run(Batcher.Batch batch) throws InterruptedException {
        int rows = batch.rows();
        Classifier.Failure failure = batch.failure();
        // The batch's rows as a tensor of their own over the input's memory: what NumPy and ONNX Runtime get.
        try (OwnedHostTensor x = batch.input.rows(0, rows);
             OwnedHostTensor logits = pool.take(DLDataType.FLOAT32, rows + (failure == Classifier.Failure.ORT ? 1 : 0),
                     Classifier.CLASSES)) {
            batch.finite = pool.take(DLDataType.INT32, rows);
            step("pre-processing (NumPy)", failure == Classifier.Failure.PYTHON ? fail : pre, x, batch.finite);
            scorer.score(x, logits);
            batch.top = pool.take(DLDataType.INT32, rows, Classifier.TOP);
            batch.probabilities = pool.take(DLDataType.FLOAT32, rows, Classifier.TOP);
            step("post-processing (NumPy)", post, logits, batch.top, batch.probabilities);
        }
    }

    /** One Python call, the tensors passed as sources: one GIL entry for the call, one for its result's close. */
    private void step(String name, PythonObject function, OwnedHostTensor... tensors) {
        Object[] arguments = new Object[tensors.length];
        for (int i = 0; i < tensors.length; i++) {
            arguments[i] = DLPackSource.of(tensors[i]);
        }
        try {
            python.call(function, arguments).close();
        } catch (PythonException e) {
            throw new Classifier.StepFailedException(name, e);
        }
    }

    @Override
    public void close() {
        for (PythonObject function : new PythonObject[] {pre, post, fail}) {
            function.close();
        }
    }
}
