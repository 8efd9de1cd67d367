package org.jdlpack.opencl;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.ExportOwner;
import org.jdlpack.abi.ExportOptions;
import org.jdlpack.abi.ManagedTensorHandle;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.TensorGeometry;
import org.jdlpack.abi.TensorSpec;

/**
 * An OpenCL buffer ({@code cl_mem}) that this object holds one reference to.
 *
 * <p>Exports retain the buffer and their deleters release it, from any thread, so the buffer
 * outlives {@link #close()} for as long as a consumer holds an export.
 *
 * <p>Thread safety: every method may be called from any thread; transfers go through the
 * context's in-order queue.
 */
public final class OpenCLBuffer implements AutoCloseable {

    private final OpenCLContext context;
    private final MemorySegment mem;
    private final long byteSize;
    private final AtomicBoolean closed = new AtomicBoolean();

    private OpenCLBuffer(OpenCLContext context, MemorySegment mem, long byteSize) {
        this.context = context;
        this.mem = mem;
        this.byteSize = byteSize;
    }

    static OpenCLBuffer create(OpenCLContext context, long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("an OpenCL buffer needs at least 1 byte, not " + bytes);
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment error = arena.allocate(JAVA_INT);
            MemorySegment mem = (MemorySegment) CL.CREATE_BUFFER.invokeExact(context.context(), CL.MEM_READ_WRITE, bytes,
                    MemorySegment.NULL, error);
            CL.check(error.get(JAVA_INT, 0), "clCreateBuffer");
            return new OpenCLBuffer(context, mem, bytes);
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /**
     * The {@code cl_mem} handle, as DLPack's {@code data} field carries it.
     *
     * @return the handle
     */
    public MemorySegment handle() {
        return mem;
    }

    /**
     * The buffer's size.
     *
     * @return bytes
     */
    public long byteSize() {
        return byteSize;
    }

    /**
     * {@code CL_MEM_REFERENCE_COUNT}: this object's reference plus one per live export (plus any
     * the application holds). OpenCL documents the value as stale the moment it is returned; it is
     * meant for tests and leak hunting.
     *
     * @return the reference count
     */
    public int referenceCount() {
        return OpenCLTensor.memInfoInt(mem, CL.MEM_REFERENCE_COUNT);
    }

    /**
     * Writes host memory into the buffer (blocking).
     *
     * @param offset where in the buffer, in bytes
     * @param source native memory to write
     */
    public void write(long offset, MemorySegment source) {
        OpenCLTensor.transfer(context, mem, false, offset, source);
    }

    /**
     * Writes floats into the buffer (blocking).
     *
     * @param offset where in the buffer, in bytes
     * @param values the values
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
     */
    public void read(long offset, MemorySegment destination) {
        OpenCLTensor.transfer(context, mem, true, offset, destination);
    }

    /**
     * Reads floats from the buffer (blocking).
     *
     * @param offset where in the buffer, in bytes
     * @param count  how many floats
     * @return the values
     */
    public float[] readFloats(long offset, int count) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment host = arena.allocate(JAVA_FLOAT, count);
            read(offset, host);
            return host.toArray(JAVA_FLOAT);
        }
    }

    /**
     * Exports part of the buffer as a fresh {@code kDLOpenCL} tensor. The export retains the
     * {@code cl_mem}; its deleter releases it, on whichever thread the consumer calls it.
     *
     * @param kind       which struct to build
     * @param dtype      the element type
     * @param shape      the extents
     * @param strides    the strides in elements, or null for compact row-major
     * @param byteOffset where element 0 is, in bytes from the start of the buffer
     * @return the handle
     * @throws IllegalArgumentException if the elements would leave the buffer
     */
    public ManagedTensorHandle export(ManagedTensorKind kind, DLDataType dtype, long[] shape, long[] strides, long byteOffset) {
        TensorSpec.Builder builder = TensorSpec.builder(MemorySegment.ofAddress(mem.address()), dtype, shape)
                .byteOffset(byteOffset).device(context.device().dlDevice()).capacity(byteSize);
        if (strides != null) {
            builder.strides(strides);
        }
        TensorSpec spec = builder.build();
        if (closed.get()) {
            throw new IllegalStateException("the buffer is closed");
        }
        retain();
        ExportOwner owner = ExportOwner.of(this, this::release);
        try {
            return owner.export(spec, ExportOptions.of(kind));
        } finally {
            owner.close(); // the export holds the only reference to this owner
        }
    }

    /**
     * Exports the whole buffer as a compact tensor; see {@link #export}.
     *
     * @param dtype the element type
     * @param shape the extents
     * @return a handle to a {@code DLManagedTensorVersioned}
     */
    public ManagedTensorHandle exportVersioned(DLDataType dtype, long... shape) {
        TensorGeometry.checkShape(shape, TensorGeometry.compactStrides(shape));
        return export(ManagedTensorKind.VERSIONED, dtype, shape, null, 0);
    }

    private void retain() {
        try {
            CL.check((int) CL.RETAIN_MEM_OBJECT.invokeExact(mem), "clRetainMemObject");
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    private void release() {
        try {
            CL.check((int) CL.RELEASE_MEM_OBJECT.invokeExact(mem), "clReleaseMemObject");
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /**
     * Releases this object's reference; exports keep the buffer alive until their deleters run.
     *
     * @throws IllegalStateException if already closed
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            throw new IllegalStateException("OpenCLBuffer already closed");
        }
        release();
    }

    @Override
    public String toString() {
        return "OpenCLBuffer[cl_mem 0x" + Long.toHexString(mem.address()) + ", " + byteSize + " bytes]";
    }

}
