package org.jdlpack.benchmarks;

import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import ai.onnxruntime.OnnxJavaType;
import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.ExportedTensor;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.onnxruntime.AllocatedOutputs;
import org.jdlpack.onnxruntime.CopiedOutputs;
import org.jdlpack.onnxruntime.OrtBridge;
import org.jdlpack.onnxruntime.OrtCApiBinding;
import org.jdlpack.onnxruntime.OrtCApiRun;
import org.jdlpack.onnxruntime.OrtCApiSession;
import org.jdlpack.onnxruntime.OrtCApiTensor;
import org.jdlpack.onnxruntime.OrtInput;
import org.jdlpack.onnxruntime.OrtOutput;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * ONNX Runtime's C API through FFM ({@link OrtCApiSession}) against ONNX Runtime Java by hand and
 * against {@link OrtBridge} over ONNX Runtime Java, in one process over the same memory and the
 * same model ({@code tiny.onnx}: x [2,4] to y [2,3], one intra-op thread): one run with its input
 * and pinned output reused (the C route with its run prepared once, as the example server's slots
 * keep it, with a run prepared per call, and through an IOBinding, {@link OrtCApiBinding}), and making
 * and releasing one input tensor. And an output whose shape the model decides
 * ({@code nonzero.onnx}: x [N] float32 to y [1, N/2] int64, every other x non-zero), exported as
 * a DLPack tensor: ONNX Runtime's own value through the C route ({@link AllocatedOutputs}, no
 * copy) against the Java API's route through the bridge ({@link CopiedOutputs}, two copies). Run
 * with {@code -prof gc} for the heap bytes per operation; {@link HandOffCpuTime} runs the same
 * methods in thread CPU time, the routes taking turns.
 *
 * <pre>java --enable-native-access=ALL-UNNAMED -jar benchmarks/target/benchmarks.jar OrtCApiBenchmark -prof gc</pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED"})
public class OrtCApiBenchmark {

    private OrtSession javaSession;
    private OwnedHostTensor x;
    private OwnedHostTensor y;
    private OnnxTensor xJava;
    private OnnxTensor yJava;
    private Map<String, OnnxTensor> javaInputs;
    private Map<String, OnnxTensor> javaOutputs;
    private OrtCApiSession cSession;
    private OrtCApiTensor xC;
    private OrtCApiTensor yC;
    private OrtCApiRun cRun;
    private OwnedHostTensor yBound;
    private OrtCApiTensor yBoundC;
    private OrtCApiBinding cBinding;
    private Map<String, OrtCApiTensor> cInputs;
    private Map<String, OrtCApiTensor> cOutputs;
    private OrtBridge bridge;
    private OrtInput xBridge;
    private OrtOutput yBridge;
    private Map<String, OrtInput> bridgeInputs;
    private Map<String, OrtOutput> bridgeOutputs;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        Path model = Path.of(System.getProperty("jdlpack.tiny",
                "dlpack-onnxruntime/src/test/resources/org/jdlpack/onnxruntime/tiny.onnx"));
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        OrtSession.SessionOptions options = new OrtSession.SessionOptions();
        options.setIntraOpNumThreads(1);
        javaSession = env.createSession(Files.readAllBytes(model), options);
        x = OwnedHostTensor.copyOf(new float[] {1, 2, 3, 4, 5, 6, 7, 8}, 2, 4);
        y = OwnedHostTensor.allocate(DLDataType.FLOAT32, 2, 3);
        xJava = OnnxTensor.createTensor(env, x.host().segment().asByteBuffer().order(ByteOrder.nativeOrder()),
                new long[] {2, 4}, OnnxJavaType.FLOAT);
        yJava = OnnxTensor.createTensor(env, y.host().segment().asByteBuffer().order(ByteOrder.nativeOrder()),
                new long[] {2, 3}, OnnxJavaType.FLOAT);
        javaInputs = Map.of("x", xJava);
        javaOutputs = Map.of("y", yJava);
        cSession = OrtCApiSession.open(model, 1);
        xC = OrtCApiSession.tensor(x);
        yC = OrtCApiSession.tensor(y);
        cInputs = Map.of("x", xC);
        cOutputs = Map.of("y", yC);
        cRun = cSession.prepare(cInputs, cOutputs);
        yBound = OwnedHostTensor.allocate(DLDataType.FLOAT32, 2, 3); // a bound output is the binding's alone
        yBoundC = OrtCApiSession.tensor(yBound);
        cBinding = cSession.bind(Map.of("x", xC), Map.of("y", yBoundC));
        // As the example server's Java-API route: zero-copy only, shared (a slot moves between threads).
        bridge = OrtBridge.of(env).zeroCopyOnly().shared();
        xBridge = bridge.input(x);
        yBridge = bridge.output(y);
        bridgeInputs = Map.of("x", xBridge);
        bridgeOutputs = Map.of("y", yBridge);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws OrtException {
        cBinding.close();
        yBoundC.close();
        yBound.close();
        xBridge.close();
        yBridge.close();
        cRun.close();
        xC.close();
        yC.close();
        cSession.close();
        xJava.close();
        yJava.close();
        javaSession.close();
        x.close();
        y.close();
    }

    /** ONNX Runtime Java: the reused OnnxTensors, the output pinned, the maps built once. */
    @Benchmark
    public void runJavaApi() throws OrtException {
        javaSession.run(javaInputs, javaOutputs).close();
    }

    /** The C route: one prepared {@code Run} call, session and tensors held for its duration. */
    @Benchmark
    public void runCApi() {
        cRun.run();
    }

    /** The C route through an IOBinding: one {@code RunWithBinding} call, the same input and output bound once. */
    @Benchmark
    public void runCApiBinding() {
        cBinding.run();
    }

    /**
     * The C route with the tensors and maps reused and the {@code Run} prepared and closed per call
     * ({@link OrtCApiSession#run(Map, Map)}): a one-off run. The example server's slots keep a
     * prepared run each ({@link #runCApi}'s route), which any thread may run, one call at a time.
     */
    @Benchmark
    public void runCApiPreparedPerRun() {
        cSession.run(cInputs, cOutputs);
    }

    /** The bridge over ONNX Runtime Java: the reused input and output of a shared, zero-copy-only {@link OrtBridge}. */
    @Benchmark
    public void runBridge() throws OrtException {
        bridge.run(javaSession, bridgeInputs, bridgeOutputs);
    }

    /** ONNX Runtime Java: an OnnxTensor over the input's memory, made and closed. */
    @Benchmark
    public void tensorJavaApi() throws OrtException {
        OnnxTensor.createTensor(OrtEnvironment.getEnvironment(), x.host().segment().asByteBuffer().order(ByteOrder.nativeOrder()),
                new long[] {2, 4}, OnnxJavaType.FLOAT).close();
    }

    /** The C route: an OrtValue over the input's memory, with its hold, made and released. */
    @Benchmark
    public void tensorCApi() {
        OrtCApiSession.tensor(x).close();
    }

    /** A model whose output shape depends on the values, fed the same input by both routes. */
    @State(Scope.Thread)
    public static class Dynamic {

        /** Elements of x; half of them non-zero, so y holds N/2 int64 indices. */
        @Param({"1024", "262144"})
        public int elements;

        private OwnedHostTensor x;
        private OrtCApiSession cSession;
        private OrtCApiTensor xC;
        private OrtCApiRun cRun;
        private OrtSession javaSession;
        private OrtBridge bridge;
        private OrtInput xJava;
        private Map<String, OrtInput> javaInputs;

        @Setup(Level.Trial)
        public void setUp() throws Exception {
            Path model = Path.of(System.getProperty("jdlpack.nonzero",
                    "dlpack-onnxruntime/src/test/resources/org/jdlpack/onnxruntime/nonzero.onnx"));
            float[] values = new float[elements];
            for (int i = 0; i < elements; i += 2) {
                values[i] = i + 1;
            }
            x = OwnedHostTensor.copyOf(values, elements);
            cSession = OrtCApiSession.open(model, 1);
            xC = OrtCApiSession.tensor(x);
            cRun = cSession.prepare(Map.of("x", xC), Map.of(), Set.of("y"));
            OrtEnvironment env = OrtEnvironment.getEnvironment();
            OrtSession.SessionOptions options = new OrtSession.SessionOptions();
            options.setIntraOpNumThreads(1);
            javaSession = env.createSession(Files.readAllBytes(model), options);
            bridge = OrtBridge.of(env);
            xJava = bridge.input(x);
            javaInputs = Map.of("x", xJava);
        }

        @TearDown(Level.Trial)
        public void tearDown() throws OrtException {
            cRun.close();
            xC.close();
            cSession.close();
            xJava.close();
            javaSession.close();
            x.close();
        }
    }

    /** The C route: one run, ONNX Runtime's output exported as DLPack over its own memory, then all released. */
    @Benchmark
    public long dynamicOutputCApi(Dynamic state) {
        try (AllocatedOutputs outputs = state.cRun.run();
             ExportedTensor y = outputs.get("y").export()) {
            return y.address();
        }
    }

    /** The bridge over ONNX Runtime Java: one run, the output copied to the heap and again into an OwnedHostTensor, exported. */
    @Benchmark
    public long dynamicOutputCopied(Dynamic state) throws OrtException {
        try (CopiedOutputs outputs = state.bridge.run(state.javaSession, state.javaInputs, Map.of(), Set.of("y"));
             ExportedTensor y = outputs.get("y").export()) {
            return y.address();
        }
    }
}
