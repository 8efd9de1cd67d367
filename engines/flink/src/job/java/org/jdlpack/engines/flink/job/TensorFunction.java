package org.jdlpack.engines.flink.job;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.TaskInfo;
import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLPackRuntime;
import org.jdlpack.abi.DLPackStats;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.cpu.HostTensorView;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.engines.flink.LoaderProbe;
import org.jdlpack.testsupport.CPeer;
import org.jdlpack.testsupport.PeerTensor;

/**
 * For each record: exports a Java tensor to the C peer, which reads it and calls the deleter (on
 * this thread or on a pthread of its own), and imports a tensor the C peer produced, reads it
 * and closes it (the peer counts its deleter calls). One record fails on purpose the first time
 * it is processed, in the middle of that work, with an export still being deleted on a C thread.
 *
 * <p>What it saw goes to report files the test reads: one per attempt, written by {@link #close()}
 * (Flink calls it after a failure too), and one written by jdlpack's release hook, which Flink
 * runs when it releases the job's class loader. {@link LoaderProbe} is the test's own class,
 * loaded parent-first: it keeps only a weak reference to the class loader.
 */
public final class TensorFunction extends RichMapFunction<Long, Long> {

    private static final long serialVersionUID = 1L;

    private final String reportDir;
    private final String job;
    private final long failAt;
    private final boolean releaseHook;

    private transient CPeer peer;
    private transient TaskInfo task;
    private transient AtomicLong memoryReleased;
    private transient long exports;
    private transient long tensors;
    private transient List<Integer> produced;
    private transient List<Long> pendingDeletes;
    private transient OwnedHostTensor inFlight;
    private transient boolean failed;
    private transient int loaderId;

    public TensorFunction(String reportDir, String job, long failAt, boolean releaseHook) {
        this.reportDir = reportDir;
        this.job = job;
        this.failAt = failAt;
        this.releaseHook = releaseHook;
    }

    @Override
    public void open(OpenContext context) {
        if (releaseHook) {
            // The documented registration (docs/engines.md), wrapped only to report the outcome.
            getRuntimeContext().registerUserCodeClassLoaderReleaseHookIfAbsent("jdlpack", () -> release(reportDir, job));
        }
        task = getRuntimeContext().getTaskInfo();
        loaderId = LoaderProbe.register(job, getClass().getClassLoader());
        peer = CPeer.get();
        memoryReleased = new AtomicLong();
        produced = new ArrayList<>();
        pendingDeletes = new ArrayList<>();
    }

    @Override
    public Long map(Long value) {
        float base = value;
        // Export: Java memory to C. The release action runs when the last reference goes.
        Arena arena = Arena.ofShared();
        MemorySegment data = arena.allocate(ValueLayout.JAVA_FLOAT, 4);
        for (int i = 0; i < 4; i++) {
            data.setAtIndex(ValueLayout.JAVA_FLOAT, i, base + i);
        }
        OwnedHostTensor tensor = OwnedHostTensor.wrap(data, DLDataType.FLOAT32, new long[] {2, 2}, () -> {
            arena.close();
            memoryReleased.incrementAndGet();
        });
        inFlight = tensor;
        tensors++;
        MemorySegment managed = tensor.export().consume();
        exports++;
        double sum = peer.sumF32(managed, false);
        if (sum != 4 * base + 6) {
            throw new IllegalStateException("C read " + sum + " from the export of " + value);
        }
        if (value % 2 == 0) {
            peer.deleteOnNewThread(managed, false);
        } else {
            peer.delete(managed, false);
        }

        // Import: a C tensor into Java; closing it calls the peer's counting deleter.
        CPeer.Produced made = peer.make(PeerTensor.versioned());
        produced.add(made.id());
        try (ImportedTensor imported = ImportedTensor.of(ManagedTensorKind.VERSIONED, made.pointer())) {
            float last = HostTensorView.of(imported).getFloat(5);
            if (last != 5f) {
                throw new IllegalStateException("Java read " + last + " from the C tensor");
            }
            if (value == failAt && firstFailure()) {
                // Fail with work in flight: an export being deleted on a C thread, this import open,
                // the Java tensor not closed. close() and the try-with-resources must settle all three.
                pendingDeletes.add(peer.deleteAsync(tensor.export().consume(), false));
                exports++;
                failed = true;
                throw new IllegalStateException("induced failure in " + job + " at record " + value);
            }
        }
        tensor.close();
        inFlight = null;
        return value;
    }

    /** Exactly one failure per job, whatever class loader or subtask processes the record. */
    private boolean firstFailure() {
        try {
            Files.createFile(Path.of(reportDir, job + "-failed"));
            return true;
        } catch (FileAlreadyExistsException e) {
            return false;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        if (peer == null) {
            return;
        }
        if (inFlight != null) {
            inFlight.close();
        }
        for (long thread : pendingDeletes) {
            peer.join(thread);
        }
        long wrongDeleterCounts = produced.stream().filter(id -> peer.deleterCalls(id) != 1).count();
        ClassLoader loader = getClass().getClassLoader();
        List<String> lines = new ArrayList<>();
        lines.add("subtask=" + task.getIndexOfThisSubtask());
        lines.add("attempt=" + task.getAttemptNumber());
        lines.add("failed=" + failed);
        lines.add("loader=" + loaderId);
        lines.add("loaderClass=" + loader.getClass().getName());
        lines.add("jdlpackLoader=" + (DLPackRuntime.class.getClassLoader() == loader ? "job" : String.valueOf(DLPackRuntime.class.getClassLoader())));
        lines.add("peerLoader=" + (CPeer.class.getClassLoader() == loader ? "job" : String.valueOf(CPeer.class.getClassLoader())));
        lines.add("exports=" + exports);
        lines.add("tensors=" + tensors);
        lines.add("tensorsReleased=" + memoryReleased.get());
        lines.add("imports=" + produced.size());
        lines.add("importsNotDeletedExactlyOnce=" + wrongDeleterCounts);
        write(reportDir, job + "-s" + task.getIndexOfThisSubtask() + "-a" + task.getAttemptNumber() + ".report", lines);
    }

    /** jdlpack's release hook as docs/engines.md registers it, reporting what it found. */
    private static void release(String reportDir, String job) {
        DLPackStats.Snapshot stats = DLPackStats.snapshot();
        List<String> lines = new ArrayList<>();
        lines.add("stats=" + stats);
        lines.add("quiet=" + (stats.isQuiet() && stats.bogusDeleterCalls() == 0 && stats.deleterFailures() == 0
                && stats.releaseCallbackFailures() == 0 && stats.leaksReported() == 0));
        try {
            DLPackRuntime.release();
            lines.add("released=true");
        } catch (RuntimeException e) {
            lines.add("released=false " + e.getMessage());
            write(reportDir, job + "-release.report", lines);
            throw e;
        }
        write(reportDir, job + "-release.report", lines);
    }

    private static void write(String reportDir, String name, List<String> lines) {
        try {
            Path tmp = Path.of(reportDir, name + ".tmp");
            Files.write(tmp, lines);
            Files.move(tmp, Path.of(reportDir, name), java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
