package org.jdlpack.benchmarks;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

import org.jdlpack.abi.ImportLifetime;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.testsupport.CPeer;
import org.jdlpack.testsupport.PeerTensor;
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
import org.openjdk.jmh.annotations.Warmup;

/**
 * Zero copy: importing a C tensor, reading its last element and closing it must cost the same for
 * 1 KiB, 1 MiB and 1 GiB tensors.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xmx1g"})
public class ZeroCopyBenchmark {

    /** Tensor size in bytes. */
    @Param({"1024", "1048576", "1073741824"})
    public long bytes;

    private MemorySegment managed;
    private long last;

    @Setup(Level.Trial)
    public void setUp() {
        long elements = bytes / 4;
        managed = CPeer.get().make(PeerTensor.versioned().shape(elements)).pointer();
        last = (elements - 1) * 4;
    }

    @Benchmark
    public float importReadOneElementClose() {
        try (ImportedTensor tensor = ImportedTensor.of(ManagedTensorKind.VERSIONED, managed)) {
            return tensor.hostSegment().get(JAVA_FLOAT_UNALIGNED, last);
        }
    }

    @Benchmark
    public float importIntoConfinedArenaReadOneElement() {
        try (Arena confined = Arena.ofConfined()) {
            return ImportedTensor.of(ManagedTensorKind.VERSIONED, managed, ImportLifetime.in(confined)).hostSegment()
                    .get(JAVA_FLOAT_UNALIGNED, last);
        }
    }
}
