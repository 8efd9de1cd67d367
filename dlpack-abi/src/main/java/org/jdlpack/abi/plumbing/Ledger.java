package org.jdlpack.abi.plumbing;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.System.Logger.Level;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.PhantomReference;
import java.lang.ref.ReferenceQueue;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Predicate;
import java.util.function.Supplier;

import org.jdlpack.abi.stripes.StripeLock;
import org.jdlpack.abi.stripes.ThreadStripes;

/**
 * The one ledger of what jdlpack holds for callers who may forget it: every object that must be
 * closed (a handle, an imported tensor, a Python reference) is an {@link Entry} here, and so is
 * its safety net, its leak report and, with tracking on, its creation site.
 *
 * <ul>
 *   <li><b>The safety net.</b> An entry is a phantom reference to the object whose unreachability
 *       means "forgotten" (a handle, the scope of an imported tensor's arena, a
 *       {@code PythonObject}). Live entries are kept reachable in lists striped by the registering
 *       thread ({@link ThreadStripes}), so a thread takes an uncontended lock of its own stripe;
 *       one daemon thread, started by the first watched entry, runs {@link Entry#forgotten()} for
 *       each entry the collector queues while it is still open. The JDK's cleaner service
 *       ({@code java.lang.ref}) would add a cleanable and an action object per entry and one lock
 *       every thread shares.</li>
 *   <li><b>Leak reports.</b> {@link #reportLeak} counts exactly ({@link #leaks()}) and logs at a
 *       rate that a program leaking in a loop cannot turn into a flood.</li>
 *   <li><b>Creation sites.</b> With the system property {@value #TRACKING_PROPERTY} set to
 *       {@code true} at start-up, every entry (and every export, through {@link #track}) records
 *       where it was created, in the manner of Netty's leak detector: leak reports carry that
 *       stack trace, and {@link #liveSites()} lists everything still alive. Off, it costs one
 *       branch per object.</li>
 * </ul>
 *
 * <p>Thread safety: every method may be called from any thread. Registering and settling an entry
 * take only the registering thread's stripe lock, for a few link updates: nothing that waits for
 * another thread's work, so a virtual thread holding a per-thread native state stays mounted.
 *
 * @since 0.1
 */
public final class Ledger {

    /** The system property that switches creation-site recording on. */
    public static final String TRACKING_PROPERTY = "org.jdlpack.leakTracking";

    /** Leaks logged one by one before the log is thinned out to powers of two. */
    public static final int REPORTED_IN_FULL = 16;

    private static final boolean TRACKING = Boolean.getBoolean(TRACKING_PROPERTY);
    private static final ReferenceQueue<Object> QUEUE = new ReferenceQueue<>();
    private static final Stripe[] STRIPES = new Stripe[ThreadStripes.COUNT];
    private static final LongAdder LEAKS = new LongAdder();
    /** Numbers the leaks for the rate limit; leaks are rare, so one atomic is cheap enough. */
    private static final AtomicLong LEAK_NUMBER = new AtomicLong();
    /** Everything alive that was created while tracking was on, with where it was made. */
    private static final Map<Object, Site> SITES = new ConcurrentHashMap<>();

    /** The daemon serving {@link #QUEUE}, started by the first watched entry. */
    private static volatile Thread releaser;

    static {
        for (int i = 0; i < STRIPES.length; i++) {
            STRIPES[i] = new Stripe();
        }
    }

    private Ledger() {
    }

    /**
     * An object the ledger watches: when the object it was made for becomes unreachable while the
     * entry is still open, the ledger's thread calls {@link #forgotten()}. Whoever ends the
     * object's life normally calls {@link #settle()} first, exactly once (the winner of the
     * object's own state transition).
     */
    public abstract static class Entry extends PhantomReference<Object> {

        /** Null when not watched (the owner cannot be forgotten: a caller's arena, a scoped import). */
        private Stripe stripe;
        /** Where the entry was made, when tracking is on; else null. */
        private Throwable creationSite;
        // The stripe's links, guarded by the stripe's lock. Linked while prev is set or it is the
        // head: no flag of its own, so that an entry (one per import) stays 8 bytes smaller.
        private Entry prev;
        private Entry next;

        /**
         * Makes an entry; the subclass calls {@link #open()} at the end of its constructor.
         *
         * @param watched the object whose unreachability, while the entry is open, means the owner
         *                was forgotten; or null for an owner that cannot be forgotten (the entry is
         *                then only counted and, with tracking on, listed)
         */
        protected Entry(Object watched) {
            super(watched, watched == null ? null : QUEUE);
        }

        /**
         * Puts the entry in the ledger: from now on the safety net watches it (if it watches
         * anything) and tracking lists it. Last in the subclass's constructor, so that the
         * ledger's thread and {@link Ledger#liveSites()} only ever see a whole entry.
         */
        protected final void open() {
            if (TRACKING) {
                creationSite = track(this, this::describe);
            }
            if (!refersTo(null)) { // watched: the constructor's caller still holds the object, so it was not cleared
                stripe = STRIPES[ThreadStripes.current()];
                stripe.add(this);
                startReleaser(); // after the add: a racing stop() either sees the entry or is seen (stop's comment)
            }
        }

        /** Stops watching: the owner ended its life normally. Call once, from the winner of the owner's own transition. */
        protected final void settle() {
            if (stripe != null) {
                stripe.remove(this);
            }
            if (TRACKING) {
                SITES.remove(this);
            }
        }

        /**
         * Releases what a forgotten owner held, on the ledger's thread; reports the leak if it
         * released anything ({@link Ledger#reportLeak}). Must not throw, and must tolerate a
         * racing normal end (settle first, through the owner's own transition).
         */
        protected abstract void forgotten();

        /** {@return what a report calls this entry's owner; never touches the watched object} */
        protected abstract String describe();

        /** {@return where the entry was made, when tracking is on; else null} */
        public final Throwable creationSite() {
            return creationSite;
        }
    }

    /**
     * An entry whose release runs exactly once: by the owner's normal end ({@link #run()}) or by
     * the safety net when the owner was forgotten, whichever comes first. Its own flag decides,
     * not the owner's, because the owner may become unreachable while its last normal end is still
     * running. The one run-once entry of the library modules (an {@code ExportOwner}'s release,
     * ONNX Runtime's inputs, outputs and sessions).
     */
    public abstract static class RunOnce extends Entry {

        private static final VarHandle RAN;

        static {
            try {
                RAN = MethodHandles.lookup().findVarHandle(RunOnce.class, "ran", boolean.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        @SuppressWarnings("unused") // accessed through RAN
        private volatile boolean ran;

        /**
         * Makes the entry; the subclass calls {@link #open()} at the end of its constructor.
         *
         * @param watched as {@link Entry#Entry(Object)}
         */
        protected RunOnce(Object watched) {
            super(watched);
        }

        /**
         * Settles the entry and runs {@link #release()}, unless a run won before; what the release
         * throws reaches the caller.
         *
         * @return whether this call ran it
         */
        public final boolean run() {
            if (!RAN.compareAndSet(this, false, true)) {
                return false;
            }
            settle();
            release();
            return true;
        }

        /** What the owner lets go of at its end; called once, by whichever of {@link #run()} and the safety net wins. */
        protected abstract void release();

        /** The safety net: runs the release, unless the owner's end won, and reports the leak. Never throws. */
        @Override
        protected final void forgotten() {
            String what = describe(); // before the release: the report must not depend on what it frees
            String left = "";
            try {
                if (!run()) {
                    return;
                }
            } catch (RuntimeException | Error e) {
                left = failed(e);
            }
            reportLeak(what + left, creationSite());
        }

        /**
         * {@return what a leak report adds, after the owner's name, when the release threw on the
         * ledger's thread}
         *
         * @param failure what the release threw
         */
        protected String failed(Throwable failure) {
            return " (its release failed: " + failure + ")";
        }
    }

    /** {@return whether creation sites are recorded: the value of {@value #TRACKING_PROPERTY} at start-up} */
    public static boolean trackingEnabled() {
        return TRACKING;
    }

    /**
     * Records the creation site of something that is not an entry (an export, whose life a
     * consumer ends), when tracking is on.
     *
     * @param key  identifies it for {@link #untrack}
     * @param what describes it, evaluated only when a report is made
     * @return its creation site, or null when tracking is off
     */
    public static Throwable track(Object key, Supplier<String> what) {
        if (!TRACKING) {
            return null;
        }
        Throwable site = new Throwable("created here");
        SITES.put(key, new Site(what, site));
        return site;
    }

    /**
     * Forgets a creation site recorded with {@link #track}.
     *
     * @param key what was tracked
     */
    public static void untrack(Object key) {
        if (TRACKING) {
            SITES.remove(key);
        }
    }

    /**
     * {@return the creation site of a tracked object that {@code which} accepts, or null} A scan of
     * everything tracked: for error messages, never for a hot path.
     *
     * @param which picks the object
     */
    public static Throwable siteOf(Predicate<Object> which) {
        for (Map.Entry<Object, Site> entry : SITES.entrySet()) {
            if (which.test(entry.getKey())) {
                return entry.getValue().where();
            }
        }
        return null;
    }

    /** {@return one line per tracked object still alive, each with the stack trace of its creation; empty when tracking is off} */
    public static List<String> liveSites() {
        List<String> report = new ArrayList<>();
        for (Site site : SITES.values()) {
            StringWriter trace = new StringWriter();
            site.where().printStackTrace(new PrintWriter(trace));
            report.add(site.what().get() + " is alive, " + trace.toString().strip());
        }
        return report;
    }

    /** {@return the number of owners that became unreachable unclosed and were released by the safety net} */
    public static long leaks() {
        return LEAKS.sum();
    }

    /**
     * Counts and logs a leak. The count is exact; the log is rate-limited so that a program
     * leaking in a loop cannot flood it: the first {@value #REPORTED_IN_FULL} leaks are logged one
     * by one, after that only those whose number is a power of two, each saying how many there
     * were so far. The limit counts leaks, not time, so it behaves the same on any machine. Never
     * throws.
     *
     * @param what         what was leaked
     * @param creationSite where it was created, or null when tracking was off
     */
    public static void reportLeak(String what, Throwable creationSite) {
        long number = LEAK_NUMBER.incrementAndGet();
        if (number <= REPORTED_IN_FULL || Long.bitCount(number) == 1) {
            String hint = creationSite != null ? "" : " (run with -D" + TRACKING_PROPERTY + "=true to record where it was created)";
            String more = number <= REPORTED_IN_FULL ? "" : " [leak number " + number + "; after the first " + REPORTED_IN_FULL
                    + " only leak numbers that are powers of two are logged; DLPackStats.leaksReported() counts all]";
            Diagnostics.report(Level.WARNING, "LEAK: " + what + " was never closed; the safety net released it after garbage collection"
                    + hint + more, creationSite);
        }
        LEAKS.increment(); // after the report, so that whoever waits on the count also finds the report
    }

    /** {@return how many watched entries are open: owners the safety net would still release} */
    public static long openEntries() {
        long open = 0;
        for (Stripe stripe : STRIPES) {
            open += stripe.size();
        }
        return open;
    }

    /**
     * Stops the safety net's thread, which keeps this class and its class loader reachable while it
     * runs; the next watched entry starts a new one. The caller has made sure that no entry is
     * open ({@link #openEntries()} is 0); one opened while this runs keeps a thread running.
     */
    public static void stop() {
        Thread running;
        synchronized (Ledger.class) {
            running = releaser;
            releaser = null;
        }
        // An entry opened on another thread meanwhile: it was added before its open() read the
        // releaser, and this reads the stripes after clearing it, so either that open() starts a
        // new thread or this does.
        if (openEntries() > 0) {
            startReleaser();
        }
        if (running != null) {
            running.interrupt();
            try {
                running.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static void startReleaser() {
        if (releaser != null) {
            return;
        }
        synchronized (Ledger.class) {
            if (releaser == null) {
                // What the thread reports with, loaded now: a class loader closed under open owners
                // (Flink closes a job's loader after a refused release hook) loads no class after its
                // close, and the thread must still release and report (SafetyNetAfterLoaderCloseTest).
                Diagnostics.ready();
                // Nothing inherited from whoever made the first entry: a task's context class loader
                // or inheritable thread locals would stay reachable for as long as this thread runs.
                Thread thread = Thread.ofPlatform().name("jdlpack-safety-net").daemon().inheritInheritableThreadLocals(false)
                        .unstarted(Ledger::releaseForgotten);
                thread.setContextClassLoader(Ledger.class.getClassLoader());
                releaser = thread;
                thread.start();
            }
        }
    }

    /** The daemon loop: a queued entry's owner is unreachable; release what it still holds. Ends when {@link #stop()} replaces it. */
    private static void releaseForgotten() {
        while (releaser == Thread.currentThread()) {
            try {
                ((Entry) QUEUE.remove()).forgotten();
            } catch (InterruptedException e) {
                // Stopped, or woken for no reason: the loop's condition says which.
            } catch (Throwable t) {
                try {
                    Diagnostics.report(Level.ERROR, "jdlpack's safety net failed to release a forgotten object", t);
                } catch (Throwable unreportable) {
                    // Not even the report could run (its classes cannot load): the loop goes on with the next entry.
                }
            }
        }
    }

    private record Site(Supplier<String> what, Throwable where) {
    }

    /**
     * One doubly linked list of live entries, under its stripe's lock ({@link StripeLock}: every
     * import and every close takes it once). Padded after its state, as {@link StripeLock} asks:
     * two threads writing the state of neighbouring stripes on one cache line made every import a
     * cache miss once two threads imported at once. The bodies call nothing, so only the lock's
     * own calls can run out of stack; each gives the lock back as {@link StripeLock} says.
     */
    @SuppressWarnings("unused") // the padding fields exist only to take space
    private static final class Stripe extends StripeLock {
        private Entry head;
        private int size;
        long q0, q1, q2, q3, q4, q5, q6, q7;

        void add(Entry entry) {
            lock();
            try {
                entry.next = head;
                if (head != null) {
                    head.prev = entry;
                }
                head = entry;
                size++;
                unlock();
            } catch (Throwable t) {
                locked = 0; // no call: cannot overflow the stack (StripeLock)
                throw t;
            }
        }

        int size() {
            lock();
            try {
                int n = size;
                unlock();
                return n;
            } catch (Throwable t) {
                locked = 0; // as in add
                throw t;
            }
        }

        void remove(Entry entry) {
            lock();
            try {
                if (entry.prev != null || head == entry) { // linked
                    size--;
                    if (entry.prev != null) {
                        entry.prev.next = entry.next;
                    } else {
                        head = entry.next;
                    }
                    if (entry.next != null) {
                        entry.next.prev = entry.prev;
                    }
                    entry.prev = null;
                    entry.next = null;
                }
                unlock();
            } catch (Throwable t) {
                locked = 0; // as in add
                throw t;
            }
        }
    }
}
