package org.jdlpack.python.internal.bridge;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.System.Logger.Level;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.ref.WeakReference;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLDevice;
import org.jdlpack.abi.DLDeviceType;
import org.jdlpack.abi.ExportOptions;
import org.jdlpack.abi.ExportedTensor;
import org.jdlpack.abi.ImportLifetime;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.TensorLayout;
import org.jdlpack.abi.TensorSpec;
import org.jdlpack.abi.plumbing.Diagnostics;
import org.jdlpack.cpu.HostTensorView;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.python.DLPackSource;
import org.jdlpack.python.ExportRequest;
import org.jdlpack.python.internal.capi.EmbeddedPython;
import org.jdlpack.python.internal.capi.LibPython;
import org.jdlpack.python.internal.capi.LibPythonCapsules;
import org.jdlpack.python.internal.capi.LibPythonErrors;
import org.jdlpack.python.internal.capi.LibPythonObjects;
import org.jdlpack.python.internal.objects.PythonErrors;
import org.jdlpack.python.internal.objects.PythonStrings;

/**
 * The producer side of the DLPack 1.3 C exchange API: one {@code DLPackExchangeAPI} table (version
 * 1.3, no {@code prev_api}) in global memory, for the life of the process, held by a capsule named
 * {@code "dlpack_exchange_api"} in the attribute {@code __dlpack_c_exchange_api__} of the Java
 * tensor type. Every function is an FFM upcall that never lets an exception out.
 *
 * <ul>
 *   <li>{@code managed_tensor_from_py_object_no_sync}: a fresh {@code DLManagedTensorVersioned}, as
 *       {@code __dlpack__(max_version=(1, 3))} would give (the same export, the same deleter
 *       contract). Errors: -1 with a Python exception ({@code BufferError} for a request the
 *       source refuses or a released tensor, {@code TypeError} for an object of another type).</li>
 *   <li>{@code dltensor_from_py_object_no_sync}: fills the caller's {@code DLTensor} from an export
 *       the object keeps until it dies (the first call makes it), so the view stays valid until
 *       control returns and longer. Host tensors from {@link DLPackSource#of(OwnedHostTensor)}
 *       only, and not read-only ones (a {@code DLTensor} cannot say read-only): anything else is a
 *       {@code BufferError} naming {@code managed_tensor_from_py_object_no_sync}.</li>
 *   <li>{@code managed_tensor_to_py_object_no_sync}: takes a host tensor's ownership into a new
 *       Java tensor object (an {@link ImportedTensor} wrapped as a Java tensor, released when the
 *       object and every export of it are gone). A tensor the CPU cannot address is refused with a
 *       {@code BufferError}, its deleter called (the function steals it).</li>
 *   <li>{@code managed_tensor_allocator}: a new, zeroed, compact host tensor of the prototype's
 *       dtype and shape, owned by jdlpack (freed by its deleter). It touches no Python, as the
 *       header allows it to be called without the GIL; errors go through {@code SetError} with
 *       kind {@code ValueError} (a prototype jdlpack cannot make: another device, a bad dtype or
 *       shape), {@code MemoryError} or {@code RuntimeError}.</li>
 *   <li>{@code current_work_stream}: NULL for the CPU; for another device, what
 *       {@link DLPackSource#currentWorkStream()} says of the tensor this thread took last on that
 *       device (NULL if none).</li>
 * </ul>
 *
 * <p>Every function but the allocator is called by a consumer holding the GIL and runs with it
 * held (a source other than a host tensor exports without it, as {@code __dlpack__} does).
 * Thread safety: stateless but for the table and a per-thread last source.
 */
public final class ExchangeApi {

    private static final ThreadLocal<WeakReference<DLPackSource>> LAST_DEVICE_SOURCE = new ThreadLocal<>();

    private static final MemorySegment ALLOCATOR = stub("allocate", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, ADDRESS));
    /**
     * The two functions a consumer calls per tensor take their pointers as 64-bit integers (the
     * same registers on LP64 ABIs): the stub then boxes no segment per argument, which the JIT
     * could not take off the heap (80 bytes per tensor).
     */
    private static final MemorySegment FROM_PY_OBJECT = stub("fromPyObject", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG));
    /** The address of this module's {@code managed_tensor_from_py_object_no_sync}, by which an import knows its own type's table. */
    static final long FROM_PY_OBJECT_ADDRESS = FROM_PY_OBJECT.address();
    private static final MemorySegment TO_PY_OBJECT = stub("toPyObject", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    private static final MemorySegment DLTENSOR_FROM_PY_OBJECT = stub("dltensorFromPyObject",
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG));
    private static final MemorySegment CURRENT_WORK_STREAM = stub("currentWorkStream",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS));
    /** The table, for the life of the process. */
    static final MemorySegment TABLE = table();

    private static final MemorySegment CAPSULE_NAME = Arena.global().allocateFrom(DLPackExchangeAPILayout.CAPSULE_NAME);
    private static final MemorySegment KIND_VALUE_ERROR = Arena.global().allocateFrom("ValueError");
    private static final MemorySegment KIND_MEMORY_ERROR = Arena.global().allocateFrom("MemoryError");
    private static final MemorySegment KIND_RUNTIME_ERROR = Arena.global().allocateFrom("RuntimeError");
    /** {@code DLManagedTensorVersioned.dl_tensor} and the {@code DLTensor} fields read here. */
    private static final long DL_TENSOR = ManagedTensorKind.VERSIONED.dlTensorOffset();
    private static final long DLTENSOR_SIZE = 48;

    private ExchangeApi() {
    }

    private static MemorySegment stub(String name, FunctionDescriptor descriptor) {
        return EmbeddedPython.upcalls().stub(MethodHandles.lookup(), name, descriptor);
    }

    private static MemorySegment table() {
        MemorySegment table = Arena.global().allocate(DLPackExchangeAPILayout.LAYOUT);
        table.set(JAVA_INT, DLPackExchangeAPILayout.HEADER_VERSION_MAJOR, 1);
        table.set(JAVA_INT, DLPackExchangeAPILayout.HEADER_VERSION_MINOR, 3);
        table.set(ADDRESS, DLPackExchangeAPILayout.HEADER_PREV_API, MemorySegment.NULL);
        table.set(ADDRESS, DLPackExchangeAPILayout.MANAGED_TENSOR_ALLOCATOR, ALLOCATOR);
        table.set(ADDRESS, DLPackExchangeAPILayout.MANAGED_TENSOR_FROM_PY_OBJECT_NO_SYNC, FROM_PY_OBJECT);
        table.set(ADDRESS, DLPackExchangeAPILayout.MANAGED_TENSOR_TO_PY_OBJECT_NO_SYNC, TO_PY_OBJECT);
        table.set(ADDRESS, DLPackExchangeAPILayout.DLTENSOR_FROM_PY_OBJECT_NO_SYNC, DLTENSOR_FROM_PY_OBJECT);
        table.set(ADDRESS, DLPackExchangeAPILayout.CURRENT_WORK_STREAM, CURRENT_WORK_STREAM);
        return table;
    }

    /** Puts the capsule on the type. Needs the GIL; only downcalls. */
    public static void attach(Arena arena, MemorySegment type) {
        MemorySegment capsule = LibPythonCapsules.capsuleNew(TABLE, CAPSULE_NAME, MemorySegment.NULL); // the table outlives every capsule
        if (capsule.address() == 0 || LibPythonObjects.objectSetAttrString(type, arena.allocateFrom(DLPackExchangeAPILayout.ATTRIBUTE),
                capsule) != 0) {
            LibPythonErrors.errPrint();
            throw new IllegalStateException("could not put the DLPack exchange API on the JavaTensor type");
        }
        LibPythonObjects.decRef(capsule); // the type holds it
    }

    /** Sets a Python exception and returns -1; never throws. */
    private static int fail(MemorySegment type, String message) {
        PythonErrors.raise(type, message);
        return -1;
    }

    /**
     * {@return the instance's source, or null with a Python exception set} Checks the object is a
     * Java tensor first: a consumer that found the table on another type must not make this read
     * another object's memory.
     */
    private static DLPackSource sourceOf(long object, String function) {
        if (!JavaTensorType.isInstance(object)) {
            PythonErrors.raise(LibPythonErrors.TYPE_ERROR, function + ": expected a _jdlpack.JavaTensor, got "
                    + (object == 0 ? "NULL" : "a " + PythonStrings.typeName(MemorySegment.ofAddress(object))));
            return null;
        }
        DLPackSource source = JavaTensorType.source(JavaTensorType.fields(object));
        if (source == null) {
            PythonErrors.raise(LibPythonErrors.BUFFER_ERROR, "the Java tensor behind this object was released");
        }
        return source;
    }

    private static void noteDeviceSource(DLPackSource source) {
        DLDevice device = source.device();
        if (device.deviceType() != DLDeviceType.CPU.code()) {
            LAST_DEVICE_SOURCE.set(new WeakReference<>(source));
        }
    }

    // ---- The table's functions (upcall targets) ----

    /** {@code int managed_tensor_from_py_object_no_sync(void* py_object, DLManagedTensorVersioned** out)}. */
    @SuppressWarnings("unused")
    private static int fromPyObject(long object, long out) {
        try {
            if (out == 0) {
                return fail(LibPythonErrors.VALUE_ERROR, "managed_tensor_from_py_object_no_sync: out is NULL");
            }
            DLPackSource source = sourceOf(object, "managed_tensor_from_py_object_no_sync");
            if (source == null) {
                return -1;
            }
            MemorySegment pointer = JavaTensors.exportPointer(source, ExportRequest.of(ManagedTensorKind.VERSIONED));
            if (pointer.address() == 0) {
                return -1;
            }
            noteDeviceSource(source);
            LibPython.memory(out, ADDRESS.byteSize()).set(JAVA_LONG, 0, pointer.address());
            return 0;
        } catch (Throwable t) {
            return failQuietly(t);
        }
    }

    /** {@code int dltensor_from_py_object_no_sync(void* py_object, DLTensor* out)}. */
    @SuppressWarnings("unused")
    private static int dltensorFromPyObject(long object, long out) {
        try {
            if (out == 0) {
                return fail(LibPythonErrors.VALUE_ERROR, "dltensor_from_py_object_no_sync: out is NULL");
            }
            DLPackSource source = sourceOf(object, "dltensor_from_py_object_no_sync");
            if (source == null) {
                return -1;
            }
            if (!(source instanceof CpuSource(OwnedHostTensor tensor))) {
                return fail(LibPythonErrors.BUFFER_ERROR, "dltensor_from_py_object_no_sync views host tensors made with "
                        + "DLPackSource.of(OwnedHostTensor) only; use managed_tensor_from_py_object_no_sync");
            }
            if (tensor.isClosed()) {
                return fail(LibPythonErrors.BUFFER_ERROR, "the Java tensor behind this object was closed: it exports nothing more");
            }
            TensorLayout layout = tensor.layout();
            if (layout.isReadOnly() || layout.isSubbytePadded() && layout.dtype().isSubByte()) {
                return fail(LibPythonErrors.BUFFER_ERROR, "a DLTensor cannot say " + (layout.isReadOnly() ? "read-only" : "padded sub-byte values")
                        + "; use managed_tensor_from_py_object_no_sync, whose flags do");
            }
            MemorySegment fields = JavaTensorType.fields(object);
            MemorySegment viewed = fields.get(ADDRESS, JavaTensorType.VIEWED_EXPORT);
            if (viewed.address() == 0) {
                // The first view: an export the object keeps (and its deleter releases) until the object dies.
                viewed = JavaTensors.exportPointer(source, ExportRequest.of(ManagedTensorKind.VERSIONED));
                if (viewed.address() == 0) {
                    return -1;
                }
                fields.set(ADDRESS, JavaTensorType.VIEWED_EXPORT, viewed);
            }
            MemorySegment.copy(LibPython.memory(viewed, DL_TENSOR + DLTENSOR_SIZE), DL_TENSOR, LibPython.memory(out, DLTENSOR_SIZE), 0,
                    DLTENSOR_SIZE);
            return 0;
        } catch (Throwable t) {
            return failQuietly(t);
        }
    }

    /** {@code int managed_tensor_to_py_object_no_sync(DLManagedTensorVersioned* tensor, void** out_py_object)}: steals the tensor. */
    @SuppressWarnings("unused")
    private static int toPyObject(MemorySegment managed, MemorySegment out) {
        try {
            if (managed.address() == 0) {
                return fail(LibPythonErrors.VALUE_ERROR, "managed_tensor_to_py_object_no_sync: tensor is NULL");
            }
            if (out.address() == 0) {
                ImportedTensor.discard(ManagedTensorKind.VERSIONED, managed); // stolen: ours to release
                return fail(LibPythonErrors.VALUE_ERROR, "managed_tensor_to_py_object_no_sync: out_py_object is NULL");
            }
            ImportedTensor imported;
            try {
                imported = ImportedTensor.of(ManagedTensorKind.VERSIONED, managed, ImportLifetime.SHARED); // its deleter runs on failure
                // The foreign deleter may need Python (a Python producer's): guarded, as importTensor does.
                ForeignDeleterGuard.installOrClose(imported);
            } catch (RuntimeException e) {
                return fail(LibPythonErrors.BUFFER_ERROR, "managed_tensor_to_py_object_no_sync: " + e.getMessage());
            }
            OwnedHostTensor tensor;
            try {
                HostTensorView view = HostTensorView.of(imported);
                TensorLayout layout = imported.layout();
                tensor = OwnedHostTensor.wrap(TensorSpec.builder(view.segment(), layout.withByteOffset(view.origin()))
                        .device(imported.device()).build(), imported::close);
            } catch (RuntimeException e) {
                imported.close();
                return fail(LibPythonErrors.BUFFER_ERROR, "managed_tensor_to_py_object_no_sync takes host tensors only: " + e.getMessage());
            }
            // Registered and made without the GIL being released: an upcall pins a virtual thread,
            // so the table and ledger writes cannot move this thread off its carrier.
            long id = JavaTensors.registerOwned(DLPackSource.of(tensor), tensor);
            MemorySegment instance;
            try {
                instance = JavaTensorType.newInstance(id, tensor.device());
            } catch (RuntimeException | OutOfMemoryError e) {
                JavaTensors.unregister(id); // closes the tensor: the foreign deleter runs
                return fail(LibPythonErrors.RUNTIME_ERROR, "managed_tensor_to_py_object_no_sync: " + e);
            }
            LibPython.memory(out, ADDRESS.byteSize()).set(ADDRESS, 0, instance);
            return 0;
        } catch (Throwable t) {
            return failQuietly(t);
        }
    }

    /**
     * {@code int managed_tensor_allocator(DLTensor* prototype, DLManagedTensorVersioned** out,
     * void* error_ctx, void (*SetError)(void*, const char*, const char*))}: no Python here.
     */
    @SuppressWarnings("unused")
    private static int allocate(MemorySegment prototype, MemorySegment out, MemorySegment errorContext, MemorySegment setError) {
        try {
            if (prototype.address() == 0 || out.address() == 0) {
                return setError(setError, errorContext, KIND_VALUE_ERROR, "managed_tensor_allocator: "
                        + (prototype.address() == 0 ? "prototype" : "out") + " is NULL");
            }
            MemorySegment dl = LibPython.memory(prototype, DLTENSOR_SIZE);
            int deviceType = dl.get(JAVA_INT, 8);
            if (deviceType != DLDeviceType.CPU.code()) {
                return setError(setError, errorContext, KIND_VALUE_ERROR, "jdlpack's managed_tensor_allocator makes host (CPU) "
                        + "tensors only; the prototype asks for device type " + deviceType);
            }
            int ndim = dl.get(JAVA_INT, 16);
            if (ndim < 0 || ndim > TensorLayout.MAX_NDIM) {
                return setError(setError, errorContext, KIND_VALUE_ERROR, "managed_tensor_allocator: prototype ndim is " + ndim
                        + ", must be 0 to " + TensorLayout.MAX_NDIM);
            }
            long shapeAddress = dl.get(JAVA_LONG, 24);
            if (ndim > 0 && shapeAddress == 0) {
                return setError(setError, errorContext, KIND_VALUE_ERROR, "managed_tensor_allocator: prototype shape is NULL");
            }
            long[] shape = ndim == 0 ? new long[0]
                    : LibPython.memory(MemorySegment.ofAddress(shapeAddress), (long) ndim * 8).toArray(JAVA_LONG_UNALIGNED);
            DLDataType dtype;
            try {
                dtype = DLDataType.fromRaw(dl.get(JAVA_BYTE, 20), dl.get(JAVA_BYTE, 21), dl.get(JAVA_SHORT, 22));
            } catch (RuntimeException e) {
                return setError(setError, errorContext, KIND_VALUE_ERROR, "managed_tensor_allocator: " + e.getMessage());
            }
            OwnedHostTensor tensor;
            try {
                tensor = OwnedHostTensor.allocate(dtype, shape);
            } catch (OutOfMemoryError e) {
                return setError(setError, errorContext, KIND_MEMORY_ERROR, "managed_tensor_allocator: " + e.getMessage());
            } catch (RuntimeException e) {
                return setError(setError, errorContext, KIND_VALUE_ERROR, "managed_tensor_allocator: " + e.getMessage());
            }
            try (ExportedTensor export = tensor.export(ExportOptions.VERSIONED)) {
                LibPython.memory(out, ADDRESS.byteSize()).set(ADDRESS, 0, export.consume()); // the consumer's deleter frees it
            } finally {
                tensor.close(); // Java's reference: the memory lives until that deleter runs
            }
            return 0;
        } catch (Throwable t) {
            try {
                return setError(setError, errorContext, KIND_RUNTIME_ERROR, "managed_tensor_allocator failed: " + t);
            } catch (Throwable ignored) {
                return -1;
            }
        }
    }

    private static int setError(MemorySegment setError, MemorySegment context, MemorySegment kind, String message) {
        if (setError.address() != 0) {
            try (Arena arena = Arena.ofConfined()) {
                LibPython.callSetError(setError, context, kind, arena.allocateFrom(message));
            }
        } else {
            Diagnostics.report(Level.WARNING, "managed_tensor_allocator failed and its caller gave no SetError: " + message, null);
        }
        return -1;
    }

    /** {@code int current_work_stream(DLDeviceType device_type, int32_t device_id, void** out_current_stream)}. */
    @SuppressWarnings("unused")
    private static int currentWorkStream(int deviceType, int deviceId, MemorySegment out) {
        try {
            if (out.address() == 0) {
                return fail(LibPythonErrors.VALUE_ERROR, "current_work_stream: out_current_stream is NULL");
            }
            long stream = 0;
            if (deviceType != DLDeviceType.CPU.code()) {
                WeakReference<DLPackSource> last = LAST_DEVICE_SOURCE.get();
                DLPackSource source = last == null ? null : last.get();
                if (source != null && source.device().deviceType() == deviceType && source.device().deviceId() == deviceId) {
                    stream = source.currentWorkStream().orElse(0);
                }
            }
            LibPython.memory(out, ADDRESS.byteSize()).set(JAVA_LONG, 0, stream);
            return 0;
        } catch (Throwable t) {
            return failQuietly(t);
        }
    }

    private static int failQuietly(Throwable t) {
        try {
            return fail(LibPythonErrors.RUNTIME_ERROR, t.toString());
        } catch (Throwable ignored) {
            return -1; // nothing may leave an upcall
        }
    }
}
