package org.jdlpack.cpu;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.SelectableChannel;
import java.nio.channels.WritableByteChannel;

/**
 * A tensor's bytes to and from streams and channels, with no heap copy of the tensor: a stream
 * goes through a small chunk the caller gives (and reuses), a channel reads and writes the native
 * memory itself, through direct {@link ByteBuffer} views of it (a socket channel then copies
 * straight between the kernel and the tensor).
 *
 * {@snippet :
 * byte[] chunk = new byte[64 << 10];                          // reused from request to request
 * try (OwnedHostTensor body = pool.take(DLDataType.FLOAT32, rows, 16)) {
 *     TensorStreams.readFully(request.getInputStream(), body.host(), chunk);   // rows x 16 float32, as sent
 *     // ... compute in place ...
 *     TensorStreams.write(body.host().rows(0, 1), response.getOutputStream(), chunk);
 * }
 * }
 *
 * <p>The bytes are the tensor's memory as it lies: row-major, in native byte order (little-endian
 * on x86-64 and AArch64), packed sub-byte values packed. So only compact row-major tensors are
 * read and written here ({@link HostTensorView#rows} of one is compact); a strided one is refused
 * with {@link IllegalArgumentException}: copy it into a compact one first
 * ({@link OwnedHostTensor#copyOf(HostTensorView)}).
 *
 * <p>Thread safety: the methods are stateless; a chunk, a stream and a tensor's memory must each be
 * used by one call at a time.
 *
 * @since 0.1
 */
public final class TensorStreams {

    /** The most bytes one channel call moves: a ByteBuffer holds at most 2 GiB - 1. */
    private static final long MAX_CHANNEL_CALL = 1L << 30;

    private TensorStreams() {
    }

    /**
     * Fills {@code target} from {@code in}: exactly its byte size, through {@code chunk}.
     *
     * @param in     the stream; read until the tensor is full, and no further
     * @param target a compact, writable tensor
     * @param chunk  the buffer the bytes pass through (any length above 0; larger means fewer reads)
     * @throws EOFException             if the stream ends first, saying how many bytes came
     * @throws IOException              if the stream fails
     * @throws IllegalArgumentException if the tensor is not compact row-major, or the chunk is empty
     * @throws UnsupportedOperationException if the tensor is read-only
     */
    public static void readFully(InputStream in, HostTensorView target, byte[] chunk) throws IOException {
        MemorySegment memory = writable(target);
        checkChunk(chunk);
        try {
            long size = memory.byteSize();
            for (long filled = 0; filled < size; ) {
                int n = in.read(chunk, 0, (int) Math.min(chunk.length, size - filled));
                if (n < 0) {
                    throw ended(target, filled, size);
                }
                MemorySegment.copy(chunk, 0, memory, ValueLayout.JAVA_BYTE, filled, n);
                filled += n;
            }
        } catch (IllegalStateException | WrongThreadException e) {
            throw target.inaccessible(e); // the FFM runtime's refusal, said with the tensor's name
        }
    }

    /**
     * Fills {@code target} from a blocking channel, reading straight into its memory.
     *
     * @param in     a blocking channel; read until the tensor is full, and no further
     * @param target a compact, writable tensor in native memory
     * @throws EOFException             if the channel ends first, saying how many bytes came
     * @throws IOException              if the channel fails
     * @throws IllegalArgumentException if the tensor is not compact row-major, or the channel is non-blocking
     * @throws UnsupportedOperationException if the tensor is read-only
     */
    public static void readFully(ReadableByteChannel in, HostTensorView target) throws IOException {
        MemorySegment memory = writable(target);
        checkBlocking(in);
        try {
            long size = memory.byteSize();
            long filled = 0;
            while (filled < size) {
                ByteBuffer window = memory.asSlice(filled, Math.min(MAX_CHANNEL_CALL, size - filled)).asByteBuffer();
                while (window.hasRemaining()) {
                    int n = in.read(window);
                    if (n < 0) {
                        throw ended(target, filled + window.position(), size);
                    }
                }
                filled += window.capacity();
            }
        } catch (IllegalStateException | WrongThreadException e) {
            throw target.inaccessible(e); // the FFM runtime's refusal, said with the tensor's name
        }
    }

    /**
     * Writes every byte of {@code source} to {@code out}, through {@code chunk}.
     *
     * @param source a compact tensor
     * @param out    the stream; not flushed or closed
     * @param chunk  the buffer the bytes pass through (any length above 0)
     * @throws IOException              if the stream fails
     * @throws IllegalArgumentException if the tensor is not compact row-major, or the chunk is empty
     */
    public static void write(HostTensorView source, OutputStream out, byte[] chunk) throws IOException {
        MemorySegment memory = readable(source);
        checkChunk(chunk);
        try {
            long size = memory.byteSize();
            for (long at = 0; at < size; at += chunk.length) {
                int n = (int) Math.min(chunk.length, size - at);
                MemorySegment.copy(memory, ValueLayout.JAVA_BYTE, at, chunk, 0, n);
                out.write(chunk, 0, n);
            }
        } catch (IllegalStateException | WrongThreadException e) {
            throw source.inaccessible(e); // the FFM runtime's refusal, said with the tensor's name
        }
    }

    /**
     * Writes every byte of {@code source} to a blocking channel, straight from its memory.
     *
     * @param source a compact tensor
     * @param out    a blocking channel
     * @throws IOException              if the channel fails
     * @throws IllegalArgumentException if the tensor is not compact row-major, or the channel is non-blocking
     */
    public static void write(HostTensorView source, WritableByteChannel out) throws IOException {
        MemorySegment memory = readable(source);
        checkBlocking(out);
        try {
            long size = memory.byteSize();
            for (long at = 0; at < size; at += MAX_CHANNEL_CALL) {
                ByteBuffer window = memory.asSlice(at, Math.min(MAX_CHANNEL_CALL, size - at)).asByteBuffer();
                while (window.hasRemaining()) {
                    out.write(window);
                }
            }
        } catch (IllegalStateException | WrongThreadException e) {
            throw source.inaccessible(e); // the FFM runtime's refusal, said with the tensor's name
        }
    }

    private static MemorySegment readable(HostTensorView tensor) {
        if (!tensor.layout().isCompactRowMajor()) {
            throw new IllegalArgumentException(tensor + " is not compact row-major, so its bytes are not its elements in order; "
                    + "copy it into a compact tensor first (OwnedHostTensor.copyOf)");
        }
        tensor.checkLive();
        MemorySegment memory = tensor.segment; // no scope of its own: this call uses it and lets go
        if (!memory.scope().isAlive()) {
            throw tensor.inaccessible(new IllegalStateException("Already closed"));
        }
        return memory;
    }

    private static MemorySegment writable(HostTensorView tensor) {
        MemorySegment memory = readable(tensor);
        StridedCopy.checkWritable(tensor.layout());
        return memory;
    }

    private static void checkChunk(byte[] chunk) {
        if (chunk.length == 0) {
            throw new IllegalArgumentException("the chunk is empty; give one of a few KiB or more");
        }
    }

    private static void checkBlocking(Object channel) {
        if (channel instanceof SelectableChannel selectable && !selectable.isBlocking()) {
            throw new IllegalArgumentException(channel + " is non-blocking; these copies wait for every byte: use a blocking "
                    + "channel, or your own loop over the tensor's segment().asByteBuffer()");
        }
    }

    private static EOFException ended(HostTensorView tensor, long got, long size) {
        return new EOFException("the stream ended after " + got + " of the " + size + " bytes of " + tensor);
    }
}
