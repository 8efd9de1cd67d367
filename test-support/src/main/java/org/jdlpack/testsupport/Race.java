package org.jdlpack.testsupport;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Starts the same action on several platform threads at once (they wait on one latch) and counts
 * how many calls returned and how many were refused with {@link IllegalStateException}: the shape
 * of every "exactly one wins" test.
 */
public final class Race {

    private Race() {
    }

    /**
     * What the racing calls did.
     *
     * @param won     calls that returned
     * @param refused calls that threw {@link IllegalStateException}
     */
    public record Outcome(int won, int refused) {
    }

    /**
     * Runs {@code action} on {@code threads} threads released together, and waits for all of them.
     *
     * @param threads how many threads race
     * @param action  what each of them does; any exception but {@link IllegalStateException} fails the race
     * @return the counts
     * @throws InterruptedException if interrupted while waiting
     */
    public static Outcome run(int threads, Runnable action) throws InterruptedException {
        AtomicInteger won = new AtomicInteger();
        AtomicInteger refused = new AtomicInteger();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> racers = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            racers.add(Thread.ofPlatform().start(() -> {
                try {
                    start.await();
                    action.run();
                    won.incrementAndGet();
                } catch (IllegalStateException e) {
                    refused.incrementAndGet();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
        }
        start.countDown();
        for (Thread racer : racers) {
            racer.join();
        }
        return new Outcome(won.get(), refused.get());
    }
}
