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

import org.jdlpack.abi.internal.NativeAccess;

/**
 * The libcudart entry points jdlpack uses, bound with FFM downcalls, and the constants of the CUDA
 * runtime headers they need (checked against cuda_runtime_api.h by the tests when the headers are
 * installed).
 *
 * <p>The library is searched in this order: {@code $CUDA_HOME} and {@code $CUDA_PATH}
 * ({@code lib64}, then {@code lib}), {@code /usr/local/cuda*} (newest first), then the dynamic
 * loader's own search for {@code libcudart.so.13}, {@code .12}, {@code .11} and {@code libcudart.so}.
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

    static final MethodHandle RUNTIME_GET_VERSION = bind("cudaRuntimeGetVersion", ADDRESS);
    static final MethodHandle DRIVER_GET_VERSION = bind("cudaDriverGetVersion", ADDRESS);
    static final MethodHandle GET_DEVICE_COUNT = bind("cudaGetDeviceCount", ADDRESS);
    static final MethodHandle GET_DEVICE_PROPERTIES = bind("cudaGetDeviceProperties", ADDRESS, JAVA_INT);
    static final MethodHandle SET_DEVICE = bind("cudaSetDevice", JAVA_INT);
    static final MethodHandle GET_DEVICE = bind("cudaGetDevice", ADDRESS);
    static final MethodHandle MALLOC = bind("cudaMalloc", ADDRESS, JAVA_LONG);
    static final MethodHandle FREE = bind("cudaFree", ADDRESS);
    static final MethodHandle MALLOC_HOST = bind("cudaMallocHost", ADDRESS, JAVA_LONG);
    static final MethodHandle FREE_HOST = bind("cudaFreeHost", ADDRESS);
    static final MethodHandle MALLOC_MANAGED = bind("cudaMallocManaged", ADDRESS, JAVA_LONG, JAVA_INT);
    static final MethodHandle MEMCPY = bind("cudaMemcpy", ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT);
    static final MethodHandle MEMCPY_ASYNC = bind("cudaMemcpyAsync", ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT, ADDRESS);
    static final MethodHandle MEMCPY_2D = bind("cudaMemcpy2D", ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT);
    static final MethodHandle MEMCPY_2D_ASYNC = bind("cudaMemcpy2DAsync",
            ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, ADDRESS);
    static final MethodHandle STREAM_CREATE = bind("cudaStreamCreate", ADDRESS);
    static final MethodHandle STREAM_DESTROY = bind("cudaStreamDestroy", ADDRESS);
    static final MethodHandle STREAM_SYNCHRONIZE = bind("cudaStreamSynchronize", ADDRESS);
    static final MethodHandle STREAM_WAIT_EVENT = bind("cudaStreamWaitEvent", ADDRESS, ADDRESS, JAVA_INT);
    static final MethodHandle EVENT_CREATE_WITH_FLAGS = bind("cudaEventCreateWithFlags", ADDRESS, JAVA_INT);
    static final MethodHandle EVENT_RECORD = bind("cudaEventRecord", ADDRESS, ADDRESS);
    static final MethodHandle EVENT_DESTROY = bind("cudaEventDestroy", ADDRESS);
    static final MethodHandle EVENT_SYNCHRONIZE = bind("cudaEventSynchronize", ADDRESS);
    static final MethodHandle POINTER_GET_ATTRIBUTES = bind("cudaPointerGetAttributes", ADDRESS, ADDRESS);
    static final MethodHandle GET_ERROR_NAME = bindReturning("cudaGetErrorName", ADDRESS, JAVA_INT);
    static final MethodHandle GET_ERROR_STRING = bindReturning("cudaGetErrorString", ADDRESS, JAVA_INT);
    static final MethodHandle GET_LAST_ERROR = bind("cudaGetLastError");

    private Cudart() {
    }

    private static MethodHandle bind(String name, MemoryLayout... arguments) {
        return bindReturning(name, JAVA_INT, arguments);
    }

    private static MethodHandle bindReturning(String name, MemoryLayout result, MemoryLayout... arguments) {
        if (LOOKUP == null) {
            return null;
        }
        return LOOKUP.find(name).map(symbol -> LINKER.downcallHandle(symbol, FunctionDescriptor.of(result, arguments)))
                .orElse(null);
    }

    /** Fails with a clear message when libcudart could not be loaded. */
    static void requireLibrary() {
        if (LOOKUP == null) {
            throw new CudaException(LOAD_FAILURE);
        }
    }

    /** Throws unless {@code code} is cudaSuccess. */
    static void check(int code, String call) {
        if (code != SUCCESS) {
            throw new CudaException(code, call);
        }
    }

    /** {@code cudaGetErrorName}, or a placeholder when the library is missing. */
    static String errorName(int code) {
        return describe(GET_ERROR_NAME, code, "cudaError_" + code);
    }

    /** {@code cudaGetErrorString}. */
    static String errorString(int code) {
        return describe(GET_ERROR_STRING, code, "unknown CUDA error " + code);
    }

    private static String describe(MethodHandle function, int code, String fallback) {
        if (function == null) {
            return fallback;
        }
        try {
            MemorySegment text = (MemorySegment) function.invokeExact(code);
            return text.address() == 0 ? fallback : text.reinterpret(1024).getString(0);
        } catch (Throwable t) {
            return fallback;
        }
    }

    /** Runs an int-returning query into a fresh int. */
    static int queryInt(MethodHandle function, String call) {
        requireLibrary();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment value = arena.allocate(JAVA_INT);
            check((int) function.invokeExact(value), call);
            return value.get(JAVA_INT, 0);
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
