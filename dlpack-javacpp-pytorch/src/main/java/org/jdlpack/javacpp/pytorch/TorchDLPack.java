package org.jdlpack.javacpp.pytorch;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Objects;

import org.bytedeco.pytorch.Tensor;
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
 * JavaCPP PyTorch tensors as DLPack tensors and back, without copying a byte: the front door of
 * this module.
 *
 * <p><b>Torch to DLPack</b> ({@link #export}, {@link #importTensor}): the export holds a new
 * {@code at::Tensor} handle on the torch tensor's implementation (libtorch's C shim,
 * {@code aoti_torch_new_tensor_handle}), deleted when the last consumer calls the deleter; the
 * torch {@code Tensor} object may be closed or collected before that. Only strided CPU tensors of
 * the types in the table of {@code docs/jvm-libraries.md} are carried; a tensor with its conjugate
 * or negative bit set is refused (its memory does not hold its values: call
 * {@code resolve_conj()} or {@code resolve_neg()} first).
 *
 * <p><b>DLPack to torch</b> ({@link #toTensor}): libtorch's {@code at::fromDLPack} or
 * {@code at::fromDLPackVersioned} wraps the export's memory; torch calls the export's deleter,
 * exactly once, when the torch tensor's storage dies (the {@code Tensor} and every view of it
 * closed or collected), on whichever thread that happens. Every field is checked first, because
 * libtorch answers what it refuses with a C++ exception that would end the process: a
 * {@code READ_ONLY} export (libtorch would ignore the flag), lanes other than 1, a negative
 * stride, a {@code byte_offset} that is not a multiple of the element size, a device other than
 * CPU 0 are refused here with an exception naming the field, and the export stays the caller's.
 *
 * {@snippet :
 * TorchDLPack dlpack = TorchDLPack.get();                        // finds libtorch in JavaCPP's loaded libraries
 * try (Tensor t = torch.rand(2, 3);
 *      ImportedTensor view = dlpack.importTensor(t)) {           // the same memory, read by Java
 *     float first = HostTensorView.of(view).getFloat(0);
 * }
 *
 * try (OwnedHostTensor owned = OwnedHostTensor.allocate(DLDataType.FLOAT32, 2, 3);
 *      Tensor t = dlpack.toTensor(owned.export())) {             // torch reads Java's memory
 *     t.add_(new Scalar(1.0));                                     // and writes it
 * }                                                                // owned's memory is freed after torch is done
 * }
 *
 * <p>Thread safety: one instance per process, safe from any thread, virtual threads included
 * (every call is a short downcall that holds no native state between calls).
 *
 * @since 0.1
 */
public final class TorchDLPack {

    private static final class Holder {
        static final TorchDLPack INSTANCE = open();
    }

    /** Out-parameter of the shim's getters, and the empty {@code std::function} (libtorch may write to it). */
    private static final ThreadLocal<MemorySegment> SCRATCH =
            ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(8 + LibTorch.STD_FUNCTION_BYTES, 8));

    private final TorchDTypes.Codes dtypes;
    private final int stridedLayout;
    private final int cpuDeviceType;

    private TorchDLPack(TorchDTypes.Codes dtypes, int stridedLayout, int cpuDeviceType) {
        this.dtypes = dtypes;
        this.stridedLayout = stridedLayout;
        this.cpuDeviceType = cpuDeviceType;
    }

    private static TorchDLPack open() {
        LibTorch.require();
        return new TorchDLPack(LibTorch.DTYPES.resolve(LibTorch.SHIM, TorchUnavailableException::new),
                LibTorch.SHIM.constant("aoti_torch_layout_strided"), LibTorch.SHIM.constant("aoti_torch_device_type_cpu"));
    }

    /**
     * The adapter over the libtorch JavaCPP loaded (loading it through JavaCPP's {@code Loader} if
     * the program has not yet): every entry point is looked up and checked the first time.
     *
     * @return the adapter
     * @throws TorchUnavailableException naming what is missing (the presets, their natives, a
     *                                   symbol, or an Itanium C++ ABI on Windows) and what to do;
     *                                   every later call throws it again
     */
    public static TorchDLPack get() {
        LibTorch.require(); // before the holder: a failure is thrown again on every call, not an ExceptionInInitializerError
        return Holder.INSTANCE;
    }

    /** {@return the version of JavaCPP's pytorch presets whose libtorch this adapter calls, such as {@code 2.10.0-1.5.13}} */
    public String version() {
        return LibTorch.FOUND.version();
    }

    /** {@return the libtorch file the entry points were found in (the one JavaCPP loaded)} */
    public Path library() {
        return LibTorch.FOUND.library();
    }

    /**
     * Exports a torch tensor as a fresh {@code DLManagedTensorVersioned}: the same as
     * {@code export(tensor, ExportOptions.VERSIONED)}.
     *
     * @param tensor a defined, strided CPU tensor
     * @return the export, owning one reference to the tensor's memory
     * @throws IllegalArgumentException    if the tensor is undefined, not strided, or its conjugate or negative bit is set
     * @throws InvalidTensorException      if its type is not one this adapter carries
     * @throws UnsupportedDeviceException  if it is not on the CPU
     */
    public ExportedTensor export(Tensor tensor) {
        return export(tensor, ExportOptions.VERSIONED);
    }

    /**
     * Exports a torch tensor as a fresh managed tensor of the kind {@code options} says
     * ({@code DLManagedTensorVersioned} or the legacy {@code DLManagedTensor}), read-only if asked.
     * The export keeps the tensor's memory alive until its deleter runs; the {@code Tensor} may be
     * closed at any time. Torch may still write the memory through the {@code Tensor} or its views:
     * {@code READ_ONLY} only tells the consumer not to.
     *
     * @param tensor  a defined, strided CPU tensor
     * @param options the struct kind and the read-only flag ({@code verbatimByteOffset} changes nothing: torch's
     *                data pointer already includes the storage offset)
     * @return the export
     * @throws IllegalArgumentException    if the tensor is undefined, not strided, or its conjugate or negative bit is set
     * @throws InvalidTensorException      if its type is not one this adapter carries
     * @throws UnsupportedDeviceException  if it is not on the CPU
     */
    public ExportedTensor export(Tensor tensor, ExportOptions options) {
        Objects.requireNonNull(options, "options");
        long at = address(tensor);
        MemorySegment out = SCRATCH.get();
        if (!LibTorch.SHIM.isDefined(at, out)) {
            throw new IllegalArgumentException("the Tensor is undefined (a default-constructed at::Tensor): nothing to export");
        }
        int layout = LibTorch.SHIM.layout(at, out);
        if (layout != stridedLayout) {
            throw new IllegalArgumentException("the Tensor's layout is " + tensor.layout() + ", not strided: DLPack carries "
                    + "dense strided tensors only (call to_dense() first)");
        }
        int deviceType = LibTorch.SHIM.deviceType(at, out);
        if (deviceType != cpuDeviceType) {
            throw new UnsupportedDeviceException(DLDevice.CPU, "the Tensor is on " + tensor.device().str().getString()
                    + "; this adapter exports CPU tensors only (call cpu() first)");
        }
        int torchType = LibTorch.SHIM.dtype(at, out);
        DLDataType dtype = dtypes.dlpackOf(torchType);
        if (dtype == null) {
            throw new InvalidTensorException("the Tensor's dtype " + tensor.scalar_type() + " has no DLPack type this adapter "
                    + "carries; supported: " + LibTorch.DTYPES.supportedText());
        }
        if (tensor.__dispatch_is_conj() || tensor.__dispatch_is_neg()) {
            throw new IllegalArgumentException("the Tensor has its " + (tensor.__dispatch_is_conj() ? "conjugate" : "negative")
                    + " bit set: its memory does not hold its values. Call resolve_conj() or resolve_neg() first");
        }
        return TorchExport.export(LibTorch.SHIM, at, dtype, options, out, "the Tensor", "");
    }

    /**
     * Imports a torch tensor into Java: {@code export(tensor).importTensor()}, confined to this
     * thread.
     *
     * @param tensor a defined, strided CPU tensor
     * @return the tensor over torch's memory; close it on this thread
     * @throws IllegalArgumentException    as {@link #export(Tensor, ExportOptions)}
     * @throws InvalidTensorException      as {@link #export(Tensor, ExportOptions)}
     * @throws UnsupportedDeviceException  as {@link #export(Tensor, ExportOptions)}
     */
    public ImportedTensor importTensor(Tensor tensor) {
        return export(tensor).importTensor();
    }

    /**
     * Imports a torch tensor into Java with the given lifetime.
     *
     * @param tensor   a defined, strided CPU tensor
     * @param lifetime who ends the import's life, and on which threads it may be used
     * @return the tensor over torch's memory
     * @throws IllegalArgumentException    as {@link #export(Tensor, ExportOptions)}
     * @throws InvalidTensorException      as {@link #export(Tensor, ExportOptions)}
     * @throws UnsupportedDeviceException  as {@link #export(Tensor, ExportOptions)}
     */
    public ImportedTensor importTensor(Tensor tensor, ImportLifetime lifetime) {
        Objects.requireNonNull(lifetime, "lifetime");
        return export(tensor).importTensor(lifetime);
    }

    /**
     * Hands an export to libtorch as a torch tensor over the same memory ({@code at::fromDLPack}
     * for a legacy struct, {@code at::fromDLPackVersioned} for a versioned one). On success the
     * export is consumed: torch calls its deleter once, when the tensor's storage dies. On refusal
     * nothing was called and the export is still the caller's to close.
     *
     * @param export an owned export of writable CPU memory
     * @return a new {@code Tensor}; close it (or let JavaCPP collect it) to release the memory
     * @throws IllegalStateException       if the export was already consumed, imported or closed
     * @throws InvalidTensorException      for a field libtorch 2.10 refuses (dtype or lanes, a negative stride,
     *                                     a {@code byte_offset} that is not a multiple of the element size,
     *                                     {@code READ_ONLY}), naming it
     * @throws UnsupportedDeviceException  for a device other than CPU 0
     */
    public Tensor toTensor(ExportedTensor export) {
        DLPackInputs.check(export);
        ManagedTensorKind kind = export.kind();
        MemorySegment noDeleter = SCRATCH.get().asSlice(8, LibTorch.STD_FUNCTION_BYTES);
        noDeleter.fill((byte) 0); // an empty std::function: libtorch may have stored its own into it last time
        Tensor result = new Tensor(); // an undefined at::Tensor holds no reference: the call constructs over it
        long managed = export.consume().address();
        LibTorch.fromDLPack(kind == ManagedTensorKind.VERSIONED, result.address(), managed, noDeleter);
        return result;
    }

    private static long address(Tensor tensor) {
        Objects.requireNonNull(tensor, "tensor");
        if (tensor.isNull()) {
            throw new IllegalArgumentException("the Tensor is a null pointer (closed, or never allocated)");
        }
        return tensor.address();
    }

    @Override
    public String toString() {
        return "TorchDLPack[JavaCPP pytorch " + version() + ", " + library() + "]";
    }
}
