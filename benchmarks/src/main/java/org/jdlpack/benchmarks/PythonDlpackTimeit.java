package org.jdlpack.benchmarks;

import java.util.LinkedHashMap;
import java.util.Map;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLDevice;
import org.jdlpack.abi.ExportedTensor;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.python.DLPackSource;
import org.jdlpack.python.ExportRequest;
import org.jdlpack.python.PythonObject;
import org.jdlpack.python.PythonRuntime;

/**
 * A plain program, not JMH, that takes a Java tensor's {@code np.from_dlpack} apart with Python's
 * {@code timeit} inside the embedded interpreter: the best of 300 repeats of 1,000 calls, the
 * best of 6 rounds, ns per call. Short repeats find the undisturbed moments of a loaded machine.
 *
 * <ul>
 *   <li>{@code a}: a NumPy array, NumPy's own round trip;</li>
 *   <li>{@code x}: a host tensor ({@code DLPackSource.of}): exported with the GIL held, without a
 *       handle;</li>
 *   <li>{@code y}: the same tensor behind another {@code DLPackSource}: exported with the GIL
 *       released, through an {@code ExportedTensor};</li>
 *   <li>{@code __dlpack__} alone (the capsule dropped unconsumed: its destructor calls the
 *       deleter), and {@code __dlpack_device__} (one upcall that returns a tuple).</li>
 * </ul>
 *
 * <pre>java --enable-native-access=ALL-UNNAMED -cp benchmarks/target/benchmarks.jar org.jdlpack.benchmarks.PythonDlpackTimeit</pre>
 */
public final class PythonDlpackTimeit {

    private PythonDlpackTimeit() {
    }

    /**
     * Runs the timings.
     *
     * @param args statements to time instead of the default ones
     */
    public static void main(String[] args) {
        PythonRuntime python = PythonRuntime.get();
        python.exec("import numpy as np, timeit\na = np.zeros((2, 3, 4, 5), dtype=np.float32)");
        OwnedHostTensor tensor = OwnedHostTensor.allocate(DLDataType.FLOAT32, 2, 3, 4, 5);
        DLPackSource host = DLPackSource.of(tensor);
        DLPackSource other = new DLPackSource() {
            @Override
            public DLDevice device() {
                return host.device();
            }

            @Override
            public ExportedTensor export(ExportRequest request) {
                return host.export(request);
            }
        };
        try (PythonObject x = python.toPython(host); PythonObject y = python.toPython(other)) {
            python.set("x", x);
            python.set("y", y);
        }
        String[] statements = args.length > 0 ? args : new String[] {"np.from_dlpack(a)", "np.from_dlpack(x)", "np.from_dlpack(y)",
            "a.__dlpack__(max_version=(1, 3))", "x.__dlpack__(max_version=(1, 3))", "x.__dlpack_device__()", "len(())"};
        Map<String, Long> best = new LinkedHashMap<>();
        for (int round = 0; round < 6; round++) {
            for (String statement : statements) {
                python.exec("t = min(timeit.repeat('" + statement.replace("'", "\\'") + "', globals=globals(), number=1000, repeat=300))"
                        + " / 1000 * 1e9");
                best.merge(statement, Long.parseLong(python.evalString("round(t)")), Math::min);
            }
        }
        best.forEach((statement, ns) -> System.out.printf("%-40s %6d ns%n", statement, ns));
        python.exec("del x, y, a");
        tensor.close();
    }
}
