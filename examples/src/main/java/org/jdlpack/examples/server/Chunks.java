package org.jdlpack.examples.server;

import java.util.concurrent.ArrayBlockingQueue;

/**
 * The heap chunks that carry bodies between the socket streams and native memory
 * ({@link org.jdlpack.cpu.TensorStreams}), reused from request to request. The JDK's socket
 * streams wrap the array they are given in a new buffer on every call, so a large chunk means few
 * calls, and a reused one means no allocation that grows with the body. But not too large: the
 * JDK server's output stream keeps, per connection, a heap buffer of twice the largest write it
 * was given, so 256 KiB chunks cost 512 KiB per connection (at 4 MiB and 64 connections over a
 * short run, 125 to 152 KB of heap per request against 50 to 58 KB with 64 KiB, the same CPU per
 * request: benchmarks/notes.md). A bounded array queue: no node allocated per give-back, as a
 * linked queue would.
 *
 * <p>Thread safety: any thread.
 */
final class Chunks {

    static final int SIZE = 64 << 10;

    private final ArrayBlockingQueue<byte[]> free = new ArrayBlockingQueue<>(256);

    /** {@return a chunk; give it back with {@link #giveBack}} */
    byte[] take() {
        byte[] chunk = free.poll();
        return chunk != null ? chunk : new byte[SIZE];
    }

    void giveBack(byte[] chunk) {
        free.offer(chunk); // dropped when 256 wait already
    }
}
