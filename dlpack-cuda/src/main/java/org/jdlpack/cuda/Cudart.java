package org.jdlpack.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.jdlpack.abi.internal.Downcalls;
import org.jdlpack.abi.internal.NativeAccess;

/**
 * The libcudart entry points jdlpack uses, bound with FFM downcalls, and the constants of the CUDA
 * runtime headers they need (checked against cuda_runtime_api.h by the tests when the headers are
 * installed).
 *
 * <p>The library is searched in this order: {@code $CUDA_HOME} and {@code $CUDA_PATH}
 * ({@code lib64}, then {@code lib}), {@code /usr/local/cuda*} (newest first), then the dynamic
 * loader's own search for {@code libcudart.so.13}, {@code .12}, {@code .11} and {@code libcudart.so}.
 *
 * <p>This is the one call layer for libcudart: a typed method per function holds the only
 * {@code invokeExact} and folds in the error check. Handles passed in as segments bound to their
 * owner's lifetime make every call check that lifetime. Everything here is safe from any thread;
 * the current device is per-thread CUDA state (see {@link CurrentDevice}).
 */
@SuppressWarnings("restricted")
final class Cudart {

    static final int SUCCESS = 0;
    static final int ERROR_INVALID_VALUE = 1;
    static final int ERROR_INSUFFICIENT_DRIVER = 35;
    static final int ERROR_NO_DEVICE = 100;
    static final int MEMCPY_HOST_TO_DEVICE = 1;
    static final int MEMCPY_DEVICE_TO_HOST = 2;
    static final int MEMCPY_DEFAULT = 4;
    static final int MEMORY_TYPE_UNREGISTERED = 0;
    static final int MEMORY_TYPE_HOST = 1;
    static final int MEMORY_TYPE_DEVICE = 2;
    static final int MEMORY_TYPE_MANAGED = 3;
    static final int MEM_ATTACH_GLOBAL = 1;
    static final int EVENT_DISABLE_TIMING = 2;
    /** {@code cudaStreamLegacy}: the legacy default stream. */
    static final long STREAM_LEGACY = 1;
    /** {@code cudaStreamPerThread}: the per-thread default stream. */
    static final long STREAM_PER_THREAD = 2;
    /**
     * Room for cudaPointerAttributes: type, device, devicePointer, hostPointer at fixed offsets,
     * then reserved words whose count grew (24 bytes in CUDA 11 and 12, 88 in CUDA 13).
     */
    static final long POINTER_ATTRIBUTES_ROOM = 256;
    /** Room for cudaDeviceProp, which starts with char name[256]; its full size varies by version. */
    static final long DEVICE_PROP_ROOM = 8192;

    private static final Linker LINKER = Linker.nativeLinker();
    static final Path LIBRARY;
    static final String LOAD_FAILURE;
    private static final SymbolLookup LOOKUP;

    static {
        NativeAccess.warnIfDisabled(Cudart.class);
        Path found = null;
        SymbolLookup lookup = null;
        List<String> tried = new ArrayList<>();
        try {
            for (Path candidate : candidates()) {
                tried.add(candidate.toString());
                if (Files.isRegularFile(candidate)) {
                    lookup = SymbolLookup.libraryLookup(candidate, Arena.global());
                    found = candidate;
                    break;
                }
            }
            if (lookup == null) {
                for (String name : new String[] {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11", "libcudart.so"}) {
                    tried.add(name);
                    try {
                        lookup = SymbolLookup.libraryLookup(name, Arena.global());
                        found = Path.of(name);
                        break;
                    } catch (IllegalArgumentException notThere) {
                        // try the next
                    }
                }
            }
        } catch (IllegalCallerException e) {
            throw NativeAccess.denied(Cudart.class, e);
        }
        LIBRARY = found;
        LOOKUP = lookup;
        LOAD_FAILURE = lookup == null ? "no CUDA runtime library (libcudart) found; tried " + tried
                + ". Install the CUDA runtime or set CUDA_HOME" : null;
    }

    private static List<Path> candidates() {
        List<Path> paths = new ArrayList<>();
        for (String variable : new String[] {"CUDA_HOME", "CUDA_PATH"}) {
            String home = System.getenv(variable);
            if (home != null && !home.isBlank()) {
                addLibraries(paths, Path.of(home));
            }
        }
        try (var entries = Files.list(Path.of("/usr/local"))) {
            entries.filter(p -> p.getFileName().toString().startsWith("cuda"))
                    .sorted((a, b) -> b.getFileName().toString().compareTo(a.getFileName().toString()))
                    .forEach(home -> addLibraries(paths, home));
        } catch (java.io.IOException | SecurityException e) {
            // no /usr/local: rely on the loader
        }
        return paths;
    }

    private static void addLibraries(List<Path> paths, Path home) {
        for (String dir : new String[] {"lib64", "lib", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib"}) {
            for (String name : new String[] {"libcudart.so", "libcudart.so.13", "libcudart.so.12", "libcudart.so.11"}) {
                paths.add(home.resolve(dir).resolve(name));
            }
        }
    }

    private static final MethodHandle RUNTIME_GET_VERSION = bind("cudaRuntimeGetVersion", ADDRESS);
    private static final MethodHandle DRIVER_GET_VERSION = bind("cudaDriverGetVersion", ADDRESS);
    private static final MethodHandle GET_DEVICE_COUNT = bind("cudaGetDeviceCount", ADDRESS);
    private static final MethodHandle GET_DEVICE_PROPERTIES = bind("cudaGetDeviceProperties", ADDRESS, JAVA_INT);
    private static final MethodHandle SET_DEVICE = bind("cudaSetDevice", JAVA_INT);
    private static final MethodHandle GET_DEVICE = bind("cudaGetDevice", ADDRESS);
    private static final MethodHandle MALLOC = bind("cudaMalloc", ADDRESS, JAVA_LONG);
    private static final MethodHandle FREE = bind("cudaFree", ADDRESS);
    private static final MethodHandle MALLOC_HOST = bind("cudaMallocHost", ADDRESS, JAVA_LONG);
    private static final MethodHandle FREE_HOST = bind("cudaFreeHost", ADDRESS);
    private static final MethodHandle MALLOC_MANAGED = bind("cudaMallocManaged", ADDRESS, JAVA_LONG, JAVA_INT);
    private static final MethodHandle MEMCPY = bind("cudaMemcpy", ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT);
    private static final MethodHandle MEMCPY_ASYNC = bind("cudaMemcpyAsync", ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT, ADDRESS);
    private static final MethodHandle MEMCPY_2D_ASYNC = bind("cudaMemcpy2DAsync",
            ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, ADDRESS);
    private static final MethodHandle STREAM_CREATE = bind("cudaStreamCreate", ADDRESS);
    private static final MethodHandle STREAM_DESTROY = bind("cudaStreamDestroy", ADDRESS);
    private static final MethodHandle STREAM_SYNCHRONIZE = bind("cudaStreamSynchronize", ADDRESS);
    private static final MethodHandle STREAM_WAIT_EVENT = bind("cudaStreamWaitEvent", ADDRESS, ADDRESS, JAVA_INT);
    private static final MethodHandle EVENT_CREATE_WITH_FLAGS = bind("cudaEventCreateWithFlags", ADDRESS, JAVA_INT);
    private static final MethodHandle EVENT_RECORD = bind("cudaEventRecord", ADDRESS, ADDRESS);
    private static final MethodHandle EVENT_DESTROY = bind("cudaEventDestroy", ADDRESS);
    private static final MethodHandle POINTER_GET_ATTRIBUTES = bind("cudaPointerGetAttributes", ADDRESS, ADDRESS);
    private static final MethodHandle GET_ERROR_NAME = bindReturning("cudaGetErrorName", ADDRESS, JAVA_INT);
    private static final MethodHandle GET_ERROR_STRING = bindReturning("cudaGetErrorString", ADDRESS, JAVA_INT);

    private Cudart() {
    }

    /** An int-returning downcall for {@code name} (package-private for the missing-symbol test). */
    static MethodHandle bind(String name, MemoryLayout... arguments) {
        return bindReturning(name, JAVA_INT, arguments);
    }

    /**
     * The downcall for {@code name}; when the library or the symbol is missing, a stand-in that
     * throws a {@link CudaException} saying which, at the call.
     */
    private static MethodHandle bindReturning(String name, MemoryLayout result, MemoryLayout... arguments) {
        FunctionDescriptor descriptor = FunctionDescriptor.of(result, arguments);
        if (LOOKUP == null) {
            return Downcalls.failing(descriptor.toMethodType(), () -> new CudaException(LOAD_FAILURE));
        }
        return LOOKUP.find(name).map(symbol -> LINKER.downcallHandle(symbol, descriptor))
                .orElseGet(() -> Downcalls.failing(descriptor.toMethodType(),
                        () -> new CudaException(LIBRARY + " has no function " + name + "; it is older than this library needs")));
    }

    /** Fails with a clear message when libcudart could not be loaded. */
    static void requireLibrary() {
        if (LOOKUP == null) {
            throw new CudaException(LOAD_FAILURE);
        }
    }

    /** Throws unless {@code code} is cudaSuccess. */
    private static void check(int code, String call) {
        if (code != SUCCESS) {
            throw new CudaException(code, call);
        }
    }

    // The call layer: one method per runtime function, and the only code that invokes a downcall.
    // Functions of one C signature share the helper that holds the try/invokeExact/catch. Each
    // throws CudaException for an error code, IllegalStateException for a handle whose owner is
    // closed, and lets Errors through.

    /** {@code cudaGetErrorName}, or {@code fallback} when it cannot be asked. */
    static String getErrorName(int code, String fallback) {
        return describe(GET_ERROR_NAME, code, fallback);
    }

    /** {@code cudaGetErrorString}, or {@code fallback} when it cannot be asked. */
    static String getErrorString(int code, String fallback) {
        return describe(GET_ERROR_STRING, code, fallback);
    }

    /** A {@code const char* f(cudaError_t)} function; never throws a CudaException, it describes one. */
    private static String describe(MethodHandle function, int code, String fallback) {
        MemorySegment text;
        try {
            text = (MemorySegment) function.invokeExact(code);
        } catch (CudaException noLibrary) {
            return fallback;
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
        return text.address() == 0 ? fallback : text.reinterpret(1024).getString(0);
    }

    /** {@code cudaRuntimeGetVersion}. */
    static int runtimeGetVersion() {
        return queryInt(RUNTIME_GET_VERSION, "cudaRuntimeGetVersion");
    }

    /** {@code cudaDriverGetVersion}: 0 when no driver is installed. */
    static int driverGetVersion() {
        return queryInt(DRIVER_GET_VERSION, "cudaDriverGetVersion");
    }

    /** {@code cudaGetDeviceCount}. */
    static int getDeviceCount() {
        return queryInt(GET_DEVICE_COUNT, "cudaGetDeviceCount");
    }

    /** {@code cudaGetDevice}: the device current on the calling thread. */
    static int getDevice() {
        return queryInt(GET_DEVICE, "cudaGetDevice");
    }

    /** A {@code cudaError_t f(int*)} query. */
    private static int queryInt(MethodHandle function, String call) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment value = arena.allocate(JAVA_INT);
            check((int) function.invokeExact(value), call);
            return value.get(JAVA_INT, 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code cudaSetDevice}: makes {@code device} current on the calling thread. */
    static void setDevice(int device) {
        try {
            check((int) SET_DEVICE.invokeExact(device), "cudaSetDevice(" + device + ")");
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code cudaGetDeviceProperties} into {@code properties}, at least {@link #DEVICE_PROP_ROOM} bytes. */
    static void getDeviceProperties(MemorySegment properties, int device) {
        try {
            check((int) GET_DEVICE_PROPERTIES.invokeExact(properties, device), "cudaGetDeviceProperties(" + device + ")");
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code cudaMalloc} on the current device. */
    static long malloc(long bytes) {
        return allocate(MALLOC, bytes, "cudaMalloc");
    }

    /** {@code cudaMallocHost}: page-locked host memory. */
    static long mallocHost(long bytes) {
        return allocate(MALLOC_HOST, bytes, "cudaMallocHost");
    }

    /** A {@code cudaError_t f(void**, size_t)} allocation. */
    private static long allocate(MethodHandle function, long bytes, String call) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment pointer = arena.allocate(ADDRESS);
            check((int) function.invokeExact(pointer, bytes), call + "(" + bytes + ")");
            return pointer.get(ADDRESS, 0).address();
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code cudaMallocManaged} with {@code cudaMemAttachGlobal}. */
    static long mallocManaged(long bytes) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment pointer = arena.allocate(ADDRESS);
            check((int) MALLOC_MANAGED.invokeExact(pointer, bytes, MEM_ATTACH_GLOBAL), "cudaMallocManaged(" + bytes + ")");
            return pointer.get(ADDRESS, 0).address();
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code cudaFree}: device or managed memory. */
    static void free(long pointer) {
        onHandle(FREE, MemorySegment.ofAddress(pointer), "cudaFree");
    }

    /** {@code cudaFreeHost}: memory from {@link #mallocHost}. */
    static void freeHost(long pointer) {
        onHandle(FREE_HOST, MemorySegment.ofAddress(pointer), "cudaFreeHost");
    }

    /** {@code cudaStreamDestroy}. */
    static void streamDestroy(MemorySegment stream) {
        onHandle(STREAM_DESTROY, stream, "cudaStreamDestroy");
    }

    /** {@code cudaStreamSynchronize}. */
    static void streamSynchronize(MemorySegment stream) {
        onHandle(STREAM_SYNCHRONIZE, stream, "cudaStreamSynchronize");
    }

    /** {@code cudaEventDestroy}. */
    static void eventDestroy(MemorySegment event) {
        onHandle(EVENT_DESTROY, event, "cudaEventDestroy");
    }

    /** A {@code cudaError_t f(handle)} function. */
    private static void onHandle(MethodHandle function, MemorySegment handle, String call) {
        try {
            check((int) function.invokeExact(handle), call);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** Blocking {@code cudaMemcpy}, the direction inferred from the pointers ({@code cudaMemcpyDefault}). */
    static void memcpy(MemorySegment destination, MemorySegment source, long bytes) {
        try {
            check((int) MEMCPY.invokeExact(destination, source, bytes, MEMCPY_DEFAULT), "cudaMemcpy");
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code cudaMemcpyAsync} on {@code stream}, the direction inferred from the pointers. */
    static void memcpyAsync(MemorySegment destination, MemorySegment source, long bytes, MemorySegment stream) {
        try {
            check((int) MEMCPY_ASYNC.invokeExact(destination, source, bytes, MEMCPY_DEFAULT, stream), "cudaMemcpyAsync");
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code cudaMemcpy2DAsync} on {@code stream}, the direction inferred from the pointers. */
    static void memcpy2DAsync(MemorySegment destination, long destinationPitch, MemorySegment source, long sourcePitch,
                              long widthBytes, long rows, MemorySegment stream) {
        try {
            check((int) MEMCPY_2D_ASYNC.invokeExact(destination, destinationPitch, source, sourcePitch, widthBytes, rows,
                    MEMCPY_DEFAULT, stream), "cudaMemcpy2DAsync");
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code cudaStreamCreate} on the current device. */
    static long streamCreate() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment stream = arena.allocate(ADDRESS);
            check((int) STREAM_CREATE.invokeExact(stream), "cudaStreamCreate");
            return stream.get(ADDRESS, 0).address();
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code cudaStreamWaitEvent} with no flags. */
    static void streamWaitEvent(MemorySegment stream, MemorySegment event) {
        try {
            check((int) STREAM_WAIT_EVENT.invokeExact(stream, event, 0), "cudaStreamWaitEvent");
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code cudaEventCreateWithFlags}. */
    static MemorySegment eventCreateWithFlags(int flags) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment event = arena.allocate(ADDRESS);
            check((int) EVENT_CREATE_WITH_FLAGS.invokeExact(event, flags), "cudaEventCreateWithFlags");
            return event.get(ADDRESS, 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code cudaEventRecord}. */
    static void eventRecord(MemorySegment event, MemorySegment stream) {
        try {
            check((int) EVENT_RECORD.invokeExact(event, stream), "cudaEventRecord");
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code cudaPointerGetAttributes} into {@code attributes}, at least {@link #POINTER_ATTRIBUTES_ROOM} bytes. */
    static void pointerGetAttributes(MemorySegment attributes, MemorySegment pointer) {
        try {
            check((int) POINTER_GET_ATTRIBUTES.invokeExact(attributes, pointer),
                    "cudaPointerGetAttributes(0x" + Long.toHexString(pointer.address()) + ")");
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }
}
