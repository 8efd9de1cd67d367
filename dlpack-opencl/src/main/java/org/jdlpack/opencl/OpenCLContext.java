package org.jdlpack.opencl;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import org.jdlpack.abi.plumbing.Downcalls;

/**
 * An OpenCL context on one device with one in-order command queue: where buffers are created,
 * kernels run, and OpenCL tensors are read and written.
 *
 * <p>Lifetime: {@link #close()} releases the queue and the context once; afterwards every
 * operation that needs them (allocating, compiling, transfers of buffers and tensors of this
 * context, {@link #finish()}) throws {@link IllegalStateException}, and so does a second close.
 * Buffers keep the OpenCL context itself alive until they are released.
 *
 * <p>Thread safety: OpenCL contexts and queues are thread-safe, and so is this class; commands
 * from several threads are serialised by the in-order queue. A close while another thread is
 * inside an OpenCL call on this context fails and leaves the context open.
 *
 * @since 0.1
 */
public final class OpenCLContext implements AutoCloseable {

    private final OpenCLDevice device;
    private final Arena lifetime;
    /** The {@code cl_context} and {@code cl_command_queue}, bound to {@link #lifetime}. */
    private final MemorySegment context;
    private final MemorySegment queue;

    private OpenCLContext(OpenCLDevice device, long context, long queue) {
        this.device = device;
        this.lifetime = Arena.ofShared();
        this.context = Downcalls.bound(context, lifetime.scope());
        this.queue = Downcalls.bound(queue, lifetime.scope());
    }

    /**
     * Creates a context and queue on a device.
     *
     * @param device a device from {@link OpenCLDevices}
     * @return the context
     * @throws OpenCLException if OpenCL refuses
     */
    public static OpenCLContext create(OpenCLDevice device) {
        MemorySegment context = CLBuffers.createContext(device.device());
        MemorySegment queue;
        try {
            queue = CLBuffers.createCommandQueue(context, device.device());
        } catch (RuntimeException | Error e) {
            CLBuffers.releaseContext(context);
            throw e;
        }
        return new OpenCLContext(device, context.address(), queue.address());
    }

    /** {@return the device this context runs on} */
    public OpenCLDevice device() {
        return device;
    }

    /**
     * Creates a read-write buffer.
     *
     * @param bytes its size, more than 0
     * @return the buffer, holding one reference
     * @throws IllegalStateException if this context is closed
     */
    public OpenCLBuffer allocate(long bytes) {
        return OpenCLBuffer.create(this, bytes);
    }

    /**
     * Builds a kernel from OpenCL C source.
     *
     * @param source the program
     * @param name   the kernel function
     * @return the kernel
     * @throws OpenCLException       with the build log if the program does not build
     * @throws IllegalStateException if this context is closed
     */
    public OpenCLKernel compile(String source, String name) {
        return OpenCLKernel.build(this, source, name);
    }

    /**
     * Waits for every command queued so far.
     *
     * @throws IllegalStateException if this context is closed
     */
    public void finish() {
        CLBuffers.finish(queue());
    }

    /** The {@code cl_context}, bound to this object's lifetime. */
    MemorySegment context() {
        return Downcalls.requireAlive(context, "OpenCLContext");
    }

    /** The {@code cl_command_queue}, bound to this object's lifetime. */
    MemorySegment queue() {
        return Downcalls.requireAlive(queue, "OpenCLContext");
    }

    /**
     * Releases the queue and the context; buffers keep the context alive in OpenCL until they are
     * released.
     *
     * @throws IllegalStateException if already closed, or while another thread is inside an
     *                               OpenCL call on this context (it then stays open)
     */
    @Override
    public void close() {
        Downcalls.close(lifetime, "OpenCLContext");
        try {
            CLBuffers.releaseCommandQueue(MemorySegment.ofAddress(queue.address()));
        } finally {
            CLBuffers.releaseContext(MemorySegment.ofAddress(context.address()));
        }
    }

    @Override
    public String toString() {
        return "OpenCLContext[" + device + "]";
    }
}
