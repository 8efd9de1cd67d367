package org.jdlpack.tensorflow;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.bytedeco.javacpp.Loader;
import org.jdlpack.abi.plumbing.Downcalls;
import org.jdlpack.abi.plumbing.SymbolTable;

/**
 * How jdlpack reaches TensorFlow: the {@code libtensorflow_cc} and {@code libtensorflow_framework}
 * that TensorFlow Java loaded through JavaCPP's {@code Loader} (never a second copy), the functions
 * this adapter calls, and one typed method per function holding its only {@code invokeExact}.
 *
 * <p>C functions of TensorFlow's C API wherever they do the job: reading a {@code TF_Tensor}
 * ({@code TF_TensorType}, {@code TF_NumDims}, {@code TF_Dim}, {@code TF_TensorData}), a new
 * {@code TFE_TensorHandle} as an export's hold on the buffer ({@code TFE_NewTensorHandle},
 * {@code TFE_DeleteTensorHandle}), a handle resolved to a {@code TF_Tensor}, statuses and the eager
 * context. One mangled C++ function, {@code tensorflow::TFE_HandleFromDLPack}, for which TensorFlow
 * 2.18 has no C entry; it reports refusals through its status rather than a C++ {@code throw},
 * but it accepts inputs that later abort the process (data not aligned to 64 bytes fails
 * {@code CHECK(IsAligned())} in the first kernel) or are read wrongly (lanes), so
 * {@link DLPackInputs} checks every field first.
 *
 * <p>Everything is bound when the class initializes, which {@link TensorFlowDLPack#get()} triggers;
 * what is missing is recorded, never thrown from the initializer, and {@link #require()} throws it.
 * Stateless after that and safe from any thread.
 */
final class LibTensorFlow {

    /** JavaCPP's names (keys of {@code Loader.getLoadedLibraries()}) of the two libraries with the entry points. */
    private static final String CC = "tensorflow_cc";
    private static final String FRAMEWORK = "tensorflow_framework";
    static final String HANDLE_FROM_DLPACK = "_ZN10tensorflow20TFE_HandleFromDLPackEPvP10TSL_StatusP11TFE_Context";

    /** {@code TF_Code} of success. */
    private static final int TF_OK = 0;

    private static final FunctionDescriptor OF_TENSOR_INT = FunctionDescriptor.of(JAVA_INT, JAVA_LONG);
    private static final FunctionDescriptor OF_TENSOR_LONG = FunctionDescriptor.of(JAVA_LONG, JAVA_LONG);
    private static final FunctionDescriptor NEW_WITH_STATUS = FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG);
    private static final FunctionDescriptor RELEASE = FunctionDescriptor.ofVoid(JAVA_LONG);
    private static final FunctionDescriptor MAKE = FunctionDescriptor.of(JAVA_LONG);

    /** Every function this adapter calls, with its C signature: all are checked before the first use. */
    private static final Map<String, FunctionDescriptor> REQUIRED = required();

    private static Map<String, FunctionDescriptor> required() {
        Map<String, FunctionDescriptor> functions = new LinkedHashMap<>();
        functions.put("TF_Version", FunctionDescriptor.of(ADDRESS));
        functions.put("TF_NewStatus", MAKE);
        functions.put("TF_DeleteStatus", RELEASE);
        functions.put("TF_GetCode", OF_TENSOR_INT);
        functions.put("TF_Message", FunctionDescriptor.of(ADDRESS, JAVA_LONG));
        functions.put("TF_TensorType", OF_TENSOR_INT);
        functions.put("TF_NumDims", OF_TENSOR_INT);
        functions.put("TF_Dim", FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_INT));
        functions.put("TF_TensorData", OF_TENSOR_LONG);
        functions.put("TF_TensorByteSize", OF_TENSOR_LONG);
        functions.put("TFE_NewContextOptions", MAKE);
        functions.put("TFE_DeleteContextOptions", RELEASE);
        functions.put("TFE_NewContext", NEW_WITH_STATUS);
        functions.put("TFE_NewTensorHandle", NEW_WITH_STATUS);
        functions.put("TFE_TensorHandleResolve", NEW_WITH_STATUS);
        functions.put("TFE_DeleteTensorHandle", RELEASE);
        functions.put(HANDLE_FROM_DLPACK, FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG));
        return functions;
    }

    /** Where the libraries were found, TensorFlow Java's version, and why they cannot be used (null when they can). */
    record Found(List<Path> libraries, String version, String failure) {
        /** {@return the library with the entry points ({@code tensorflow_cc}), or null when not found} */
        Path library() {
            return libraries.isEmpty() ? null : libraries.get(0);
        }
    }

    static final Found FOUND;
    private static final SymbolTable SYMBOLS;

    static {
        Found found = find();
        SYMBOLS = found.failure() != null ? SymbolTable.unbound(REQUIRED, found.failure(), TensorFlowUnavailableException::new)
                // dlopen of paths already loaded: the same copies, only their symbols looked up
                : SymbolTable.bind(LibTensorFlow.class, found.libraries(), REQUIRED, missing -> "TensorFlow from TensorFlow "
                        + "Java " + found.version() + " (" + found.library() + ") lacks " + missing + ": this adapter needs the "
                        + "C API and the DLPack entry point of TensorFlow 2.18 (TensorFlow Java 1.1.0); use that version, or one "
                        + "whose library exports these symbols", TensorFlowUnavailableException::new);
        FOUND = new Found(found.libraries(), found.version(), SYMBOLS.failure());
    }

    /** {@return where TensorFlow Java's two libraries are, or why they cannot be used} */
    private static Found find() {
        String os = System.getProperty("os.name", "");
        if (os.startsWith("Windows")) {
            return new Found(List.of(), null, "TensorFlow on Windows is built with the MSVC C++ ABI, whose name and calling "
                    + "convention for tensorflow::TFE_HandleFromDLPack differ from the Itanium ABI this adapter calls; it is "
                    + "refused there. Use Tensor.of(type, shape, buffer) (a copy), or run on Linux or macOS");
        }
        String version;
        Map<String, String> loaded;
        try {
            // What TensorFlow Java does before its first call: loads both libraries once per process.
            Loader.load(org.tensorflow.internal.c_api.global.tensorflow.class);
            version = tensorFlowJavaVersion();
            loaded = Loader.getLoadedLibraries();
        } catch (NoClassDefFoundError | UnsatisfiedLinkError e) {
            return new Found(List.of(), null, "TensorFlow Java did not load (" + e + "): add "
                    + "org.tensorflow:tensorflow-core-api and org.tensorflow:tensorflow-core-native with the classifier of your platform (for example linux-x86_64)");
        }
        Path cc = loadedPath(loaded, CC);
        Path framework = loadedPath(loaded, FRAMEWORK);
        if (cc == null || framework == null) {
            return new Found(List.of(), version, "TensorFlow Java " + version + " loaded, but " + CC + " or " + FRAMEWORK
                    + " is not among JavaCPP's loaded libraries (" + loaded.keySet() + ")");
        }
        return new Found(List.of(cc, framework), version, null);
    }

    private static Path loadedPath(Map<String, String> loaded, String name) {
        for (var entry : loaded.entrySet()) {
            // JavaCPP's keys carry the version suffix of the preload ("tensorflow_cc@.2")
            if ((entry.getKey().equals(name) || entry.getKey().startsWith(name + "@")) && entry.getValue() != null
                    && Files.exists(Path.of(entry.getValue()))) {
                return Path.of(entry.getValue());
            }
        }
        return null;
    }

    private static String tensorFlowJavaVersion() {
        try {
            String version = Loader.getVersion("org.tensorflow", "tensorflow-core-api", org.tensorflow.Tensor.class);
            return version != null ? version : "(unknown version)";
        } catch (java.io.IOException e) {
            return "(unknown version: " + e.getMessage() + ")";
        }
    }

    private static MethodHandle handle(String name) {
        return SYMBOLS.handle(name);
    }

    private static final MethodHandle VERSION = handle("TF_Version");
    private static final MethodHandle NEW_STATUS = handle("TF_NewStatus");
    private static final MethodHandle DELETE_STATUS = handle("TF_DeleteStatus");
    private static final MethodHandle GET_CODE = handle("TF_GetCode");
    private static final MethodHandle MESSAGE = handle("TF_Message");
    private static final MethodHandle TENSOR_TYPE = handle("TF_TensorType");
    private static final MethodHandle NUM_DIMS = handle("TF_NumDims");
    private static final MethodHandle DIM = handle("TF_Dim");
    private static final MethodHandle TENSOR_DATA = handle("TF_TensorData");
    private static final MethodHandle TENSOR_BYTE_SIZE = handle("TF_TensorByteSize");
    private static final MethodHandle NEW_CONTEXT_OPTIONS = handle("TFE_NewContextOptions");
    private static final MethodHandle DELETE_CONTEXT_OPTIONS = handle("TFE_DeleteContextOptions");
    private static final MethodHandle NEW_CONTEXT = handle("TFE_NewContext");
    private static final MethodHandle NEW_TENSOR_HANDLE = handle("TFE_NewTensorHandle");
    private static final MethodHandle RESOLVE = handle("TFE_TensorHandleResolve");
    private static final MethodHandle DELETE_TENSOR_HANDLE = handle("TFE_DeleteTensorHandle");
    private static final MethodHandle FROM_DLPACK = handle(HANDLE_FROM_DLPACK);

    private LibTensorFlow() {
    }

    /** Throws {@link TensorFlowUnavailableException} with what is missing, unless every entry point is there. */
    static void require() {
        if (FOUND.failure() != null) {
            throw new TensorFlowUnavailableException(FOUND.failure());
        }
    }

    /** {@return {@code TF_Version()}, the TensorFlow version of the loaded library, such as {@code 2.18.0}} */
    @SuppressWarnings("restricted") // a NUL-terminated string TensorFlow owns for the process
    static String version() {
        try {
            return ((MemorySegment) VERSION.invokeExact()).reinterpret(Long.MAX_VALUE).getString(0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * A {@code TF_Status} for one call; delete it with {@link #deleteStatus}. Made per call, not per
     * thread: virtual threads would leave one behind each.
     */
    static long newStatus() {
        try {
            return (long) NEW_STATUS.invokeExact();
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static void deleteStatus(long status) {
        try {
            DELETE_STATUS.invokeExact(status);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** Throws, naming the call and TensorFlow's message, unless {@code status} says OK. */
    @SuppressWarnings("restricted") // TF_Message: a NUL-terminated string the status owns, read before it is deleted
    private static void check(long status, String call) {
        try {
            int code = (int) GET_CODE.invokeExact(status);
            if (code != TF_OK) {
                String message = ((MemorySegment) MESSAGE.invokeExact(status)).reinterpret(Long.MAX_VALUE).getString(0);
                throw new IllegalArgumentException(call + " failed (TF_Code " + code + "): " + message);
            }
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return the {@code TF_DataType} of a {@code TF_Tensor}} */
    static int tensorType(long tensor) {
        try {
            return (int) TENSOR_TYPE.invokeExact(tensor);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static int numDims(long tensor) {
        try {
            return (int) NUM_DIMS.invokeExact(tensor);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static long dim(long tensor, int index) {
        try {
            return (long) DIM.invokeExact(tensor, index);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return the address of the tensor's first element; TensorFlow may give NULL for an empty tensor} */
    static long tensorData(long tensor) {
        try {
            return (long) TENSOR_DATA.invokeExact(tensor);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static long tensorByteSize(long tensor) {
        try {
            return (long) TENSOR_BYTE_SIZE.invokeExact(tensor);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return a new eager context with default options: the one {@code TFE_HandleFromDLPack} places tensors in} */
    static long newContext() {
        long status = newStatus();
        try {
            long options = (long) NEW_CONTEXT_OPTIONS.invokeExact();
            try {
                long context = (long) NEW_CONTEXT.invokeExact(options, status);
                check(status, "TFE_NewContext");
                return context;
            } finally {
                DELETE_CONTEXT_OPTIONS.invokeExact(options);
            }
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        } finally {
            deleteStatus(status);
        }
    }

    /** {@return a new {@code TFE_TensorHandle} sharing {@code tensor}'s buffer: one more reference to it} */
    static long newTensorHandle(long tensor) {
        long status = newStatus();
        try {
            long handle = (long) NEW_TENSOR_HANDLE.invokeExact(tensor, status);
            check(status, "TFE_NewTensorHandle");
            return handle;
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        } finally {
            deleteStatus(status);
        }
    }

    /** {@return a new {@code TF_Tensor} over the handle's buffer (shared, not copied, for a CPU tensor)} */
    static long resolve(long handle) {
        long status = newStatus();
        try {
            long tensor = (long) RESOLVE.invokeExact(handle, status);
            check(status, "TFE_TensorHandleResolve");
            return tensor;
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        } finally {
            deleteStatus(status);
        }
    }

    /** Deletes a handle: drops its reference to the buffer. Never throws for a valid handle (release actions run in deleters). */
    static void deleteTensorHandle(long handle) {
        try {
            DELETE_TENSOR_HANDLE.invokeExact(handle);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * {@code tensorflow::TFE_HandleFromDLPack(managed, status, context)}: a handle over the legacy
     * managed tensor's memory; TensorFlow calls its deleter when the buffer dies. Only for a struct
     * {@link DLPackInputs} accepted.
     *
     * @throws IllegalArgumentException with TensorFlow's message if it refused (the deleter may then
     *                                  have been called: TensorFlow calls it when a refusal comes
     *                                  after it wrapped the memory)
     */
    static long handleFromDLPack(long managed, long context) {
        long status = newStatus();
        try {
            long handle = (long) FROM_DLPACK.invokeExact(managed, status, context);
            check(status, "tensorflow::TFE_HandleFromDLPack");
            return handle;
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        } finally {
            deleteStatus(status);
        }
    }
}
