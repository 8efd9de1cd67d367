package org.jdlpack.onnxruntime;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Where a C-route run's native call is made, so that runs from virtual threads never take every
 * carrier. A virtual thread inside a native call pins its carrier, and a per-session bound alone
 * does not prevent that: measured on JDK 25 with two carriers, two virtual threads holding the
 * bound's two permits looped on runs, never unmounted, and 198 other virtual threads never even
 * started (a run, its permit's release and the next acquire all stay on the carrier; nothing
 * reaches the scheduler's shared queue). So, process-wide: a virtual thread makes the call itself
 * only while fewer than {@link #PINNABLE_CARRIERS} (the scheduler's carriers less one) are pinned
 * by runs; otherwise the call is made on a platform thread of this class's pool, and the virtual
 * thread waits for it unmounted. A platform thread always makes the call itself. Stateless but for
 * the permits; any thread.
 */
final class NativeRuns {

    /** The call, with everything it borrows and gives back: made on this thread or on a platform thread. */
    @FunctionalInterface
    interface NativeCall {
        void call();
    }

    /** Carriers that runs may pin at once: all the virtual-thread scheduler's but one, which stays free for every other virtual thread. */
    static final int PINNABLE_CARRIERS = Math.max(0, carriers() - 1);

    private static final Semaphore PINNABLE = new Semaphore(PINNABLE_CARRIERS);

    /** Platform threads for the calls of virtual threads beyond {@link #PINNABLE_CARRIERS}: made on demand, gone after a minute idle. */
    private static final ExecutorService OFF_CARRIER = Executors.newCachedThreadPool(
            Thread.ofPlatform().daemon().name("jdlpack-ort-run-", 0).factory());

    /** Calls made on a platform thread for a virtual thread; for tests. */
    static final AtomicLong OFF_CARRIER_CALLS = new AtomicLong();

    private NativeRuns() {
    }

    /** The virtual-thread scheduler's parallelism: its system property as the JDK reads it, or the available processors. */
    private static int carriers() {
        String configured = System.getProperty("jdk.virtualThreadScheduler.parallelism");
        if (configured != null) {
            try {
                return Integer.parseInt(configured.trim());
            } catch (NumberFormatException e) {
                // the JDK refuses it at its first virtual thread; count the default here
            }
        }
        return Runtime.getRuntime().availableProcessors();
    }

    /**
     * Makes {@code call} here, or, from a virtual thread when no carrier may be pinned, on a
     * platform thread while this virtual thread waits unmounted and uninterruptibly (the call
     * holds memory ONNX Runtime reads until it returns). Its exception reaches the caller as thrown.
     */
    static void call(NativeCall call) {
        if (!Thread.currentThread().isVirtual()) {
            call.call();
            return;
        }
        if (PINNABLE.tryAcquire()) {
            try {
                call.call();
            } finally {
                PINNABLE.release();
            }
            return;
        }
        OFF_CARRIER_CALLS.incrementAndGet();
        try {
            CompletableFuture.runAsync(call::call, OFF_CARRIER).join(); // join: uninterruptible
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException runtime) {
                throw runtime;
            }
            if (e.getCause() instanceof Error error) {
                throw error;
            }
            throw e;
        }
    }
}
