package org.jdlpack.benchmarks;

import org.jdlpack.python.PythonRuntime;

/**
 * NumPy's own DLPack round trip on the same shape as ExchangeBenchmark, timed by Python's timeit
 * inside the embedded CPython: {@code np.from_dlpack(a)} exports, imports and (when the result
 * dies) deletes. Prints "numpy_from_dlpack_ns X" (the best of 5 repeats).
 */
public final class NumPyRoundTrip {

    private NumPyRoundTrip() {
    }

    /**
     * Runs the measurement.
     *
     * @param args ignored
     */
    public static void main(String[] args) {
        PythonRuntime numpy = PythonRuntime.get();
        numpy.exec("import timeit\nimport numpy as np\na = np.zeros((2, 3, 4, 5), dtype=np.float32)");
        String best = numpy.evalString("min(timeit.repeat(lambda: np.from_dlpack(a), number=200000, repeat=5)) / 200000 * 1e9");
        System.out.printf("numpy_from_dlpack_ns %.1f%n", Double.parseDouble(best));
        String legacy = numpy.evalString("min(timeit.repeat(lambda: np.from_dlpack(a, copy=False), number=200000, repeat=5)) / 200000 * 1e9");
        System.out.printf("numpy_from_dlpack_nocopy_ns %.1f%n", Double.parseDouble(legacy));
    }
}
