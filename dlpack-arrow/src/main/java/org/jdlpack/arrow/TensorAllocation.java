package org.jdlpack.arrow;

import java.lang.System.Logger.Level;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.arrow.memory.ForeignAllocation;
import org.jdlpack.abi.ImportedTensor;

/**
 * An imported tensor's memory as Arrow sees it: Arrow calls {@link #release0()} when the last
 * {@code ArrowBuf} over it is released, and that closes the tensor, which calls the producer's
 * deleter. Arrow promises one call; the flag makes a second one harmless anyway.
 */
final class TensorAllocation extends ForeignAllocation {

    private static final System.Logger LOG = System.getLogger(TensorAllocation.class.getName());

    private final ImportedTensor tensor;
    private final AtomicBoolean released = new AtomicBoolean();

    TensorAllocation(ImportedTensor tensor, long address, long bytes) {
        super(bytes, address);
        this.tensor = tensor;
    }

    /**
     * Runs on whichever thread releases the last buffer: the tensor is {@code ImportLifetime.SHARED}
     * ({@link ArrowImport} moves every tensor it takes into that lifetime), so any thread may close it.
     */
    @Override
    protected void release0() {
        if (!released.compareAndSet(false, true)) {
            return;
        }
        try {
            tensor.close();
        } catch (RuntimeException e) {
            // Arrow is in the middle of its own accounting here; do not unwind through it.
            LOG.log(Level.ERROR, "could not release the DLPack tensor behind an Arrow buffer: " + tensor, e);
        }
    }

    /** Releases the tensor unless Arrow already did, for when Arrow refused the allocation. */
    void releaseUnlessReleased() {
        release0();
    }
}
