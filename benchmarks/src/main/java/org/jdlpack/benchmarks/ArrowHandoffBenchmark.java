package org.jdlpack.benchmarks;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.jdlpack.testsupport.CPeer;
import org.jdlpack.arrow.ArrowExport;
import org.jdlpack.cpu.OwnedHostTensor;
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
 * Handing an Arrow embedding column ({@code FixedSizeList<float32>[768]}, a million rows: 3 GB) to
 * a native consumer, the C peer, which reads the tensor's metadata and its first value and lets
 * go. jdlpack exports the column's own buffer; the baselines copy it through a Java
 * {@code float[]}, as code without DLPack does: into the array and on to C in place (a critical
 * downcall, as JNI's GetPrimitiveArrayCritical), or into the array and then into a native tensor
 * that C consumes. Run with {@code -prof gc} for the bytes allocated per handoff.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 3)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--add-opens=java.base/java.nio=ALL-UNNAMED",
        "-Xms7g", "-Xmx7g"})
@SuppressWarnings("restricted") // raw addresses of the C peer and Arrow buffers
public class ArrowHandoffBenchmark {

    private static final int DIMENSIONS = 768;
    private static final int DATA = 10;

    /** Rows in the column; 1,000,000 x 768 float32 is 3 GB (and the float[] baselines need as much heap again). */
    @Param({"1000000"})
    public int rows;

    private BufferAllocator allocator;
    private FixedSizeListVector column;
    private MemorySegment values;
    private MemorySegment firstValue;
    private CPeer peer;

    @Setup(Level.Trial)
    public void setUp() {
        peer = CPeer.get();
        allocator = new RootAllocator();
        Field child = new Field("$data$", FieldType.nullable(new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)), null);
        Field field = new Field("embedding", FieldType.nullable(new ArrowType.FixedSizeList(DIMENSIONS)), List.of(child));
        column = (FixedSizeListVector) field.createVector(allocator);
        column.setInitialCapacity(rows);
        column.allocateNew();
        Float4Vector floats = (Float4Vector) column.getDataVector();
        long count = (long) rows * DIMENSIONS;
        markValid(column.getValidityBuffer(), rows);
        markValid(floats.getValidityBuffer(), count);
        column.setValueCount(rows);
        values = MemorySegment.ofAddress(floats.getDataBuffer().memoryAddress()).reinterpret(count * Float.BYTES);
        for (long i = 0; i < count; i++) {
            values.setAtIndex(JAVA_FLOAT, i, i % 1000);
        }
        firstValue = Arena.global().allocate(JAVA_FLOAT);
    }

    private static void markValid(ArrowBuf validity, long entries) {
        MemorySegment.ofAddress(validity.memoryAddress()).reinterpret((entries + 7) / 8).fill((byte) 0xFF);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        column.close();
        allocator.close();
    }

    /** jdlpack: the column's value buffer, exported as a rows x 768 tensor; C reads it and calls the deleter. */
    @Benchmark
    public long jdlpackZeroCopy() {
        MemorySegment managed = ArrowExport.of(column).export().consume();
        long data = peer.field(managed, false, DATA);
        peer.memcpy(firstValue, MemorySegment.ofAddress(data).reinterpret(Float.BYTES), Float.BYTES);
        return data + peer.consume(managed, false);
    }

    /** Baseline: the values copied into a fresh float[], which C reads in place through a critical downcall. */
    @Benchmark
    public float copyToFloatArray() {
        float[] copy = new float[Math.toIntExact(values.byteSize() / Float.BYTES)];
        MemorySegment.copy(values, JAVA_FLOAT, 0, copy, 0, copy.length);
        peer.memcpy(firstValue, MemorySegment.ofArray(copy), Float.BYTES);
        return firstValue.get(JAVA_FLOAT, 0);
    }

    /** Baseline: into a float[], then into a native tensor (OwnedHostTensor.copyOf) that C consumes as a DLPack tensor. */
    @Benchmark
    public long copyThroughFloatArrayToATensor() {
        float[] copy = new float[Math.toIntExact(values.byteSize() / Float.BYTES)];
        MemorySegment.copy(values, JAVA_FLOAT, 0, copy, 0, copy.length);
        try (OwnedHostTensor tensor = OwnedHostTensor.copyOf(copy, rows, DIMENSIONS)) {
            MemorySegment managed = tensor.export().consume();
            long data = peer.field(managed, false, DATA);
            peer.memcpy(firstValue, MemorySegment.ofAddress(data).reinterpret(Float.BYTES), Float.BYTES);
            return data + peer.consume(managed, false);
        }
    }
}
