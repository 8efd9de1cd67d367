package org.jdlpack.benchmarks;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

import ai.djl.Device;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.ExportOptions;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.djl.DjlDLPack;
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
 * A float32 tensor handed between Java and DJL's PyTorch engine (libtorch 2.7.1) and released, per
 * operation: through {@link DjlDLPack} against DJL's own routes. Java to DJL:
 * {@code NDManager.create(direct ByteBuffer, shape, FLOAT32)}, zero-copy on the CPU but with no
 * deleter (the buffer must outlive the NDArray by hand). DJL to Java: {@code toByteBuffer()} (a
 * copy) and {@code toByteBuffer(true)} (a direct view of a contiguous array, holding nothing: valid
 * only while the NDArray is open). Each DLPack operation ends with the deleter having run.
 * This JVM loads DJL's libtorch only (JMH forks one JVM per benchmark): it never meets the
 * JavaCPP libtorch of {@code TorchHandOffBenchmark}. Figures and the command: docs/jvm-libraries.md.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Dai.djl.offline=true", "-DOPT_OUT_TRACKING=true"})
public class DjlHandOffBenchmark {

    /** Elements: 256 (1 KiB, 2x128) and 262,144 (1 MiB). */
    @Param({"256", "262144"})
    public int elements;

    private DjlDLPack dlpack;
    private NDManager manager;
    private OwnedHostTensor owned;
    private ByteBuffer direct;
    private NDArray djlArray;
    private Shape shape;

    @Setup(Level.Trial)
    public void setUp() {
        dlpack = DjlDLPack.get();
        manager = NDManager.newBaseManager(Device.cpu(), "PyTorch");
        long[] dims = {2, elements / 2};
        shape = new Shape(dims);
        owned = OwnedHostTensor.allocate(DLDataType.FLOAT32, dims);
        direct = owned.spec().data().asByteBuffer().order(java.nio.ByteOrder.nativeOrder());
        djlArray = manager.arange(0f, elements, 1f).reshape(shape);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        manager.close();
        owned.close();
    }

    @Benchmark
    public long javaToDjlDLPack() {
        try (NDArray a = dlpack.toNDArray(owned.export(ExportOptions.LEGACY), manager)) {
            return a.size();
        }
    }

    @Benchmark
    public long javaToDjlCreateDirectBuffer() {
        try (NDArray a = manager.create(direct, shape, DataType.FLOAT32)) {
            return a.size();
        }
    }

    @Benchmark
    public long djlToJavaDLPack() {
        try (ImportedTensor view = dlpack.importTensor(djlArray)) {
            return view.dataAddress();
        }
    }

    @Benchmark
    public long djlToJavaToByteBufferCopy() {
        ByteBuffer copy = djlArray.toByteBuffer();
        return copy.capacity();
    }

    @Benchmark
    public long djlToJavaToByteBufferDirect() {
        ByteBuffer view = djlArray.toByteBuffer(true);
        return view.capacity();
    }
}
