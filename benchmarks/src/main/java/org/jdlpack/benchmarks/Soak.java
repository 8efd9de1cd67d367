package org.jdlpack.benchmarks;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLPackStats;
import org.jdlpack.abi.ExportOptions;
import org.jdlpack.abi.ExportOwner;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.TensorSpec;
import org.jdlpack.cpu.HostTensorView;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.python.DLPackSource;
import org.jdlpack.python.PythonObject;
import org.jdlpack.python.PythonRuntime;
import org.jdlpack.testsupport.CPeer;

/**
 * The soak run: millions of export / import / release cycles across threads, with the process's
 * resident memory (VmRSS), Java heap in use and jdlpack's own counters sampled every second. Not
 * part of CI.
 *
 * <p>{@code java --enable-native-access=ALL-UNNAMED -cp benchmarks/target/benchmarks.jar
 * org.jdlpack.benchmarks.Soak [cycles] [threads] [freshThreads] [--virtual] [--python]} (defaults:
 * 10,000,000, 4, true). Each cycle is one of: an export that C consumes and deletes on the same
 * thread; an export deleted from a fresh native thread (1%, unless freshThreads is false); an
 * export imported back and closed. {@code --virtual} runs the workers on virtual threads (as a
 * server's handlers run); {@code --python} makes 6% of the cycles cross the Python bridge: a Java
 * tensor into NumPy ({@code np.from_dlpack}, its deleter called when NumPy drops the array), a
 * NumPy array into Java (imported, read, closed, NumPy's deleter called from this thread), and a
 * Python expression evaluated.
 */
public final class Soak {

    private Soak() {
    }

    /**
     * Runs the soak.
     *
     * @param args cycles, threads, whether 1% of deletes run on fresh native threads; the flags
     *             {@code --virtual} and {@code --python}
     * @throws Exception if a worker fails
     */
    public static void main(String[] args) throws Exception {
        List<String> flags = new ArrayList<>();
        List<String> positional = new ArrayList<>();
        for (String arg : args) {
            (arg.startsWith("--") ? flags : positional).add(arg);
        }
        long cycles = positional.size() > 0 ? Long.parseLong(positional.get(0)) : 10_000_000L;
        int threads = positional.size() > 1 ? Integer.parseInt(positional.get(1)) : 4;
        boolean freshThreads = positional.size() <= 2 || Boolean.parseBoolean(positional.get(2));
        boolean virtual = flags.contains("--virtual");
        PythonCycles python = flags.contains("--python") ? new PythonCycles() : null;
        CPeer peer = CPeer.get();
        Arena arena = Arena.ofShared();
        MemorySegment data = arena.allocate(JAVA_FLOAT, 1024);
        ExportOwner owner = ExportOwner.of(arena, arena::close);
        TensorSpec spec = TensorSpec.of(data, DLDataType.FLOAT32, 32, 32);
        AtomicLong done = new AtomicLong();
        AtomicLong failures = new AtomicLong();
        List<Thread> workers = new ArrayList<>();
        long perThread = cycles / threads;
        Thread.Builder builder = virtual ? Thread.ofVirtual().name("soak-", 0) : Thread.ofPlatform().name("soak-", 0);
        for (int t = 0; t < threads; t++) {
            workers.add(builder.start(() -> {
                for (long i = 0; i < perThread; i++) {
                    int kind = (int) (i % 100);
                    try {
                        if (python != null && kind % 16 == 3) {
                            python.cycle(i);
                        } else if (kind == 0 && freshThreads) {
                            peer.deleteOnNewThread(owner.export(spec).consume(), false);
                        } else if (kind % 2 == 0) {
                            try (ImportedTensor back = owner.export(spec, ExportOptions.LEGACY).importTensor()) {
                                back.hostSegment();
                            }
                        } else {
                            peer.delete(owner.export(spec).consume(), false);
                        }
                    } catch (RuntimeException | Error e) {
                        if (failures.getAndIncrement() == 0) {
                            e.printStackTrace();
                        }
                    }
                    done.incrementAndGet();
                }
            }));
        }
        System.out.println("| seconds | cycles | cycles/s | VmRSS MiB | heap used MiB | live exports | owned tensors |");
        System.out.println("|---|---|---|---|---|---|---|");
        long start = System.nanoTime();
        long last = 0;
        List<long[]> samples = new ArrayList<>();
        while (workers.stream().anyMatch(Thread::isAlive)) {
            Thread.sleep(1000); // sampling interval
            long now = done.get();
            long rss = rssKib() / 1024;
            Runtime runtime = Runtime.getRuntime();
            long heap = (runtime.totalMemory() - runtime.freeMemory()) >> 20;
            long seconds = (System.nanoTime() - start) / 1_000_000_000L;
            samples.add(new long[] {seconds, now, rss, heap});
            System.out.printf("| %d | %d | %d | %d | %d | %d | %d |%n", seconds, now, now - last, rss, heap, DLPackStats.liveExports(),
                    DLPackStats.ownedManagedTensors());
            last = now;
        }
        for (Thread worker : workers) {
            worker.join();
        }
        if (python != null) {
            python.close();
        }
        owner.close();
        double seconds = (System.nanoTime() - start) / 1e9;
        System.out.printf("%d cycles on %d %s threads%s in %.1f s (%.0f cycles/s); failures %d; live exports %d, header bytes %d, "
                        + "owned %d, leaks %d, deleter failures %d%s%n", done.get(), threads, virtual ? "virtual" : "platform",
                python != null ? " with the Python bridge" : "", seconds, done.get() / seconds, failures.get(), DLPackStats.liveExports(),
                DLPackStats.exportHeaderBytes(), DLPackStats.ownedManagedTensors(), DLPackStats.leaksReported(),
                DLPackStats.deleterFailures(), python != null ? "; Python cycles " + python.count() : "");
        if (samples.size() >= 4) {
            long[] early = samples.get(samples.size() / 4);
            long[] late = samples.get(samples.size() - 1);
            System.out.printf("VmRSS from %d s to %d s: %d MiB -> %d MiB%n", early[0], late[0], early[2], late[2]);
        }
    }

    /** The Python bridge's share of the soak: NumPy both ways through the embedded interpreter. */
    private static final class PythonCycles implements AutoCloseable {

        private final PythonRuntime python = PythonRuntime.get();
        private final OwnedHostTensor tensor = OwnedHostTensor.copyOf(new float[] {1, 2, 3, 4, 5, 6, 7, 8}, 2, 4);
        private final PythonObject fromDlpack;
        private final PythonObject arange;
        private final AtomicLong count = new AtomicLong();

        PythonCycles() {
            python.exec("import numpy as np\nimport gc");
            fromDlpack = python.eval("np.from_dlpack");
            arange = python.eval("lambda: np.arange(64, dtype=np.float32)");
        }

        void cycle(long i) {
            switch ((int) (i / 100 % 3)) {
                case 0 -> {
                    // Java to NumPy: the export's deleter runs when NumPy drops the array.
                    try (PythonObject x = python.toPython(DLPackSource.of(tensor)); PythonObject array = python.call(fromDlpack, x)) {
                        check(array.str().startsWith("[[1."), array);
                    }
                }
                case 1 -> {
                    // NumPy to Java: NumPy's deleter is called from this thread at close.
                    try (PythonObject array = python.call(arange); ImportedTensor imported = python.importTensor(array)) {
                        check(HostTensorView.of(imported).getFloat(63) == 63f, array);
                    }
                }
                default -> check(python.evalString(i % 1000 + " + 1").equals(Long.toString(i % 1000 + 1)), null);
            }
            count.incrementAndGet();
        }

        private static void check(boolean ok, PythonObject value) {
            if (!ok) {
                throw new IllegalStateException("wrong value from Python: " + value);
            }
        }

        long count() {
            return count.get();
        }

        @Override
        public void close() {
            fromDlpack.close();
            arange.close();
            python.exec("gc.collect()");
            tensor.close();
        }
    }

    private static long rssKib() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", ""));
                }
            }
        } catch (IOException | NumberFormatException e) {
            return -1;
        }
        return -1;
    }
}
