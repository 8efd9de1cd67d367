package org.jdlpack.benchmarks;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.TensorSpec;
import org.jdlpack.cpu.HostTensorView;
import org.jdlpack.testsupport.CPeer;
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
 * Copying a tensor's elements into a Java {@code float[]}: jdlpack's {@link HostTensorView#copyTo(float[])}
 * against C {@code memcpy} (and a C strided gather) writing into the same array in the same run,
 * through a critical downcall that hands C the array in place.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class CopyBenchmark {

    /** Elements (float32) in the tensor: 4 KiB, 1 MiB and 64 MiB. */
    @Param({"1024", "262144", "16777216"})
    public int elements;

    private Arena arena;
    private MemorySegment source;
    private HostTensorView contiguous;
    private HostTensorView everyOtherRow;
    private float[] destination;
    private MemorySegment destinationSegment;
    private CPeer peer;
    private long rows;
    private long cols;

    @Setup(Level.Trial)
    public void setUp() {
        peer = CPeer.get();
        arena = Arena.ofShared();
        source = arena.allocate(elements * 2L * 4, 256);
        for (long i = 0; i < elements * 2L; i++) {
            source.setAtIndex(JAVA_FLOAT, i, i);
        }
        contiguous = HostTensorView.of(TensorSpec.of(source, DLDataType.FLOAT32, elements));
        cols = 256;
        rows = elements / cols;
        // Every other row of a (2 * rows) x cols matrix: rows are contiguous, the view is not.
        everyOtherRow = HostTensorView.of(TensorSpec.builder(source, DLDataType.FLOAT32, rows, cols).strides(2 * cols, 1).build());
        destination = new float[elements];
        destinationSegment = MemorySegment.ofArray(destination);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        arena.close();
    }

    @Benchmark
    public float[] jdlpackContiguousToFloatArray() {
        contiguous.copyTo(destination);
        return destination;
    }

    @Benchmark
    public float[] cMemcpyToFloatArray() {
        peer.memcpy(destinationSegment, source, elements * 4L);
        return destination;
    }

    @Benchmark
    public float[] jdlpackStridedToFloatArray() {
        everyOtherRow.copyTo(destination);
        return destination;
    }

    @Benchmark
    public float[] cStridedGatherToFloatArray() {
        peer.gatherF32(destinationSegment, source, rows, cols, 2 * cols, 1);
        return destination;
    }
}
