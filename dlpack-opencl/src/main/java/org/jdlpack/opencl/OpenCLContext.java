package org.jdlpack.opencl;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * An OpenCL context on one device with one in-order command queue: where buffers are created,
 * kernels run, and OpenCL tensors are read and written.
 *
 * <p>Thread safety: OpenCL contexts and queues are thread-safe, and so is this class; commands
 * from several threads are serialised by the in-order queue. {@link #close()} must not race with
 * other use.
 */
public final class OpenCLContext implements AutoCloseable {

    private final OpenCLDevice device;
    private final MemorySegment context;
    private final MemorySegment queue;

    private OpenCLContext(OpenCLDevice device, MemorySegment context, MemorySegment queue) {
        this.device = device;
        this.context = context;
        this.queue = queue;
    }

    /**
     * Creates a context and queue on a device.
     *
     * @param device a device from {@link OpenCLDevices}
     * @return the context
     * @throws OpenCLException if OpenCL refuses
     */
    public static OpenCLContext create(OpenCLDevice device) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment error = arena.allocate(JAVA_INT);
            MemorySegment devices = arena.allocate(ADDRESS);
            devices.set(ADDRESS, 0, device.device());
            MemorySegment context = (MemorySegment) CL.CREATE_CONTEXT.invokeExact(MemorySegment.NULL, 1, devices,
                    MemorySegment.NULL, MemorySegment.NULL, error);
            CL.check(error.get(JAVA_INT, 0), "clCreateContext");
            MemorySegment queue = (MemorySegment) CL.CREATE_COMMAND_QUEUE.invokeExact(context, device.device(), 0L, error);
            int rc = error.get(JAVA_INT, 0);
            if (rc != CL.SUCCESS) {
                int ignored = (int) CL.RELEASE_CONTEXT.invokeExact(context);
                CL.check(rc, "clCreateCommandQueue");
            }
            return new OpenCLContext(device, context, queue);
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /**
     * The device.
     *
     * @return the device this context runs on
     */
    public OpenCLDevice device() {
        return device;
    }

    /**
     * Creates a read-write buffer.
     *
     * @param bytes its size, more than 0
     * @return the buffer, holding one reference
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
     * @throws OpenCLException with the build log if the program does not build
     */
    public OpenCLKernel compile(String source, String name) {
        return OpenCLKernel.build(this, source, name);
    }

    /** Waits for every command queued so far. */
    public void finish() {
        try {
            CL.check((int) CL.FINISH.invokeExact(queue), "clFinish");
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    MemorySegment context() {
        return context;
    }

    MemorySegment queue() {
        return queue;
    }

    /** Releases the queue and the context; buffers keep the context alive in OpenCL until released. */
    @Override
    public void close() {
        try {
            CL.check((int) CL.RELEASE_COMMAND_QUEUE.invokeExact(queue), "clReleaseCommandQueue");
            CL.check((int) CL.RELEASE_CONTEXT.invokeExact(context), "clReleaseContext");
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    @Override
    public String toString() {
        return "OpenCLContext[" + device + "]";
    }
}
