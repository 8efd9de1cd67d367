package org.jdlpack.cpu;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.TensorLayout;

/**
 * Native host memory reused from tensor to tensor: {@link #take} hands out an
 * {@link OwnedHostTensor} over a pooled block, and the block comes back to the pool when that
 * tensor is closed and every export of it deleted (on whichever thread that is). For a server
 * that makes tensors per request: {@link OwnedHostTensor#allocate} gives each tensor a shared arena
 * of its own, and closing a shared arena is a JVM-wide handshake (microseconds, and every thread
 * stops for it); a take and its release here are a few atomic operations.
 *
 * {@snippet :
 * try (HostTensorPool pool = HostTensorPool.create(256L << 20)) {   // keeps up to 256 MiB of blocks
 *     // per request, on any thread:
 *     try (OwnedHostTensor body = pool.take(DLDataType.FLOAT32, rows, 16)) {
 *         TensorStreams.readFully(request, body.host(), chunk); // the bytes, not zeroed before
 *         nativeLibrary.consume(body.export().consume());         // the block stays taken until the deleter runs
 *     }
 * }                                                              // frees the blocks once every tensor is released
 * }
 *
 * <h2>Blocks</h2>
 * Blocks come in power-of-two sizes from 256 bytes, 256-byte aligned ({@link OwnedHostTensor#ALIGNMENT}),
 * from one shared arena that lives as long as the pool. They are <b>not zeroed</b>: a taken tensor
 * holds whatever its block's last user left; overwrite it, or fill it
 * ({@code tensor.host().segment().fill((byte) 0)}). The pool keeps at most {@code cachedBytes}
 * of blocks, taken or free; a take that would need more gets a block of its own in a shared arena
 * of its own, freed when its tensor is released (the handshake the pool otherwise avoids). A take
 * whose allocation fails (an {@link OutOfMemoryError}) leaves the pool as it was.
 *
 * <h2>After a release</h2>
 * A released block is someone else's next, so nothing of a tensor reaches it after the tensor's
 * release: every access through its {@link OwnedHostTensor#host() view} (and the views'
 * {@link HostTensorView#rows rows}, copies and {@link TensorStreams}) throws
 * {@link IllegalStateException} naming the tensor, as for any released tensor; a
 * {@link MemorySegment} from {@link HostTensorView#segment()} or {@link OwnedHostTensor#spec()} is
 * inaccessible from the release on.
 * The views check the tensor's reference count on each access (one volatile read; the block's own
 * segment stays mapped, in the pool's arena). Raw segments get a scope of their own: the first
 * {@code segment()} or {@code spec()} of a tensor gives it a shared arena whose close, at the release, costs that
 * release a JVM-wide handshake; take raw segments of long-lived tensors, and let per-request ones
 * go through the views, copies, streams and exports, which need none. (A shared arena per take
 * would cost every release that handshake, and a confined one could not be exported or released
 * on another thread; benchmarks/notes.md, "Views of released pooled tensors", has the figures.)
 * An access that races the release on another thread may still complete, as a read racing any
 * write does. An export, not a view, is what keeps a block for a consumer.
 *
 * <h2>Closing</h2>
 * {@link #close()} stops takes at once; the arena, and every block with it, is freed when the last
 * tensor taken from the pool is released, so a consumer still holding an export never reads freed
 * memory. A pool that is never closed keeps its blocks until the JVM exits. So a taken tensor owns
 * its block as an allocated one owns its arena (unlike {@link OwnedHostTensor#wrap}'s): its
 * references (exports, retains, dlpack-onnxruntime's inputs and outputs) are what keep the memory,
 * and ONNX Runtime reads and writes it in place ({@link OwnedHostTensor#ownsMemory()}).
 *
 * <p>Thread safety: every method may be called from any thread, concurrently; each size of block
 * has its own lock, held for a push or a pop.
 *
 * @since 0.1
 */
public final class HostTensorPool implements AutoCloseable {

    private static final int MIN_SHIFT = 8; // 256 bytes: the alignment, the smallest block worth its bookkeeping
    private static final int MAX_SHIFT = 40; // 1 TiB: past that, no block is pooled
    private static final VarHandle HOLDS;

    static {
        try {
            HOLDS = MethodHandles.lookup().findVarHandle(HostTensorPool.class, "holds", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Arena arena = Arena.ofShared();
    private final long cachedBytes;
    private final FreeBlocks[] free = new FreeBlocks[MAX_SHIFT - MIN_SHIFT + 1];
    /** The pool's own hold (until close) plus one per taken tensor not yet released; the arena is freed at 0. */
    @SuppressWarnings("unused") // accessed through HOLDS
    private volatile long holds = 1;
    private volatile boolean closed;
    /** Bytes of blocks allocated in the arena, taken or free. */
    private final AtomicLong pooledBytes = new AtomicLong();

    private HostTensorPool(long cachedBytes) {
        this.cachedBytes = cachedBytes;
        for (int i = 0; i < free.length; i++) {
            free[i] = new FreeBlocks();
        }
    }

    /**
     * A pool that keeps up to {@code cachedBytes} of blocks.
     *
     * @param cachedBytes the most bytes of blocks the pool keeps, taken or free; 0 pools nothing
     * @return the pool
     * @throws IllegalArgumentException if {@code cachedBytes} is negative
     */
    public static HostTensorPool create(long cachedBytes) {
        if (cachedBytes < 0) {
            throw new IllegalArgumentException("cachedBytes is " + cachedBytes + "; give 0 or more bytes");
        }
        return new HostTensorPool(cachedBytes);
    }

    /**
     * A compact row-major tensor over a pooled block, <b>not zeroed</b>. Close it (try-with-resources):
     * its block returns to the pool when it is closed and every export of it deleted.
     *
     * @param dtype the element type
     * @param shape the extents
     * @return the tensor, holding the Java side's reference
     * @throws IllegalArgumentException if a dimension is negative or the size overflows
     * @throws IllegalStateException    if the pool was closed
     */
    public OwnedHostTensor take(DLDataType dtype, long... shape) {
        long bytes = compactBytes(dtype, shape);
        hold();
        try {
            int shift = shiftFor(bytes);
            MemorySegment block = shift <= MAX_SHIFT ? free[shift - MIN_SHIFT].pop() : null;
            if (block == null && shift <= MAX_SHIFT && reserve(1L << shift)) {
                try {
                    block = arena.allocate(1L << shift, OwnedHostTensor.ALIGNMENT);
                } catch (RuntimeException | Error e) {
                    pooledBytes.addAndGet(-(1L << shift)); // nothing was allocated: the reservation goes back
                    throw e;
                }
            }
            if (block == null) {
                return ownBlock(dtype, shape, bytes);
            }
            try {
                // Not wrap: the block is freed (or reused) only after this tensor's release, so its
                // references keep it alive and ONNX Runtime reads it in place (ownsMemory; notes.md,
                // "The default route's 4 KiB gap").
                Take take = new Take(this, block, shift);
                return OwnedHostTensor.overMemoryOnlyReleaseFrees(block.asSlice(0, bytes), dtype, shape, take, take);
            } catch (RuntimeException | Error e) {
                free[shift - MIN_SHIFT].push(block);
                throw e;
            }
        } catch (RuntimeException | Error e) {
            release();
            throw e;
        }
    }

    /** Over the cache: a block in an arena of its own, closed at release (a handshake, but the cache is full). */
    private OwnedHostTensor ownBlock(DLDataType dtype, long[] shape, long bytes) {
        Arena own = Arena.ofShared();
        try {
            MemorySegment block = own.allocate(Math.max(bytes, 1), OwnedHostTensor.ALIGNMENT);
            // Its segments' scope is the tensor's own: they need no other.
            return OwnedHostTensor.overMemoryOnlyReleaseFrees(block.asSlice(0, bytes), dtype, shape, () -> {
                own.close();
                release();
            }, null);
        } catch (RuntimeException | Error e) {
            own.close();
            throw e;
        }
    }

    /**
     * One take of a block: its release puts the block back, and the raw segments its tensor's
     * views hand out get a scope that ends there ({@link RawScope}: the block's own, the pool's
     * arena, outlives the tensor). Refers to the pool and the block, never to the tensor (the
     * safety net must be able to collect it).
     */
    private static final class Take implements Runnable, UnaryOperator<MemorySegment> {
        private final HostTensorPool pool;
        private final MemorySegment block;
        private final int shift;
        private final RawScope raw = new RawScope("its block is the pool's again");

        Take(HostTensorPool pool, MemorySegment block, int shift) {
            this.pool = pool;
            this.block = block;
            this.shift = shift;
        }

        /** {@return {@code segment}, a part of the block, in a scope that ends at this take's release} */
        @Override
        public MemorySegment apply(MemorySegment segment) {
            return raw.apply(segment);
        }

        @Override
        public void run() {
            try {
                raw.end(); // the raw segments end here, before the block can be someone else's
            } catch (IllegalStateException e) {
                // A raw segment is held by a call in progress: the block never returns to the
                // pool, so that the call cannot reach a next taker's data.
                pool.release();
                throw new IllegalStateException("a raw segment of a pooled tensor was still in use by a call at the "
                        + "tensor's release; its block of " + (1L << shift) + " bytes is retired, not reused", e);
            }
            pool.free[shift - MIN_SHIFT].push(block);
            pool.release();
        }
    }

    /**
     * The bytes of a compact tensor, without building its layout (the tensor's spec builds the one
     * it keeps); a shape the layout would refuse is refused by building it, for its message.
     */
    private static long compactBytes(DLDataType dtype, long[] shape) {
        try {
            long count = 1;
            boolean valid = true;
            for (long extent : shape) {
                valid &= extent >= 0;
                count = valid ? Math.multiplyExact(count, extent) : count;
            }
            if (valid) {
                long perElement = dtype.byteSize(false);
                return perElement > 0 ? Math.multiplyExact(count, perElement)
                        : Math.ceilDiv(Math.multiplyExact(count, dtype.bitsPerElement()), 8);
            }
        } catch (ArithmeticException e) {
            // fall through: the layout says what overflows
        }
        return TensorLayout.of(dtype, shape).extent().byteSize();
    }

    private static int shiftFor(long bytes) {
        return Math.max(MIN_SHIFT, 64 - Long.numberOfLeadingZeros(Math.max(bytes, 1) - 1));
    }

    private boolean reserve(long size) {
        if (pooledBytes.addAndGet(size) <= cachedBytes) {
            return true;
        }
        pooledBytes.addAndGet(-size);
        return false;
    }

    /** Takes a hold for a tensor; refused once the pool is closed (and so, before its arena can be freed). */
    private void hold() {
        long current;
        do {
            current = (long) HOLDS.getVolatile(this);
            if (current == 0 || closed) {
                throw new IllegalStateException(this + " was closed; it hands out nothing more");
            }
        } while (!HOLDS.compareAndSet(this, current, current + 1));
        if (closed) { // a close raced this take: give the hold back, the arena may be about to go
            release();
            throw new IllegalStateException(this + " was closed; it hands out nothing more");
        }
    }

    private void release() {
        if ((long) HOLDS.getAndAdd(this, -1L) == 1) {
            arena.close(); // the last tensor of a closed pool: nobody can reach a block now
        }
    }

    /** {@return the bytes of blocks the pool holds in its arena, taken or free} */
    public long pooledBytes() {
        return pooledBytes.get();
    }

    /** {@return the most bytes of blocks the pool keeps} */
    public long cachedBytes() {
        return cachedBytes;
    }

    /** {@return the tensors taken and not yet released (closed with every export deleted)} */
    public long tensorsOut() {
        return Math.max(0, (long) HOLDS.getVolatile(this) - (closed ? 0 : 1));
    }

    /** {@return whether {@link #close()} was called} */
    public boolean isClosed() {
        return closed;
    }

    /**
     * Stops takes; the blocks are freed now if no tensor of the pool is out, else when the last is
     * released.
     *
     * @throws IllegalStateException if already closed
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException(this + " was already closed; close it once");
            }
            closed = true;
        }
        release();
    }

    @Override
    public String toString() {
        return "HostTensorPool[cachedBytes=" + cachedBytes + ", pooledBytes=" + pooledBytes.get() + (closed ? ", closed" : "") + "]";
    }

    /** The free blocks of one size: a stack under its own lock (no allocation per push or pop, unlike a linked queue). */
    private static final class FreeBlocks {
        private MemorySegment[] blocks = new MemorySegment[8];
        private int size;

        synchronized MemorySegment pop() {
            if (size == 0) {
                return null;
            }
            MemorySegment block = blocks[--size];
            blocks[size] = null;
            return block;
        }

        synchronized void push(MemorySegment block) {
            if (size == blocks.length) {
                blocks = Arrays.copyOf(blocks, size * 2);
            }
            blocks[size++] = block;
        }
    }
}
