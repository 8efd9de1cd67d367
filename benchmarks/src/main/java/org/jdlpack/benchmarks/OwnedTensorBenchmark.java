package org.jdlpack.benchmarks;

import java.util.concurrent.TimeUnit;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.ExportOptions;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.testsupport.CPeer;
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
import org.openjdk.jmh.annotations.Warmup;

/**
 * The life of an {@link OwnedHostTensor}: allocated (a shared arena of its own, zeroed, and its
 * owner's ledger entry) and closed (the arena's close, a JVM-wide handshake), and the same with
 * one export consumed by C in between. What a program that makes a tensor per request pays
 * without a pool.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class OwnedTensorBenchmark {

    private CPeer peer;

    @Setup(Level.Trial)
    public void setUp() {
        peer = CPeer.get();
    }

    @Benchmark
    public long allocateClose() {
        OwnedHostTensor tensor = OwnedHostTensor.allocate(DLDataType.FLOAT32, 2, 3, 4, 5);
        long address = tensor.spec().data().address();
        tensor.close();
        return address;
    }

    @Benchmark
    public long allocateExportCConsumesClose() {
        OwnedHostTensor tensor = OwnedHostTensor.allocate(DLDataType.FLOAT32, 2, 3, 4, 5);
        long ndim = peer.consume(tensor.exportPointer(ExportOptions.VERSIONED), false);
        tensor.close();
        return ndim;
    }
}
