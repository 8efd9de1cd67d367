package org.jdlpack.opencl;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.List;
import java.util.Map;

import org.jdlpack.abi.plumbing.Downcalls;
import org.jdlpack.abi.plumbing.NativeLibrary;

/**
 * How jdlpack reaches libOpenCL (the ICD loader): the library, binding its functions, the
 * constants of the OpenCL 1.2 headers the calls need (the test suite compiles them against the
 * system's CL/cl.h), the error names, and the call shapes that check a result.
 *
 * <p>The call layer is this class and one class per area, each binding its own functions and
 * holding one typed method per function: {@link CLPlatforms} (platform and device discovery),
 * {@link CLBuffers} (contexts, queues, buffers, transfers) and {@link CLPrograms} (programs and
 * kernels). The split keeps each class to one concern, so a new function lands next to its kind;
 * the call shapes stay here because every area uses them. Those methods are the only code that
 * invokes a downcall, always through a shape here, so every call throws {@link OpenCLException}
 * for an error code, {@link IllegalStateException} for a handle whose owner is closed (handles
 * are segments bound to their owner's lifetime), and lets Errors through.
 *
 * <p>All handles are thread-safe in OpenCL, and so is everything here.
 */
final class CL {

    static final int SUCCESS = 0;
    static final int INVALID_MEM_OBJECT = -38;
    static final int PLATFORM_NOT_FOUND_KHR = -1001;
    static final int TRUE = 1;
    static final long DEVICE_TYPE_ALL = 0xFFFFFFFFL;
    static final int PLATFORM_NAME = 0x0902;
    static final int PLATFORM_VENDOR = 0x0903;
    static final int DEVICE_NAME = 0x102B;
    static final int DEVICE_VERSION = 0x102F;
    static final long MEM_READ_WRITE = 1L;
    static final int MEM_TYPE = 0x1100;
    static final int MEM_SIZE = 0x1102;
    static final int MEM_REFERENCE_COUNT = 0x1105;
    static final int MEM_CONTEXT = 0x1106;
    static final int MEM_OBJECT_BUFFER = 0x10F0;
    static final int BUFFER_CREATE_TYPE_REGION = 0x1220;
    static final int PROGRAM_BUILD_LOG = 0x1183;

    /** Error names by code, from the OpenCL 1.2 to 3.0 headers. */
    static final Map<Integer, String> ERROR_NAMES = Map.ofEntries(
            Map.entry(0, "CL_SUCCESS"), Map.entry(-1, "CL_DEVICE_NOT_FOUND"), Map.entry(-2, "CL_DEVICE_NOT_AVAILABLE"),
            Map.entry(-3, "CL_COMPILER_NOT_AVAILABLE"), Map.entry(-4, "CL_MEM_OBJECT_ALLOCATION_FAILURE"),
            Map.entry(-5, "CL_OUT_OF_RESOURCES"), Map.entry(-6, "CL_OUT_OF_HOST_MEMORY"),
            Map.entry(-7, "CL_PROFILING_INFO_NOT_AVAILABLE"), Map.entry(-8, "CL_MEM_COPY_OVERLAP"),
            Map.entry(-9, "CL_IMAGE_FORMAT_MISMATCH"), Map.entry(-10, "CL_IMAGE_FORMAT_NOT_SUPPORTED"),
            Map.entry(-11, "CL_BUILD_PROGRAM_FAILURE"), Map.entry(-12, "CL_MAP_FAILURE"),
            Map.entry(-13, "CL_MISALIGNED_SUB_BUFFER_OFFSET"), Map.entry(-14, "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST"),
            Map.entry(-15, "CL_COMPILE_PROGRAM_FAILURE"), Map.entry(-16, "CL_LINKER_NOT_AVAILABLE"),
            Map.entry(-17, "CL_LINK_PROGRAM_FAILURE"), Map.entry(-18, "CL_DEVICE_PARTITION_FAILED"),
            Map.entry(-19, "CL_KERNEL_ARG_INFO_NOT_AVAILABLE"), Map.entry(-30, "CL_INVALID_VALUE"),
            Map.entry(-31, "CL_INVALID_DEVICE_TYPE"), Map.entry(-32, "CL_INVALID_PLATFORM"), Map.entry(-33, "CL_INVALID_DEVICE"),
            Map.entry(-34, "CL_INVALID_CONTEXT"), Map.entry(-35, "CL_INVALID_QUEUE_PROPERTIES"),
            Map.entry(-36, "CL_INVALID_COMMAND_QUEUE"), Map.entry(-37, "CL_INVALID_HOST_PTR"),
            Map.entry(-38, "CL_INVALID_MEM_OBJECT"), Map.entry(-39, "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR"),
            Map.entry(-40, "CL_INVALID_IMAGE_SIZE"), Map.entry(-41, "CL_INVALID_SAMPLER"), Map.entry(-42, "CL_INVALID_BINARY"),
            Map.entry(-43, "CL_INVALID_BUILD_OPTIONS"), Map.entry(-44, "CL_INVALID_PROGRAM"),
            Map.entry(-45, "CL_INVALID_PROGRAM_EXECUTABLE"), Map.entry(-46, "CL_INVALID_KERNEL_NAME"),
            Map.entry(-47, "CL_INVALID_KERNEL_DEFINITION"), Map.entry(-48, "CL_INVALID_KERNEL"),
            Map.entry(-49, "CL_INVALID_ARG_INDEX"), Map.entry(-50, "CL_INVALID_ARG_VALUE"), Map.entry(-51, "CL_INVALID_ARG_SIZE"),
            Map.entry(-52, "CL_INVALID_KERNEL_ARGS"), Map.entry(-53, "CL_INVALID_WORK_DIMENSION"),
            Map.entry(-54, "CL_INVALID_WORK_GROUP_SIZE"), Map.entry(-55, "CL_INVALID_WORK_ITEM_SIZE"),
            Map.entry(-56, "CL_INVALID_GLOBAL_OFFSET"), Map.entry(-57, "CL_INVALID_EVENT_WAIT_LIST"),
            Map.entry(-58, "CL_INVALID_EVENT"), Map.entry(-59, "CL_INVALID_OPERATION"), Map.entry(-60, "CL_INVALID_GL_OBJECT"),
            Map.entry(-61, "CL_INVALID_BUFFER_SIZE"), Map.entry(-62, "CL_INVALID_MIP_LEVEL"),
            Map.entry(-63, "CL_INVALID_GLOBAL_WORK_SIZE"), Map.entry(-64, "CL_INVALID_PROPERTY"),
            Map.entry(-65, "CL_INVALID_IMAGE_DESCRIPTOR"), Map.entry(-66, "CL_INVALID_COMPILER_OPTIONS"),
            Map.entry(-67, "CL_INVALID_LINKER_OPTIONS"), Map.entry(-68, "CL_INVALID_DEVICE_PARTITION_COUNT"),
            Map.entry(-69, "CL_INVALID_PIPE_SIZE"), Map.entry(-70, "CL_INVALID_DEVICE_QUEUE"),
            Map.entry(-71, "CL_INVALID_SPEC_ID"), Map.entry(-72, "CL_MAX_SIZE_RESTRICTION_EXCEEDED"),
            Map.entry(-1001, "CL_PLATFORM_NOT_FOUND_KHR"));

    private static final NativeLibrary LIBRARY = NativeLibrary.load(CL.class,
            List.of("libOpenCL.so.1", "libOpenCL.so", "/System/Library/Frameworks/OpenCL.framework/OpenCL"),
            "no OpenCL ICD loader (libOpenCL.so.1) found; on Debian/Ubuntu install ocl-icd-libopencl1 "
                    + "and a platform such as pocl-opencl-icd",
            OpenCLException::new);

    private CL() {
    }

    /**
     * The downcall for {@code name}; when the ICD loader or the symbol is missing, a stand-in that
     * throws an {@link OpenCLException} saying which, at the call. Package-private for the
     * missing-symbol test.
     */
    static MethodHandle bind(String name, MemoryLayout result, MemoryLayout... arguments) {
        return LIBRARY.bind(name, FunctionDescriptor.of(result, arguments), "the OpenCL ICD loader has no function " + name);
    }

    /** Throws unless {@code code} is CL_SUCCESS. */
    static void check(int code, String call) {
        if (code != SUCCESS) {
            throw new OpenCLException(code, call);
        }
    }

    /** A function that returns a {@code cl_int}, its arguments allocated in {@code arena}. */
    @FunctionalInterface
    interface Status {
        int call(Arena arena) throws Throwable;
    }

    /** A {@code clCreate*} function: returns the object and its {@code cl_int} through {@code error}. */
    @FunctionalInterface
    interface Create {
        MemorySegment call(Arena arena, MemorySegment error) throws Throwable;
    }

    /** Runs {@code function} and checks its code; {@code call} names it in the exception. */
    static void call(String call, Status function) {
        try (Arena arena = Arena.ofConfined()) {
            check(function.call(arena), call);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return the object {@code function} created} Checks the code it wrote to {@code error}. */
    static MemorySegment create(String call, Create function) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment error = arena.allocate(JAVA_INT);
            MemorySegment created = function.call(arena, error);
            check(error.get(JAVA_INT, 0), call);
            return created;
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return what {@code function} wrote to its out-parameter} See {@link Downcalls#out}. */
    static long out(ValueLayout slot, String call, Downcalls.OutCall function) {
        return Downcalls.out(slot, call, function, CL::check);
    }

    /**
     * A {@code clGet*Info(handle, name, size, value, &size_ret)} function into {@code value} (NULL
     * to ask the size).
     *
     * @return {@code size_ret}
     */
    static long info(MethodHandle function, MemorySegment handle, int parameter, MemorySegment value, String call) {
        return out(JAVA_LONG, call, size -> (int) function.invokeExact(handle, parameter, value.byteSize(), value, size));
    }
}
