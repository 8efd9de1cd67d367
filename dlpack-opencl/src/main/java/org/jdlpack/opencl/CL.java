package org.jdlpack.opencl;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.Map;
import java.util.Optional;

import org.jdlpack.abi.internal.Downcalls;
import org.jdlpack.abi.internal.NativeAccess;

/**
 * The libOpenCL (ICD loader) entry points jdlpack uses, bound once with FFM downcalls, and the
 * constants of the OpenCL 1.2 headers they need. The test suite compiles these constants against
 * the system's CL/cl.h.
 *
 * <p>This is the one call layer for libOpenCL: a typed method per function holds the only
 * {@code invokeExact} and folds in the error check. Handles passed in as segments bound to their
 * owner's lifetime make every call check that lifetime.
 *
 * <p>All handles are thread-safe in OpenCL, and so is everything here.
 */
@SuppressWarnings("restricted")
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

    private static final Linker LINKER = Linker.nativeLinker();
    private static final SymbolLookup LIBRARY;
    private static final String LOAD_FAILURE;

    static {
        NativeAccess.warnIfDisabled(CL.class);
        SymbolLookup library = null;
        String failure = null;
        for (String name : new String[] {"libOpenCL.so.1", "libOpenCL.so", "/System/Library/Frameworks/OpenCL.framework/OpenCL"}) {
            try {
                library = SymbolLookup.libraryLookup(name, Arena.global());
                failure = null;
                break;
            } catch (IllegalArgumentException e) {
                failure = "no OpenCL ICD loader (libOpenCL.so.1) found; on Debian/Ubuntu install ocl-icd-libopencl1 "
                        + "and a platform such as pocl-opencl-icd";
            } catch (IllegalCallerException e) {
                throw NativeAccess.denied(CL.class, e);
            }
        }
        LIBRARY = library;
        LOAD_FAILURE = failure;
    }

    private static final MethodHandle GET_PLATFORM_IDS = bind("clGetPlatformIDs", JAVA_INT, JAVA_INT, ADDRESS, ADDRESS);
    private static final MethodHandle GET_PLATFORM_INFO = bind("clGetPlatformInfo", JAVA_INT, ADDRESS, JAVA_INT, JAVA_LONG, ADDRESS, ADDRESS);
    private static final MethodHandle GET_DEVICE_IDS = bind("clGetDeviceIDs", JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT, ADDRESS, ADDRESS);
    private static final MethodHandle GET_DEVICE_INFO = bind("clGetDeviceInfo", JAVA_INT, ADDRESS, JAVA_INT, JAVA_LONG, ADDRESS, ADDRESS);
    private static final MethodHandle CREATE_CONTEXT = bind("clCreateContext", ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, ADDRESS, ADDRESS);
    private static final MethodHandle RELEASE_CONTEXT = bind("clReleaseContext", JAVA_INT, ADDRESS);
    private static final MethodHandle CREATE_COMMAND_QUEUE = bind("clCreateCommandQueue", ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS);
    private static final MethodHandle RELEASE_COMMAND_QUEUE = bind("clReleaseCommandQueue", JAVA_INT, ADDRESS);
    private static final MethodHandle FINISH = bind("clFinish", JAVA_INT, ADDRESS);
    private static final MethodHandle CREATE_BUFFER = bind("clCreateBuffer", ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG, ADDRESS, ADDRESS);
    private static final MethodHandle RETAIN_MEM_OBJECT = bind("clRetainMemObject", JAVA_INT, ADDRESS);
    private static final MethodHandle RELEASE_MEM_OBJECT = bind("clReleaseMemObject", JAVA_INT, ADDRESS);
    private static final MethodHandle GET_MEM_OBJECT_INFO = bind("clGetMemObjectInfo", JAVA_INT, ADDRESS, JAVA_INT, JAVA_LONG, ADDRESS, ADDRESS);
    private static final MethodHandle ENQUEUE_READ_BUFFER = bind("clEnqueueReadBuffer", JAVA_INT,
            ADDRESS, ADDRESS, JAVA_INT, JAVA_LONG, JAVA_LONG, ADDRESS, JAVA_INT, ADDRESS, ADDRESS);
    private static final MethodHandle ENQUEUE_WRITE_BUFFER = bind("clEnqueueWriteBuffer", JAVA_INT,
            ADDRESS, ADDRESS, JAVA_INT, JAVA_LONG, JAVA_LONG, ADDRESS, JAVA_INT, ADDRESS, ADDRESS);
    private static final MethodHandle ENQUEUE_READ_BUFFER_RECT = bind("clEnqueueReadBufferRect", JAVA_INT,
            ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS,
            JAVA_INT, ADDRESS, ADDRESS);
    private static final MethodHandle ENQUEUE_WRITE_BUFFER_RECT = bind("clEnqueueWriteBufferRect", JAVA_INT,
            ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS,
            JAVA_INT, ADDRESS, ADDRESS);
    private static final MethodHandle CREATE_PROGRAM_WITH_SOURCE = bind("clCreateProgramWithSource", ADDRESS,
            ADDRESS, JAVA_INT, ADDRESS, ADDRESS, ADDRESS);
    private static final MethodHandle BUILD_PROGRAM = bind("clBuildProgram", JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, ADDRESS, ADDRESS);
    private static final MethodHandle GET_PROGRAM_BUILD_INFO = bind("clGetProgramBuildInfo", JAVA_INT,
            ADDRESS, ADDRESS, JAVA_INT, JAVA_LONG, ADDRESS, ADDRESS);
    private static final MethodHandle RELEASE_PROGRAM = bind("clReleaseProgram", JAVA_INT, ADDRESS);
    private static final MethodHandle CREATE_KERNEL = bind("clCreateKernel", ADDRESS, ADDRESS, ADDRESS, ADDRESS);
    private static final MethodHandle SET_KERNEL_ARG = bind("clSetKernelArg", JAVA_INT, ADDRESS, JAVA_INT, JAVA_LONG, ADDRESS);
    private static final MethodHandle ENQUEUE_ND_RANGE_KERNEL = bind("clEnqueueNDRangeKernel", JAVA_INT,
            ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS);
    private static final MethodHandle RELEASE_KERNEL = bind("clReleaseKernel", JAVA_INT, ADDRESS);

    // A pipe lets us read a word at an untrusted address without faulting: write(2) reports
    // EFAULT for an unmapped source instead of crashing the process.
    private static final MethodHandle PIPE = LINKER.downcallHandle(LINKER.defaultLookup().find("pipe").orElseThrow(),
            FunctionDescriptor.of(JAVA_INT, ADDRESS));
    private static final MethodHandle WRITE = LINKER.downcallHandle(LINKER.defaultLookup().find("write").orElseThrow(),
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));
    private static final MethodHandle READ = LINKER.downcallHandle(LINKER.defaultLookup().find("read").orElseThrow(),
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));
    private static final int[] PROBE_PIPE = new int[2];

    static {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment fds = arena.allocate(JAVA_INT, 2);
            if ((int) PIPE.invokeExact(fds) != 0) {
                throw new ExceptionInInitializerError("pipe() failed");
            }
            PROBE_PIPE[0] = fds.getAtIndex(JAVA_INT, 0);
            PROBE_PIPE[1] = fds.getAtIndex(JAVA_INT, 1);
        } catch (Throwable t) {
            throw new ExceptionInInitializerError(t);
        }
    }

    private CL() {
    }

    /**
     * The downcall for {@code name}; when the ICD loader or the symbol is missing, a stand-in that
     * throws an {@link OpenCLException} saying which, at the call. Package-private for the
     * missing-symbol test.
     */
    static MethodHandle bind(String name, MemoryLayout result, MemoryLayout... arguments) {
        FunctionDescriptor descriptor = FunctionDescriptor.of(result, arguments);
        if (LIBRARY == null) {
            return Downcalls.failing(descriptor.toMethodType(), () -> new OpenCLException(LOAD_FAILURE));
        }
        return LIBRARY.find(name).map(symbol -> LINKER.downcallHandle(symbol, descriptor))
                .orElseGet(() -> Downcalls.failing(descriptor.toMethodType(),
                        () -> new OpenCLException("the OpenCL ICD loader has no function " + name)));
    }

    /** Throws unless {@code code} is CL_SUCCESS. */
    private static void check(int code, String call) {
        if (code != SUCCESS) {
            throw new OpenCLException(code, call);
        }
    }

    // The call layer: one method per OpenCL function, and the only code that invokes a downcall.
    // Functions of one C signature share the helper that holds the try/invokeExact/catch. Each
    // throws OpenCLException for an error code, IllegalStateException for a handle whose owner is
    // closed, and lets Errors through.

    /** {@code clRetainMemObject}. */
    static void retainMemObject(MemorySegment mem) {
        onHandle(RETAIN_MEM_OBJECT, mem, "clRetainMemObject");
    }

    /** {@code clReleaseMemObject}. */
    static void releaseMemObject(MemorySegment mem) {
        onHandle(RELEASE_MEM_OBJECT, mem, "clReleaseMemObject");
    }

    /** {@code clReleaseContext}. */
    static void releaseContext(MemorySegment context) {
        onHandle(RELEASE_CONTEXT, context, "clReleaseContext");
    }

    /** {@code clReleaseCommandQueue}. */
    static void releaseCommandQueue(MemorySegment queue) {
        onHandle(RELEASE_COMMAND_QUEUE, queue, "clReleaseCommandQueue");
    }

    /** {@code clFinish}. */
    static void finish(MemorySegment queue) {
        onHandle(FINISH, queue, "clFinish");
    }

    /** {@code clReleaseProgram}. */
    static void releaseProgram(MemorySegment program) {
        onHandle(RELEASE_PROGRAM, program, "clReleaseProgram");
    }

    /** {@code clReleaseKernel}. */
    static void releaseKernel(MemorySegment kernel) {
        onHandle(RELEASE_KERNEL, kernel, "clReleaseKernel");
    }

    /** A {@code cl_int f(handle)} function. */
    private static void onHandle(MethodHandle function, MemorySegment handle, String call) {
        try {
            check((int) function.invokeExact(handle), call);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * {@code clGetPlatformIDs}: fills {@code platforms} (NULL to only count).
     *
     * @return how many platforms there are
     * @throws OpenCLException with {@link #PLATFORM_NOT_FOUND_KHR} when the loader finds none
     */
    static int getPlatformIDs(int entries, MemorySegment platforms) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment count = arena.allocate(JAVA_INT);
            check((int) GET_PLATFORM_IDS.invokeExact(entries, platforms, count), "clGetPlatformIDs");
            return count.get(JAVA_INT, 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * {@code clGetDeviceIDs}: fills {@code devices} (NULL to only count).
     *
     * @return how many devices of {@code type} the platform has
     * @throws OpenCLException with {@code CL_DEVICE_NOT_FOUND} (-1) when it has none
     */
    static int getDeviceIDs(MemorySegment platform, long type, int entries, MemorySegment devices) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment count = arena.allocate(JAVA_INT);
            check((int) GET_DEVICE_IDS.invokeExact(platform, type, entries, devices, count), "clGetDeviceIDs");
            return count.get(JAVA_INT, 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code clGetPlatformInfo} into {@code value} (NULL to ask the size); returns the size. */
    static long getPlatformInfo(MemorySegment platform, int parameter, MemorySegment value) {
        return info(GET_PLATFORM_INFO, platform, parameter, value, "clGetPlatformInfo");
    }

    /** {@code clGetDeviceInfo} into {@code value} (NULL to ask the size); returns the size. */
    static long getDeviceInfo(MemorySegment device, int parameter, MemorySegment value) {
        return info(GET_DEVICE_INFO, device, parameter, value, "clGetDeviceInfo");
    }

    /** {@code clGetMemObjectInfo} for a {@code cl_uint} ({@code width} JAVA_INT) or a {@code size_t}/pointer (JAVA_LONG). */
    static long getMemObjectInfo(MemorySegment mem, int parameter, ValueLayout width) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment value = arena.allocate(width);
            info(GET_MEM_OBJECT_INFO, mem, parameter, value, "clGetMemObjectInfo");
            return width.byteSize() == 4 ? value.get(JAVA_INT, 0) : value.get(JAVA_LONG, 0);
        }
    }

    /** A {@code clGet*Info(handle, name, size, value, &size_ret)} function; returns {@code size_ret}. */
    private static long info(MethodHandle function, MemorySegment handle, int parameter, MemorySegment value, String call) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment size = arena.allocate(JAVA_LONG);
            check((int) function.invokeExact(handle, parameter, value.byteSize(), value, size), call);
            return size.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code clCreateContext} on one device, with default properties and no callback. */
    static MemorySegment createContext(MemorySegment device) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment error = arena.allocate(JAVA_INT);
            MemorySegment context = (MemorySegment) CREATE_CONTEXT.invokeExact(MemorySegment.NULL, 1, arena.allocateFrom(ADDRESS, device),
                    MemorySegment.NULL, MemorySegment.NULL, error);
            check(error.get(JAVA_INT, 0), "clCreateContext");
            return context;
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code clCreateCommandQueue}: an in-order queue without profiling. */
    static MemorySegment createCommandQueue(MemorySegment context, MemorySegment device) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment error = arena.allocate(JAVA_INT);
            MemorySegment queue = (MemorySegment) CREATE_COMMAND_QUEUE.invokeExact(context, device, 0L, error);
            check(error.get(JAVA_INT, 0), "clCreateCommandQueue");
            return queue;
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code clCreateBuffer} without a host pointer. */
    static MemorySegment createBuffer(MemorySegment context, long flags, long bytes) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment error = arena.allocate(JAVA_INT);
            MemorySegment mem = (MemorySegment) CREATE_BUFFER.invokeExact(context, flags, bytes, MemorySegment.NULL, error);
            check(error.get(JAVA_INT, 0), "clCreateBuffer");
            return mem;
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** Blocking {@code clEnqueueReadBuffer} of {@code host.byteSize()} bytes at {@code offset}. */
    static void enqueueReadBuffer(MemorySegment queue, MemorySegment mem, long offset, MemorySegment host) {
        transfer(ENQUEUE_READ_BUFFER, queue, mem, offset, host, "clEnqueueReadBuffer");
    }

    /** Blocking {@code clEnqueueWriteBuffer} of {@code host.byteSize()} bytes at {@code offset}. */
    static void enqueueWriteBuffer(MemorySegment queue, MemorySegment mem, long offset, MemorySegment host) {
        transfer(ENQUEUE_WRITE_BUFFER, queue, mem, offset, host, "clEnqueueWriteBuffer");
    }

    /** A blocking {@code clEnqueue{Read,Write}Buffer} without events. */
    private static void transfer(MethodHandle function, MemorySegment queue, MemorySegment mem, long offset, MemorySegment host,
                                 String call) {
        try {
            check((int) function.invokeExact(queue, mem, TRUE, offset, host.byteSize(), host, 0, MemorySegment.NULL,
                    MemorySegment.NULL), call);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** Blocking {@code clEnqueueReadBufferRect}: {@code rows} rows of {@code rowBytes}, buffer origin {@code offset}. */
    static void enqueueReadBufferRect(MemorySegment queue, MemorySegment mem, long offset, long bufferPitch, MemorySegment host,
                                      long hostPitch, long rowBytes, long rows) {
        rectangle(ENQUEUE_READ_BUFFER_RECT, queue, mem, offset, bufferPitch, host, hostPitch, rowBytes, rows,
                "clEnqueueReadBufferRect");
    }

    /** Blocking {@code clEnqueueWriteBufferRect}; see {@link #enqueueReadBufferRect}. */
    static void enqueueWriteBufferRect(MemorySegment queue, MemorySegment mem, long offset, long bufferPitch, MemorySegment host,
                                       long hostPitch, long rowBytes, long rows) {
        rectangle(ENQUEUE_WRITE_BUFFER_RECT, queue, mem, offset, bufferPitch, host, hostPitch, rowBytes, rows,
                "clEnqueueWriteBufferRect");
    }

    /** A blocking 2-D {@code clEnqueue{Read,Write}BufferRect} without events; the host origin is 0. */
    private static void rectangle(MethodHandle function, MemorySegment queue, MemorySegment mem, long offset, long bufferPitch,
                                  MemorySegment host, long hostPitch, long rowBytes, long rows, String call) {
        try (Arena arena = Arena.ofConfined()) {
            check((int) function.invokeExact(queue, mem, TRUE, arena.allocateFrom(JAVA_LONG, offset, 0, 0),
                    arena.allocateFrom(JAVA_LONG, 0, 0, 0), arena.allocateFrom(JAVA_LONG, rowBytes, rows, 1), bufferPitch, 0L,
                    hostPitch, 0L, host, 0, MemorySegment.NULL, MemorySegment.NULL), call);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code clCreateProgramWithSource} from one string. */
    static MemorySegment createProgramWithSource(MemorySegment context, String source) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment error = arena.allocate(JAVA_INT);
            MemorySegment program = (MemorySegment) CREATE_PROGRAM_WITH_SOURCE.invokeExact(context, 1,
                    arena.allocateFrom(ADDRESS, arena.allocateFrom(source)), MemorySegment.NULL, error);
            check(error.get(JAVA_INT, 0), "clCreateProgramWithSource");
            return program;
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code clBuildProgram} for one device, without options; the log is in {@link #getProgramBuildInfo}. */
    static void buildProgram(MemorySegment program, MemorySegment device) {
        try (Arena arena = Arena.ofConfined()) {
            check((int) BUILD_PROGRAM.invokeExact(program, 1, arena.allocateFrom(ADDRESS, device), MemorySegment.NULL,
                    MemorySegment.NULL, MemorySegment.NULL), "clBuildProgram");
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code clGetProgramBuildInfo} into {@code value}. */
    static void getProgramBuildInfo(MemorySegment program, MemorySegment device, int parameter, MemorySegment value) {
        try {
            check((int) GET_PROGRAM_BUILD_INFO.invokeExact(program, device, parameter, value.byteSize(), value, MemorySegment.NULL),
                    "clGetProgramBuildInfo");
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code clCreateKernel}. */
    static MemorySegment createKernel(MemorySegment program, String name) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment error = arena.allocate(JAVA_INT);
            MemorySegment kernel = (MemorySegment) CREATE_KERNEL.invokeExact(program, arena.allocateFrom(name), error);
            check(error.get(JAVA_INT, 0), "clCreateKernel(" + name + ")");
            return kernel;
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code clSetKernelArg} with the bytes of {@code value}. */
    static void setKernelArg(MemorySegment kernel, int index, MemorySegment value) {
        try {
            check((int) SET_KERNEL_ARG.invokeExact(kernel, index, value.byteSize(), value), "clSetKernelArg(" + index + ")");
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code clEnqueueNDRangeKernel} over a 1-D range, local size chosen by the runtime. */
    static void enqueueNDRangeKernel(MemorySegment queue, MemorySegment kernel, long globalSize) {
        try (Arena arena = Arena.ofConfined()) {
            check((int) ENQUEUE_ND_RANGE_KERNEL.invokeExact(queue, kernel, 1, MemorySegment.NULL, arena.allocateFrom(JAVA_LONG, globalSize),
                    MemorySegment.NULL, 0, MemorySegment.NULL, MemorySegment.NULL), "clEnqueueNDRangeKernel");
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * Reads the 8 bytes at {@code address} without risking a crash.
     *
     * @return the word, or empty when the address is not readable
     */
    static synchronized Optional<Long> peekWord(long address) {
        try (Arena arena = Arena.ofConfined()) {
            long written = (long) WRITE.invokeExact(PROBE_PIPE[1], MemorySegment.ofAddress(address), 8L);
            if (written != 8) {
                return Optional.empty();
            }
            MemorySegment word = arena.allocate(JAVA_LONG);
            long read = (long) READ.invokeExact(PROBE_PIPE[0], word, 8L);
            return read == 8 ? Optional.of(word.get(JAVA_LONG, 0)) : Optional.empty();
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }
}
