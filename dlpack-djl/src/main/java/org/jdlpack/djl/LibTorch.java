package org.jdlpack.djl;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jdlpack.abi.plumbing.Downcalls;
import org.jdlpack.abi.plumbing.NativeAccess;

/**
 * How jdlpack reaches the libtorch DJL's PyTorch engine loaded (never a second copy): the functions
 * this adapter calls, and one typed method per function holding its only {@code invokeExact}.
 *
 * <p>DJL's native handle of a {@code PtNDArray} is the address of a heap {@code torch::Tensor}
 * (that is, an {@code at::Tensor}), made with {@code new} by DJL's JNI library and deleted with
 * {@code delete} when the NDArray closes: exactly what the AOTInductor C shim calls an
 * {@code AtenTensorHandle}. So the shim's C functions ({@code aoti_torch_*}, which catch every C++
 * exception and return an error code) read DJL's tensors, make the export's own handle and delete
 * it, and make the heap tensor a new NDArray takes over. One mangled C++ function,
 * {@code at::fromDLPack(DLManagedTensor*)}, for which libtorch 2.7.1 has no C entry (and no
 * {@code fromDLPackVersioned} at all): it throws on input it refuses, which nothing catches, so
 * {@link DLPackInputs} checks every field first. Under the Itanium C++ ABI the returned
 * {@code at::Tensor} (it has a destructor) is constructed in a slot the caller passes first. The
 * one-argument overload is the one that calls the struct's deleter when the storage dies: in
 * 2.7.1 the overload taking a {@code std::function} uses that function alone, and an empty one
 * makes a tensor that never frees (the 2.10 adapter's empty-function call would leak here).
 *
 * <p>Everything is bound when the class initializes, which {@link DjlDLPack#get()} triggers; what
 * is missing is recorded, never thrown from the initializer, and {@link #require()} throws it.
 * Stateless after that and safe from any thread.
 */
final class LibTorch {

    /** The libtorch this adapter is written against: DJL 0.36's PyTorch engine loads it. */
    static final String EXPECTED_VERSION = "2.7.1";
    /** {@code at::fromDLPack(DLManagedTensor*)}: the overload that makes the struct's own deleter torch's. */
    static final String FROM_DLPACK = "_ZN2at10fromDLPackEP15DLManagedTensor";

    private static final FunctionDescriptor GETTER = FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS);
    private static final FunctionDescriptor CONSTANT = FunctionDescriptor.of(JAVA_INT);

    /** Every function this adapter calls, with its C signature: all are checked before the first use. */
    private static final Map<String, FunctionDescriptor> REQUIRED = required();

    private static Map<String, FunctionDescriptor> required() {
        Map<String, FunctionDescriptor> functions = new LinkedHashMap<>();
        for (String getter : List.of("aoti_torch_get_device_type", "aoti_torch_get_device_index", "aoti_torch_get_dtype",
                "aoti_torch_get_dim", "aoti_torch_get_data_ptr", "aoti_torch_get_sizes", "aoti_torch_get_strides",
                "aoti_torch_new_tensor_handle")) {
            functions.put(getter, GETTER);
        }
        functions.put("aoti_torch_new_uninitialized_tensor", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        functions.put("aoti_torch_delete_tensor_object", FunctionDescriptor.of(JAVA_INT, JAVA_LONG));
        functions.put("aoti_torch_device_type_cpu", CONSTANT);
        for (TorchDTypes.Entry entry : TorchDTypes.ENTRIES) {
            functions.put(entry.constantFunction(), CONSTANT);
        }
        functions.put(FROM_DLPACK, FunctionDescriptor.ofVoid(JAVA_LONG, JAVA_LONG));
        return functions;
    }

    /** Where the library was found, DJL's libtorch version, and why it cannot be used (null when it can). */
    record Found(Path library, String version, String failure) {
    }

    static final Found FOUND;
    private static final Map<String, MethodHandle> HANDLES = new LinkedHashMap<>();

    static {
        FOUND = bind();
        for (var function : REQUIRED.entrySet()) {
            String failure = FOUND.failure();
            HANDLES.computeIfAbsent(function.getKey(), name -> Downcalls.failing(function.getValue().toMethodType(),
                    () -> new DjlUnavailableException(failure)));
        }
    }

    /** Binds every required function into {@link #HANDLES}; {@return where libtorch is, and what is missing} */
    @SuppressWarnings("restricted")
    private static Found bind() {
        Found found = DjlLibTorch.find();
        if (found.failure() != null) {
            return found;
        }
        SymbolLookup lookup;
        try {
            lookup = SymbolLookup.libraryLookup(found.library(), Arena.global()); // dlopen of a mapped path: the same copy
        } catch (IllegalCallerException e) {
            return new Found(found.library(), found.version(), NativeAccess.denied(LibTorch.class, e).getMessage());
        }
        List<String> missing = new ArrayList<>();
        for (var function : REQUIRED.entrySet()) {
            lookup.find(function.getKey()).ifPresentOrElse(
                    address -> HANDLES.put(function.getKey(), Linker.nativeLinker().downcallHandle(address, function.getValue())),
                    () -> missing.add(function.getKey()));
        }
        if (!missing.isEmpty()) {
            return new Found(found.library(), found.version(), "the libtorch " + found.version() + " DJL loaded ("
                    + found.library() + ") lacks " + missing + ": this adapter needs at::fromDLPack and the AOTInductor C shim "
                    + "of libtorch " + EXPECTED_VERSION + " (DJL 0.36's PyTorch engine); use that DJL release, or set "
                    + "PYTORCH_VERSION to a libtorch that exports these symbols");
        }
        return found;
    }

    private static MethodHandle handle(String name) {
        return HANDLES.get(name);
    }

    private static final MethodHandle GET_DEVICE_TYPE = handle("aoti_torch_get_device_type");
    private static final MethodHandle GET_DEVICE_INDEX = handle("aoti_torch_get_device_index");
    private static final MethodHandle GET_DTYPE = handle("aoti_torch_get_dtype");
    private static final MethodHandle GET_DIM = handle("aoti_torch_get_dim");
    private static final MethodHandle GET_DATA_PTR = handle("aoti_torch_get_data_ptr");
    private static final MethodHandle GET_SIZES = handle("aoti_torch_get_sizes");
    private static final MethodHandle GET_STRIDES = handle("aoti_torch_get_strides");
    private static final MethodHandle NEW_TENSOR_HANDLE = handle("aoti_torch_new_tensor_handle");
    private static final MethodHandle NEW_UNINITIALIZED_TENSOR = handle("aoti_torch_new_uninitialized_tensor");
    private static final MethodHandle DELETE_TENSOR_OBJECT = handle("aoti_torch_delete_tensor_object");
    private static final MethodHandle FROM = handle(FROM_DLPACK);

    private LibTorch() {
    }

    /** Throws {@link DjlUnavailableException} with what is missing, unless every entry point is there. */
    static void require() {
        if (FOUND.failure() != null) {
            throw new DjlUnavailableException(FOUND.failure());
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

    /**
     * {@return a new heap {@code at::Tensor} that is undefined: it holds no reference, so
     * constructing over it leaks nothing, and {@code delete} (DJL's close) frees it}
     */
    static long newUndefinedTensor(MemorySegment out) {
        try {
            check((int) NEW_UNINITIALIZED_TENSOR.invokeExact(out), "aoti_torch_new_uninitialized_tensor", 0);
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** Deletes a heap tensor handle; returns the status instead of throwing (release actions run in deleters). */
    static int deleteTensorObject(long handle) {
        try {
            return (int) DELETE_TENSOR_OBJECT.invokeExact(handle);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * {@code at::fromDLPack(src)}: constructs the result in {@code resultSlot}. Only for a legacy
     * struct {@link DLPackInputs} accepted: anything libtorch refuses ends the process.
     *
     * @param resultSlot  an {@code at::Tensor} holding no reference (an undefined one), overwritten
     */
    static void fromDLPack(long resultSlot, long managedTensor) {
        try {
            FROM.invokeExact(resultSlot, managedTensor);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }
}
