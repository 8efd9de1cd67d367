package org.jdlpack.benchmarks;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.management.ManagementFactory;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * A plain program, not JMH, that runs the {@code @Benchmark} methods of a JMH hand-off benchmark
 * class (one of the adapters' {@code *HandOffBenchmark}s) round after round, the routes taking
 * turns, and prints each route's thread CPU time and heap per operation: the best and the median
 * round. On this shared 2-core machine wall time moves 2x with the neighbours' load; the CPU time
 * a thread spends does not count the time it waits for a core, so routes measured in one process
 * compare well even under load. It calls the same methods JMH does, so the two cannot drift apart.
 *
 * <pre>java --enable-native-access=ALL-UNNAMED -cp benchmarks/target/benchmarks.jar:LIBRARY_JARS \
 *     org.jdlpack.benchmarks.HandOffCpuTime TorchHandOffBenchmark [elements=262144] [rounds=9] [ops=100000] [only=REGEX] [label=TEXT]</pre>
 *
 * {@code only} keeps the routes whose method names match; a route with
 * {@code @OperationsPerInvocation(n)} is called {@code ops / n} times and its figures are per
 * operation, as JMH reports them.
 *
 * Figures and commands: docs/jvm-libraries.md.
 */
public final class HandOffCpuTime {

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private HandOffCpuTime() {
    }

    /**
     * Runs the rounds.
     *
     * @param args the benchmark class's simple name, then optional {@code FIELD=VALUE} for its
     *             {@code @Param} field, {@code rounds=N}, {@code ops=N} and {@code label=TEXT}
     * @throws Throwable whatever a benchmark method throws
     */
    public static void main(String[] args) throws Throwable {
        Class<?> type = Class.forName(HandOffCpuTime.class.getPackageName() + "." + args[0]);
        Object state = type.getConstructor().newInstance();
        int rounds = 9;
        int ops = 100_000;
        String only = ".*";
        for (String arg : Arrays.copyOfRange(args, 1, args.length)) {
            String[] kv = arg.split("=", 2);
            switch (kv[0]) {
                case "rounds" -> rounds = Integer.parseInt(kv[1]);
                case "ops" -> ops = Integer.parseInt(kv[1]);
                case "only" -> only = kv[1];
                case "label" -> { } // printed with the arguments only: says how the JVM was started
                default -> {
                    Field field = type.getDeclaredField(kv[0]);
                    field.setAccessible(true);
                    field.set(state, field.getType() == int.class ? (Object) Integer.parseInt(kv[1]) : kv[1]);
                }
            }
        }
        List<Method> routes = new ArrayList<>();
        for (Method m : type.getMethods()) {
            if (m.isAnnotationPresent(Benchmark.class) && m.getName().matches(only)) {
                routes.add(m);
            }
        }
        routes.sort(Comparator.comparing(Method::getName));
        call(type, state, Setup.class);
        MethodHandle[] calls = new MethodHandle[routes.size()];
        int[] perCall = new int[calls.length];
        for (int r = 0; r < calls.length; r++) {
            OperationsPerInvocation batch = routes.get(r).getAnnotation(OperationsPerInvocation.class);
            perCall[r] = batch == null ? 1 : batch.value();
            // (Object)long: no boxing, so the heap per operation is the route's own.
            calls[r] = MethodHandles.publicLookup().unreflect(routes.get(r)).asType(MethodType.methodType(long.class, Object.class));
        }
        double[][] cpu = new double[calls.length][rounds];
        double[][] heap = new double[calls.length][rounds];
        long sink = 0;
        for (int r = 0; r < calls.length; r++) { // warm-up: every route compiled before any is measured
            for (int i = 0; i < ops / perCall[r]; i++) {
                sink += (long) calls[r].invokeExact(state);
            }
        }
        for (int round = 0; round < rounds; round++) {
            for (int r = 0; r < calls.length; r++) {
                MethodHandle call = calls[r];
                long cpu0 = THREADS.getCurrentThreadCpuTime();
                long heap0 = THREADS.getCurrentThreadAllocatedBytes();
                int invocations = ops / perCall[r];
                for (int i = 0; i < invocations; i++) {
                    sink += (long) call.invokeExact(state);
                }
                double done = (double) invocations * perCall[r];
                cpu[r][round] = (THREADS.getCurrentThreadCpuTime() - cpu0) / done;
                heap[r][round] = (THREADS.getCurrentThreadAllocatedBytes() - heap0) / done;
            }
        }
        call(type, state, TearDown.class);
        System.out.println("# " + String.join(" ", args) + " (" + rounds + " rounds of " + ops + " operations; sink " + (sink & 1) + ")");
        for (int r = 0; r < calls.length; r++) {
            Arrays.sort(cpu[r]);
            Arrays.sort(heap[r]);
            System.out.printf("%-34s cpu ns/op min %8.0f median %8.0f   B/op %6.0f%n",
                    routes.get(r).getName(), cpu[r][0], cpu[r][rounds / 2], heap[r][rounds / 2]);
        }
    }

    private static void call(Class<?> type, Object state, Class<? extends java.lang.annotation.Annotation> marker) throws Exception {
        for (Method m : type.getMethods()) {
            if (m.isAnnotationPresent(marker)) {
                m.invoke(state);
            }
        }
    }
}
