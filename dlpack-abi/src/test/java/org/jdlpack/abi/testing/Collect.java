package org.jdlpack.abi.testing;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * Waiting for what only garbage collection brings about: the safety net's leak reports, a class
 * loader that can go, a Python object Java forgot.
 */
public final class Collect {

    private Collect() {
    }

    /**
     * Collects garbage until {@code condition} holds or {@code timeout} has passed, pausing between
     * collections so that the threads acting on them (the safety net's) get a turn.
     *
     * @return whether the condition holds
     * @throws InterruptedException if interrupted while pausing
     */
    public static boolean until(BooleanSupplier condition, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline >= 0) {
                return false;
            }
            System.gc();
            Thread.sleep(10);
        }
        return true;
    }
}
