package org.jdlpack.benchmarks;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.ExportOptions;
import org.jdlpack.abi.ExportOwner;
import org.jdlpack.abi.ImportLifetime;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.TensorSpec;
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
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The cost of one exchange, with the comparison peers in the same run: a 4-D float32 tensor
 * exported to the C peer, which reads its metadata and calls the deleter (versioned, legacy, and
 * the JNI baseline doing the same through a DirectByteBuffer); a C tensor imported and closed (the
 * default confined lifetime, and a caller's confined arena); the deleter upcall alone, from a Java
 * thread and from a native one. Every state is per thread, so run with {@code -t N} the export
 * measures the library's shared state alone, and the upcall-only benchmark is the control with
 * none.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class ExchangeBenchmark {

    private static final long UPCALLS = 10_000;

    private CPeer peer;
    private Arena arena;
    private ExportOwner owner;
    private TensorSpec spec;
    private ByteBuffer direct;
    private long[] shape;
    private MemorySegment cVersioned;
    private MemorySegment noop;

    @Setup(Level.Trial)
    @SuppressWarnings("restricted") // the no-op upcall stub the exchange is compared against
    public void setUp() throws ReflectiveOperationException {
        peer = CPeer.get();
        shape = new long[] {2, 3, 4, 5};
        arena = Arena.ofShared();
        MemorySegment data = arena.allocate(4L * 120, 256);
        owner = ExportOwner.of(arena, arena::close);
        spec = TensorSpec.of(data, DLDataType.FLOAT32, shape);
        direct = ByteBuffer.allocateDirect(4 * 120).order(ByteOrder.nativeOrder());
        // The peer's counting deleter frees nothing, so one C tensor can be imported again and again.
        cVersioned = peer.make(PeerTensor.versioned().shape(shape)).pointer();
        noop = Linker.nativeLinker().upcallStub(MethodHandles.lookup().findStatic(ExchangeBenchmark.class, "noop",
                MethodType.methodType(void.class)), FunctionDescriptor.ofVoid(), Arena.global());
        JniBaseline.consume(JniBaseline.export(direct, shape)); // load and warm the JNI library
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        owner.close();
    }

    private static void noop() {
        // the upcall target: nothing, so the benchmark measures the transition
    }

    @Benchmark
    public long exportVersionedCConsumes() {
        return peer.consume(owner.export(spec).consume(), false);
    }

    @Benchmark
    public long exportPointerVersionedCConsumes() {
        return peer.consume(owner.exportPointer(spec, ExportOptions.VERSIONED), false);
    }

    @Benchmark
    public long exportLegacyCConsumes() {
        return peer.consume(owner.export(spec, ExportOptions.LEGACY).consume(), true);
    }

    @Benchmark
    public long jniBaselineExportCConsumes() {
        return JniBaseline.consume(JniBaseline.export(direct, shape));
    }

    @Benchmark
    public long importCTensorAndClose() {
        try (ImportedTensor tensor = ImportedTensor.of(ManagedTensorKind.VERSIONED, cVersioned)) {
            return tensor.dataAddress(); // a read that allocates nothing, as every consumer's first
        }
    }

    @Benchmark
    public long importCTensorIntoConfinedArena() {
        try (Arena confined = Arena.ofConfined()) {
            return ImportedTensor.of(ManagedTensorKind.VERSIONED, cVersioned, ImportLifetime.in(confined)).dataAddress();
        }
    }

    @Benchmark
    @OperationsPerInvocation(10_000)
    public void upcallFromJavaThread() {
        peer.callN(noop, UPCALLS);
    }

    @Benchmark
    @OperationsPerInvocation(10_000)
    public void upcallFromNativeThread() {
        peer.callNOnNewThread(noop, UPCALLS);
    }
}
