package org.jdlpack.abi;

import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import java.util.function.Supplier;

import org.jdlpack.abi.plumbing.Diagnostics;

/**
 * Leak reports and creation sites for managed tensors nobody closed (the safety net that releases
 * them after garbage collection is {@code SafetyNet} in the abi package).
 *
 * <p>With the system property {@value #PROPERTY} set to {@code true} (read once, at start-up),
 * every export, handle and imported tensor also records where it was created: leak reports then
 * include that stack trace, and {@link #liveSites()} lists everything still alive with its site,
 * in the manner of Netty's leak detector. Off by default, because capturing a stack trace per
 * object is expensive; when off, tracking costs one branch per object.
 */
final class LeakTracking {

    /** The system property that switches creation-site recording on. */
    public static final String PROPERTY = "org.jdlpack.leakTracking";

    private static final boolean RECORD_SITES = Boolean.getBoolean(PROPERTY);

    /** Leaks logged one by one before the log is thinned out to powers of two. */
    public static final int REPORTED_IN_FULL = 16;

    /** Numbers the leaks for the rate limit; leaks are rare, so one atomic is cheap enough. */
    private static final AtomicLong LEAK_NUMBER = new AtomicLong();

    /** Everything alive that was created while tracking was on, with what it is and where it was made. */
    private static final Map<Object, Site> LIVE = new ConcurrentHashMap<>();

    private record Site(Supplier<String> what, Throwable where) {
    }

    private LeakTracking() {
    }

    /** {@return whether creation sites are recorded: the value of {@value #PROPERTY} at start-up} */
    public static boolean isEnabled() {
        return RECORD_SITES;
    }

    /**
     * Starts tracking an object, when tracking is on.
     *
     * @param owner the object whose lifetime is tracked (identity matters)
     * @param what  describes it, evaluated only when a report is made
     * @return its creation site, or null when tracking is off
     */
    public static Throwable track(Object owner, Supplier<String> what) {
        if (!RECORD_SITES) {
            return null;
        }
        Throwable site = new Throwable("created here");
        LIVE.put(owner, new Site(what, site));
        return site;
    }

    /**
     * Stops tracking an object: it was released or handed on.
     *
     * @param owner the object passed to {@link #track}
     */
    public static void untrack(Object owner) {
        if (RECORD_SITES) {
            LIVE.remove(owner);
        }
    }

    /**
     * {@return the creation site of a tracked object that {@code which} accepts, or null} A scan
     * of everything tracked: for error messages, never for a hot path.
     *
     * @param which picks the object
     */
    public static Throwable siteOf(Predicate<Object> which) {
        for (Map.Entry<Object, Site> entry : LIVE.entrySet()) {
            if (which.test(entry.getKey())) {
                return entry.getValue().where();
            }
        }
        return null;
    }

    /**
     * {@return one entry per tracked object still alive, each with the stack trace of its creation;
     * empty when tracking is off}
     */
    public static List<String> liveSites() {
        List<String> report = new ArrayList<>();
        for (Site site : LIVE.values()) {
            var trace = new java.io.StringWriter();
            site.where().printStackTrace(new java.io.PrintWriter(trace));
            report.add(site.what().get() + " is alive, " + trace.toString().strip());
        }
        return report;
    }

    /**
     * Counts and logs a leak: a managed tensor that became unreachable while still owned.
     *
     * <p>The count is exact; the log is rate-limited so that a program leaking in a loop cannot
     * flood it (one million forgotten handles once wrote 289 MB): the first
     * {@value #REPORTED_IN_FULL} leaks are logged one by one, after that only the leaks whose
     * number is a power of two, each saying how many there were so far. The limit counts leaks,
     * not time, so it behaves the same on any machine.
     *
     * @param what         what was leaked
     * @param creationSite where it was created, or null when tracking was off
     */
    public static void reportLeak(String what, Throwable creationSite) {
        long number = LEAK_NUMBER.incrementAndGet();
        if (number <= REPORTED_IN_FULL || Long.bitCount(number) == 1) {
            String hint = creationSite != null ? "" : " (run with -D" + PROPERTY + "=true to record where it was created)";
            String more = number <= REPORTED_IN_FULL ? "" : " [leak number " + number + "; after the first " + REPORTED_IN_FULL
                    + " only leak numbers that are powers of two are logged; DLPackStats.leaksReported() counts all]";
            Diagnostics.report(Level.WARNING, "LEAK: " + what + " was never closed; the safety net released it after garbage collection"
                    + hint + more, creationSite);
        }
        Counters.LEAKS.increment(); // after the report, so that whoever waits on the count also finds the report
    }
}
