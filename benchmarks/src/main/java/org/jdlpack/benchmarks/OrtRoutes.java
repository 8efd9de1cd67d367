package org.jdlpack.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;

import ai.onnxruntime.OnnxJavaType;
import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtSession;
import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLPackStats;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.cpu.HostTensorView;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.onnxruntime.GuardedSession;
import org.jdlpack.onnxruntime.OrtBridge;
import org.jdlpack.onnxruntime.OrtInput;
import org.jdlpack.onnxruntime.OrtOutput;
import org.jdlpack.testsupport.CPeer;
import org.jdlpack.testsupport.PeerTensor;

/**
 * A plain program, not JMH, that measures what each ONNX Runtime input route costs: making and
 * closing one input tensor, and one run of {@code tiny.onnx} (x [2,4] to y [2,3], one intra-op
 * thread) with tensors made per run, reused (with a bare and a guarded session), or copied through
 * Java arrays. (Wrapped tensors, whose scopes each run held until issue 43, are no route of their
 * own now: the bridge copies a wrapped input once, as the heap view's route, and refuses a wrapped
 * output.) Per route it prints
 * the best and the median ns/op over 7 rounds and the heap bytes allocated per op (the median
 * round), from {@code ThreadMXBean.getCurrentThreadAllocatedBytes}.
 *
 * <pre>java --enable-native-access=ALL-UNNAMED -cp benchmarks/target/benchmarks.jar org.jdlpack.benchmarks.OrtRoutes [model]</pre>
 */
public final class OrtRoutes {

    private static final int ROUNDS = 7;
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private OrtRoutes() {
    }

    @FunctionalInterface
    private interface Op {
        void run() throws Exception;
    }

    /**
     * Runs every route.
     *
     * @param args the path of tiny.onnx (default: the test model of dlpack-onnxruntime)
     * @throws Exception if ONNX Runtime fails
     */
    public static void main(String[] args) throws Exception {
        Path model = Path.of(args.length > 0 ? args[0] : "dlpack-onnxruntime/src/test/resources/org/jdlpack/onnxruntime/tiny.onnx");
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        OrtSession.SessionOptions options = new OrtSession.SessionOptions();
        options.setIntraOpNumThreads(1);
        OrtBridge ort = OrtBridge.of(env);
        float[] x = {1, 2, 3, 4, 5, 6, 7, 8};
        long[] xShape = {2, 4};
        long[] yShape = {2, 3};
        MemorySegment quiet = CPeer.get().quietDeleter(CPeer.get().make(PeerTensor.versioned().shape(2, 4))).pointer();
        try (OrtSession tiny = env.createSession(Files.readAllBytes(model), options);
             Arena arena = Arena.ofShared();
             Arena confined = Arena.ofConfined();
             OwnedHostTensor xOwned = OwnedHostTensor.copyOf(x, 2, 4);
             OwnedHostTensor yOwned = OwnedHostTensor.allocate(DLDataType.FLOAT32, 2, 3)) {
            MemorySegment xSegment = arena.allocateFrom(ValueLayout.JAVA_FLOAT, x);
            MemorySegment ySegment = arena.allocate(24, 64);
            HostTensorView confinedView = HostTensorView.of(confined.allocateFrom(ValueLayout.JAVA_FLOAT, x), DLDataType.FLOAT32, 2, 4);
            HostTensorView heapView = HostTensorView.of(MemorySegment.ofArray(x.clone()), DLDataType.FLOAT32, 2, 4);

            System.out.println("route\tns/op best\tns/op median\theap B/op");
            measure("create: OnnxTensor.createTensor(direct buffer) + close (by hand)", 20_000, () ->
                    OnnxTensor.createTensor(env, xSegment.asByteBuffer().order(ByteOrder.nativeOrder()), xShape, OnnxJavaType.FLOAT).close());
            measure("create: OrtBridge.input(OwnedHostTensor) + close", 20_000, () -> ort.input(xOwned).close());
            measure("create: OrtBridge.input(HostTensorView, confined) + close", 20_000, () -> ort.input(confinedView).close());
            measure("create: ImportedTensor.of + close (no ORT: the import alone)", 20_000, () ->
                    ImportedTensor.of(ManagedTensorKind.VERSIONED, quiet).close());
            measure("create: ImportedTensor.of + OrtBridge.input(ImportedTensor) + close", 20_000, () ->
                    ort.input(ImportedTensor.of(ManagedTensorKind.VERSIONED, quiet)).close());
            measure("create: the same, OrtBridge.shared() (shared import: a handshake per close)", 1_000, () ->
                    ort.shared().input(ImportedTensor.of(ManagedTensorKind.VERSIONED, quiet)).close());
            measure("create: OrtBridge.input(heap HostTensorView): one copy + close", 20_000, () -> ort.input(heapView).close());

            measure("run: by hand, zero-copy, 2 OnnxTensors made per run", 5_000, () -> {
                try (OnnxTensor xt = OnnxTensor.createTensor(env, xSegment.asByteBuffer().order(ByteOrder.nativeOrder()), xShape,
                        OnnxJavaType.FLOAT);
                     OnnxTensor yt = OnnxTensor.createTensor(env, ySegment.asByteBuffer().order(ByteOrder.nativeOrder()), yShape,
                             OnnxJavaType.FLOAT)) {
                    tiny.run(Map.of("x", xt), Map.of("y", yt)).close();
                }
            });
            measure("run: OrtBridge, input + pinned output made per run", 5_000, () -> {
                try (OrtInput xi = ort.input(xOwned); OrtOutput yo = ort.output(yOwned)) {
                    ort.run(tiny, Map.of("x", xi), Map.of("y", yo));
                }
            });
            try (OrtInput xi = ort.input(xOwned); OrtOutput yo = ort.output(yOwned);
                 OnnxTensor xt = OnnxTensor.createTensor(env, xSegment.asByteBuffer().order(ByteOrder.nativeOrder()), xShape,
                         OnnxJavaType.FLOAT);
                 OnnxTensor yt = OnnxTensor.createTensor(env, ySegment.asByteBuffer().order(ByteOrder.nativeOrder()), yShape,
                         OnnxJavaType.FLOAT)) {
                Map<String, OnnxTensor> xMap = Map.of("x", xt);
                Map<String, OnnxTensor> yMap = Map.of("y", yt);
                measure("run: by hand, OnnxTensors and maps reused", 5_000, () -> tiny.run(xMap, yMap).close());
                Map<String, OrtInput> inputs = Map.of("x", xi);
                Map<String, OrtOutput> outputs = Map.of("y", yo);
                measure("run: OrtBridge, input, output and maps reused", 5_000, () -> ort.run(tiny, inputs, outputs));
                GuardedSession guarded = GuardedSession.of(tiny); // not closed here: the try above closes tiny
                measure("run: the same through a GuardedSession", 5_000, () -> ort.run(guarded, inputs, outputs));
            }
            float[][] rows = {{1, 2, 3, 4}, {5, 6, 7, 8}};
            measure("run: copying (float[][] in, getValue() out)", 5_000, () -> {
                try (OnnxTensor xt = OnnxTensor.createTensor(env, rows); OrtSession.Result result = tiny.run(Map.of("x", xt))) {
                    if (((float[][]) result.get(0).getValue())[1][0] < 16) {
                        throw new AssertionError("wrong result");
                    }
                }
            });
        }
        if (DLPackStats.ownedManagedTensors() != 0 || DLPackStats.liveExports() != 0) {
            throw new AssertionError("left behind: " + DLPackStats.snapshot());
        }
    }

    private static void measure(String name, int perRound, Op op) throws Exception {
        for (int i = 0; i < perRound; i++) {
            op.run(); // warm-up
        }
        double[] ns = new double[ROUNDS];
        double[] bytes = new double[ROUNDS];
        for (int r = 0; r < ROUNDS; r++) {
            long heap = THREADS.getCurrentThreadAllocatedBytes();
            long start = System.nanoTime();
            for (int i = 0; i < perRound; i++) {
                op.run();
            }
            ns[r] = (System.nanoTime() - start) / (double) perRound;
            bytes[r] = (THREADS.getCurrentThreadAllocatedBytes() - heap) / (double) perRound;
        }
        double[] sorted = ns.clone();
        Arrays.sort(sorted);
        double[] sortedBytes = bytes.clone();
        Arrays.sort(sortedBytes);
        System.out.println(String.format(Locale.ROOT, "%s\t%.0f\t%.0f\t%.0f", name, sorted[0], sorted[ROUNDS / 2],
                sortedBytes[ROUNDS / 2]));
    }

}
