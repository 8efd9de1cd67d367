package org.jdlpack.libtorch;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BOOLEAN;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jdlpack.abi.plumbing.Downcalls;
import org.jdlpack.abi.plumbing.SymbolTable;

/**
 * The calls into libtorch's AOTInductor C shim ({@code aoti_torch_*}) that both libtorch adapters
 * make, one typed method per function holding its only {@code invokeExact}.
 *
 * <p>The shim's functions catch every C++ exception inside and return a status (non-zero: libtorch
 * threw, and the shim logged the reason to stderr), so no input reaches a C++ {@code throw} through
 * them. A tensor is an {@code AtenTensorHandle}: the address of a heap {@code at::Tensor}, which
 * is also what JavaCPP's {@code Tensor} and DJL's {@code PtNDArray} hold.
 *
 * <p>An instance wraps the functions one adapter bound from its own libtorch (see
 * {@link #functions}); this class holds no libtorch itself, so that the 2.7.1 and 2.10 builds
 * never meet in one class. Immutable and safe from any thread.
 *
 * @since 0.1
 */
public final class AotiShim {

    private static final FunctionDescriptor GETTER = FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS);
    private static final FunctionDescriptor CONSTANT = FunctionDescriptor.of(JAVA_INT);

    private final SymbolTable symbols;
    private final MethodHandle isDefined;
    private final MethodHandle getLayout;
    private final MethodHandle getDeviceType;
    private final MethodHandle getDeviceIndex;
    private final MethodHandle getDtype;
    private final MethodHandle getDim;
    private final MethodHandle getDataPtr;
    private final MethodHandle getSizes;
    private final MethodHandle getStrides;
    private final MethodHandle newTensorHandle;
    private final MethodHandle newUninitializedTensor;
    private final MethodHandle deleteTensorObject;

    /**
     * The shim functions an adapter binds, with their C signatures.
     *
     * @param dtypes      the types the adapter carries: their constant functions are included
     * @param readsLayout whether the adapter reads {@code aoti_torch_is_defined}, {@code aoti_torch_get_layout}
     *                    and {@code aoti_torch_layout_strided} (libtorch 2.7.1's shim lacks them)
     * @return the functions, in a stable order (the order of a "missing" message)
     */
    public static Map<String, FunctionDescriptor> functions(TorchDTypes dtypes, boolean readsLayout) {
        Map<String, FunctionDescriptor> functions = new LinkedHashMap<>();
        if (readsLayout) {
            functions.put("aoti_torch_is_defined", GETTER);
            functions.put("aoti_torch_get_layout", GETTER);
        }
        for (String getter : List.of("aoti_torch_get_device_type", "aoti_torch_get_device_index", "aoti_torch_get_dtype",
                "aoti_torch_get_dim", "aoti_torch_get_data_ptr", "aoti_torch_get_sizes", "aoti_torch_get_strides",
                "aoti_torch_new_tensor_handle")) {
            functions.put(getter, GETTER);
        }
        functions.put("aoti_torch_new_uninitialized_tensor", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        functions.put("aoti_torch_delete_tensor_object", FunctionDescriptor.of(JAVA_INT, JAVA_LONG));
        if (readsLayout) {
            functions.put("aoti_torch_layout_strided", CONSTANT);
        }
        functions.put("aoti_torch_device_type_cpu", CONSTANT);
        for (TorchDTypes.Entry entry : dtypes.entries()) {
            functions.put(entry.constantFunction(), CONSTANT);
        }
        return functions;
    }

    /**
     * Wraps the functions an adapter bound.
     *
     * @param symbols     a table holding every function of {@link #functions} (bound, or stand-ins throwing why not)
     * @param readsLayout as given to {@link #functions}
     */
    public AotiShim(SymbolTable symbols, boolean readsLayout) {
        this.symbols = symbols;
        this.isDefined = readsLayout ? symbols.handle("aoti_torch_is_defined") : null;
        this.getLayout = readsLayout ? symbols.handle("aoti_torch_get_layout") : null;
        this.getDeviceType = symbols.handle("aoti_torch_get_device_type");
        this.getDeviceIndex = symbols.handle("aoti_torch_get_device_index");
        this.getDtype = symbols.handle("aoti_torch_get_dtype");
        this.getDim = symbols.handle("aoti_torch_get_dim");
        this.getDataPtr = symbols.handle("aoti_torch_get_data_ptr");
        this.getSizes = symbols.handle("aoti_torch_get_sizes");
        this.getStrides = symbols.handle("aoti_torch_get_strides");
        this.newTensorHandle = symbols.handle("aoti_torch_new_tensor_handle");
        this.newUninitializedTensor = symbols.handle("aoti_torch_new_uninitialized_tensor");
        this.deleteTensorObject = symbols.handle("aoti_torch_delete_tensor_object");
    }

    /**
     * {@return the value of one of the shim's constant functions, such as {@code aoti_torch_dtype_float32}}
     *
     * @param function the constant function's name
     */
    public int constant(String function) {
        try {
            MethodHandle constant = symbols.handle(function);
            return (int) constant.invokeExact();
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

    /**
     * {@return whether the tensor is defined; only where the adapter reads the layout}
     *
     * @param tensor the {@code at::Tensor*} (the shim's {@code AtenTensorHandle})
     * @param out    scratch memory for the shim's out-parameter, at least 8 bytes
     */
    public boolean isDefined(long tensor, MemorySegment out) {
        try {
            check((int) isDefined.invokeExact(tensor, out), "aoti_torch_is_defined", tensor);
            return out.get(JAVA_BOOLEAN, 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * {@return the tensor's layout code; only where the adapter reads the layout}
     *
     * @param tensor the {@code at::Tensor*} (the shim's {@code AtenTensorHandle})
     * @param out    scratch memory for the shim's out-parameter, at least 8 bytes
     */
    public int layout(long tensor, MemorySegment out) {
        try {
            check((int) getLayout.invokeExact(tensor, out), "aoti_torch_get_layout", tensor);
            return out.get(JAVA_INT, 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * {@return the tensor's device type code (compare with {@code aoti_torch_device_type_cpu()})}
     *
     * @param tensor the {@code at::Tensor*} (the shim's {@code AtenTensorHandle})
     * @param out    scratch memory for the shim's out-parameter, at least 8 bytes
     */
    public int deviceType(long tensor, MemorySegment out) {
        try {
            check((int) getDeviceType.invokeExact(tensor, out), "aoti_torch_get_device_type", tensor);
            return out.get(JAVA_INT, 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * {@return the tensor's device index}
     *
     * @param tensor the {@code at::Tensor*} (the shim's {@code AtenTensorHandle})
     * @param out    scratch memory for the shim's out-parameter, at least 8 bytes
     */
    public int deviceIndex(long tensor, MemorySegment out) {
        try {
            check((int) getDeviceIndex.invokeExact(tensor, out), "aoti_torch_get_device_index", tensor);
            return out.get(JAVA_INT, 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * {@return the tensor's torch {@code ScalarType} code}
     *
     * @param tensor the {@code at::Tensor*} (the shim's {@code AtenTensorHandle})
     * @param out    scratch memory for the shim's out-parameter, at least 8 bytes
     */
    public int dtype(long tensor, MemorySegment out) {
        try {
            check((int) getDtype.invokeExact(tensor, out), "aoti_torch_get_dtype", tensor);
            return out.get(JAVA_INT, 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * {@return the tensor's number of dimensions}
     *
     * @param tensor the {@code at::Tensor*} (the shim's {@code AtenTensorHandle})
     * @param out    scratch memory for the shim's out-parameter, at least 8 bytes
     */
    public long dim(long tensor, MemorySegment out) {
        try {
            check((int) getDim.invokeExact(tensor, out), "aoti_torch_get_dim", tensor);
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * {@return the address of the first element (the storage offset included); may be 0 for an empty tensor}
     *
     * @param tensor the {@code at::Tensor*} (the shim's {@code AtenTensorHandle})
     * @param out    scratch memory for the shim's out-parameter, at least 8 bytes
     */
    public long dataPtr(long tensor, MemorySegment out) {
        try {
            check((int) getDataPtr.invokeExact(tensor, out), "aoti_torch_get_data_ptr", tensor);
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * {@return the address of the tensor's own {@code int64_t} sizes, valid while the tensor is unchanged}
     *
     * @param tensor the {@code at::Tensor*} (the shim's {@code AtenTensorHandle})
     * @param out    scratch memory for the shim's out-parameter, at least 8 bytes
     */
    public long sizes(long tensor, MemorySegment out) {
        try {
            check((int) getSizes.invokeExact(tensor, out), "aoti_torch_get_sizes", tensor);
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * {@return the address of the tensor's own {@code int64_t} strides, in elements}
     *
     * @param tensor the {@code at::Tensor*} (the shim's {@code AtenTensorHandle})
     * @param out    scratch memory for the shim's out-parameter, at least 8 bytes
     */
    public long strides(long tensor, MemorySegment out) {
        try {
            check((int) getStrides.invokeExact(tensor, out), "aoti_torch_get_strides", tensor);
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * {@return a new heap {@code at::Tensor} sharing {@code tensor}'s implementation: one more reference to it}
     *
     * @param tensor the {@code at::Tensor*} (the shim's {@code AtenTensorHandle})
     * @param out    scratch memory for the shim's out-parameter, at least 8 bytes
     */
    public long newTensorHandle(long tensor, MemorySegment out) {
        try {
            check((int) newTensorHandle.invokeExact(tensor, out), "aoti_torch_new_tensor_handle", tensor);
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * {@return a new heap {@code at::Tensor} that is undefined: it holds no reference, so
     * constructing over it leaks nothing, and {@code delete} frees it}
     *
     * @param out scratch memory for the shim's out-parameter, at least 8 bytes
     */
    public long newUndefinedTensor(MemorySegment out) {
        try {
            check((int) newUninitializedTensor.invokeExact(out), "aoti_torch_new_uninitialized_tensor", 0);
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * Deletes a heap tensor handle; returns the status instead of throwing (release actions run in deleters).
     *
     * @param handle the {@code at::Tensor*} to delete
     * @return the shim's status: 0 when deleted
     */
    public int deleteTensorObject(long handle) {
        try {
            return (int) deleteTensorObject.invokeExact(handle);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }
}
