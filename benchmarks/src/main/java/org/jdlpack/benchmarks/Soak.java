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
import org.jdlpack.testsupport.CPeer;

/**
 * The soak run: millions of export / import / release cycles across threads, with the process's
 * resident memory (VmRSS), Java heap in use and jdlpack's own counters sampled every second. Not
 * part of CI.
 *
 * <p>{@code java --enable-native-access=ALL-UNNAMED -cp benchmarks/target/benchmarks.jar
 * org.jdlpack.benchmarks.Soak [cycles] [threads] [freshThreads]} (defaults: 10,000,000, 4, true).
 * Each cycle is one of: an export that C consumes and deletes on the same thread; an export
 * deleted from a fresh native thread (1%, unless freshThreads is false); an export imported back
 * and closed.
 */
public final class Soak {

    private Soak() {
    }

    /**
     * Runs the soak.
     *
     * @param args cycles, threads, whether 1% of deletes run on fresh native threads
     * @throws Exception if a worker fails
     */
    public static void main(String[] args) throws Exception {
        long cycles = args.length > 0 ? Long.parseLong(args[0]) : 10_000_000L;
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 4;
        boolean freshThreads = args.length <= 2 || Boolean.parseBoolean(args[2]);
        CPeer peer = CPeer.get();
        Arena arena = Arena.ofShared();
        MemorySegment data = arena.allocate(JAVA_FLOAT, 1024);
        ExportOwner owner = ExportOwner.of(arena, arena::close);
        TensorSpec spec = TensorSpec.of(data, DLDataType.FLOAT32, 32, 32);
        AtomicLong done = new AtomicLong();
        List<Thread> workers = new ArrayList<>();
        long perThread = cycles / threads;
        for (int t = 0; t < threads; t++) {
            workers.add(Thread.ofPlatform().name("soak-" + t).start(() -> {
                for (long i = 0; i < perThread; i++) {
                    int kind = (int) (i % 100);
                    if (kind == 0 && freshThreads) {
                        peer.deleteOnNewThread(owner.export(spec).consume(), false);
                    } else if (kind % 2 == 0) {
                        try (ImportedTensor back = owner.export(spec, ExportOptions.LEGACY).importTensor()) {
                            back.hostSegment();
                        }
                    } else {
                        peer.delete(owner.export(spec).consume(), false);
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
        owner.close();
        double seconds = (System.nanoTime() - start) / 1e9;
        System.out.printf("%d cycles on %d threads in %.1f s (%.0f cycles/s); live exports %d, header bytes %d, owned %d, leaks %d, "
                        + "deleter failures %d%n", done.get(), threads, seconds, done.get() / seconds, DLPackStats.liveExports(),
                DLPackStats.exportHeaderBytes(), DLPackStats.ownedManagedTensors(), DLPackStats.leaksReported(),
                DLPackStats.deleterFailures());
        if (samples.size() >= 4) {
            long[] early = samples.get(samples.size() / 4);
            long[] late = samples.get(samples.size() - 1);
            System.out.printf("VmRSS from %d s to %d s: %d MiB -> %d MiB%n", early[0], late[0], early[2], late[2]);
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
