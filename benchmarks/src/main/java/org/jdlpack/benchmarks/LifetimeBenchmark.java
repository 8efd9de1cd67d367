package org.jdlpack.benchmarks;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.ref.Cleaner;
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
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Import + read one element + close of a 2x3x4x5 float32 C tensor, once per import lifetime, and
 * the alternatives measured before choosing the default: a shared arena per tensor (the old
 * default), a confined arena per tensor with a JDK {@code Cleaner} registration as the safety
 * net (instead of jdlpack's striped phantom cells), and many imports released together by one
 * shared arena. Each thread imports its own C tensor (the peer's counting deleter frees nothing,
 * so one tensor can be imported again and again), so the only shared state is the library's.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@SuppressWarnings("restricted") // the measured alternatives bind raw pointers to arenas themselves
public class LifetimeBenchmark {

    private static final int GROUP = 64;
    private static final Cleaner CLEANER = Cleaner.create();

    private MemorySegment managed;

    @Setup(Level.Trial)
    public void setUp() {
        managed = CPeer.get().quietDeleter(CPeer.get().make(PeerTensor.versioned().shape(2, 3, 4, 5))).pointer();
    }

    /** The default: {@code ImportLifetime.CONFINED}, with the safety net. */
    @Benchmark
    public float importDefaultReadClose() {
        try (ImportedTensor tensor = ImportedTensor.of(ManagedTensorKind.VERSIONED, managed)) {
            return tensor.hostSegment().get(JAVA_FLOAT_UNALIGNED, 4);
        }
    }

    /** The fastest path: a scoped import cannot be forgotten, so it has no safety net. */
    @Benchmark
    public float importScopedRead() {
        return ImportedTensor.apply(ManagedTensorKind.VERSIONED, managed, t -> t.hostSegment().get(JAVA_FLOAT_UNALIGNED, 4));
    }

    /** Any-thread close: one shared arena per tensor, a JVM-wide handshake per close. */
    @Benchmark
    public float importSharedReadClose() {
        try (ImportedTensor tensor = ImportedTensor.of(ManagedTensorKind.VERSIONED, managed, ImportLifetime.SHARED)) {
            return tensor.hostSegment().get(JAVA_FLOAT_UNALIGNED, 4);
        }
    }

    /** A caller's confined arena per tensor: the old fast path, now an option. */
    @Benchmark
    public float importIntoCallersConfinedArena() {
        try (Arena arena = Arena.ofConfined()) {
            return ImportedTensor.of(ManagedTensorKind.VERSIONED, managed, ImportLifetime.in(arena)).hostSegment()
                    .get(JAVA_FLOAT_UNALIGNED, 4);
        }
    }

    /** 64 imports into one shared arena, released together: one handshake for all (per import). */
    @Benchmark
    @OperationsPerInvocation(GROUP)
    public float importGroupOfSixtyFourSharedArena() {
        float sum = 0;
        try (Arena group = Arena.ofShared()) {
            ImportLifetime lifetime = ImportLifetime.in(group);
            for (int i = 0; i < GROUP; i++) {
                sum += ImportedTensor.of(ManagedTensorKind.VERSIONED, managed, lifetime).hostSegment().get(JAVA_FLOAT_UNALIGNED, 4);
            }
        }
        return sum;
    }

    /**
     * The alternative safety net, without the library: a confined arena per tensor watched by a
     * JDK Cleaner registration (allocated per tensor, linked under the Cleaner's one lock),
     * unregistered at close. Compare with {@link #importDefaultReadClose()} minus validation.
     */
    @Benchmark
    public float alternativeConfinedArenaWithJdkCleaner() {
        Arena arena = Arena.ofConfined();
        Cleaner.Cleanable cleanable = CLEANER.register(arena.scope(), LifetimeBenchmark::nothing);
        float value = managed.reinterpret(80, arena, null).get(JAVA_FLOAT_UNALIGNED, 0);
        arena.close();
        cleanable.clean();
        return value;
    }

    /** The same without any safety net: what the arena alone costs. */
    @Benchmark
    public float alternativeConfinedArenaAlone() {
        try (Arena arena = Arena.ofConfined()) {
            return managed.reinterpret(80, arena, null).get(JAVA_FLOAT_UNALIGNED, 0);
        }
    }

    private static void nothing() {
        // the leak action of the alternative: never runs, every tensor is closed
    }
}
