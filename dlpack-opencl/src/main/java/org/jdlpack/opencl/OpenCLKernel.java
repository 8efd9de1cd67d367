package org.jdlpack.opencl;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A kernel built from OpenCL C source, run over a 1-D range on its context's queue. Enough to
 * compute on exchanged tensors in place; not a general OpenCL binding.
 *
 * <p>Thread safety: OpenCL kernels are not safe to configure from several threads at once, so
 * {@link #run} is synchronized.
 */
public final class OpenCLKernel implements AutoCloseable {

    private final OpenCLContext context;
    private final MemorySegment program;
    private final MemorySegment kernel;
    private final String name;

    private OpenCLKernel(OpenCLContext context, MemorySegment program, MemorySegment kernel, String name) {
        this.context = context;
        this.program = program;
        this.kernel = kernel;
        this.name = name;
    }

    static OpenCLKernel build(OpenCLContext context, String source, String name) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment error = arena.allocate(JAVA_INT);
            MemorySegment strings = arena.allocate(ADDRESS);
            strings.set(ADDRESS, 0, arena.allocateFrom(source));
            MemorySegment program = (MemorySegment) CL.CREATE_PROGRAM_WITH_SOURCE.invokeExact(context.context(), 1, strings,
                    MemorySegment.NULL, error);
            CL.check(error.get(JAVA_INT, 0), "clCreateProgramWithSource");
            MemorySegment devices = arena.allocate(ADDRESS);
            devices.set(ADDRESS, 0, context.device().device());
            int rc = (int) CL.BUILD_PROGRAM.invokeExact(program, 1, devices, MemorySegment.NULL, MemorySegment.NULL, MemorySegment.NULL);
            if (rc != CL.SUCCESS) {
                MemorySegment log = arena.allocate(65536);
                int ignored = (int) CL.GET_PROGRAM_BUILD_INFO.invokeExact(program, context.device().device(), CL.PROGRAM_BUILD_LOG,
                        log.byteSize() - 1, log, MemorySegment.NULL);
                ignored = (int) CL.RELEASE_PROGRAM.invokeExact(program);
                throw new OpenCLException(new OpenCLException(rc, "clBuildProgram").getMessage() + "\n" + CL.string(log));
            }
            MemorySegment kernel = (MemorySegment) CL.CREATE_KERNEL.invokeExact(program, arena.allocateFrom(name), error);
            CL.check(error.get(JAVA_INT, 0), "clCreateKernel(" + name + ")");
            return new OpenCLKernel(context, program, kernel, name);
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /**
     * Sets the arguments and runs the kernel over {@code globalSize} work items, waiting for it to
     * finish.
     *
     * @param globalSize the number of work items
     * @param arguments  in order: {@link OpenCLBuffer} or a {@code cl_mem} {@link MemorySegment}
     *                   for {@code __global} pointers, {@link Integer} for {@code int},
     *                   {@link Long} for {@code long}, {@link Float} for {@code float}
     */
    public synchronized void run(long globalSize, Object... arguments) {
        try (Arena arena = Arena.ofConfined()) {
            for (int i = 0; i < arguments.length; i++) {
                Object argument = arguments[i];
                MemorySegment value;
                if (argument instanceof OpenCLBuffer buffer) {
                    value = arena.allocate(ADDRESS);
                    value.set(ADDRESS, 0, buffer.handle());
                } else if (argument instanceof MemorySegment mem) {
                    value = arena.allocate(ADDRESS);
                    value.set(ADDRESS, 0, mem);
                } else if (argument instanceof Integer v) {
                    value = arena.allocateFrom(JAVA_INT, v);
                } else if (argument instanceof Long v) {
                    value = arena.allocateFrom(JAVA_LONG, v);
                } else if (argument instanceof Float v) {
                    value = arena.allocateFrom(JAVA_FLOAT, v);
                } else {
                    throw new IllegalArgumentException("argument " + i + " of kernel " + name + " has unsupported type "
                            + (argument == null ? "null" : argument.getClass().getName()));
                }
                CL.check((int) CL.SET_KERNEL_ARG.invokeExact(kernel, i, value.byteSize(), value), "clSetKernelArg(" + i + ")");
            }
            MemorySegment global = arena.allocateFrom(JAVA_LONG, globalSize);
            CL.check((int) CL.ENQUEUE_ND_RANGE_KERNEL.invokeExact(context.queue(), kernel, 1, MemorySegment.NULL, global,
                    MemorySegment.NULL, 0, MemorySegment.NULL, MemorySegment.NULL), "clEnqueueNDRangeKernel(" + name + ")");
            context.finish();
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** Releases the kernel and its program. */
    @Override
    public void close() {
        try {
            CL.check((int) CL.RELEASE_KERNEL.invokeExact(kernel), "clReleaseKernel");
            CL.check((int) CL.RELEASE_PROGRAM.invokeExact(program), "clReleaseProgram");
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
