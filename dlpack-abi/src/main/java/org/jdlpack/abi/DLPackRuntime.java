package org.jdlpack.abi;

import java.util.ArrayList;
import java.util.List;

import org.jdlpack.abi.plumbing.Ledger;
import org.jdlpack.abi.plumbing.ProcessState;

/**
 * jdlpack's process-wide state, and the one call that releases it.
 *
 * <p>jdlpack starts what it needs for the whole process lazily, by the first call that needs it:
 * the deleter upcall stubs and the shutdown hook that disarms live exports (the first export), the
 * safety net's thread (the first import or export handle), dlpack-python's interpreter (the first
 * {@code PythonRuntime.get()}). Nothing starts in a static initializer of a class a program merely
 * mentions. Upcall stubs, the hook and the thread keep jdlpack's classes, and so the class loader
 * that loaded them, reachable: in an engine that loads each job's jar in a class loader of its own
 * (a Flink TaskManager, a Spark executor), that loader could never be unloaded.
 *
 * <p>{@link #release()} frees that state once nothing of it is live, and refuses, with counts,
 * while something is: a live export (its consumer may still call the deleter, whose stub must
 * then exist), an owned managed tensor (an {@link ImportedTensor} or {@link ExportedTensor} not
 * closed), an open object another module registered (a {@code PythonObject}). A later call starts
 * everything again, so a job restarted in the same class loader works as before.
 *
 * {@snippet :
 * // Flink: release when the job's class loader is released (RichFunction.open, once per task)
 * getRuntimeContext().registerUserCodeClassLoaderReleaseHookIfAbsent("jdlpack", DLPackRuntime::release);
 * }
 *
 * <p>What cannot be released is kept alive on purpose: dlpack-python's interpreter lives for the
 * process (CPython cannot be restarted), and its upcall stubs with it, so once Python was used in a
 * class loader, {@link #release()} refuses; run dlpack-python from the engine's own class path
 * (docs/engines.md). A consumer that calls a deleter a second time after a release jumps into
 * freed memory: that second call is the consumer's bug, which jdlpack detects only while it lives.
 *
 * <p>Thread safety: {@link #release()} must not run while any jdlpack call runs on another thread
 * (a release hook runs after the job's tasks have ended); it is synchronized against itself.
 */
public final class DLPackRuntime {

    private DLPackRuntime() {
    }

    /**
     * {@return what keeps the process-wide state from being released, in words; empty when
     * {@link #release()} would succeed}
     */
    public static String liveObjects() {
        List<String> live = new ArrayList<>();
        long exports = Counters.liveExports();
        if (exports != 0) {
            live.add(exports + " live exports (their consumers have not called the deleter)");
        }
        long owned = Counters.ownedManagedTensors();
        if (owned != 0) {
            live.add(owned + " owned managed tensors (ImportedTensor or ExportedTensor objects not closed)");
        }
        long others = Ledger.openEntries() - owned;
        if (others > 0) {
            live.add(others + " other open objects watched by the safety net (such as PythonObject)");
        }
        for (ProcessState.Part part : ProcessState.parts()) {
            String more = part.live();
            if (!more.isEmpty()) {
                live.add(more);
            }
        }
        return String.join("; ", live);
    }

    /**
     * Releases jdlpack's process-wide state: frees the deleter upcall stubs and the quarantined
     * export headers, removes the shutdown hook, stops the safety net's thread, and releases what
     * other modules registered. Does nothing that was not started.
     *
     * @throws IllegalStateException naming what is live, if anything is; nothing is released then
     */
    public static synchronized void release() {
        String live = liveObjects();
        if (!live.isEmpty()) {
            throw new IllegalStateException("jdlpack's process-wide state cannot be released while something of it is live: " + live
                    + ". Close them (and let consumers call their deleters) first");
        }
        for (ProcessState.Part part : ProcessState.parts()) {
            part.release();
        }
        ExportDeleterUpcalls.release();
        HeaderQuarantine.flush();
        ExportRegistry.removeShutdownHook();
        Ledger.stop();
    }
}
