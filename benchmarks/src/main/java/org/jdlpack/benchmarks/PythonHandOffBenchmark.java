package org.jdlpack.benchmarks;

import java.util.concurrent.TimeUnit;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.python.DLPackSource;
import org.jdlpack.python.PythonObject;
import org.jdlpack.python.PythonRuntime;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What handing a Java tensor to {@code np.from_dlpack} costs through dlpack-python's
 * {@code __dlpack__} object, next to NumPy's own round trip ({@code np.from_dlpack} of a NumPy
 * array) in the same run, on ExchangeBenchmark's shape (2x3x4x5 float32).
 *
 * <ul>
 *   <li>{@code inPython*}: a Python loop of 1000 {@code np.from_dlpack(...)} calls, per call: the
 *       protocol alone (for the Java object: {@code __dlpack__} in Python, the Java upcall that
 *       exports, the capsule, NumPy's import, and the deleter when the array dies);</li>
 *   <li>{@code fromJava*}: one {@code np.from_dlpack(...)} called from Java, result dropped: adds
 *       the GIL and the Java-to-Python call;</li>
 *   <li>{@code fromJavaNewObject}: also makes the Python object for a Java tensor each time.</li>
 * </ul>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED"})
public class PythonHandOffBenchmark {

    private PythonRuntime python;
    private OwnedHostTensor tensor;
    private DLPackSource source;
    private PythonObject fromDlpack;
    private PythonObject javaObject;
    private PythonObject numpyArray;
    private PythonObject loopJava;
    private PythonObject loopNumPy;

    @Setup(Level.Trial)
    public void setUp() {
        python = PythonRuntime.get();
        python.exec("import numpy as np\na = np.zeros((2, 3, 4, 5), dtype=np.float32)");
        tensor = OwnedHostTensor.allocate(DLDataType.FLOAT32, 2, 3, 4, 5);
        source = DLPackSource.of(tensor);
        javaObject = python.toPython(source);
        python.set("x", javaObject);
        python.exec("""
                def loop_java():
                    for _ in range(1000):
                        np.from_dlpack(x)
                def loop_numpy():
                    for _ in range(1000):
                        np.from_dlpack(a)
                """);
        fromDlpack = python.eval("np.from_dlpack");
        numpyArray = python.get("a");
        loopJava = python.get("loop_java");
        loopNumPy = python.get("loop_numpy");
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        for (PythonObject object : new PythonObject[] {fromDlpack, javaObject, numpyArray, loopJava, loopNumPy}) {
            object.close();
        }
        python.exec("del x, a, loop_java, loop_numpy\nimport gc\ngc.collect()");
        tensor.close();
    }

    @Benchmark
    @OperationsPerInvocation(1000)
    public void inPythonNumPyArray() {
        python.call(loopNumPy).close();
    }

    @Benchmark
    @OperationsPerInvocation(1000)
    public void inPythonJavaTensor() {
        python.call(loopJava).close();
    }

    @Benchmark
    public void fromJavaNumPyArray() {
        python.call(fromDlpack, numpyArray).close();
    }

    @Benchmark
    public void fromJavaJavaTensor() {
        python.call(fromDlpack, javaObject).close();
    }

    @Benchmark
    public void fromJavaNewObject() {
        try (PythonObject fresh = python.toPython(source)) {
            python.call(fromDlpack, fresh).close();
        }
    }
}
