package org.jdlpack.benchmarks;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.util.concurrent.TimeUnit;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.cpu.HostTensorPool;
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
 * The example server's per-row loop (the NaN check, then (x - 0.5) / 2 in place, over [rows, 16]
 * float32) over a pooled tensor's memory, two ways: {@code MemorySegment.get/set} on the tensor's
 * segment, and a {@link FloatBuffer} view of the same memory made once (as a server keeps it with
 * its tensor), as the expert ONNX Runtime Java peer loops over its direct buffers. Whether the
 * form of the loop explains part of the default route's 4 KiB gap: on JDK 25 it does not, both
 * cost the same (benchmarks/notes.md, "The default route after scoring slots").
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class RowLoopBenchmark {

    private static final int FEATURES = 16;

    @Param({"64", "65536"})
    public int rows;

    private HostTensorPool pool;
    private OwnedHostTensor tensor;
    private MemorySegment segment;
    private FloatBuffer buffer;

    @Setup(Level.Trial)
    public void setUp() {
        pool = HostTensorPool.create(64L << 20);
        tensor = pool.take(DLDataType.FLOAT32, rows, FEATURES);
        segment = tensor.host().segment();
        buffer = segment.asByteBuffer().order(ByteOrder.nativeOrder()).asFloatBuffer();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        tensor.close();
        pool.close();
    }

    @Benchmark
    public float segmentLoop() {
        MemorySegment x = segment;
        x.set(JAVA_FLOAT, 0, 1f); // the values stay finite and small: (x - 0.5) / 2 converges to -0.5
        long n = (long) rows * FEATURES;
        for (long i = 0; i < n; i++) {
            if (!Float.isFinite(x.getAtIndex(JAVA_FLOAT, i))) {
                throw new IllegalStateException("row " + i / FEATURES);
            }
        }
        for (long i = 0; i < n; i++) {
            x.setAtIndex(JAVA_FLOAT, i, (x.getAtIndex(JAVA_FLOAT, i) - 0.5f) / 2f);
        }
        return x.get(JAVA_FLOAT, 0);
    }

    @Benchmark
    public float bufferLoop() {
        FloatBuffer x = buffer;
        x.put(0, 1f);
        int n = rows * FEATURES;
        for (int i = 0; i < n; i++) {
            if (!Float.isFinite(x.get(i))) {
                throw new IllegalStateException("row " + i / FEATURES);
            }
        }
        for (int i = 0; i < n; i++) {
            x.put(i, (x.get(i) - 0.5f) / 2f);
        }
        return x.get(0);
    }
}
