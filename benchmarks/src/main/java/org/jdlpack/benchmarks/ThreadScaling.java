package org.jdlpack.benchmarks;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CyclicBarrier;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.ExportOptions;
import org.jdlpack.abi.ExportOwner;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.TensorSpec;
import org.jdlpack.testsupport.CPeer;
import org.jdlpack.testsupport.PeerTensor;

/**
 * Thread scaling of the hot paths, each thread with its own tensor: the export round trip (export,
 * C reads the struct and calls the deleter), the default import (import a C tensor, read one
 * element, close), the scoped import ({@code ImportedTensor.apply}) and the upcall-only control,
 * at 1, 2, 4 and 8 threads. Every thread count is warmed up with a round of its own before the
 * measured round, and the first thread count gets extra warm-up rounds, so no figure includes
 * JIT compilation. It reports the median thread's CPU time per operation beside the aggregate
 * wall time: on cores shared with other work, wall time grows with waiting for a core, while
 * contention on shared cache lines shows as CPU time that grows with the thread count. Not JMH:
 * JMH has no per-thread CPU time; the JMH thread series gives the wall-time figures. Two more modes
 * run when named, {@code sharedSegmentDowncall} and {@code ownSegmentDowncall}: a downcall given a
 * segment of one shared import that every thread passes, against one of each thread's own.
 *
 * <p>{@code java --enable-native-access=ALL-UNNAMED -cp benchmarks/target/benchmarks.jar
 * org.jdlpack.benchmarks.ThreadScaling [operations per thread] [modes...]} (default 1,000,000 and
 * every mode; {@code -Dscaling.threads=2} for other thread counts). Output: one line per mode and thread count,
 * {@code scaling mode=M threads=N cpu_ns=C wall_ns=W}, wall_ns the aggregate wall time per
 * operation (so throughput is 1 / wall_ns).
 */
@SuppressWarnings("restricted") // the upcall-only control
public final class ThreadScaling {

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static final int UPCALLS_PER_CALL = 10_000;
    /** The thread counts, or those of {@code -Dscaling.threads=2,4} (for a profiler run at one count). */
    private static final int[] THREAD_COUNTS = java.util.Arrays.stream(System.getProperty("scaling.threads", "1,2,4,8").split(","))
            .mapToInt(Integer::parseInt).toArray();
    private static final List<String> MODES = List.of("exportRoundTrip", "importDefault", "importScoped", "upcallControl");
    /**
     * Downcalls given a segment: of one SHARED import every thread passes (each downcall acquires
     * and releases that shared scope), or of each thread's own confined arena. Run on request.
     */
    private static final List<String> DOWNCALL_MODES = List.of("sharedSegmentDowncall", "ownSegmentDowncall");
    /** The SHARED import every thread of {@code sharedSegmentDowncall} passes to its downcalls. */
    private static MemorySegment shared;
    private static MemorySegment noop;

    private ThreadScaling() {
    }

    private static void noop() {
        // the upcall target: nothing, so the control measures the transition
    }

    /**
     * Runs the measurement and prints one line per mode and thread count.
     *
     * @param args operations per thread, then the modes to run
     * @throws Exception if a thread fails
     */
    public static void main(String[] args) throws Exception {
        noop = Linker.nativeLinker().upcallStub(MethodHandles.lookup().findStatic(ThreadScaling.class, "noop",
                MethodType.methodType(void.class)), FunctionDescriptor.ofVoid(), Arena.global());
        long operations = args.length > 0 ? Long.parseLong(args[0]) : 1_000_000;
        List<String> modes = args.length > 1 ? List.of(args).subList(1, args.length) : MODES;
        CPeer peer = CPeer.get();
        ImportedTensor sharedTensor = ImportedTensor.of(ManagedTensorKind.VERSIONED,
                peer.quietDeleter(peer.make(PeerTensor.versioned().shape(64))).pointer(), org.jdlpack.abi.ImportLifetime.SHARED);
        shared = sharedTensor.hostSegment();
        for (String mode : modes) {
            for (int threads : THREAD_COUNTS) {
                double[] result = run(mode, threads, operations, threads == THREAD_COUNTS[0] ? 3 : 1);
                System.out.printf("scaling mode=%s threads=%d cpu_ns=%.1f wall_ns=%.1f%n", mode, threads, result[0], result[1]);
            }
        }
        sharedTensor.close();
    }

    /** Returns the median thread's CPU ns per op and the aggregate wall ns per op of the measured round. */
    private static double[] run(String mode, int threads, long operations, int warmUps) throws InterruptedException {
        CPeer peer = CPeer.get();
        CyclicBarrier start = new CyclicBarrier(threads);
        double[] cpu = new double[threads];
        long[] wallStart = new long[threads];
        long[] wallEnd = new long[threads];
        List<Thread> workers = new ArrayList<>();
        for (int k = 0; k < threads; k++) {
            int index = k;
            workers.add(Thread.ofPlatform().start(() -> {
                Arena arena = Arena.ofShared();
                ExportOwner owner = ExportOwner.of(arena, arena::close);
                TensorSpec spec = TensorSpec.of(arena.allocate(4L * 120, 256), DLDataType.FLOAT32, 2, 3, 4, 5);
                // Each thread's own C tensor, whose deleter does nothing: imports measure the consumer's side.
                MemorySegment foreign = peer.quietDeleter(peer.make(PeerTensor.versioned().shape(2, 3, 4, 5))).pointer();
                double sink = 0;
                try {
                    for (int round = 0; round <= warmUps; round++) { // the last round is measured
                        start.await();
                        long cpu0 = THREADS.getCurrentThreadCpuTime();
                        long wall0 = System.nanoTime();
                        sink += loop(mode, peer, owner, spec, foreign, operations);
                        cpu[index] = (THREADS.getCurrentThreadCpuTime() - cpu0) / (double) operations;
                        wallStart[index] = wall0;
                        wallEnd[index] = System.nanoTime();
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                } finally {
                    owner.close();
                }
                if (sink == 42) {
                    System.out.print(""); // keeps the results alive
                }
            }));
        }
        for (Thread worker : workers) {
            worker.join();
        }
        Arrays.sort(cpu);
        long span = Arrays.stream(wallEnd).max().orElseThrow() - Arrays.stream(wallStart).min().orElseThrow();
        return new double[] {cpu[threads / 2], span / (double) (operations * threads)};
    }

    private static double loop(String mode, CPeer peer, ExportOwner owner, TensorSpec spec, MemorySegment foreign, long operations) {
        double sink = 0;
        switch (mode) {
            case "exportRoundTrip" -> {
                for (long i = 0; i < operations; i++) {
                    sink += peer.consume(owner.exportPointer(spec, ExportOptions.VERSIONED), false);
                }
            }
            case "importDefault" -> {
                for (long i = 0; i < operations; i++) {
                    try (ImportedTensor tensor = ImportedTensor.of(ManagedTensorKind.VERSIONED, foreign)) {
                        sink += tensor.hostSegment().get(JAVA_FLOAT_UNALIGNED, 4);
                    }
                }
            }
            case "importScoped" -> {
                for (long i = 0; i < operations; i++) {
                    sink += ImportedTensor.apply(ManagedTensorKind.VERSIONED, foreign, t -> t.hostSegment().get(JAVA_FLOAT_UNALIGNED, 4));
                }
            }
            case "sharedSegmentDowncall", "ownSegmentDowncall" -> {
                try (Arena local = Arena.ofConfined()) {
                    MemorySegment into = local.allocate(16);
                    MemorySegment from = mode.equals("ownSegmentDowncall") ? local.allocate(16) : shared;
                    for (long i = 0; i < operations; i++) {
                        peer.memcpy(into, from, 16);
                    }
                    sink += into.get(JAVA_FLOAT_UNALIGNED, 4);
                }
            }
            case "upcallControl" -> {
                for (long i = 0; i < operations / UPCALLS_PER_CALL; i++) {
                    peer.callN(noop, UPCALLS_PER_CALL);
                }
            }
            default -> throw new IllegalArgumentException("no mode " + mode + "; modes: " + MODES + " and " + DOWNCALL_MODES);
        }
        return sink;
    }
}
