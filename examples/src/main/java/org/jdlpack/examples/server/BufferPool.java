package org.jdlpack.examples.server;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.TensorLayout;
import org.jdlpack.cpu.OwnedHostTensor;

/**
 * Native blocks reused across requests, handed out as {@link OwnedHostTensor}s whose release puts
 * the block back. A request's tensors are exported (to NumPy, to ONNX Runtime's input hold), so
 * their memory must be freeable from any thread; a shared arena per tensor would make every
 * release a JVM-wide handshake, so the blocks live in one shared arena for the server's life.
 * Blocks come in power-of-two sizes from 4 KiB and are not zeroed on reuse. The pool keeps at most
 * {@code cachedBytes} of them; a request that needs more while those are in use gets a one-off
 * block in an automatic arena, which the garbage collector frees.
 */
final class BufferPool implements AutoCloseable {

    private static final int MIN_SHIFT = 12;
    private static final int CLASSES = 20; // 4 KiB .. 2 GiB

    private final Arena arena = Arena.ofShared();
    private final List<ConcurrentLinkedQueue<MemorySegment>> free = new ArrayList<>(CLASSES);
    private final AtomicLong pooledBytes = new AtomicLong();
    private final long cachedBytes;

    BufferPool(long cachedBytes) {
        this.cachedBytes = cachedBytes;
        for (int i = 0; i < CLASSES; i++) {
            free.add(new ConcurrentLinkedQueue<>());
        }
    }

    /** A compact tensor over a pooled block (not zeroed); its memory returns to the pool when it and its exports are done. */
    OwnedHostTensor tensor(DLDataType dtype, long... shape) {
        long bytes = TensorLayout.of(dtype, shape).extent().byteSize();
        int sizeClass = sizeClass(bytes);
        MemorySegment block = free.get(sizeClass).poll();
        if (block == null) {
            long size = 1L << (sizeClass + MIN_SHIFT);
            if (pooledBytes.addAndGet(size) <= cachedBytes) {
                block = arena.allocate(size, OwnedHostTensor.ALIGNMENT);
            } else {
                pooledBytes.addAndGet(-size);
                // Over the cache: a one-off block the collector frees once the tensor and its exports are gone.
                MemorySegment oneOff = Arena.ofAuto().allocate(size, OwnedHostTensor.ALIGNMENT);
                return OwnedHostTensor.wrap(oneOff.asSlice(0, bytes), dtype, shape, () -> { });
            }
        }
        MemorySegment pooled = block;
        ConcurrentLinkedQueue<MemorySegment> queue = free.get(sizeClass);
        return OwnedHostTensor.wrap(pooled.asSlice(0, bytes), dtype, shape, () -> queue.offer(pooled));
    }

    private static int sizeClass(long bytes) {
        int shift = Math.max(MIN_SHIFT, 64 - Long.numberOfLeadingZeros(Math.max(bytes, 1) - 1));
        if (shift - MIN_SHIFT >= CLASSES) {
            throw new IllegalArgumentException(bytes + " bytes is more than the pool hands out");
        }
        return shift - MIN_SHIFT;
    }

    /** The size of the heap chunks that carry bodies between the socket streams and native memory. */
    static final int CHUNK = 256 << 10;

    private final ConcurrentLinkedQueue<byte[]> chunks = new ConcurrentLinkedQueue<>();

    /**
     * {@return a heap chunk to stream a body through; give it back with {@link #giveBack(byte[])}}
     * The JDK's socket streams wrap the array they are given in a new buffer on every call, so a
     * large array means few calls, and a reused one means no allocation that grows with the body.
     */
    byte[] chunk() {
        byte[] chunk = chunks.poll();
        return chunk != null ? chunk : new byte[CHUNK];
    }

    void giveBack(byte[] chunk) {
        if (chunks.size() < 256) {
            chunks.offer(chunk);
        }
    }

    /** {@return the bytes of blocks the pool holds, in use or waiting} */
    long pooledBytes() {
        return pooledBytes.get();
    }

    /** Frees every block; only once no tensor of the pool is alive. */
    @Override
    public void close() {
        arena.close();
    }
}
