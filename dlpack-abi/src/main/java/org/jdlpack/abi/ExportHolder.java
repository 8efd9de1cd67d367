package org.jdlpack.abi;

/**
 * What the export registry and the deleter know of whoever holds an export's memory: that each
 * live export holds one reference on it, and how that reference is dropped. The registry keeps the
 * holder (so the holder stays reachable while an export is live) and hands it to the deleter that
 * retires the export; neither needs to know more. {@link ExportOwner} is the one holder, and
 * extends this class rather than implementing an interface so that its own methods stay what its
 * public API says and the deleter's call needs no interface dispatch.
 */
abstract class ExportHolder {

    ExportHolder() {
    }

    /** Drops the reference one export held; frees the memory if it was the last. Never throws. */
    abstract void dropReference();
}
