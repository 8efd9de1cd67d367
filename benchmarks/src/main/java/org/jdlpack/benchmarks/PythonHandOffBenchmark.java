package org.jdlpack.benchmarks;

import java.util.concurrent.TimeUnit;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.python.DLPackSource;
import org.jdlpack.python.PythonObject;
import org.jdlpack.python.PythonRuntime;
import org.jdlpack.testsupport.ExchangePeer;
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
 * What handing a Java tensor to Python costs through dlpack-python, next to NumPy's own round trip
 * ({@code np.from_dlpack} of a NumPy array) in the same run, on ExchangeBenchmark's shape (2x3x4x5
 * float32).
 *
 * <ul>
 *   <li>{@code inPython*}: a Python loop of 1000 {@code np.from_dlpack(...)} calls, per call: the
 *       protocol alone (for the Java object: its C-level {@code __dlpack__}, one upcall that
 *       exports, the capsule, NumPy's import, and the deleter when the array dies);</li>
 *   <li>{@code fromJava*}: one {@code np.from_dlpack(...)} called from Java, result dropped: adds
 *       the GIL and the Java-to-Python call;</li>
 *   <li>{@code fromJavaNewObject}: also makes the Python object for a Java tensor each time;</li>
 *   <li>{@code cConsumer*}: the C consumer of test-support's {@code exchange_peer.c} (loaded with
 *       ctypes) takes the Java tensor 1000 times per call, per tensor: through the DLPack C
 *       exchange API ({@code managed_tensor_from_py_object_no_sync}, {@code current_work_stream},
 *       the deleter), through {@code dltensor_from_py_object_no_sync} (a view, no export), and the
 *       same consumer through {@code __dlpack__(max_version=(1, 3))};</li>
 *   <li>{@code importJavaTensor*}, {@code importCProducer*}, {@code importNumPyArray}:
 *       {@code PythonRuntime.importTensor} and close, from Java: through the type's exchange API,
 *       and the same object through {@code __dlpack__} in a fork run with
 *       {@code -Dorg.jdlpack.python.exchangeApi=false}; a NumPy array, which has no exchange API.</li>
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
    private PythonObject consumeExchange;
    private PythonObject viewExchange;
    private PythonObject consumeDlpack;
    private PythonObject producerTensor;

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
        python.exec(ExchangePeer.pythonSetup("xc") + """
                out = (ctypes.c_int64 * 12)()
                def consume_exchange():
                    if xc.xc_consume_exchange(x, 1000, out) != 0:
                        raise RuntimeError('the C consumer failed')
                def view_exchange():
                    if xc.xc_view_exchange(x, 1000, out) != 0:
                        raise RuntimeError('the C consumer failed')
                def consume_dlpack():
                    if xc.xc_consume_dlpack(x, 1000, out) != 0:
                        raise RuntimeError('the C consumer failed')
                c = CTensor(120)
                """);
        consumeExchange = python.get("consume_exchange");
        viewExchange = python.get("view_exchange");
        consumeDlpack = python.get("consume_dlpack");
        producerTensor = python.get("c");
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        for (PythonObject object : new PythonObject[] {fromDlpack, javaObject, numpyArray, loopJava, loopNumPy, consumeExchange,
                viewExchange, consumeDlpack, producerTensor}) {
            object.close();
        }
        python.exec("del x, a, c, loop_java, loop_numpy, consume_exchange, view_exchange, consume_dlpack\nimport gc\ngc.collect()");
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

    @Benchmark
    @OperationsPerInvocation(1000)
    public void cConsumerExchange() {
        python.call(consumeExchange).close();
    }

    @Benchmark
    @OperationsPerInvocation(1000)
    public void cConsumerView() {
        python.call(viewExchange).close();
    }

    @Benchmark
    @OperationsPerInvocation(1000)
    public void cConsumerDlpack() {
        python.call(consumeDlpack).close();
    }

    @Benchmark
    public void importJavaTensor() {
        python.importTensor(javaObject).close();
    }

    @Benchmark
    @Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Dorg.jdlpack.python.exchangeApi=false"})
    public void importJavaTensorThroughDlpack() {
        python.importTensor(javaObject).close();
    }

    @Benchmark
    public void importCProducer() {
        python.importTensor(producerTensor).close();
    }

    @Benchmark
    @Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Dorg.jdlpack.python.exchangeApi=false"})
    public void importCProducerThroughDlpack() {
        python.importTensor(producerTensor).close();
    }

    @Benchmark
    public void importNumPyArray() {
        python.importTensor(numpyArray).close();
    }
}
