package org.jdlpack.benchmarks;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

import org.bytedeco.javacpp.Pointer;
import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.ExportOptions;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.tensorflow.TensorFlowDLPack;
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
import org.tensorflow.internal.c_api.Deallocator_Pointer_long_Pointer;
import org.tensorflow.internal.c_api.TF_Tensor;
import org.tensorflow.internal.c_api.global.tensorflow;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.ndarray.buffer.DataBuffers;
import org.tensorflow.ndarray.buffer.DataStorageVisitor;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.family.TType;

/**
 * A 2x128 float32 tensor handed between Java and TensorFlow Java and released, per operation:
 * through {@link TensorFlowDLPack} against what TensorFlow Java offers without it.
 *
 * <p>Java to TensorFlow: TensorFlow Java has no public zero-copy constructor of a {@code Tensor},
 * so the peer is TensorFlow's own C route, {@code TF_NewTensor} with a JavaCPP deallocator over the
 * same memory and {@code TF_DeleteTensor} (TensorFlow Java's generated binding), which yields a
 * {@code TF_Tensor} only, not a TensorFlow Java tensor; and, for scale, the copy TensorFlow Java
 * does offer ({@code Tensor.of(TFloat32.class, shape, byteBuffer)}, 1 KiB). TensorFlow to Java:
 * the data address from TensorFlow Java's public buffer visitor, with no hold on the buffer (the
 * floor: the adapter adds a TFE handle as the hold, and an import). Each adapter operation ends
 * with the deleter having run. Figures and the command: docs/jvm-libraries.md.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class TensorFlowHandOffBenchmark {

    private static final int TF_FLOAT = org.tensorflow.proto.DataType.DT_FLOAT.getNumber();

    private TensorFlowDLPack dlpack;
    private OwnedHostTensor owned;
    private TFloat32 tfTensor;
    private Deallocator_Pointer_long_Pointer deallocator;
    private final long[] shape = {2, 128};
    private long deallocated;

    @Setup(Level.Trial)
    public void setUp() {
        dlpack = TensorFlowDLPack.get();
        owned = OwnedHostTensor.allocate(DLDataType.FLOAT32, shape);
        tfTensor = TFloat32.tensorOf(Shape.of(shape), data -> data.setFloat(1f, 1, 127));
        deallocator = new Deallocator_Pointer_long_Pointer() {
            @Override
            public void call(Pointer data, long length, Pointer arg) {
                deallocated++;
            }
        };
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        tfTensor.close();
        owned.close();
    }

    @Benchmark
    public long javaToTensorFlowDLPack() {
        try (TType t = dlpack.toTensor(owned.export(ExportOptions.LEGACY))) {
            return t.numBytes();
        }
    }

    @Benchmark
    public long javaToTensorFlowNewTensor() {
        MemorySegment data = owned.spec().data();
        try (Pointer pointer = new Pointer(data.asByteBuffer())) { // JavaCPP's way to a direct buffer's address
            TF_Tensor t = tensorflow.TF_NewTensor(TF_FLOAT, shape, shape.length, pointer, data.byteSize(), deallocator, null);
            long address = t.address();
            tensorflow.TF_DeleteTensor(t);
            return address;
        }
    }

    @Benchmark
    public long javaToTensorFlowCopy() {
        MemorySegment data = owned.spec().data();
        try (TFloat32 t = org.tensorflow.Tensor.of(TFloat32.class, Shape.of(shape), DataBuffers.of(data.asByteBuffer()))) {
            return t.numBytes();
        }
    }

    @Benchmark
    public long tensorFlowToJavaDLPack() {
        try (ImportedTensor view = dlpack.importTensor(tfTensor)) {
            return view.dataAddress();
        }
    }

    @Benchmark
    @SuppressWarnings("restricted")
    public long tensorFlowToJavaBufferVisitor() {
        long address = tfTensor.asRawTensor().data().accept(new DataStorageVisitor<Long>() {
            @Override
            public Long visit(long address, long length, long scale) {
                return address;
            }

            @Override
            public Long fallback() {
                return 0L;
            }
        });
        MemorySegment segment = MemorySegment.ofAddress(address).reinterpret(tfTensor.numBytes());
        return segment.address() + segment.byteSize();
    }
}
