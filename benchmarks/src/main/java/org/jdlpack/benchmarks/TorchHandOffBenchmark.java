package org.jdlpack.benchmarks;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

import org.bytedeco.javacpp.Pointer;
import org.bytedeco.pytorch.PointerConsumer;
import org.bytedeco.pytorch.Scalar;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.TensorOptions;
import org.bytedeco.pytorch.global.torch;
import org.bytedeco.pytorch.global.torch.ScalarType;
import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.javacpp.pytorch.TorchDLPack;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * A 2x128 float32 tensor handed between Java and JavaCPP's PyTorch and released, per operation:
 * through {@link TorchDLPack} (the DLPack entry points of libtorch) against what a JavaCPP user
 * writes without it. Java to torch: {@code torch.from_blob(pointer, sizes, strides, deleter,
 * options)} with a JavaCPP {@link PointerConsumer} deleter. Torch to Java: a copy of the
 * {@code Tensor} as the hold on its storage, and a segment from {@code data_ptr()},
 * {@code sizes()} and {@code strides()}. Each operation ends with the deleter having run.
 * Figures and the command: docs/jvm-libraries.md.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class TorchHandOffBenchmark {

    private TorchDLPack dlpack;
    private OwnedHostTensor owned;
    private Tensor torchTensor;
    private PointerConsumer deleter;
    private TensorOptions options;
    private final long[] shape = {2, 128};
    private final long[] strides = {128, 1};
    private long deleted;

    @Setup(Level.Trial)
    public void setUp() {
        dlpack = TorchDLPack.get();
        owned = OwnedHostTensor.allocate(DLDataType.FLOAT32, shape);
        try (Tensor flat = torch.arange(new Scalar(256))) {
            torchTensor = flat.to(ScalarType.Float).reshape(shape);
        }
        deleter = new PointerConsumer() {
            @Override
            public void call(Pointer data) {
                deleted++;
            }
        };
        options = new TensorOptions(ScalarType.Float);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        torchTensor.close();
        owned.close();
        options.close();
    }

    @Benchmark
    public long javaToTorchDLPack() {
        try (Tensor t = dlpack.toTensor(owned.export())) {
            return t.address();
        }
    }

    @Benchmark
    public long javaToTorchFromBlob() {
        try (Pointer data = new Pointer(owned.spec().data().asByteBuffer()); // JavaCPP's way to a direct buffer's address
             Tensor t = torch.from_blob(data, shape, strides, deleter, options)) {
            return t.address();
        }
    }

    @Benchmark
    public long torchToJavaDLPack() {
        try (ImportedTensor view = dlpack.importTensor(torchTensor)) {
            return view.dataAddress();
        }
    }

    @Benchmark
    @SuppressWarnings("restricted")
    public long torchToJavaJavaCpp() {
        try (Tensor hold = new Tensor(torchTensor)) { // one more reference on the storage, as an export holds
            long[] sizes = hold.sizes().vec().get();
            long[] elementStrides = hold.strides().vec().get();
            long bytes = 4;
            for (int d = 0; d < sizes.length; d++) {
                bytes += (sizes[d] - 1) * elementStrides[d] * 4;
            }
            MemorySegment segment = MemorySegment.ofAddress(hold.data_ptr().address()).reinterpret(bytes);
            return segment.address() + segment.byteSize();
        }
    }
}
