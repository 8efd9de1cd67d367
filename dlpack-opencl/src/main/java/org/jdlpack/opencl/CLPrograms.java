package org.jdlpack.opencl;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/** The libOpenCL functions that build programs and run their kernels; see {@link CL} for the call layer. */
final class CLPrograms {

    private static final MethodHandle CREATE_PROGRAM_WITH_SOURCE = CL.bind("clCreateProgramWithSource", ADDRESS,
            ADDRESS, JAVA_INT, ADDRESS, ADDRESS, ADDRESS);
    private static final MethodHandle BUILD_PROGRAM = CL.bind("clBuildProgram", JAVA_INT,
            ADDRESS, JAVA_INT, ADDRESS, ADDRESS, ADDRESS, ADDRESS);
    private static final MethodHandle GET_PROGRAM_BUILD_INFO = CL.bind("clGetProgramBuildInfo", JAVA_INT,
            ADDRESS, ADDRESS, JAVA_INT, JAVA_LONG, ADDRESS, ADDRESS);
    private static final MethodHandle RELEASE_PROGRAM = CL.bind("clReleaseProgram", JAVA_INT, ADDRESS);
    private static final MethodHandle CREATE_KERNEL = CL.bind("clCreateKernel", ADDRESS, ADDRESS, ADDRESS, ADDRESS);
    private static final MethodHandle SET_KERNEL_ARG = CL.bind("clSetKernelArg", JAVA_INT, ADDRESS, JAVA_INT, JAVA_LONG, ADDRESS);
    private static final MethodHandle ENQUEUE_ND_RANGE_KERNEL = CL.bind("clEnqueueNDRangeKernel", JAVA_INT,
            ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS);
    private static final MethodHandle RELEASE_KERNEL = CL.bind("clReleaseKernel", JAVA_INT, ADDRESS);

    private CLPrograms() {
    }

    /** {@code clCreateProgramWithSource} from one string. */
    static MemorySegment createProgramWithSource(MemorySegment context, String source) {
        return CL.create("clCreateProgramWithSource", (arena, error) -> (MemorySegment) CREATE_PROGRAM_WITH_SOURCE.invokeExact(context, 1,
                arena.allocateFrom(ADDRESS, arena.allocateFrom(source)), MemorySegment.NULL, error));
    }

    /** {@code clBuildProgram} for one device, without options; the log is in {@link #getProgramBuildInfo}. */
    static void buildProgram(MemorySegment program, MemorySegment device) {
        CL.call("clBuildProgram", arena -> (int) BUILD_PROGRAM.invokeExact(program, 1, arena.allocateFrom(ADDRESS, device),
                MemorySegment.NULL, MemorySegment.NULL, MemorySegment.NULL));
    }

    /** {@code clGetProgramBuildInfo} into {@code value}. */
    static void getProgramBuildInfo(MemorySegment program, MemorySegment device, int parameter, MemorySegment value) {
        CL.call("clGetProgramBuildInfo", arena -> (int) GET_PROGRAM_BUILD_INFO.invokeExact(program, device, parameter, value.byteSize(),
                value, MemorySegment.NULL));
    }

    /** {@code clReleaseProgram}. */
    static void releaseProgram(MemorySegment program) {
        CL.call("clReleaseProgram", arena -> (int) RELEASE_PROGRAM.invokeExact(program));
    }

    /** {@code clCreateKernel}. */
    static MemorySegment createKernel(MemorySegment program, String name) {
        return CL.create("clCreateKernel(" + name + ")",
                (arena, error) -> (MemorySegment) CREATE_KERNEL.invokeExact(program, arena.allocateFrom(name), error));
    }

    /** {@code clSetKernelArg} with the bytes of {@code value}. */
    static void setKernelArg(MemorySegment kernel, int index, MemorySegment value) {
        CL.call("clSetKernelArg(" + index + ")", arena -> (int) SET_KERNEL_ARG.invokeExact(kernel, index, value.byteSize(), value));
    }

    /** {@code clEnqueueNDRangeKernel} over a 1-D range, local size chosen by the runtime. */
    static void enqueueNDRangeKernel(MemorySegment queue, MemorySegment kernel, long globalSize) {
        CL.call("clEnqueueNDRangeKernel", arena -> (int) ENQUEUE_ND_RANGE_KERNEL.invokeExact(queue, kernel, 1, MemorySegment.NULL,
                arena.allocateFrom(JAVA_LONG, globalSize), MemorySegment.NULL, 0, MemorySegment.NULL, MemorySegment.NULL));
    }

    /** {@code clReleaseKernel}. */
    static void releaseKernel(MemorySegment kernel) {
        CL.call("clReleaseKernel", arena -> (int) RELEASE_KERNEL.invokeExact(kernel));
    }
}
