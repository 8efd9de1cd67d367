package org.jdlpack.opencl;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import org.jdlpack.abi.ExportOwner;
import org.jdlpack.abi.ExportOptions;
import org.jdlpack.abi.ExportedTensor;
import org.jdlpack.abi.TensorLayout;
import org.jdlpack.abi.TensorSpec;
import org.jdlpack.abi.plumbing.Downcalls;

/**
 * An OpenCL buffer ({@code cl_mem}) that this object holds one reference to.
 *
 * <p>Exports retain the buffer and their deleters release it, from any thread, so the buffer
 * outlives {@link #close()} for as long as a consumer holds an export.
 *
 * <p>Lifetime: {@link #close()} releases this object's reference once. Afterwards every method
 * but the accessors throws {@link IllegalStateException} (so does a second close), and
 * {@link #handle()} can no longer be passed to OpenCL through jdlpack. The check is part of each
 * OpenCL call, so it holds under races too: an export retains the buffer only while it is open.
 *
 * <p>Thread safety: every method may be called from any thread; transfers go through the
 * context's in-order queue. A close while another thread is inside an OpenCL call on this buffer
 * fails and leaves the buffer open.
 *
 * @since 0.1
 */
public final class OpenCLBuffer implements AutoCloseable {

    private final OpenCLContext context;
    private final Arena lifetime;
    /** The {@code cl_mem}, bound to {@link #lifetime}. */
    private final MemorySegment mem;
    private final long byteSize;

    private OpenCLBuffer(OpenCLContext context, long mem, long byteSize) {
        this.context = context;
        this.lifetime = Arena.ofShared();
        this.mem = Downcalls.bound(mem, lifetime.scope());
        this.byteSize = byteSize;
    }

    static OpenCLBuffer create(OpenCLContext context, long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("an OpenCL buffer needs at least 1 byte, not " + bytes);
        }
        return new OpenCLBuffer(context, CLBuffers.createBuffer(context.context(), CL.MEM_READ_WRITE, bytes).address(), bytes);
    }

    /**
     * {@return the {@code cl_mem} handle, as DLPack's {@code data} field carries it} The segment is
     * bound to this buffer's lifetime: jdlpack refuses it once the buffer is closed.
     */
    public MemorySegment handle() {
        return mem;
    }

    /** {@return the buffer's size in bytes} */
    public long byteSize() {
        return byteSize;
    }

    /**
     * {@return the reference count, {@code CL_MEM_REFERENCE_COUNT}: this object's reference plus
     * one per live export (plus any the application holds)} OpenCL documents the value as stale the
     * moment it is returned; it is meant for tests and leak hunting.
     *
     * @throws IllegalStateException if this buffer is closed
     */
    public int referenceCount() {
        return (int) CLBuffers.getMemObjectInfo(live(), CL.MEM_REFERENCE_COUNT, JAVA_INT);
    }

    /**
     * Writes host memory into the buffer (blocking).
     *
     * @param offset where in the buffer, in bytes
     * @param source native memory to write
     * @throws IllegalStateException if this buffer or its context is closed
     */
    public void write(long offset, MemorySegment source) {
        CLBuffers.enqueueWriteBuffer(context.queue(), live(), offset, source);
    }

    /**
     * Writes floats into the buffer (blocking).
     *
     * @param offset where in the buffer, in bytes
     * @param values the values
     * @throws IllegalStateException if this buffer or its context is closed
     */
    public void write(long offset, float[] values) {
        try (Arena arena = Arena.ofConfined()) {
            write(offset, arena.allocateFrom(JAVA_FLOAT, values));
        }
    }

    /**
     * Reads the buffer into host memory (blocking).
     *
     * @param offset      where in the buffer, in bytes
     * @param destination native memory to fill
     * @throws IllegalStateException if this buffer or its context is closed
     */
    public void read(long offset, MemorySegment destination) {
        CLBuffers.enqueueReadBuffer(context.queue(), live(), offset, destination);
    }

    /**
     * Reads floats from the buffer (blocking).
     *
     * @param offset where in the buffer, in bytes
     * @param count  how many floats
     * @return the values
     * @throws IllegalStateException if this buffer or its context is closed
     */
    public float[] readFloats(long offset, int count) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment host = arena.allocate(JAVA_FLOAT, count);
            read(offset, host);
            return host.toArray(JAVA_FLOAT);
        }
    }

    /**
     * Exports elements of this buffer as a {@code DLManagedTensorVersioned}; see
     * {@link #export(TensorLayout, ExportOptions)}.
     *
     * @param layout where the elements lie, {@code byte_offset} counted from the buffer's start
     * @return the handle
     * @throws IllegalArgumentException if the elements would leave the buffer
     * @throws IllegalStateException    if this buffer is closed
     */
    public ExportedTensor export(TensorLayout layout) {
        return export(layout, ExportOptions.VERSIONED);
    }

    /**
     * Exports elements of this buffer as a DLPack tensor, as {@code options} say. {@code data} is
     * the {@code cl_mem} handle and {@code byte_offset} is written as given: on OpenCL it is an
     * offset inside the buffer, not pointer arithmetic. The export holds an OpenCL reference to
     * the buffer until its deleter runs, so it outlives {@link #close()}.
     *
     * @param layout  where the elements lie, {@code byte_offset} counted from the buffer's start
     * @param options the struct kind and read-only
     * @return the handle
     * @throws IllegalArgumentException if the elements would leave the buffer
     * @throws IllegalStateException    if this buffer is closed
     */
    public ExportedTensor export(TensorLayout layout, ExportOptions options) {
        TensorSpec spec = TensorSpec.builder(MemorySegment.ofAddress(mem.address()), layout)
                .device(context.device().dlDevice()).capacity(byteSize).build();
        // The check and the retain are one step: the retain is a call with the bound handle, which
        // fails once the buffer is closed, and a close cannot complete while it runs.
        CLBuffers.retainMemObject(live());
        ExportOwner owner = ExportOwner.of(this, this::releaseExportReference);
        try {
            return owner.export(spec, options);
        } finally {
            owner.close(); // the export holds the only reference to this owner
        }
    }

    /** The deleter's release: the buffer may be closed by now, so the raw handle, not the bound one. */
    private void releaseExportReference() {
        CLBuffers.releaseMemObject(MemorySegment.ofAddress(mem.address()));
    }

    /** The handle, after a check with a clear message; OpenCL calls check again, race-free. */
    private MemorySegment live() {
        return Downcalls.requireAlive(mem, "OpenCLBuffer");
    }

    /**
     * Releases this object's reference; exports keep the buffer alive until their deleters run.
     *
     * @throws IllegalStateException if already closed, or while another thread is inside an
     *                               OpenCL call on this buffer (it then stays open)
     */
    @Override
    public void close() {
        Downcalls.close(lifetime, "OpenCLBuffer");
        CLBuffers.releaseMemObject(MemorySegment.ofAddress(mem.address()));
    }

    @Override
    public String toString() {
        return "OpenCLBuffer[cl_mem 0x" + Long.toHexString(mem.address()) + ", " + byteSize + " bytes]";
    }

}
