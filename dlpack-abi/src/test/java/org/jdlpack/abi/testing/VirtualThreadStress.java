package org.jdlpack.abi.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLPackStats;
import org.jdlpack.abi.ExportOwner;
import org.jdlpack.abi.ImportLifetime;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.TensorSpec;
import org.jdlpack.testsupport.ChildJvm;

/**
 * Many virtual threads on several carriers handing tensors to a library and back at once, for a
 * while, then one line saying what ran and what is left: the shape of the adapters'
 * virtual-thread tests. The work runs in a child JVM ({@link #child()} gives it the carriers), so
 * that a crash in native code fails the test that started it, not the build; the child calls
 * {@link #run}, and the test checks the child's output with {@link #assertPassed}.
 *
 * <p>Each operation is one of: Java's memory into the library, Java's owner closed before or
 * after the library's tensor; the library's tensor into Java, closed before or after the import;
 * both, released on another virtual thread than the one that made them. Java's memory has an
 * owner whose release the run counts, so that the summary shows every release ran exactly once
 * (the owners made equal the releases; a deleter called twice shows as a bogus deleter call);
 * the library's exports are checked by {@link DLPackStats} being quiet at the end.
 *
 * <p>The system property {@code jdlpack.test.virtualThreadSeconds} sets how long the child runs
 * (default 5 s), as for dlpack-python's {@code VirtualThreadsTest}.
 */
public final class VirtualThreadStress {

    /** Virtual threads in a run. */
    public static final int THREADS = 64;

    /** Carrier threads of the child's scheduler: more than CI's 2 cores, so that a thread resumes on another carrier. */
    public static final int CARRIERS = 4;

    private static final Pattern SUMMARY = Pattern.compile("RESULT virtual threads: threads=(\\d+) seconds=(\\d+) carriers=(\\d+) "
            + "operations=(\\d+) failures=(\\d+) owners=(\\d+) released=(\\d+) quiet=(true|false) bogusDeleterCalls=(\\d+) "
            + "deleterFailures=(\\d+) releaseCallbackFailures=(\\d+) leaksReported=(\\d+)");

    private final Set<String> carriers = ConcurrentHashMap.newKeySet();
    private final AtomicLong operations = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private final AtomicLong ownersMade = new AtomicLong();
    private final AtomicLong ownersReleased = new AtomicLong();
    private final AtomicReference<Throwable> firstFailure = new AtomicReference<>();

    private VirtualThreadStress() {
    }

    /**
     * What an adapter's test gives the run: its library's tensors and the adapter's two doors.
     * One is opened per operation and closed after it (a DJL manager, say).
     *
     * @param <T> the library's tensor type
     */
    public interface Library<T> extends AutoCloseable {

        /**
         * Hands Java's memory to the library through the adapter.
         *
         * @param owner the memory's owner: export from it
         * @param spec  float32 values n, n + 1, n + 2, n + 3, 64-byte aligned
         * @return the library's tensor over that memory
         */
        T fromJava(ExportOwner owner, TensorSpec spec);

        /**
         * Makes a tensor in the library.
         *
         * @param n the first value
         * @return float32 values n, n + 1, n + 2, n + 3, made by the library
         */
        T ramp(int n);

        /**
         * Reads an element through the library.
         *
         * @param tensor the library's tensor
         * @param index  which element
         * @return its value as the library reads it
         */
        float get(T tensor, int index);

        /**
         * Hands the library's tensor to Java through the adapter.
         *
         * @param tensor   the library's tensor
         * @param lifetime the import's lifetime
         * @return the import
         */
        ImportedTensor toJava(T tensor, ImportLifetime lifetime);

        /**
         * Closes the library's tensor: its {@code close()} by default (the tensor types of
         * JavaCPP, DJL and TensorFlow Java are all {@link AutoCloseable}).
         *
         * @param tensor the library's tensor
         * @throws Exception what its close threw
         */
        default void close(T tensor) throws Exception {
            ((AutoCloseable) tensor).close();
        }

        /** Ends the operation: nothing by default. */
        @Override
        default void close() {
        }
    }

    /** {@return how long a run lasts, in seconds} */
    public static long seconds() {
        return Long.getLong("jdlpack.test.virtualThreadSeconds", 5);
    }

    /** {@return a child JVM with {@link #CARRIERS} carriers and this run's length; add the library's own options} */
    public static ChildJvm child() {
        return ChildJvm.create().options("-Djdk.virtualThreadScheduler.parallelism=" + CARRIERS,
                "-Djdlpack.test.virtualThreadSeconds=" + seconds()).timeoutSeconds(seconds() + 180);
    }

    /**
     * In the child: runs operations on {@link #THREADS} virtual threads until {@link #seconds()}
     * have passed, each yielding between operations so that it may resume on another carrier,
     * then prints the first failure's stack trace, if any, and the summary line.
     *
     * @param library opens the library for one operation
     * @param <T>     the library's tensor type
     * @throws InterruptedException if interrupted while waiting for the threads
     */
    public static <T> void run(Supplier<? extends Library<T>> library) throws InterruptedException {
        VirtualThreadStress run = new VirtualThreadStress();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds());
        Thread[] workers = new Thread[THREADS];
        for (int i = 0; i < THREADS; i++) {
            workers[i] = Thread.ofVirtual().name("stress-" + i).start(() -> run.work(library, deadline));
        }
        for (Thread worker : workers) {
            worker.join();
        }
        Throwable first = run.firstFailure.get();
        if (first != null) {
            first.printStackTrace(System.out);
        }
        DLPackStats.Snapshot stats = DLPackStats.snapshot();
        System.out.println("RESULT virtual threads: threads=" + THREADS + " seconds=" + seconds() + " carriers=" + run.carriers.size()
                + " operations=" + run.operations.get() + " failures=" + run.failures.get() + " owners=" + run.ownersMade.get()
                + " released=" + run.ownersReleased.get() + " quiet=" + stats.isQuiet() + " bogusDeleterCalls=" + stats.bogusDeleterCalls()
                + " deleterFailures=" + stats.deleterFailures() + " releaseCallbackFailures=" + stats.releaseCallbackFailures()
                + " leaksReported=" + stats.leaksReported() + " " + stats + " carrierNames=" + run.carriers);
    }

    private <T> void work(Supplier<? extends Library<T>> library, long deadline) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        while (System.nanoTime() < deadline) {
            noteCarrier();
            int n = random.nextInt(1000);
            try (Library<T> opened = library.get()) {
                switch (n % 5) {
                    case 0, 1 -> javaToLibrary(opened, n, n % 5 == 0);
                    case 2, 3 -> libraryToJava(opened, n, n % 5 == 2);
                    default -> bothReleasedOnAnotherThread(opened, n);
                }
                operations.incrementAndGet();
            } catch (Throwable t) {
                failures.incrementAndGet();
                firstFailure.compareAndSet(null, t);
            }
            noteCarrier();
            Thread.yield();
        }
    }

    /** Java's memory read by the library; Java's owner closed before or after the library's tensor. */
    private <T> void javaToLibrary(Library<T> library, int n, boolean javaFirst) throws Exception {
        JavaFloats java = floats(n);
        T tensor = library.fromJava(java.owner(), java.spec());
        if (javaFirst) {
            java.owner().close(); // the library's tensor holds the memory now
        }
        expect("the library's read of Java's memory", library.get(tensor, 3), n + 3);
        library.close(tensor); // the library calls the deleter: the release runs here when Java's owner is closed
        if (!javaFirst) {
            java.owner().close();
        }
    }

    /** The library's memory read by Java; the library's tensor closed before or after the import. */
    private static <T> void libraryToJava(Library<T> library, int n, boolean libraryFirst) throws Exception {
        T tensor = library.ramp(n);
        ImportedTensor view = library.toJava(tensor, ImportLifetime.CONFINED);
        if (libraryFirst) {
            library.close(tensor); // the export holds the library's memory
        }
        expect("Java's read of the library's memory", view.hostSegment().getAtIndex(ValueLayout.JAVA_FLOAT, 3), n + 3);
        view.close();
        if (!libraryFirst) {
            library.close(tensor);
        }
    }

    /** Both directions, each released on a virtual thread other than the one that made it. */
    private <T> void bothReleasedOnAnotherThread(Library<T> library, int n) throws Exception {
        JavaFloats java = floats(n);
        T fromJava = library.fromJava(java.owner(), java.spec());
        java.owner().close();
        T made = library.ramp(n);
        ImportedTensor view = library.toJava(made, ImportLifetime.SHARED);
        library.close(made);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread.ofVirtual().start(() -> {
            try {
                expect("Java's read on another thread", view.hostSegment().getAtIndex(ValueLayout.JAVA_FLOAT, 0), n);
                view.close(); // the export's release runs here
                library.close(fromJava); // the library calls Java's deleter here
            } catch (Throwable t) {
                failure.set(t);
            }
        }).join();
        if (failure.get() != null) {
            throw new AssertionError("on the other virtual thread", failure.get());
        }
    }

    private void noteCarrier() {
        String name = Thread.currentThread().toString(); // VirtualThread[#22,stress-0]/runnable@ForkJoinPool-1-worker-1
        int at = name.lastIndexOf('@');
        if (at >= 0) {
            carriers.add(name.substring(at + 1));
        }
    }

    /** Java's memory for one operation: its owner, whose release this run counts, and the tensor. */
    private record JavaFloats(ExportOwner owner, TensorSpec spec) {
    }

    /** {@return new Java memory holding float32 n, n + 1, n + 2, n + 3, with an owner whose release this run counts} */
    private JavaFloats floats(int n) {
        Arena arena = Arena.ofShared(); // shared: the release may run on any thread
        MemorySegment data = arena.allocate(4L * 4, 64); // 64-byte aligned, as TensorFlow needs
        for (int i = 0; i < 4; i++) {
            data.setAtIndex(ValueLayout.JAVA_FLOAT, i, n + i);
        }
        ownersMade.incrementAndGet();
        ExportOwner owner = ExportOwner.of(arena, () -> {
            arena.close();
            ownersReleased.incrementAndGet();
        });
        return new JavaFloats(owner, TensorSpec.of(data, DLDataType.FLOAT32, 4));
    }

    private static void expect(String what, float actual, float expected) {
        if (actual != expected) {
            throw new AssertionError(what + ": read " + actual + ", expected " + expected);
        }
    }

    /**
     * In the test: checks that the child exited normally and that its summary shows work on
     * several carriers, no failed operation, every counted owner released once, and nothing
     * left in {@link DLPackStats}.
     *
     * @param outcome the child's outcome
     */
    public static void assertPassed(ChildJvm.Outcome outcome) {
        String out = outcome.output();
        assertThat(outcome.exitCode()).as("the child JVM's exit status (134: aborted)\n%s", out).isZero();
        Matcher summary = SUMMARY.matcher(out);
        assertThat(summary.find()).as("the child's summary line\n%s", out).isTrue();
        System.out.println(summary.group()); // what ran, in the test's output
        assertThat(Integer.parseInt(summary.group(1))).as("virtual threads").isEqualTo(THREADS);
        assertThat(Integer.parseInt(summary.group(3))).as("carriers the virtual threads ran on\n%s", out).isGreaterThanOrEqualTo(2);
        assertThat(Long.parseLong(summary.group(4))).as("operations").isPositive();
        assertThat(Long.parseLong(summary.group(5))).as("failed operations (the first one's stack trace)\n%s", out).isZero();
        assertThat(Long.parseLong(summary.group(6))).as("Java owners made").isPositive();
        assertThat(Long.parseLong(summary.group(7))).as("Java owners released, each once\n%s", out).isEqualTo(Long.parseLong(summary.group(6)));
        assertThat(summary.group(8)).as("DLPackStats quiet after the run\n%s", out).isEqualTo("true");
        assertThat(Long.parseLong(summary.group(9))).as("bogus deleter calls (a deleter called twice)").isZero();
        assertThat(Long.parseLong(summary.group(10))).as("deleter failures").isZero();
        assertThat(Long.parseLong(summary.group(11))).as("release callback failures").isZero();
        assertThat(Long.parseLong(summary.group(12))).as("leaks reported (something was forgotten, not released)").isZero();
    }
}
