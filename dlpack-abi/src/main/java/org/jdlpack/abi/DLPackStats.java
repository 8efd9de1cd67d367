package org.jdlpack.abi;

import java.util.List;

import org.jdlpack.abi.plumbing.Ledger;


/**
 * Process-wide counters of what jdlpack owns and what went wrong, for monitoring and tests. Each
 * method returns a snapshot; under concurrent activity the values may already have moved on.
 *
 * <p>In a quiet process with no tensors in use, {@link #liveExports()},
 * {@link #exportHeaderBytes()}, {@link #ownedManagedTensors()} and {@link #liveExportOwners()} are
 * 0; anything else is memory somebody still holds.
 *
 * @since 0.1
 */
public final class DLPackStats {

    private DLPackStats() {
    }

    /**
     * Every counter at once, for a log line or a health check.
     *
     * {@snippet :
     * System.out.println(DLPackStats.snapshot());
     * // DLPackStats[liveExports=0, exportHeaderBytes=0, ownedManagedTensors=0, bogusDeleterCalls=0, ...]
     * }
     *
     * @param liveExports             {@link #liveExports()}
     * @param exportHeaderBytes       {@link #exportHeaderBytes()}
     * @param ownedManagedTensors     {@link #ownedManagedTensors()}
     * @param liveExportOwners        {@link #liveExportOwners()}
     * @param bogusDeleterCalls       {@link #bogusDeleterCalls()}
     * @param deleterFailures         {@link #deleterFailures()}
     * @param releaseCallbackFailures {@link #releaseCallbackFailures()}
     * @param leaksReported           {@link #leaksReported()}
     */
    public record Snapshot(long liveExports, long exportHeaderBytes, long ownedManagedTensors, long liveExportOwners, long bogusDeleterCalls,
                           long deleterFailures, long releaseCallbackFailures, long leaksReported) {

        /** {@return whether nothing is held: no live export, no header byte, no owned managed tensor, no live export owner} */
        public boolean isQuiet() {
            return liveExports == 0 && exportHeaderBytes == 0 && ownedManagedTensors == 0 && liveExportOwners == 0;
        }

        @Override
        public String toString() {
            return "DLPackStats[liveExports=" + liveExports + ", exportHeaderBytes=" + exportHeaderBytes + ", ownedManagedTensors="
                    + ownedManagedTensors + ", liveExportOwners=" + liveExportOwners + ", bogusDeleterCalls=" + bogusDeleterCalls + ", deleterFailures=" + deleterFailures
                    + ", releaseCallbackFailures=" + releaseCallbackFailures + ", leaksReported=" + leaksReported + "]";
        }
    }

    /** {@return every counter, read one after the other (not one atomic snapshot: under load they may disagree)} */
    public static Snapshot snapshot() {
        return new Snapshot(liveExports(), exportHeaderBytes(), ownedManagedTensors(), liveExportOwners(), bogusDeleterCalls(), deleterFailures(),
                releaseCallbackFailures(), leaksReported());
    }

    /** {@return the number of exports whose deleter has not been called yet} */
    public static long liveExports() {
        return ExportRegistry.liveExports();
    }

    /** {@return the native bytes held by live export headers (struct, shape and strides): allocated and not yet freed} */
    public static long exportHeaderBytes() {
        return ExportRegistry.exportHeaderBytes();
    }

    /**
     * {@return the number of managed tensors Java currently owns: handles not yet consumed,
     * imported or closed, and imported tensors not yet released}
     */
    public static long ownedManagedTensors() {
        return OwnedPointers.count();
    }

    /**
     * {@return the number of export owners whose memory is not released yet: {@link ExportOwner}s
     * (every {@code OwnedHostTensor} has one) not closed, or closed while exports of them are live}
     */
    public static long liveExportOwners() {
        return Counters.liveExportOwners();
    }

    /**
     * {@return the number of deleter calls for pointers that were not live exports (a second call,
     * or a bogus pointer)} They were ignored.
     */
    public static long bogusDeleterCalls() {
        return Counters.BOGUS_DELETER_CALLS.sum();
    }

    /**
     * {@return the number of deleters that failed: an exception inside jdlpack's own deleter, or a
     * failed call of a foreign one}
     */
    public static long deleterFailures() {
        return Counters.DELETER_FAILURES.sum();
    }

    /** {@return the number of release actions of {@link ExportOwner}s that threw} */
    public static long releaseCallbackFailures() {
        return Counters.RELEASE_CALLBACK_FAILURES.sum();
    }

    /**
     * {@return the number of handles, imported tensors and export owners that became unreachable
     * without being closed, and were released by the safety net}
     */
    public static long leaksReported() {
        return Ledger.leaks();
    }

    /**
     * {@return whether leak tracking records creation sites: {@code true} when the system property
     * {@code org.jdlpack.leakTracking=true} was set at start-up}
     */
    public static boolean leakTrackingEnabled() {
        return Ledger.trackingEnabled();
    }

    /**
     * {@return one description for every export, handle and imported tensor still alive, each with
     * the stack trace of where it was created; empty unless leak tracking is on} For finding what
     * holds memory in a long-running process.
     */
    public static List<String> liveAllocationSites() {
        return Ledger.liveSites();
    }
}
