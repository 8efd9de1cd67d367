package org.jdlpack.javacpp.pytorch;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.bytedeco.javacpp.Loader;
import org.jdlpack.abi.plumbing.Downcalls;
import org.jdlpack.abi.plumbing.NativeAccess;

/**
 * How jdlpack reaches libtorch: the library JavaCPP loaded (never a second copy), the functions
 * this adapter calls, and one typed method per function holding its only {@code invokeExact}.
 *
 * <p>Two kinds of entry point. The AOTInductor C shim ({@code aoti_torch_*}): C functions that
 * catch every C++ exception and return an error code, used wherever they suffice (reading a
 * tensor, a new handle as an export's owner, deleting it). And two mangled C++ functions,
 * {@code at::fromDLPack} and {@code at::fromDLPackVersioned}, for which libtorch 2.10 has no C
 * entry: they throw on input they refuse, and nothing catches that, so {@link DLPackInputs}
 * checks every field before they are called. Under the Itanium C++ ABI an {@code at::Tensor}
 * returned by value (it has a destructor) is written to a slot the caller passes first, and the
 * {@code std::function<void(void*)>} argument, passed by value, is passed as the address of a
 * caller-owned object: an empty one (all 32 bytes zero in libstdc++ and libc++) asks libtorch to
 * call the struct's own deleter.
 *
 * <p>Everything is bound when the class initializes, which {@link TorchDLPack#get()} triggers;
 * what is missing is recorded, never thrown from the initializer, and {@link #require()} throws
 * it. Stateless after that and safe from any thread.
 */
final class LibTorch {

    /** The JavaCPP library name (the key in {@code Loader.getLoadedLibraries()}) of the library with the entry points. */
    private static final String TORCH_CPU = "torch_cpu";
    static final String FROM_DLPACK = "_ZN2at10fromDLPackEP15DLManagedTensorSt8functionIFvPvEE";
    static final String FROM_DLPACK_VERSIONED = "_ZN2at19fromDLPackVersionedEP24DLManagedTensorVersionedSt8functionIFvPvEE";
    /** The size of {@code std::function<void(void*)>} on LP64 (libstdc++ and libc++): two words of storage, a manager, an invoker. */
    static final long STD_FUNCTION_BYTES = 32;

    private static final FunctionDescriptor GETTER = FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS);
    private static final FunctionDescriptor CONSTANT = FunctionDescriptor.of(JAVA_INT);
    private static final FunctionDescriptor FROM_SIGNATURE = FunctionDescriptor.ofVoid(JAVA_LONG, JAVA_LONG, ADDRESS);

    /** Every function this adapter calls, with its C signature: all are checked before the first use. */
    private static final Map<String, FunctionDescriptor> REQUIRED = required();

    private static Map<String, FunctionDescriptor> required() {
        Map<String, FunctionDescriptor> functions = new LinkedHashMap<>();
        for (String getter : List.of("aoti_torch_is_defined", "aoti_torch_get_layout", "aoti_torch_get_device_type",
                "aoti_torch_get_device_index", "aoti_torch_get_dtype", "aoti_torch_get_dim", "aoti_torch_get_data_ptr",
                "aoti_torch_get_sizes", "aoti_torch_get_strides", "aoti_torch_new_tensor_handle")) {
            functions.put(getter, GETTER);
        }
        functions.put("aoti_torch_delete_tensor_object", FunctionDescriptor.of(JAVA_INT, JAVA_LONG));
        functions.put("aoti_torch_layout_strided", CONSTANT);
        functions.put("aoti_torch_device_type_cpu", CONSTANT);
        for (TorchDTypes.Entry entry : TorchDTypes.ENTRIES) {
            functions.put(entry.constantFunction(), CONSTANT);
        }
        functions.put(FROM_DLPACK, FROM_SIGNATURE);
        functions.put(FROM_DLPACK_VERSIONED, FROM_SIGNATURE);
        return functions;
    }

    /** Where the library was found, its presets' version, and why it cannot be used (null when it can). */
    record Found(Path library, String version, String failure) {
    }

    static final Found FOUND;
    private static final Map<String, MethodHandle> HANDLES = new LinkedHashMap<>();

    static {
        FOUND = bind();
        for (var function : REQUIRED.entrySet()) {
            String failure = FOUND.failure();
            HANDLES.computeIfAbsent(function.getKey(), name -> Downcalls.failing(function.getValue().toMethodType(),
                    () -> new TorchUnavailableException(failure)));
        }
    }

    /** Binds every required function into {@link #HANDLES}; {@return where libtorch is, and what is missing} */
    @SuppressWarnings("restricted")
    private static Found bind() {
        Found found = find();
        SymbolLookup lookup = null;
        if (found.failure() == null) {
            try {
                lookup = SymbolLookup.libraryLookup(found.library(), Arena.global()); // dlopen of a loaded path: the same copy
            } catch (IllegalCallerException e) {
                found = new Found(found.library(), found.version(), NativeAccess.denied(LibTorch.class, e).getMessage());
            }
        }
        if (lookup != null) {
            List<String> missing = new ArrayList<>();
            for (var function : REQUIRED.entrySet()) {
                lookup.find(function.getKey()).ifPresentOrElse(
                        address -> HANDLES.put(function.getKey(), Linker.nativeLinker().downcallHandle(address, function.getValue())),
                        () -> missing.add(function.getKey()));
            }
            if (!missing.isEmpty()) {
                found = new Found(found.library(), found.version(), "libtorch from JavaCPP pytorch " + found.version() + " ("
                        + found.library() + ") lacks " + missing + ": this adapter needs the DLPack entry points and the "
                        + "AOTInductor C shim of libtorch 2.10 (JavaCPP pytorch 2.10.0-1.5.13); use that version of the presets, "
                        + "or one whose libtorch exports these symbols");
            }
        }
        return found;
    }

    private static Found find() {
        String os = System.getProperty("os.name", "");
        if (os.startsWith("Windows")) {
            return new Found(null, null, "libtorch on Windows is built with the MSVC C++ ABI, whose names and calling "
                    + "conventions for at::fromDLPack differ from the Itanium ABI this adapter calls; it is refused there. "
                    + "Use torch.from_blob from JavaCPP, or run on Linux or macOS");
        }
        String version;
        String path;
        try {
            Loader.load(org.bytedeco.pytorch.global.torch.class); // what JavaCPP does on the first tensor: loaded once per process
            version = presetsVersion();
            path = Loader.getLoadedLibraries().get(TORCH_CPU);
        } catch (NoClassDefFoundError | UnsatisfiedLinkError e) {
            return new Found(null, null, "JavaCPP's pytorch presets did not load (" + e + "): add org.bytedeco:pytorch "
                    + "with the classifier of your platform (for example linux-x86_64), org.bytedeco:javacpp and "
                    + "org.bytedeco:openblas with the same classifier, at versions matching the presets");
        }
        if (path == null || !Files.exists(Path.of(path))) {
            return new Found(null, version, "JavaCPP loaded pytorch " + version + " but no " + TORCH_CPU
                    + " library is among its loaded libraries (" + Loader.getLoadedLibraries().keySet() + ")");
        }
        return new Found(Path.of(path), version, null);
    }

    private static String presetsVersion() {
        try {
            String version = Loader.getVersion("org.bytedeco", "pytorch");
            return version != null ? version : "(unknown version)";
        } catch (java.io.IOException e) {
            return "(unknown version: " + e.getMessage() + ")";
        }
    }

    private static MethodHandle handle(String name) {
        return HANDLES.get(name);
    }

    private static final MethodHandle IS_DEFINED = handle("aoti_torch_is_defined");
    private static final MethodHandle GET_LAYOUT = handle("aoti_torch_get_layout");
    private static final MethodHandle GET_DEVICE_TYPE = handle("aoti_torch_get_device_type");
    private static final MethodHandle GET_DEVICE_INDEX = handle("aoti_torch_get_device_index");
    private static final MethodHandle GET_DTYPE = handle("aoti_torch_get_dtype");
    private static final MethodHandle GET_DIM = handle("aoti_torch_get_dim");
    private static final MethodHandle GET_DATA_PTR = handle("aoti_torch_get_data_ptr");
    private static final MethodHandle GET_SIZES = handle("aoti_torch_get_sizes");
    private static final MethodHandle GET_STRIDES = handle("aoti_torch_get_strides");
    private static final MethodHandle NEW_TENSOR_HANDLE = handle("aoti_torch_new_tensor_handle");
    private static final MethodHandle DELETE_TENSOR_OBJECT = handle("aoti_torch_delete_tensor_object");
    private static final MethodHandle FROM = handle(FROM_DLPACK);
    private static final MethodHandle FROM_VERSIONED = handle(FROM_DLPACK_VERSIONED);

    private LibTorch() {
    }

    /** Throws {@link TorchUnavailableException} with what is missing, unless every entry point is there. */
    static void require() {
        if (FOUND.failure() != null) {
            throw new TorchUnavailableException(FOUND.failure());
        }
    }

    /** {@return the value of one of the shim's constant functions, such as {@code aoti_torch_dtype_float32}} */
    static int constant(String function) {
        try {
            return (int) handle(function).invokeExact();
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * Checks a shim status: non-zero means libtorch threw inside and the shim caught it (and logged
     * it to stderr).
     */
    private static void check(int status, String call, long tensor) {
        if (status != 0) {
            throw new IllegalArgumentException(call + " failed (status " + status + ") for the at::Tensor at 0x"
                    + Long.toHexString(tensor) + "; libtorch's reason is on stderr");
        }
    }

    static boolean isDefined(long tensor, MemorySegment out) {
        try {
            check((int) IS_DEFINED.invokeExact(tensor, out), "aoti_torch_is_defined", tensor);
            return out.get(java.lang.foreign.ValueLayout.JAVA_BOOLEAN, 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static int layout(long tensor, MemorySegment out) {
        try {
            check((int) GET_LAYOUT.invokeExact(tensor, out), "aoti_torch_get_layout", tensor);
            return out.get(JAVA_INT, 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static int deviceType(long tensor, MemorySegment out) {
        try {
            check((int) GET_DEVICE_TYPE.invokeExact(tensor, out), "aoti_torch_get_device_type", tensor);
            return out.get(JAVA_INT, 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static int deviceIndex(long tensor, MemorySegment out) {
        try {
            check((int) GET_DEVICE_INDEX.invokeExact(tensor, out), "aoti_torch_get_device_index", tensor);
            return out.get(JAVA_INT, 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static int dtype(long tensor, MemorySegment out) {
        try {
            check((int) GET_DTYPE.invokeExact(tensor, out), "aoti_torch_get_dtype", tensor);
            return out.get(JAVA_INT, 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static long dim(long tensor, MemorySegment out) {
        try {
            check((int) GET_DIM.invokeExact(tensor, out), "aoti_torch_get_dim", tensor);
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return the address of the first element (the storage offset included); may be 0 for an empty tensor} */
    static long dataPtr(long tensor, MemorySegment out) {
        try {
            check((int) GET_DATA_PTR.invokeExact(tensor, out), "aoti_torch_get_data_ptr", tensor);
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return the address of the tensor's own {@code int64_t} sizes, valid while the tensor is unchanged} */
    static long sizes(long tensor, MemorySegment out) {
        try {
            check((int) GET_SIZES.invokeExact(tensor, out), "aoti_torch_get_sizes", tensor);
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return the address of the tensor's own {@code int64_t} strides, in elements} */
    static long strides(long tensor, MemorySegment out) {
        try {
            check((int) GET_STRIDES.invokeExact(tensor, out), "aoti_torch_get_strides", tensor);
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return a new heap {@code at::Tensor} sharing {@code tensor}'s implementation: one more reference to it} */
    static long newTensorHandle(long tensor, MemorySegment out) {
        try {
            check((int) NEW_TENSOR_HANDLE.invokeExact(tensor, out), "aoti_torch_new_tensor_handle", tensor);
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** Deletes a handle {@link #newTensorHandle} made; returns the status instead of throwing (release actions run in deleters). */
    static int deleteTensorObject(long handle) {
        try {
            return (int) DELETE_TENSOR_OBJECT.invokeExact(handle);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * {@code at::fromDLPack(src, {})} or {@code at::fromDLPackVersioned(src, {})}: constructs the
     * result in {@code resultSlot}. Only for a struct {@link DLPackInputs} accepted: anything
     * libtorch refuses ends the process.
     *
     * @param versioned   which struct {@code managedTensor} is
     * @param resultSlot  an {@code at::Tensor} holding no reference (an undefined one), overwritten
     * @param noDeleter   {@link #STD_FUNCTION_BYTES} zero bytes: an empty {@code std::function}
     */
    static void fromDLPack(boolean versioned, long resultSlot, long managedTensor, MemorySegment noDeleter) {
        try {
            if (versioned) {
                FROM_VERSIONED.invokeExact(resultSlot, managedTensor, noDeleter);
            } else {
                FROM.invokeExact(resultSlot, managedTensor, noDeleter);
            }
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }
}
