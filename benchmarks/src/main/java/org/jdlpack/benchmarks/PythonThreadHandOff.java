package org.jdlpack.benchmarks;

import java.util.Arrays;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;

import org.jdlpack.python.PythonRuntime;

/**
 * A plain program, not JMH, behind dlpack-python's choice for virtual threads: what one
 * {@code eval("None")} (the GIL, the call, the result wrapped and closed) costs called directly
 * from a platform thread, directly from a virtual thread (what dlpack-python does: nothing that
 * can unmount runs while the GIL is held), and from a virtual thread that hands each call to one
 * platform thread and waits for it (the alternative). Each with one caller and with 16 callers
 * at once; the rounds of the six cases are interleaved, so they see the same machine. Prints the
 * best and the median ns per call of 11 rounds.
 *
 * <pre>java --enable-native-access=ALL-UNNAMED -cp benchmarks/target/benchmarks.jar org.jdlpack.benchmarks.PythonThreadHandOff</pre>
 */
public final class PythonThreadHandOff {

    private static final int ROUNDS = 11;
    private static final int CALLS_PER_ROUND = 20_000;
    private static final int MANY = 16;

    private PythonThreadHandOff() {
    }

    /**
     * Runs the rounds.
     *
     * @param args ignored
     * @throws Exception if a call fails
     */
    public static void main(String[] args) throws Exception {
        PythonRuntime python = PythonRuntime.get();
        ExecutorService pythonThread = Executors.newSingleThreadExecutor(Thread.ofPlatform().name("python").factory());
        Runnable direct = () -> python.eval("None").close();
        Runnable handOff = () -> {
            Future<?> done = pythonThread.submit(direct);
            try {
                done.get();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            } catch (ExecutionException e) {
                throw new IllegalStateException(e.getCause());
            }
        };
        String[] names = {"platform_direct_1", "virtual_direct_1", "virtual_handoff_1", "platform_direct_16", "virtual_direct_16",
                "virtual_handoff_16"};
        double[][] perCall = new double[names.length][ROUNDS];
        for (int round = 0; round < ROUNDS; round++) {
            perCall[0][round] = time(Thread.ofPlatform().factory(), 1, direct);
            perCall[1][round] = time(Thread.ofVirtual().factory(), 1, direct);
            perCall[2][round] = time(Thread.ofVirtual().factory(), 1, handOff);
            perCall[3][round] = time(Thread.ofPlatform().factory(), MANY, direct);
            perCall[4][round] = time(Thread.ofVirtual().factory(), MANY, direct);
            perCall[5][round] = time(Thread.ofVirtual().factory(), MANY, handOff);
        }
        pythonThread.shutdown();
        for (int i = 0; i < names.length; i++) {
            Arrays.sort(perCall[i]);
            // The first rounds include JIT compilation; the best and the median say what a call costs.
            System.out.printf("python_eval_%s_ns min %.0f median %.0f%n", names[i], perCall[i][0], perCall[i][ROUNDS / 2]);
        }
    }

    /** {@return wall-clock ns per call of {@code callers} threads making {@link #CALLS_PER_ROUND} calls in all} */
    private static double time(ThreadFactory threads, int callers, Runnable call) throws InterruptedException {
        Thread[] running = new Thread[callers];
        long start = System.nanoTime();
        for (int i = 0; i < callers; i++) {
            running[i] = threads.newThread(() -> {
                for (int c = 0; c < CALLS_PER_ROUND / callers; c++) {
                    call.run();
                }
            });
            running[i].start();
        }
        for (Thread thread : running) {
            thread.join();
        }
        return (System.nanoTime() - start) / (double) CALLS_PER_ROUND;
    }
}
