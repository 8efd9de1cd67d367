package org.jdlpack.engines.flink;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.IntSupplier;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.stream.Stream;

/** What the engine tests check around a job: threads, class-loader collection, sockets, logs. */
final class EngineChecks {

    /** Log lines that mean a class was needed from a loader that was gone, or used after Flink closed it. */
    static final List<String> LOADER_PROBLEMS = List.of("NoClassDefFoundError", "Trying to access closed classloader");

    private EngineChecks() {
    }

    /** {@return the names of the running threads jdlpack started (all are named jdlpack-...)} */
    static List<String> jdlpackThreads() {
        return Thread.getAllStackTraces().keySet().stream().map(Thread::getName).filter(n -> n.startsWith("jdlpack")).sorted().toList();
    }

    /**
     * Collects garbage until {@code live} reports 0 or the time is up; {@return whether it reached 0}.
     * A class loader needs a full collection that unloads classes: System.gc() does that with G1.
     */
    static boolean awaitCollected(IntSupplier live, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (live.getAsInt() != 0 && System.nanoTime() < deadline) {
            System.gc();
            drainSerializationCaches();
            Thread.sleep(100);
        }
        return live.getAsInt() == 0;
    }

    /**
     * Ends the one hold on a job's loader that outlives the job without being ours or Flink's: the
     * JDK's serialization caches. Flink serializes the job's function, so java.io.ObjectStreamClass
     * caches a descriptor and field reflectors for its class, each in a java.io.ClassCache that holds
     * the class softly. When a collection clears such an entry, the entry waits in the cache's
     * reference queue, and holds its class (so the job's loader) strongly, until the next lookup in
     * that same cache. Writing an object looks up the descriptor cache; only reading one (a class
     * descriptor read from a stream) looks up the reflector cache. A running engine does both at every
     * task deployment; a test that only waits does neither, and the loader stays until the next job.
     * So after each collection, one object goes through a stream and back. (Writing alone, the earlier
     * form of this wait, left the reflector cache's queue holding the loader: FlinkParentFirstTest
     * failed 4 runs of 6 under a CPU burner, heap dumps showing ObjectStreamClass$Caches.reflectors'
     * queue -> ClassCache$CacheRef.type -> the job's TensorFunction -> its ChildFirstClassLoader.)
     */
    private static void drainSerializationCaches() {
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
                out.writeObject(new Drain(1));
            }
            try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
                in.readObject();
            }
        } catch (IOException | ClassNotFoundException e) {
            throw new IllegalStateException("a serialization round trip of a record failed", e);
        }
    }

    private record Drain(int unused) implements Serializable {
    }

    /**
     * Writes a heap dump of live objects for a class loader that was not collected, to find what
     * holds it (a heap analyser's path to GC roots, soft references excluded); {@return where}. It
     * goes to {@code -Djdlpack.engines.heapDump=FILE}, else beside the build's other output.
     */
    static Path dumpHeap(String name) {
        Path file = Path.of(System.getProperty("jdlpack.engines.heapDump",
                Path.of(System.getenv().getOrDefault("JDLPACK_BUILD_DIR", "target"), name + ".hprof").toString())).toAbsolutePath();
        try {
            // The threads' stacks too: a frame running a method of the loader's classes keeps it alive
            // without any path in the heap.
            StringBuilder threads = new StringBuilder();
            Thread.getAllStackTraces().forEach((thread, stack) -> {
                threads.append('"').append(thread.getName()).append("\" ").append(thread.getState()).append('\n');
                for (StackTraceElement frame : stack) {
                    threads.append("    at ").append(frame).append('\n');
                }
            });
            Files.writeString(Path.of(file + ".threads.txt"), threads);
            Files.deleteIfExists(file);
            java.lang.management.ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class)
                    .dumpHeap(file.toString(), true);
        } catch (IOException | RuntimeException e) {
            return Path.of("(no heap dump: " + e + ")");
        }
        return file;
    }

    /** Waits until jdlpack's running threads are {@code expected} or the time is up; {@return the names then} */
    static List<String> awaitThreads(List<String> expected, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!jdlpackThreads().equals(expected) && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        return jdlpackThreads();
    }

    /**
     * {@return the local addresses of the TCP sockets this process listens on, as /proc shows them
     * (hex): 0100007F is 127.0.0.1, and ...FFFF00000100007F the same in an IPv6 socket}
     */
    static List<String> listeningAddresses() {
        Set<String> inodes = new HashSet<>();
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            for (Path fd : fds.toList()) {
                try {
                    String target = Files.readSymbolicLink(fd).toString();
                    if (target.startsWith("socket:[")) {
                        inodes.add(target.substring(8, target.length() - 1));
                    }
                } catch (IOException e) {
                    // closed while we listed: not a listening socket of interest
                }
            }
            List<String> listening = new ArrayList<>();
            for (String table : List.of("/proc/self/net/tcp", "/proc/self/net/tcp6")) {
                for (String line : Files.readAllLines(Path.of(table)).stream().skip(1).toList()) {
                    String[] f = line.trim().split("\\s+");
                    if (f[3].equals("0A") && inodes.contains(f[9])) { // 0A: LISTEN
                        listening.add(f[1]);
                    }
                }
            }
            return listening;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static boolean isLoopback(String hexAddress) {
        String host = hexAddress.substring(0, hexAddress.indexOf(':'));
        return host.equals("0100007F") || host.equals("0000000000000000FFFF00000100007F") || host.equals("00000000000000000000000001000000");
    }

    /** The lines of {@code text} that name a loader problem. */
    static List<String> loaderProblems(String text) {
        return text.lines().filter(l -> LOADER_PROBLEMS.stream().anyMatch(l::contains)).toList();
    }

    static String read(Path file) {
        try {
            return Files.exists(file) ? Files.readString(file) : "";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Everything that could report a loader problem besides log4j: standard error (teed), java.util.logging
     * (jdlpack's System.Logger goes there) and uncaught exceptions.
     */
    static final class Capture implements AutoCloseable {

        private final ByteArrayOutputStream err = new ByteArrayOutputStream();
        private final PrintStream previousErr = System.err;
        private final Thread.UncaughtExceptionHandler previousHandler = Thread.getDefaultUncaughtExceptionHandler();
        private final List<String> records = new CopyOnWriteArrayList<>();
        private final Handler handler = new Handler() {
            @Override
            public void publish(LogRecord record) {
                records.add(record.getLevel() + " " + record.getLoggerName() + ": " + record.getMessage()
                        + (record.getThrown() == null ? "" : " " + record.getThrown()));
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };

        Capture() {
            System.setErr(new PrintStream(new OutputStream() {
                @Override
                public void write(int b) {
                    synchronized (err) {
                        err.write(b);
                    }
                    previousErr.write(b);
                }

                @Override
                public void write(byte[] b, int off, int len) {
                    synchronized (err) {
                        err.write(b, off, len);
                    }
                    previousErr.write(b, off, len);
                }
            }, true, StandardCharsets.UTF_8));
            Logger.getLogger("").addHandler(handler);
            Thread.setDefaultUncaughtExceptionHandler((thread, e) -> {
                records.add("uncaught in " + thread.getName() + ": " + e);
                if (previousHandler != null) {
                    previousHandler.uncaughtException(thread, e);
                }
            });
        }

        /** {@return standard error and the records so far} */
        String text() {
            synchronized (err) {
                return err.toString(StandardCharsets.UTF_8) + "\n" + String.join("\n", records);
            }
        }

        List<String> records() {
            return List.copyOf(records);
        }

        @Override
        public void close() {
            System.setErr(previousErr);
            Logger.getLogger("").removeHandler(handler);
            Thread.setDefaultUncaughtExceptionHandler(previousHandler);
        }
    }
}
