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
 * closed), an {@link ExportOwner} (or {@code OwnedHostTensor}) not released, an open object another module registered (a {@code PythonObject}). A later call starts
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
 * (docs/engines.md). The two deleter stubs are never freed either: a consumer that calls a deleter
 * after a release (a stale second call) finds a stub that does nothing; they cost a few hundred
 * bytes per class loader that exported, for the life of the process.
 *
 * <p>Thread safety: any thread. {@link #release()} is synchronized against itself and safe against
 * jdlpack calls on other threads (it then refuses, or the state starts again), but it is meant for
 * the moment nothing runs: a release hook, after the job's tasks have ended.
 *
 * @since 0.1
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
        long exports = ExportRegistry.liveExports();
        if (exports != 0) {
            live.add(exports + " live exports (their consumers have not called the deleter)");
        }
        long owned = OwnedPointers.count();
        if (owned != 0) {
            live.add(owned + " owned managed tensors (ImportedTensor or ExportedTensor objects not closed)");
        }
        long owners = Counters.liveExportOwners();
        if (owners != 0) {
            live.add(owners + " export owners not released (ExportOwner or OwnedHostTensor objects not closed, or closed while "
                    + "an export of them is live)");
        }
        long others = Ledger.openEntries() - owned - owners;
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
     * Releases jdlpack's process-wide state: switches the deleter upcall stubs off (they are never
     * freed: a consumer's late call then does nothing, and the stubs keep no jdlpack class
     * reachable), frees the headers the export registry keeps for reuse, removes the shutdown hook, stops the
     * safety net's thread, and releases what other modules registered. Does nothing that was not
     * started.
     *
     * <p>Safe against jdlpack calls on other threads: an export racing the release either makes it
     * refuse, or waits for it and starts the state again; an import or a new owner racing it
     * starts the safety net again. Call it when nothing should run (a release hook), so that it
     * succeeds.
     *
     * @throws IllegalStateException naming what is live, if anything is, before or during the
     *                               release; everything is then as it was
     */
    public static synchronized void release() {
        String live = liveObjects();
        if (!live.isEmpty()) {
            throw refused(live);
        }
        for (ProcessState.Part part : ProcessState.parts()) {
            part.release();
        }
        live = ExportDeleterUpcalls.switchOff(DLPackRuntime::liveObjects);
        if (!live.isEmpty()) {
            throw refused(live + " (made while the release ran)");
        }
        ExportRegistry.flush();
        Ledger.stop();
    }

    private static IllegalStateException refused(String live) {
        return new IllegalStateException("jdlpack's process-wide state cannot be released while something of it is live: " + live
                + ". Close them (and let consumers call their deleters) first");
    }
}
