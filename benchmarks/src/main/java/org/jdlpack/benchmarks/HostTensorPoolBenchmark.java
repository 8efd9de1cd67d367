package org.jdlpack.benchmarks;

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
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * A request's tensor, made and given up: {@link OwnedHostTensor#allocate} + close (a shared arena
 * of its own, zeroed; its close a JVM-wide handshake) against {@link HostTensorPool#take} + close
 * (a block reused, not zeroed), at a 4 KiB and a 4 MiB request body (64 and 65,536 rows of 16
 * float32). Two threads, as two request threads of a server: the handshake stops both.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@Threads(2)
public class HostTensorPoolBenchmark {

    @Param({"64", "65536"})
    public long rows;

    private HostTensorPool pool;

    @Setup(Level.Trial)
    public void setUp() {
        pool = HostTensorPool.create(64L << 20);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        pool.close();
    }

    @Benchmark
    public long allocateClose() {
        OwnedHostTensor tensor = OwnedHostTensor.allocate(DLDataType.FLOAT32, rows, 16);
        long address = tensor.spec().data().address();
        tensor.close();
        return address;
    }

    @Benchmark
    public long poolTakeClose() {
        OwnedHostTensor tensor = pool.take(DLDataType.FLOAT32, rows, 16);
        long address = tensor.spec().data().address();
        tensor.close();
        return address;
    }
}
