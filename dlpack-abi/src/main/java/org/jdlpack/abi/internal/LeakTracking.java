package org.jdlpack.abi.internal;

import java.lang.System.Logger.Level;
import java.lang.ref.Cleaner;

/**
 * The safety net for managed tensors nobody closed: a Cleaner that releases them after garbage
 * collection and reports each one as a leak.
 *
 * <p>With the system property {@value #PROPERTY} set to {@code true}, every owner also records
 * where it was created, and the report includes that stack trace. Off by default, because
 * capturing a stack trace costs microseconds.
 */
public final class LeakTracking {

    /** The system property that switches creation-site recording on. */
    public static final String PROPERTY = "org.jdlpack.leakTracking";

    private static final boolean RECORD_SITES = Boolean.getBoolean(PROPERTY);

    private static final Cleaner CLEANER = Cleaner.create(runnable -> {
        Thread thread = new Thread(runnable, "jdlpack-cleaner");
        thread.setDaemon(true);
        return thread;
    });

    private LeakTracking() {
    }

    /**
     * The shared Cleaner. Its actions must not refer to the object they watch.
     *
     * @return the Cleaner
     */
    public static Cleaner cleaner() {
        return CLEANER;
    }

    /**
     * Records the current stack as a creation site, when tracking is on.
     *
     * @param what a description of what is being created
     * @return the site, or null when tracking is off
     */
    public static Throwable creationSite(String what) {
        return RECORD_SITES ? new Throwable(what + " created here") : null;
    }

    /**
     * Counts and logs a leak: a managed tensor that became unreachable while still owned.
     *
     * @param what         what was leaked
     * @param creationSite where it was created, or null when tracking was off
     */
    public static void reportLeak(String what, Throwable creationSite) {
        Counters.LEAKS.increment();
        String hint = creationSite != null ? "" : " (run with -D" + PROPERTY + "=true to record where it was created)";
        Diagnostics.report(Level.WARNING, "LEAK: " + what + " was never closed; the Cleaner released it after garbage collection" + hint,
                creationSite);
    }
}
