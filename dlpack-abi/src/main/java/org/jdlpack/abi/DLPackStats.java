package org.jdlpack.abi;

import java.util.List;

import org.jdlpack.abi.internal.Counters;
import org.jdlpack.abi.internal.LeakTracking;

/**
 * Process-wide counters of what jdlpack owns and what went wrong, for monitoring and tests. Each
 * method returns a snapshot; under concurrent activity the values may already have moved on.
 *
 * <p>In a quiet process with no tensors in use, {@link #liveExports()},
 * {@link #exportHeaderBytes()} and {@link #ownedManagedTensors()} are 0; anything else is memory
 * somebody still holds.
 */
public final class DLPackStats {

    private DLPackStats() {
    }

    /**
     * Exports whose deleter has not been called yet.
     *
     * @return the number of live exports
     */
    public static long liveExports() {
        return Counters.LIVE_EXPORTS.sum();
    }

    /**
     * Native bytes held by live export headers (struct, shape and strides).
     *
     * @return the bytes allocated and not yet freed
     */
    public static long exportHeaderBytes() {
        return Counters.EXPORT_HEADER_BYTES.sum();
    }

    /**
     * Managed tensors Java currently owns: handles not yet consumed, imported or closed, and
     * imported tensors not yet released.
     *
     * @return the count
     */
    public static long ownedManagedTensors() {
        return Counters.OWNED_MANAGED_TENSORS.sum();
    }

    /**
     * Deleter calls for pointers that were not live exports (a second call, or a bogus pointer).
     * They were ignored.
     *
     * @return the count
     */
    public static long bogusDeleterCalls() {
        return Counters.BOGUS_DELETER_CALLS.sum();
    }

    /**
     * Deleters that failed: an exception inside jdlpack's own deleter, or a failed call of a
     * foreign one.
     *
     * @return the count
     */
    public static long deleterFailures() {
        return Counters.DELETER_FAILURES.sum();
    }

    /**
     * Release actions of {@link ExportOwner}s that threw.
     *
     * @return the count
     */
    public static long releaseCallbackFailures() {
        return Counters.RELEASE_CALLBACK_FAILURES.sum();
    }

    /**
     * Handles and imported tensors that became unreachable without being closed, and were released
     * by the safety net.
     *
     * @return the count
     */
    public static long leaksReported() {
        return Counters.LEAKS.sum();
    }

    /**
     * Whether leak tracking records creation sites: the system property
     * {@code org.jdlpack.leakTracking=true} at start-up.
     *
     * @return {@code true} when tracking is on
     */
    public static boolean leakTrackingEnabled() {
        return LeakTracking.isEnabled();
    }

    /**
     * Every export, handle and imported tensor still alive, each with the stack trace of where it
     * was created; for finding what holds memory in a long-running process. Empty unless leak
     * tracking is on.
     *
     * @return one description per live object
     */
    public static List<String> liveAllocationSites() {
        return LeakTracking.liveSites();
    }
}
