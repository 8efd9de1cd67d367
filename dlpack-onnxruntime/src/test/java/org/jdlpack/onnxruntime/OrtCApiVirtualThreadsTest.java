package org.jdlpack.onnxruntime;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.testsupport.ChildJvm;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Runs from many virtual threads: a run is a native call, which pins its virtual thread's carrier,
 * and 200 virtual threads looping on runs would hold every carrier for as long as they loop. The
 * session's bound on concurrent runs (fair, by default one per available processor) and the
 * process-wide rule that runs pin all carriers but one (NativeRuns: the rest are made on platform
 * threads while their virtual threads wait unmounted) leave a virtual thread that has nothing to do
 * with ONNX Runtime its carrier. With the bound alone (no NativeRuns: every call made on the
 * virtual thread), this test's runners beyond the first two never started and its ticker never
 * ticked again once they ran, on this project's two-core machine; the test failed at its deadline.
 * Also on a scheduler of one carrier (child JVM), where every run from a virtual thread is handed off.
 */
@ExtendWith({NothingLeftBehind.class, NoOrtObjectLeft.class})
class OrtCApiVirtualThreadsTest {

    private static final int RUNNERS = 200;
    private static final int TICKS = 100;
    private static final Duration LIVENESS = Duration.ofSeconds(120); // generous: only a hang should reach it

    @Test
    void twoHundredVirtualThreadsRunWhileAnotherVirtualThreadKeepsTicking() throws Exception {
        long offCarrier = NativeRuns.OFF_CARRIER_CALLS.get();
        Outcome outcome = runnersAndATicker();
        assertThat(outcome.failures()).isEmpty();
        assertThat(outcome.everyRunnerRan()).as("every runner made a run").isTrue();
        assertThat(outcome.ticksDuring()).as("ticks of the other virtual thread while 200 loop on runs (%s)", outcome)
                .isGreaterThanOrEqualTo(TICKS);
        assertThat(outcome.runsDuring()).as("runs went on meanwhile").isPositive();
        assertThat(NativeRuns.OFF_CARRIER_CALLS.get()).as("runs beyond the pinnable carriers were handed off")
                .isGreaterThan(offCarrier);
    }

    @Test
    void onASchedulerOfOneCarrierEveryRunIsHandedOffAndTheTickerTicks() {
        ChildJvm.Outcome child = ChildJvm.create().options("-Djdk.virtualThreadScheduler.parallelism=1").timeoutSeconds(300)
                .run(OrtCApiVirtualThreadsTest.class);
        assertThat(child.exitCode()).as(child.output()).isZero();
        assertThat(child.result()).as(child.output()).isEqualTo("RESULT pinnable=0 ran=true ticked=true failures=0");
    }

    /** Child JVM (one carrier): the same scenario, its verdict on one line. */
    public static void main(String[] args) throws Exception {
        Outcome outcome = runnersAndATicker();
        System.out.println(outcome);
        System.out.println("RESULT pinnable=" + NativeRuns.PINNABLE_CARRIERS + " ran=" + outcome.everyRunnerRan() + " ticked="
                + (outcome.ticksDuring() >= TICKS) + " failures=" + outcome.failures().size());
    }

    /** What {@link #runnersAndATicker()} saw. */
    record Outcome(boolean everyRunnerRan, long ticksDuring, long runsDuring, List<Throwable> failures) {
    }

    /**
     * 200 virtual threads loop on runs of one session (each its own output and prepared run), a
     * virtual thread ticks a counter every millisecond; once every runner has run, counts the
     * ticks and runs until the ticker has ticked {@link #TICKS} times more, or the deadline.
     */
    static Outcome runnersAndATicker() throws InterruptedException {
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong runs = new AtomicLong();
        AtomicLong ticks = new AtomicLong();
        Queue<Throwable> failures = new ConcurrentLinkedQueue<>();
        CountDownLatch everyRunnerRan = new CountDownLatch(RUNNERS);
        try (OrtCApiSession session = OrtCApiSession.open(OnnxModelBytes.unary("Neg", 1), 1);
             OwnedHostTensor x = OwnedHostTensor.copyOf(new float[] {1, 2, 3, 4}, 4);
             OrtCApiTensor xt = OrtCApiSession.tensor(x)) {
            if (session.concurrentRuns() != Runtime.getRuntime().availableProcessors()) {
                failures.add(new AssertionError("the default bound is " + session.concurrentRuns()));
            }
            List<Thread> runners = new ArrayList<>();
            for (int r = 0; r < RUNNERS; r++) {
                runners.add(Thread.ofVirtual().name("runner-" + r).start(() -> {
                    try (OwnedHostTensor y = OwnedHostTensor.allocate(DLDataType.FLOAT32, 4);
                         OrtCApiTensor yt = OrtCApiSession.tensor(y);
                         OrtCApiRun run = session.prepare(Map.of("x", xt), Map.of("y", yt))) {
                        run.run();
                        runs.incrementAndGet();
                        everyRunnerRan.countDown();
                        while (!stop.get()) {
                            run.run(); // a tight loop of native calls: nothing here yields the carrier
                            runs.incrementAndGet();
                        }
                        if (y.host().getFloat(3) != -4f) {
                            failures.add(new AssertionError("y[3] is " + y.host().getFloat(3)));
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                        everyRunnerRan.countDown();
                    }
                }));
            }
            Thread ticker = Thread.ofVirtual().name("ticker").start(() -> {
                while (!stop.get()) {
                    ticks.incrementAndGet();
                    try {
                        Thread.sleep(1); // needs a carrier again to wake up and tick
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            });
            boolean ran;
            long ticksDuring;
            long runsDuring;
            try {
                ran = everyRunnerRan.await(LIVENESS.toSeconds(), TimeUnit.SECONDS);
                long runsBefore = runs.get();
                long ticksBefore = ticks.get();
                long deadline = System.nanoTime() + LIVENESS.toNanos();
                while (ran && ticks.get() < ticksBefore + TICKS && System.nanoTime() - deadline < 0) {
                    Thread.sleep(5);
                }
                ticksDuring = ticks.get() - ticksBefore;
                runsDuring = runs.get() - runsBefore;
            } finally {
                stop.set(true);
                for (Thread runner : runners) {
                    runner.join(LIVENESS);
                    if (runner.isAlive()) {
                        failures.add(new AssertionError(runner + " did not end"));
                    }
                }
                ticker.join(LIVENESS);
            }
            return new Outcome(ran, ticksDuring, runsDuring, List.copyOf(failures));
        }
    }
}
