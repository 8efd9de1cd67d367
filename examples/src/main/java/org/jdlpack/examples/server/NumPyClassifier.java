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

            # Each row's 16 isfinite flags are 16 bytes of 0 or 1: read as two uint64 they are all
            # ones exactly when both equal ALL_TRUE. A reduction over a row's 16 flags
            # (.all(axis=1)) costs ten times as much at 65,536 rows.
            ALL_TRUE = np.uint64(0x0101010101010101)

            def pre(x, finite):
                a = np.from_dlpack(x)
                flags = np.isfinite(a).view(np.uint64)
                np.from_dlpack(finite)[...] = (flags[:, 0] == ALL_TRUE) & (flags[:, 1] == ALL_TRUE)
                np.subtract(a, MEAN, out=a)
                np.divide(a, STD, out=a)

            def post(logits, top, prob):
                z = np.from_dlpack(logits)
                # Reductions over a row's 4 logits (max, sum, argmax along axis 1) cost about
                # twice what one contiguous vector per class does from 1,024 rows up (4 MiB
                # requests are 65,536), and less below, where the per-call cost of the column
                # version's 30-odd NumPy calls dominates. Both give the same answers.
                (post_rows if len(z) < 1024 else post_columns)(z, np.from_dlpack(top), np.from_dlpack(prob))

            def post_rows(z, t, q):
                e = np.exp(z - z.max(axis=1, keepdims=True))
                p = e / e.sum(axis=1, keepdims=True)
                # Top 2 by two argmax passes, not a sort of every row: argmax takes the lowest
                # index of a tie, as a stable sort would put it first.
                rows = np.arange(len(p))
                first = p.argmax(axis=1)
                p_first = p[rows, first]
                p[rows, first] = -1.0
                second = p.argmax(axis=1)
                t[:, 0] = first
                t[:, 1] = second
                q[:, 0] = p_first
                q[:, 1] = p[rows, second]

            def post_columns(z, t, q):
                c = np.ascontiguousarray(z.T)
                m = np.maximum(np.maximum(c[0], c[1]), np.maximum(c[2], c[3]))
                e = np.exp(c - m)
                p = e / (((e[0] + e[1]) + e[2]) + e[3])  # the order NumPy's sum of 4 takes
                # Top 2 by strict comparison: a tie keeps the lower class first, as argmax does.
                first = np.zeros(len(m), np.int32)
                p_first = p[0]
                for j in range(1, len(c)):
                    better = p[j] > p_first
                    first = np.where(better, np.int32(j), first)
                    p_first = np.where(better, p[j], p_first)
                second = (first == 0).astype(np.int32)
                p_second = np.where(first == 0, p[1], p[0])
                for j in range(1, len(c)):
                    better = (p[j] > p_second) & (first != j)
                    second = np.where(better, np.int32(j), second)
                    p_second = np.where(better, p[j], p_second)
                t[:, 0] = first
                t[:, 1] = second
                q[:, 0] = p_first
                q[:, 1] = p_second

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
