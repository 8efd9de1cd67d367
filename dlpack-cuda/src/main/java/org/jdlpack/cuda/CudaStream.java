package org.jdlpack.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A CUDA stream: one the application created here, or one of the two default streams.
 *
 * <p>Thread safety: CUDA streams may be used from any thread; so may this class.
 */
public final class CudaStream implements AutoCloseable {

    private static final CudaStream LEGACY = new CudaStream(Cudart.STREAM_LEGACY, -1, false);
    private static final CudaStream PER_THREAD = new CudaStream(Cudart.STREAM_PER_THREAD, -1, false);

    private final long handle;
    private final int device;
    private final boolean owned;

    private CudaStream(long handle, int device, boolean owned) {
        this.handle = handle;
        this.device = device;
        this.owned = owned;
    }

    /**
     * The legacy default stream ({@code cudaStreamLegacy}), which synchronises with every
     * blocking stream of its device.
     *
     * @return the stream
     */
    public static CudaStream legacyDefault() {
        return LEGACY;
    }

    /**
     * The per-thread default stream ({@code cudaStreamPerThread}).
     *
     * @return the stream
     */
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
        return new CudaStream(handle, -1, false);
    }

    /**
     * Creates a stream on a device.
     *
     * @param device the CUDA device ordinal
     * @return the stream; close destroys it
     */
    public static CudaStream create(int device) {
        Cudart.requireLibrary();
        CudaRuntime.setDevice(device);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            Cudart.check((int) Cudart.STREAM_CREATE.invokeExact(out), "cudaStreamCreate");
            return new CudaStream(out.get(ADDRESS, 0).address(), device, true);
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /**
     * The {@code cudaStream_t}.
     *
     * @return the handle (1 and 2 for the legacy and per-thread default streams)
     */
    public long handle() {
        return handle;
    }

    MemorySegment segment() {
        return MemorySegment.ofAddress(handle);
    }

    /**
     * Makes this stream wait for the work queued on {@code producer} so far, without blocking the
     * host or the rest of the device: an event recorded on {@code producer} and
     * {@code cudaStreamWaitEvent} on this stream.
     *
     * @param producer the stream whose work must finish first
     */
    public void waitFor(CudaStream producer) {
        if (producer.handle == handle) {
            return; // same stream: already ordered
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            Cudart.check((int) Cudart.EVENT_CREATE_WITH_FLAGS.invokeExact(out, Cudart.EVENT_DISABLE_TIMING), "cudaEventCreateWithFlags");
            MemorySegment event = out.get(ADDRESS, 0);
            try {
                Cudart.check((int) Cudart.EVENT_RECORD.invokeExact(event, producer.segment()), "cudaEventRecord");
                Cudart.check((int) Cudart.STREAM_WAIT_EVENT.invokeExact(segment(), event, 0), "cudaStreamWaitEvent");
            } finally {
                // Destroying an event with a pending wait is allowed; the wait still completes.
                int ignored = (int) Cudart.EVENT_DESTROY.invokeExact(event);
            }
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** Blocks until every command queued on this stream has finished. */
    public void synchronize() {
        try {
            Cudart.check((int) Cudart.STREAM_SYNCHRONIZE.invokeExact(segment()), "cudaStreamSynchronize");
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** Destroys a stream created by {@link #create}; does nothing for the others. */
    @Override
    public void close() {
        if (!owned) {
            return;
        }
        try {
            CudaRuntime.setDevice(device);
            Cudart.check((int) Cudart.STREAM_DESTROY.invokeExact(segment()), "cudaStreamDestroy");
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    @Override
    public String toString() {
        return handle == Cudart.STREAM_LEGACY ? "cudaStreamLegacy"
                : handle == Cudart.STREAM_PER_THREAD ? "cudaStreamPerThread" : "cudaStream 0x" + Long.toHexString(handle);
    }
}
