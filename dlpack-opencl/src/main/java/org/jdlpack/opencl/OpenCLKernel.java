package org.jdlpack.opencl;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import org.jdlpack.abi.plumbing.Downcalls;

/**
 * A kernel built from OpenCL C source, run over a 1-D range on its context's queue. Enough to
 * compute on exchanged tensors in place; not a general OpenCL binding.
 *
 * <p>Lifetime: {@link #close()} releases the kernel and its program once; afterwards
 * {@link #run} throws {@link IllegalStateException}, and so does a second close.
 *
 * <p>Thread safety: OpenCL kernels are not safe to configure from several threads at once, so
 * {@link #run} is synchronized. A close while another thread is inside an OpenCL call of
 * {@link #run} fails and leaves the kernel open.
 *
 * @since 0.1
 */
public final class OpenCLKernel implements AutoCloseable {

    private final OpenCLContext context;
    private final Arena lifetime;
    /** The {@code cl_program} and {@code cl_kernel}, bound to {@link #lifetime}. */
    private final MemorySegment program;
    private final MemorySegment kernel;
    private final String name;

    private OpenCLKernel(OpenCLContext context, long program, long kernel, String name) {
        this.context = context;
        this.lifetime = Arena.ofShared();
        this.program = Downcalls.bound(program, lifetime.scope());
        this.kernel = Downcalls.bound(kernel, lifetime.scope());
        this.name = name;
    }

    static OpenCLKernel build(OpenCLContext context, String source, String name) {
        MemorySegment device = context.device().device();
        MemorySegment program = CLPrograms.createProgramWithSource(context.context(), source);
        try {
            try {
                CLPrograms.buildProgram(program, device);
            } catch (OpenCLException e) {
                throw new OpenCLException(e.getMessage() + "\n" + buildLog(program, device));
            }
            return new OpenCLKernel(context, program.address(), CLPrograms.createKernel(program, name).address(), name);
        } catch (RuntimeException | Error e) {
            CLPrograms.releaseProgram(program);
            throw e;
        }
    }

    private static String buildLog(MemorySegment program, MemorySegment device) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment log = arena.allocate(65536);
            CLPrograms.getProgramBuildInfo(program, device, CL.PROGRAM_BUILD_LOG, log.asSlice(0, log.byteSize() - 1));
            return log.getString(0);
        } catch (OpenCLException e) {
            return "(no build log: " + e.getMessage() + ")";
        }
    }

    /**
     * Sets the arguments and runs the kernel over {@code globalSize} work items, waiting for it to
     * finish. Buffer arguments are retained for the run, so that closing one on another thread
     * cannot free it under the kernel.
     *
     * @param globalSize the number of work items
     * @param arguments  in order: {@link OpenCLBuffer} or a {@code cl_mem} {@link MemorySegment}
     *                   (such as {@link OpenCLTensorView#handle()}) for {@code __global} pointers,
     *                   {@link Integer} for {@code int}, {@link Long} for {@code long},
     *                   {@link Float} for {@code float}
     * @throws IllegalStateException    if this kernel, its context, or a buffer or tensor argument
     *                                  is closed
     * @throws IllegalArgumentException for an argument of another type
     */
    public synchronized void run(long globalSize, Object... arguments) {
        MemorySegment live = Downcalls.requireAlive(kernel, "OpenCLKernel");
        List<MemorySegment> retained = new ArrayList<>();
        try (Arena arena = Arena.ofConfined()) {
            for (int i = 0; i < arguments.length; i++) {
                Object argument = arguments[i];
                MemorySegment value;
                if (argument instanceof OpenCLBuffer || argument instanceof MemorySegment) {
                    MemorySegment mem = argument instanceof OpenCLBuffer buffer ? buffer.handle() : (MemorySegment) argument;
                    // A call with the bound handle: fails if its owner is closed, else holds it until released below.
                    CLBuffers.retainMemObject(Downcalls.requireAlive(mem, "the cl_mem of argument " + i + " of kernel " + name));
                    retained.add(MemorySegment.ofAddress(mem.address()));
                    value = arena.allocateFrom(ADDRESS, mem);
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
                CLPrograms.setKernelArg(live, i, value);
            }
            CLPrograms.enqueueNDRangeKernel(context.queue(), live, globalSize);
            context.finish();
        } finally {
            retained.forEach(CLBuffers::releaseMemObject);
        }
    }

    /**
     * Releases the kernel and its program.
     *
     * @throws IllegalStateException if already closed, or while another thread is inside an
     *                               OpenCL call of {@link #run} (it then stays open)
     */
    @Override
    public void close() {
        Downcalls.close(lifetime, "OpenCLKernel");
        try {
            CLPrograms.releaseKernel(MemorySegment.ofAddress(kernel.address()));
        } finally {
            CLPrograms.releaseProgram(MemorySegment.ofAddress(program.address()));
        }
    }
}
