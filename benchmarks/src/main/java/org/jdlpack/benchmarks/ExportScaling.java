package org.jdlpack.benchmarks;

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
import org.jdlpack.abi.TensorSpec;
import org.jdlpack.testsupport.CPeer;

/**
 * Thread scaling of the export round trip (export, C reads the struct and calls the deleter) beside
 * the upcall-only control, at 1, 2, 4 and 8 threads, each thread with its own owner and tensor.
 * It reports each thread's CPU time per operation as well as wall time: on a machine whose cores
 * are shared with other work, wall time per operation grows with waiting for a core, while
 * contention on shared cache lines shows as CPU time that grows with the thread count. Not JMH:
 * JMH has no per-thread CPU time; the JMH suites give the wall-time figures.
 *
 * <p>{@code java --enable-native-access=ALL-UNNAMED -cp benchmarks/target/benchmarks.jar
 * org.jdlpack.benchmarks.ExportScaling [operations per thread]} (default 1,000,000).
 */
@SuppressWarnings("restricted") // the upcall-only control
public final class ExportScaling {

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static final int UPCALLS_PER_CALL = 10_000;
    private static MemorySegment noop;

    private ExportScaling() {
    }

    private static void noop() {
        // the upcall target: nothing, so the control measures the transition
    }

    /**
     * Runs the measurement and prints one line per mode and thread count.
     *
     * @param args operations per thread
     * @throws Exception if a thread fails
     */
    public static void main(String[] args) throws Exception {
        noop = Linker.nativeLinker().upcallStub(MethodHandles.lookup().findStatic(ExportScaling.class, "noop",
                MethodType.methodType(void.class)), FunctionDescriptor.ofVoid(), Arena.global());
        long operations = args.length > 0 ? Long.parseLong(args[0]) : 1_000_000;
        for (int threads : new int[] {1, 2, 4, 8}) {
            for (boolean export : new boolean[] {true, false}) {
                double[] result = run(export, threads, operations);
                System.out.printf("%s threads=%d cpu_ns_per_op(median thread)=%.1f wall_ns_per_op(aggregate)=%.1f%n",
                        export ? "exportRoundTrip" : "upcallControl", threads, result[0], result[1]);
            }
        }
    }

    /** Returns the median thread's CPU ns per op and the aggregate wall ns per op of the second round. */
    private static double[] run(boolean export, int threads, long operations) throws InterruptedException {
        CPeer peer = CPeer.get();
        CyclicBarrier start = new CyclicBarrier(threads);
        double[] cpu = new double[threads];
        double[] wall = new double[threads];
        List<Thread> workers = new ArrayList<>();
        for (int k = 0; k < threads; k++) {
            int index = k;
            Thread worker = Thread.ofPlatform().start(() -> {
                Arena arena = Arena.ofShared();
                ExportOwner owner = ExportOwner.of(arena, arena::close);
                TensorSpec spec = TensorSpec.of(arena.allocate(4L * 120, 256), DLDataType.FLOAT32, 2, 3, 4, 5);
                long sink = 0;
                try {
                    for (int round = 0; round < 2; round++) { // the first round warms up
                        start.await();
                        long cpu0 = THREADS.getCurrentThreadCpuTime();
                        long wall0 = System.nanoTime();
                        if (export) {
                            for (long i = 0; i < operations; i++) {
                                sink += peer.consume(owner.exportPointer(spec, ExportOptions.VERSIONED), false);
                            }
                        } else {
                            for (long i = 0; i < operations / UPCALLS_PER_CALL; i++) {
                                peer.callN(noop, UPCALLS_PER_CALL);
                            }
                        }
                        cpu[index] = (THREADS.getCurrentThreadCpuTime() - cpu0) / (double) operations;
                        wall[index] = (System.nanoTime() - wall0) / (double) operations;
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                } finally {
                    owner.close();
                }
                if (sink == 42) {
                    System.out.print(""); // keeps the results alive
                }
            });
            workers.add(worker);
        }
        for (Thread worker : workers) {
            worker.join();
        }
        Arrays.sort(cpu);
        return new double[] {cpu[threads / 2], Arrays.stream(wall).max().orElseThrow() / threads};
    }
}
