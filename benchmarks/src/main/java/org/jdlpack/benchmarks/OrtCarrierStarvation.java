package org.jdlpack.benchmarks;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtSession;
import org.jdlpack.abi.DLDataType;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.onnxruntime.GuardedSession;
import org.jdlpack.onnxruntime.OrtBridge;
import org.jdlpack.onnxruntime.OrtInput;
import org.jdlpack.onnxruntime.OrtOutput;

/**
 * Whether a bound on concurrent ONNX Runtime runs keeps virtual threads going: a run is a native
 * call, and the virtual thread in it holds its carrier (one of the scheduler's OS threads, as many
 * as {@code jdk.virtualThreadScheduler.parallelism}, by default the cores) until it returns. Twice
 * as many virtual threads as carriers loop on runs of the example server's {@code scorer.onnx}
 * over 65,536 rows (a 4 MiB request) through the bridge, while one more virtual thread sleeps
 * 10 ms at a time for 3 s: how often it wakes (about 290 times on an idle carrier) says whether the
 * runs left it a carrier. Each bound in turn, in one JVM: none; a {@link Semaphore} of as many
 * permits as carriers, unfair and fair; one of a permit fewer than carriers (at least one).
 *
 * <pre>java --enable-native-access=ALL-UNNAMED -cp benchmarks/target/benchmarks.jar org.jdlpack.benchmarks.OrtCarrierStarvation [seconds]</pre>
 *
 * With {@code -Djdk.virtualThreadScheduler.parallelism=N} the scheduler has N carriers; the bounds
 * follow that number, not the cores.
 */
public final class OrtCarrierStarvation {

    private static final int ROWS = 65_536;

    private OrtCarrierStarvation() {
    }

    /**
     * Runs each bound in turn and prints one line per bound.
     *
     * @param args the seconds the sleeper is watched per bound (default 3)
     * @throws Exception if ONNX Runtime fails
     */
    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        int carriers = Integer.getInteger("jdk.virtualThreadScheduler.parallelism", Runtime.getRuntime().availableProcessors());
        Path model = Path.of("examples/src/main/resources/org/jdlpack/examples/server/scorer.onnx");
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        try (OrtSession.SessionOptions options = new OrtSession.SessionOptions()) {
            options.setIntraOpNumThreads(1);
            options.setInterOpNumThreads(1);
            try (GuardedSession session = GuardedSession.of(env.createSession(Files.readAllBytes(model), options))) {
                OrtBridge ort = OrtBridge.of(env);
                System.out.printf(Locale.ROOT, "%d carriers, %d cores; %d virtual threads looping on runs of %d rows%n",
                        carriers, Runtime.getRuntime().availableProcessors(), 2 * carriers, ROWS);
                watch("no bound", null, ort, session, carriers, seconds);
                watch("Semaphore(" + carriers + "): as many permits as carriers", new Semaphore(carriers), ort, session, carriers, seconds);
                watch("Semaphore(" + carriers + ", fair)", new Semaphore(carriers, true), ort, session, carriers, seconds);
                int fewer = Math.max(1, carriers - 1);
                watch("Semaphore(" + fewer + "): a carrier left free", new Semaphore(fewer), ort, session, carriers, seconds);
            }
        }
    }

    private static void watch(String bound, Semaphore permits, OrtBridge ort, GuardedSession session, int carriers,
            double seconds) throws InterruptedException {
        AtomicBoolean stop = new AtomicBoolean();
        LongAdder runs = new LongAdder();
        List<Thread> loopers = new ArrayList<>();
        for (int i = 0; i < 2 * carriers; i++) {
            loopers.add(Thread.ofVirtual().start(() -> loop(ort, session, permits, stop, runs)));
        }
        Thread.sleep(300); // the loopers at work
        long watchNanos = (long) (seconds * 1e9);
        long start = System.nanoTime();
        int[] wakes = new int[1];
        long[] latest = new long[1];
        Thread sleeper = Thread.ofVirtual().start(() -> {
            while (System.nanoTime() - start < watchNanos) {
                long before = System.nanoTime();
                try {
                    Thread.sleep(10);
                } catch (InterruptedException e) {
                    return;
                }
                long now = System.nanoTime();
                latest[0] = Math.max(latest[0], now - before - 10_000_000L);
                if (now - start < watchNanos) {
                    wakes[0]++; // a wake after the window is the one the loopers' stop let through
                }
            }
        });
        long runsBefore = runs.sum();
        Thread.sleep(watchNanos / 1_000_000);
        long runsDuring = runs.sum() - runsBefore;
        stop.set(true);
        for (Thread t : loopers) {
            t.join();
        }
        sleeper.join();
        String late = latest[0] == 0 ? "it never ran before the loopers stopped"
                : String.format(Locale.ROOT, "%s %.0f ms late", wakes[0] == 0 ? "its one wake, after the loopers stopped," : "worst wake",
                        latest[0] / 1e6);
        System.out.printf(Locale.ROOT, "%-45s the sleeper woke %4d times in %.0f s (%s); %6.0f runs/s%n", bound, wakes[0], seconds,
                late, runsDuring / seconds);
    }

    private static void loop(OrtBridge ort, GuardedSession session, Semaphore permits, AtomicBoolean stop, LongAdder runs) {
        try (OwnedHostTensor x = OwnedHostTensor.allocate(DLDataType.FLOAT32, ROWS, 16);
             OwnedHostTensor logits = OwnedHostTensor.allocate(DLDataType.FLOAT32, ROWS, 4);
             OrtInput in = ort.input(x);
             OrtOutput out = ort.output(logits)) {
            Map<String, OrtInput> inputs = Map.of("x", in);
            Map<String, OrtOutput> outputs = Map.of("logits", out);
            while (!stop.get()) {
                if (permits != null) {
                    permits.acquire();
                }
                try {
                    ort.run(session, inputs, outputs);
                } finally {
                    if (permits != null) {
                        permits.release();
                    }
                }
                runs.increment();
            }
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
