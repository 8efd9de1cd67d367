package org.jdlpack.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import org.jdlpack.abi.plumbing.Downcalls;

/**
 * A CUDA stream: one the application created here, or one of the two default streams, or one
 * created elsewhere.
 *
 * <p>Lifetime: {@link #close()} destroys a stream made by {@link #create}; every later use of it
 * throws {@link IllegalStateException}, and a second close throws too. Closing the other streams
 * does nothing: they are not this object's to destroy, and their lifetime is their creator's.
 *
 * <p>Thread safety: CUDA streams may be used from any thread; so may this class. A close while
 * another thread is inside a call on the stream fails and leaves the stream open.
 *
 * @since 0.1
 */
public final class CudaStream implements AutoCloseable {

    private static final CudaStream LEGACY = new CudaStream(Cudart.STREAM_LEGACY, -1, null);
    private static final CudaStream PER_THREAD = new CudaStream(Cudart.STREAM_PER_THREAD, -1, null);

    private final long handle;
    private final int device;
    /** The lifetime of a stream created here; null for the others, which are never destroyed here. */
    private final Arena lifetime;
    /** The handle, bound to the lifetime when there is one. */
    private final MemorySegment segment;

    private CudaStream(long handle, int device, Arena lifetime) {
        this.handle = handle;
        this.device = device;
        this.lifetime = lifetime;
        this.segment = lifetime == null ? MemorySegment.ofAddress(handle) : Downcalls.bound(handle, lifetime.scope());
    }

    /**
     * {@return the legacy default stream ({@code cudaStreamLegacy}), which synchronises with every
     * blocking stream of its device}
     */
    public static CudaStream legacyDefault() {
        return LEGACY;
    }

    /** {@return the per-thread default stream ({@code cudaStreamPerThread})} */
    public static CudaStream perThreadDefault() {
        return PER_THREAD;
    }

    /**
     * A stream created elsewhere (by CuPy, PyTorch, a native library); not destroyed by close.
     *
     * @param handle the {@code cudaStream_t}
     * @return the stream
     */
    public static CudaStream of(long handle) {
        return new CudaStream(handle, -1, null);
    }

    /**
     * Creates a stream on a device; the calling thread's current device is left as it was.
     *
     * @param device the CUDA device ordinal
     * @return the stream; close destroys it
     */
    public static CudaStream create(int device) {
        long handle = CurrentDevice.CUDART.call(device, CudartStreams::streamCreate);
        return new CudaStream(handle, device, Arena.ofShared());
    }

    /** {@return the {@code cudaStream_t} handle (1 and 2 for the legacy and per-thread default streams)} */
    public long handle() {
        return handle;
    }

    /** The handle for a downcall; fails once a stream created here is closed. */
    MemorySegment segment() {
        return Downcalls.requireAlive(segment, "CudaStream");
    }

    /**
     * Makes this stream wait for the work queued on {@code producer} so far, without blocking the
     * host or the rest of the device: an event recorded on {@code producer} and
     * {@code cudaStreamWaitEvent} on this stream.
     *
     * @param producer the stream whose work must finish first
     * @throws IllegalStateException if either stream was created here and is closed
     */
    public void waitFor(CudaStream producer) {
        MemorySegment consumer = segment();
        MemorySegment source = producer.segment();
        if (producer.handle == handle) {
            return; // same stream: already ordered
        }
        MemorySegment event = CudartStreams.eventCreateWithFlags(Cudart.EVENT_DISABLE_TIMING);
        try {
            CudartStreams.eventRecord(event, source);
            CudartStreams.streamWaitEvent(consumer, event);
        } finally {
            // Destroying an event with a pending wait is allowed; the wait still completes.
            CudartStreams.eventDestroy(event);
        }
    }

    /**
     * Blocks until every command queued on this stream has finished.
     *
     * @throws IllegalStateException if this stream was created here and is closed
     */
    public void synchronize() {
        CudartStreams.streamSynchronize(segment());
    }

    /**
     * Destroys a stream made by {@link #create} (with its device current, which is then put back);
     * does nothing for the others.
     *
     * @throws IllegalStateException if a stream made here is already closed, or in use by a call on
     *                               another thread (it then stays open)
     */
    @Override
    public void close() {
        if (lifetime == null) {
            return;
        }
        Downcalls.close(lifetime, "CudaStream");
        CurrentDevice.CUDART.run(device, () -> CudartStreams.streamDestroy(MemorySegment.ofAddress(handle)));
    }

    @Override
    public String toString() {
        return handle == Cudart.STREAM_LEGACY ? "cudaStreamLegacy"
                : handle == Cudart.STREAM_PER_THREAD ? "cudaStreamPerThread" : "cudaStream 0x" + Long.toHexString(handle);
    }
}
