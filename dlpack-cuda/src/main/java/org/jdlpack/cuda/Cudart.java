package org.jdlpack.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.jdlpack.abi.plumbing.Downcalls;
import org.jdlpack.abi.plumbing.NativeLibrary;

/**
 * How jdlpack reaches libcudart: finding and loading the library, binding its functions, the
 * constants of the CUDA runtime headers the calls need (checked against cuda_runtime_api.h by the
 * tests when the headers are installed), error names, and the call shapes that check a result.
 *
 * <p>The library is searched in this order: {@code $CUDA_HOME} and {@code $CUDA_PATH}
 * ({@code lib64}, then {@code lib}), {@code /usr/local/cuda*} (newest first), then the dynamic
 * loader's own search for {@code libcudart.so.13}, {@code .12}, {@code .11} and {@code libcudart.so}.
 *
 * <p>The call layer is this class and one class per area, each binding its own functions and
 * holding one typed method per function: {@link CudartDevices} (versions and devices),
 * {@link CudartMemory} (allocation, copies, pointer attributes) and {@link CudartStreams} (streams
 * and events). The split keeps each class to one concern, so a new function lands next to its
 * kind; the call shapes stay here because every area uses them. Besides the error naming here,
 * those methods are the only code that invokes a downcall, always through a shape here, so every
 * call throws {@link CudaException} for an error code, {@link IllegalStateException} for a handle
 * whose owner is closed (handles are segments bound to their owner's lifetime), and lets Errors
 * through.
 *
 * <p>Everything here is safe from any thread; the current device is per-thread CUDA state (see
 * {@link CurrentDevice}).
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

    private static final List<String> SONAMES = List.of("libcudart.so.13", "libcudart.so.12", "libcudart.so.11", "libcudart.so");
    private static final NativeLibrary RUNTIME = load();
    /** The path or soname that loaded, or null. */
    static final Path LIBRARY = RUNTIME.name().map(Path::of).orElse(null);
    static final String LOAD_FAILURE = RUNTIME.loadFailure();

    private static final MethodHandle GET_ERROR_NAME = bindReturning("cudaGetErrorName", ADDRESS, JAVA_INT);
    private static final MethodHandle GET_ERROR_STRING = bindReturning("cudaGetErrorString", ADDRESS, JAVA_INT);

    private Cudart() {
    }

    private static NativeLibrary load() {
        List<Path> files = candidates();
        List<String> tried = Stream.concat(files.stream().map(Path::toString), SONAMES.stream()).toList();
        return NativeLibrary.load(Cudart.class,
                Stream.concat(files.stream().filter(Files::isRegularFile).map(Path::toString), SONAMES.stream()).toList(),
                "no CUDA runtime library (libcudart) found; tried " + tried + ". Install the CUDA runtime or set CUDA_HOME",
                CudaException::new);
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

    /** An int-returning downcall for {@code name} (package-private for the missing-symbol test). */
    static MethodHandle bind(String name, MemoryLayout... arguments) {
        return bindReturning(name, JAVA_INT, arguments);
    }

    /**
     * The downcall for {@code name}; when the library or the symbol is missing, a stand-in that
     * throws a {@link CudaException} saying which, at the call.
     */
    private static MethodHandle bindReturning(String name, MemoryLayout result, MemoryLayout... arguments) {
        return RUNTIME.bind(name, FunctionDescriptor.of(result, arguments),
                LIBRARY + " has no function " + name + "; it is older than this library needs");
    }

    /** Fails with a clear message when libcudart could not be loaded. */
    static void requireLibrary() {
        RUNTIME.require();
    }

    /** Throws unless {@code code} is cudaSuccess. */
    static void check(int code, String call) {
        if (code != SUCCESS) {
            throw new CudaException(code, call);
        }
    }

    /** A function that returns a {@code cudaError_t}. */
    @FunctionalInterface
    interface Status {
        int call() throws Throwable;
    }

    /** Runs {@code function} and checks its code; {@code call} names it in the exception. */
    static void call(String call, Status function) {
        try {
            check(function.call(), call);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return what {@code function} wrote to its out-parameter} See {@link Downcalls#out}. */
    static long out(ValueLayout slot, String call, Downcalls.OutCall function) {
        return Downcalls.out(slot, call, function, Cudart::check);
    }

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
}
