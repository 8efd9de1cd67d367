package org.jdlpack.benchmarks;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.cpu.HostTensorPool;
import org.jdlpack.cpu.HostTensorView;
import org.jdlpack.cpu.OwnedHostTensor;
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
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * How a view of a pooled tensor can end with the tensor (issue 41, item 1): what each mechanism
 * costs a take and its release, and what the chosen one costs an element access.
 *
 * <ul>
 * <li>{@code takeClose}: {@link HostTensorPool#take} + close as shipped: the views check the
 *     owner's reference count on each access; nothing per take.
 * <li>{@code takeSegmentClose}: the same, asking the view for its raw segment: the take gets a
 *     shared arena of its own (the per-take scope), closed at release.
 * <li>{@code sharedScopePerTake} / {@code confinedScopePerTake}: a 4 KiB block of one long-lived
 *     arena reinterpreted into a fresh shared or confined arena and the arena closed: the scope
 *     alone, without the pool (a confined one cannot be exported or released on another thread).
 * <li>{@code sumChecked} / {@code sumUnchecked}: 1,024 {@code getFloat}s through a pooled tensor's
 *     view (checked) and through a view of the same memory made from its segment (no owner, no
 *     check): the check's cost per access.
 * </ul>
 * Two threads for the take and scope methods, as two request threads of a server: a shared
 * arena's close stops both.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 3, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class PooledViewLifetimeBenchmark {

    private static final int ELEMENTS = 1024;

    private HostTensorPool pool;
    private Arena blocks;
    private MemorySegment block;
    private OwnedHostTensor held;
    private HostTensorView checked;
    private HostTensorView unchecked;

    @Setup(Level.Trial)
    public void setUp() {
        pool = HostTensorPool.create(64L << 20);
        blocks = Arena.ofShared();
        block = blocks.allocate(4096, 256);
        held = pool.take(DLDataType.FLOAT32, ELEMENTS);
        checked = held.host();
        for (int i = 0; i < ELEMENTS; i++) {
            checked.setFloat(i, i);
        }
        unchecked = HostTensorView.of(checked.segment(), DLDataType.FLOAT32, ELEMENTS);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        held.close();
        pool.close();
        blocks.close();
    }

    @Benchmark
    @Threads(2)
    public long takeClose() {
        OwnedHostTensor tensor = pool.take(DLDataType.FLOAT32, 64, 16);
        long address = tensor.spec().data().address();
        tensor.close();
        return address;
    }

    @Benchmark
    @Threads(2)
    public long takeSegmentClose() {
        OwnedHostTensor tensor = pool.take(DLDataType.FLOAT32, 64, 16);
        long address = tensor.host().segment().address();
        tensor.close();
        return address;
    }

    @Benchmark
    @Threads(2)
    @SuppressWarnings("restricted")
    public long sharedScopePerTake() {
        Arena scope = Arena.ofShared();
        MemorySegment scoped = block.reinterpret(scope, null);
        long first = scoped.get(ValueLayout.JAVA_LONG, 0);
        scope.close();
        return first;
    }

    @Benchmark
    @Threads(2)
    @SuppressWarnings("restricted")
    public long confinedScopePerTake() {
        Arena scope = Arena.ofConfined();
        MemorySegment scoped = block.reinterpret(scope, null);
        long first = scoped.get(ValueLayout.JAVA_LONG, 0);
        scope.close();
        return first;
    }

    @Benchmark
    @Threads(1)
    public float sumChecked() {
        HostTensorView view = checked;
        float sum = 0;
        for (int i = 0; i < ELEMENTS; i++) {
            sum += view.getFloat(i);
        }
        return sum;
    }

    @Benchmark
    @Threads(1)
    public float sumUnchecked() {
        HostTensorView view = unchecked;
        float sum = 0;
        for (int i = 0; i < ELEMENTS; i++) {
            sum += view.getFloat(i);
        }
        return sum;
    }
}
