package org.jdlpack.djl;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Objects;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.SparseFormat;
import ai.djl.pytorch.engine.PtNDArray;
import ai.djl.pytorch.engine.PtNDManager;
import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLDevice;
import org.jdlpack.abi.ExportOptions;
import org.jdlpack.abi.ExportedTensor;
import org.jdlpack.abi.ImportLifetime;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.InvalidTensorException;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.UnsupportedDeviceException;
import org.jdlpack.libtorch.TorchDTypes;
import org.jdlpack.libtorch.TorchExport;

/**
 * DJL {@code NDArray}s of the PyTorch engine as DLPack tensors and back, without copying a byte:
 * the front door of this module.
 *
 * <p><b>NDArray to DLPack</b> ({@link #export}, {@link #importTensor}): DJL's native handle of a
 * {@code PtNDArray} is an {@code at::Tensor*}; the export holds a new {@code at::Tensor} handle on
 * its implementation (libtorch's C shim, {@code aoti_torch_new_tensor_handle}), deleted when the
 * last consumer calls the deleter, so the NDArray, or its whole {@code NDManager}, may be closed
 * before that. Shape, strides, the storage offset and the type are torch's own: a strided view
 * leaves as a strided view, and bfloat16 as DLPack (bfloat, 16, 1). Only dense CPU arrays are
 * carried.
 *
 * <p><b>DLPack to NDArray</b> ({@link #toNDArray}): libtorch's {@code at::fromDLPack} wraps the
 * export's memory in a new {@code PtNDArray} attached to the given manager; torch calls the
 * export's deleter, exactly once, when the tensor's storage dies: the NDArray closed (by itself or
 * by its manager) and every view of it gone, on whichever thread that happens. Every field is
 * checked first, because libtorch answers what it refuses with a C++ exception that would end
 * the process. libtorch 2.7.1 takes only the legacy struct: export with
 * {@link ExportOptions#LEGACY}. A {@code READ_ONLY} export, lanes other than 1, a negative
 * stride, a {@code byte_offset} that is not a multiple of the element size, a device other than
 * CPU 0 are refused with an exception naming the field, and the export stays the caller's. A
 * {@code byte_offset} libtorch 2.7.1 would ignore is folded into {@code data}.
 *
 * <p>Other DJL engines (OnnxRuntime, TensorFlow, MXNet, ...) are refused by name: their arrays
 * are not torch tensors. Copy them with {@code from(array)} of a PyTorch {@code NDManager}. (DJL
 * runs an OnnxRuntime array's operations on PyTorch when it is on the class path: their results
 * are PyTorch arrays, which this adapter takes.)
 *
 * {@snippet :
 * DjlDLPack dlpack = DjlDLPack.get();                           // starts DJL's PyTorch engine, finds its libtorch
 * try (NDManager manager = NDManager.newBaseManager(Device.cpu(), "PyTorch")) {
 *     NDArray a = manager.arange(6f).reshape(2, 3);
 *     try (ImportedTensor view = dlpack.importTensor(a)) {      // the same memory, read by Java
 *         float last = HostTensorView.of(view).getFloat(5);
 *     }
 *     OwnedHostTensor owned = OwnedHostTensor.allocate(DLDataType.FLOAT32, 2, 3);
 *     NDArray b = dlpack.toNDArray(owned.export(ExportOptions.LEGACY), manager); // torch reads Java's memory
 *     owned.close();                                              // the memory lives on while b does
 *     b.addi(1f);
 * }                                                                // b closes with its manager: memory freed
 * }
 *
 * <p>Thread safety: one instance per process, safe from any thread, virtual threads included
 * (every call is a short downcall that holds no native state between calls). DJL's own rules for
 * its arrays and managers still hold.
 *
 * @since 0.1
 */
public final class DjlDLPack {

    private static final class Holder {
        static final DjlDLPack INSTANCE = open();
    }

    /** Out-parameter of the shim's getters. */
    private static final ThreadLocal<MemorySegment> SCRATCH = ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(8, 8));

    private final TorchDTypes.Codes dtypes;
    private final int cpuDeviceType;

    private DjlDLPack(TorchDTypes.Codes dtypes, int cpuDeviceType) {
        this.dtypes = dtypes;
        this.cpuDeviceType = cpuDeviceType;
    }

    private static DjlDLPack open() {
        LibTorch.require();
        return new DjlDLPack(LibTorch.DTYPES.resolve(LibTorch.SHIM, DjlUnavailableException::new),
                LibTorch.SHIM.constant("aoti_torch_device_type_cpu"));
    }

    /**
     * The adapter over the libtorch DJL's PyTorch engine loaded (starting the engine if the
     * program has not yet): every entry point is looked up and checked the first time.
     *
     * @return the adapter
     * @throws DjlUnavailableException naming what is missing (DJL, its PyTorch engine or natives,
     *                                 a symbol, or an Itanium C++ ABI on Windows) and what to do;
     *                                 every later call throws it again
     */
    public static DjlDLPack get() {
        LibTorch.require(); // before the holder: a failure is thrown again on every call, not an ExceptionInInitializerError
        return Holder.INSTANCE;
    }

    /** {@return the libtorch version DJL loaded, such as {@code 2.7.1}} */
    public String version() {
        return LibTorch.FOUND.version();
    }

    /** {@return the libtorch file the entry points were found in (the one DJL loaded)} */
    public Path library() {
        return LibTorch.FOUND.library();
    }

    /**
     * Exports an NDArray as a fresh {@code DLManagedTensorVersioned}: the same as
     * {@code export(array, ExportOptions.VERSIONED)}.
     *
     * @param array an open, dense CPU array of DJL's PyTorch engine
     * @return the export, owning one reference to the array's memory
     * @throws IllegalArgumentException    if the array is of another engine, closed, or sparse
     * @throws InvalidTensorException      if its type is not one this adapter carries
     * @throws UnsupportedDeviceException  if it is not on the CPU
     */
    public ExportedTensor export(NDArray array) {
        return export(array, ExportOptions.VERSIONED);
    }

    /**
     * Exports an NDArray as a fresh managed tensor of the kind {@code options} says, read-only if
     * asked. The export keeps the array's memory alive until its deleter runs; the NDArray and its
     * manager may be closed at any time. Torch may still write the memory through the array or its
     * views: {@code READ_ONLY} only tells the consumer not to.
     *
     * @param array   an open, dense CPU array of DJL's PyTorch engine
     * @param options the struct kind and the read-only flag ({@code verbatimByteOffset} changes nothing: torch's
     *                data pointer already includes the storage offset)
     * @return the export
     * @throws IllegalArgumentException    if the array is of another engine, closed, or sparse
     * @throws InvalidTensorException      if its type is not one this adapter carries
     * @throws UnsupportedDeviceException  if it is not on the CPU
     */
    public ExportedTensor export(NDArray array, ExportOptions options) {
        Objects.requireNonNull(options, "options");
        PtNDArray pt = pytorch(array);
        long at = handle(pt);
        if (pt.getSparseFormat() != SparseFormat.DENSE) {
            throw new IllegalArgumentException("the NDArray is " + pt.getSparseFormat() + ", not dense: DLPack carries dense "
                    + "strided tensors only (call toDense() first)");
        }
        MemorySegment out = SCRATCH.get();
        int deviceType = LibTorch.SHIM.deviceType(at, out);
        if (deviceType != cpuDeviceType) {
            throw new UnsupportedDeviceException(DLDevice.CPU, "the NDArray is on " + pt.getDevice()
                    + "; this adapter exports CPU arrays only (call toDevice(Device.cpu(), false) first)");
        }
        int torchType = LibTorch.SHIM.dtype(at, out);
        DLDataType dtype = dtypes.dlpackOf(torchType);
        if (dtype == null) {
            throw new InvalidTensorException("the NDArray's torch dtype (ScalarType code " + torchType + ") has no DLPack "
                    + "type this adapter carries; supported: " + LibTorch.DTYPES.supportedText());
        }
        return TorchExport.export(LibTorch.SHIM, at, dtype, options, out, "the NDArray", " (of a DJL NDArray)");
    }

    /**
     * Imports an NDArray into Java: {@code export(array).importTensor()}, confined to this thread.
     *
     * @param array an open, dense CPU array of DJL's PyTorch engine
     * @return the tensor over torch's memory; close it on this thread
     * @throws IllegalArgumentException    as {@link #export(NDArray, ExportOptions)}
     * @throws InvalidTensorException      as {@link #export(NDArray, ExportOptions)}
     * @throws UnsupportedDeviceException  as {@link #export(NDArray, ExportOptions)}
     */
    public ImportedTensor importTensor(NDArray array) {
        return export(array).importTensor();
    }

    /**
     * Imports an NDArray into Java with the given lifetime.
     *
     * @param array    an open, dense CPU array of DJL's PyTorch engine
     * @param lifetime who ends the import's life, and on which threads it may be used
     * @return the tensor over torch's memory
     * @throws IllegalArgumentException    as {@link #export(NDArray, ExportOptions)}
     * @throws InvalidTensorException      as {@link #export(NDArray, ExportOptions)}
     * @throws UnsupportedDeviceException  as {@link #export(NDArray, ExportOptions)}
     */
    public ImportedTensor importTensor(NDArray array, ImportLifetime lifetime) {
        Objects.requireNonNull(lifetime, "lifetime");
        return export(array).importTensor(lifetime);
    }

    /**
     * Hands a legacy export to libtorch as a new NDArray over the same memory
     * ({@code at::fromDLPack}), attached to {@code manager}. On success the export is consumed:
     * torch calls its deleter once, when the tensor's storage dies (the NDArray closed, directly
     * or with its manager). On refusal nothing was called and the export is still the caller's to
     * close.
     *
     * @param export  an owned legacy export ({@link ExportOptions#LEGACY}) of writable CPU memory
     * @param manager a manager of DJL's PyTorch engine; the array is attached to it
     * @return a new {@code PtNDArray}
     * @throws IllegalArgumentException    if the manager is of another engine or closed
     * @throws IllegalStateException       if the export was already consumed, imported or closed
     * @throws InvalidTensorException      for a versioned or {@code READ_ONLY} export, or a field libtorch 2.7.1
     *                                     refuses (dtype or lanes, a negative stride, a {@code byte_offset} that is
     *                                     not a multiple of the element size), naming it
     * @throws UnsupportedDeviceException  for a device other than CPU 0
     */
    public NDArray toNDArray(ExportedTensor export, NDManager manager) {
        Objects.requireNonNull(export, "export");
        PtNDManager ptManager = pytorch(manager);
        DLPackInputs.check(export);
        ManagedTensorKind kind = export.kind();
        // An undefined heap at::Tensor holds no reference: fromDLPack constructs over it, and DJL's
        // close deletes it (delete of a torch::Tensor*, as for every PtNDArray).
        long result = LibTorch.SHIM.newUndefinedTensor(SCRATCH.get());
        long managed = export.consume().address();
        DLPackInputs.foldByteOffset(kind, managed);
        LibTorch.fromDLPack(result, managed);
        try {
            return new PtNDArray(ptManager, result);
        } catch (RuntimeException | Error e) { // the manager closed meanwhile: torch's tensor goes, and with it the export
            LibTorch.SHIM.deleteTensorObject(result);
            throw e;
        }
    }

    private static PtNDArray pytorch(NDArray array) {
        Objects.requireNonNull(array, "array");
        if (array instanceof PtNDArray pt) {
            return pt;
        }
        throw new IllegalArgumentException("the NDArray is of DJL's " + engineName(array.getManager()) + " engine ("
                + array.getClass().getName() + "), not " + DjlLibTorch.ENGINE + ": this adapter carries torch tensors only. "
                + "Copy it into a PyTorch array with from(array) of a PyTorch NDManager (DJL copies it through toByteBuffer()), "
                + "then export that");
    }

    private static PtNDManager pytorch(NDManager manager) {
        Objects.requireNonNull(manager, "manager");
        if (!(manager instanceof PtNDManager pt)) {
            throw new IllegalArgumentException("the NDManager is of DJL's " + engineName(manager) + " engine ("
                    + manager.getClass().getName() + "), not " + DjlLibTorch.ENGINE
                    + ": pass a manager of the PyTorch engine (NDManager.newBaseManager(Device.cpu(), \"PyTorch\"))");
        }
        if (!pt.isOpen()) {
            throw new IllegalArgumentException("the NDManager " + pt.getName() + " is closed: an array attached to it would "
                    + "never be closed by it");
        }
        return pt;
    }

    private static String engineName(NDManager manager) {
        try {
            return manager.getEngine().getEngineName();
        } catch (RuntimeException e) {
            return "(unknown)";
        }
    }

    /** {@return DJL's native handle: the address of the array's heap {@code at::Tensor}} */
    private static long handle(PtNDArray array) {
        try {
            return array.getHandle();
        } catch (IllegalStateException e) { // DJL's NativeResource: "has been released already"
            throw new IllegalArgumentException("the NDArray is closed (its native tensor was released): nothing to export", e);
        }
    }

    @Override
    public String toString() {
        return "DjlDLPack[libtorch " + version() + " of DJL's PyTorch engine, " + library() + "]";
    }
}
