package org.jdlpack.tensorflow;

import java.nio.file.Path;
import java.util.Objects;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.ExportOptions;
import org.jdlpack.abi.ExportedTensor;
import org.jdlpack.abi.ImportLifetime;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.InvalidTensorException;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.TensorLayout;
import org.jdlpack.abi.TensorSpec;
import org.jdlpack.adapters.ForeignExport;
import org.tensorflow.RawTensor;
import org.tensorflow.Tensor;
import org.tensorflow.types.family.TType;

/**
 * TensorFlow Java tensors as DLPack tensors and back, without copying a byte: the front door of
 * this module.
 *
 * <p><b>TensorFlow to DLPack</b> ({@link #export}, {@link #importTensor}): the export holds a new
 * eager tensor handle on the tensor's buffer ({@code TFE_NewTensorHandle}), deleted when the last
 * consumer calls the deleter; the TensorFlow Java {@code Tensor} may be closed or collected before
 * that. TensorFlow's tensors are always compact row-major and 64-byte aligned, with
 * {@code byte_offset} 0. Only the types in the table of {@code docs/jvm-libraries.md} are carried
 * (not strings, not sparse tensors).
 *
 * <p><b>DLPack to TensorFlow</b> ({@link #toTensor}): TensorFlow's {@code TFE_HandleFromDLPack}
 * wraps the export's memory, and the result is a TensorFlow Java tensor over it; TensorFlow calls
 * the export's deleter, exactly once, when the buffer dies (the tensor and every tensor sharing its
 * buffer closed or collected), on whichever thread that happens. TensorFlow 2.18 takes the legacy
 * {@code DLManagedTensor} only, compact row-major, {@code byte_offset} 0, 64-byte aligned, CPU;
 * anything else is refused here with an exception naming the field, and the export stays the
 * caller's. Nothing is copied behind the caller's back: a strided, offset or misaligned tensor is
 * copied by the caller ({@code OwnedHostTensor.copyOf(HostTensorView.of(...))}) if that is wanted.
 *
 * {@snippet :
 * TensorFlowDLPack dlpack = TensorFlowDLPack.get();               // finds TensorFlow in JavaCPP's loaded libraries
 * try (TFloat32 t = TFloat32.vectorOf(1f, 2f, 3f);
 *      ImportedTensor view = dlpack.importTensor(t)) {            // the same memory, read by Java
 *     float first = HostTensorView.of(view).getFloat(0);
 * }
 *
 * try (OwnedHostTensor owned = OwnedHostTensor.copyOf(new float[] {1, 2, 3, 4, 5, 6}, 2, 3);
 *      TFloat32 t = (TFloat32) dlpack.toTensor(owned.export(ExportOptions.LEGACY))) { // TensorFlow reads Java's memory
 *     float last = t.getFloat(1, 2);
 * }                                                                // owned's memory is freed after TensorFlow is done
 * }
 *
 * <p>Thread safety: one instance per process, safe from any thread, virtual threads included
 * (every call is a short downcall that holds no native state between calls). A {@code Tensor}
 * must not be closed while another thread exports it.
 *
 * @since 0.1
 */
public final class TensorFlowDLPack {

    private static final class Holder {
        static final TensorFlowDLPack INSTANCE = new TensorFlowDLPack(LibTensorFlow.version(), LibTensorFlow.newContext());
    }

    private final String tensorFlowVersion;
    /**
     * The eager context {@code TFE_HandleFromDLPack} places tensors in: one for the process, never
     * deleted (its CPU device is the only state it keeps; tensors outlive the handles made in it).
     */
    private final long context;

    private TensorFlowDLPack(String tensorFlowVersion, long context) {
        this.tensorFlowVersion = tensorFlowVersion;
        this.context = context;
    }

    /**
     * The adapter over the TensorFlow that TensorFlow Java loaded (loading it through JavaCPP's
     * {@code Loader} if the program has not yet): every entry point is looked up and checked the
     * first time.
     *
     * @return the adapter
     * @throws TensorFlowUnavailableException naming what is missing (TensorFlow Java, its natives, a
     *                                        symbol, access to its package, or an Itanium C++ ABI on
     *                                        Windows) and what to do; every later call throws it again
     */
    public static TensorFlowDLPack get() {
        LibTensorFlow.require(); // before the holder: a failure is thrown again on every call, not an ExceptionInInitializerError
        if (RawTensors.FAILURE != null) {
            throw new TensorFlowUnavailableException(RawTensors.FAILURE);
        }
        return Holder.INSTANCE;
    }

    /** {@return the version of TensorFlow Java whose library this adapter calls, such as {@code 1.1.0}} */
    public String version() {
        return LibTensorFlow.FOUND.version();
    }

    /** {@return the TensorFlow version of that library ({@code TF_Version()}), such as {@code 2.18.0}} */
    public String tensorFlowVersion() {
        return tensorFlowVersion;
    }

    /** {@return the {@code libtensorflow_cc} file the entry points were found in (the one TensorFlow Java loaded)} */
    public Path library() {
        return LibTensorFlow.FOUND.library();
    }

    /**
     * Exports a TensorFlow tensor as a fresh {@code DLManagedTensorVersioned}: the same as
     * {@code export(tensor, ExportOptions.VERSIONED)}.
     *
     * @param tensor an open, dense tensor of a carried type
     * @return the export, owning one reference to the tensor's buffer
     * @throws IllegalArgumentException  if the tensor is sparse
     * @throws IllegalStateException     if it was closed
     * @throws InvalidTensorException    if its type is not one this adapter carries
     */
    public ExportedTensor export(Tensor tensor) {
        return export(tensor, ExportOptions.VERSIONED);
    }

    /**
     * Exports a TensorFlow tensor as a fresh managed tensor of the kind {@code options} says
     * ({@code DLManagedTensorVersioned} or the legacy {@code DLManagedTensor}), read-only if asked.
     * The export keeps the tensor's buffer alive until its deleter runs; the {@code Tensor} may be
     * closed at any time. {@code READ_ONLY} only tells the consumer not to write: TensorFlow Java can
     * still write through the {@code Tensor}.
     *
     * @param tensor  an open, dense tensor of a carried type
     * @param options the struct kind and the read-only flag ({@code verbatimByteOffset} changes
     *                nothing: TensorFlow's offset is always 0)
     * @return the export
     * @throws IllegalArgumentException  if the tensor is sparse
     * @throws IllegalStateException     if it was closed
     * @throws InvalidTensorException    if its type is not one this adapter carries
     */
    public ExportedTensor export(Tensor tensor, ExportOptions options) {
        Objects.requireNonNull(tensor, "tensor");
        Objects.requireNonNull(options, "options");
        if (tensor.isSparse()) {
            throw new IllegalArgumentException("the Tensor is sparse (" + tensor.dataType() + "): DLPack carries dense tensors "
                    + "only (densify it first, for example with SparseToDense)");
        }
        long tfTensor = RawTensors.address(tensor.asRawTensor());
        int tfType = LibTensorFlow.tensorType(tfTensor);
        DLDataType dtype = TensorFlowDTypes.dlpackOf(tfType);
        if (dtype == null) {
            throw new InvalidTensorException("the Tensor's type " + TensorFlowDTypes.nameOf(tfType) + " has no DLPack type "
                    + "this adapter carries; supported: " + TensorFlowDTypes.supportedText());
        }
        long handle = LibTensorFlow.newTensorHandle(tfTensor);
        return ForeignExport.export(new TensorHandle(handle), () -> LibTensorFlow.deleteTensorHandle(handle), options,
                () -> spec(tfTensor, dtype));
    }

    /** Names the handle in jdlpack's messages (a leaked owner, a failed release). */
    private record TensorHandle(long handle) {
        @Override
        public String toString() {
            return "TFE_TensorHandle 0x" + Long.toHexString(handle);
        }
    }

    /** The spec of a {@code TF_Tensor}: TensorFlow's tensors are compact row-major. */
    private static TensorSpec spec(long tfTensor, DLDataType dtype) {
        int ndim = LibTensorFlow.numDims(tfTensor);
        long[] shape = new long[ndim];
        for (int d = 0; d < ndim; d++) {
            shape[d] = LibTensorFlow.dim(tfTensor, d);
        }
        TensorLayout layout = TensorLayout.of(dtype, shape);
        long bytes = layout.extent().endByte();
        if (LibTensorFlow.tensorByteSize(tfTensor) < bytes) {
            throw new IllegalStateException("the TF_Tensor holds " + LibTensorFlow.tensorByteSize(tfTensor) + " bytes, fewer than "
                    + bytes + " for " + layout);
        }
        return ForeignExport.spec(LibTensorFlow.tensorData(tfTensor), layout, "the TF_Tensor", IllegalStateException::new);
    }

    /**
     * Imports a TensorFlow tensor into Java: {@code export(tensor).importTensor()}, confined to this
     * thread.
     *
     * @param tensor an open, dense tensor of a carried type
     * @return the tensor over TensorFlow's buffer; close it on this thread
     * @throws IllegalArgumentException  as {@link #export(Tensor, ExportOptions)}
     * @throws IllegalStateException     as {@link #export(Tensor, ExportOptions)}
     * @throws InvalidTensorException    as {@link #export(Tensor, ExportOptions)}
     */
    public ImportedTensor importTensor(Tensor tensor) {
        return export(tensor).importTensor();
    }

    /**
     * Imports a TensorFlow tensor into Java with the given lifetime.
     *
     * @param tensor   an open, dense tensor of a carried type
     * @param lifetime who ends the import's life, and on which threads it may be used
     * @return the tensor over TensorFlow's buffer
     * @throws IllegalArgumentException  as {@link #export(Tensor, ExportOptions)}
     * @throws IllegalStateException     as {@link #export(Tensor, ExportOptions)}
     * @throws InvalidTensorException    as {@link #export(Tensor, ExportOptions)}
     */
    public ImportedTensor importTensor(Tensor tensor, ImportLifetime lifetime) {
        Objects.requireNonNull(lifetime, "lifetime");
        return export(tensor).importTensor(lifetime);
    }

    /**
     * Hands a legacy export to TensorFlow as a TensorFlow Java tensor over the same memory
     * ({@code TFE_HandleFromDLPack}, then {@code TFE_TensorHandleResolve}). On success the export is
     * consumed: TensorFlow calls its deleter once, when the buffer dies. On refusal nothing was
     * called and the export is still the caller's to close.
     *
     * @param export an owned {@link ManagedTensorKind#LEGACY} export of compact, 64-byte aligned CPU memory
     * @return a new tensor of the matching class ({@code TFloat32}, {@code TInt64}, ...); close it
     *         (or let it be collected) to release the memory
     * @throws IllegalStateException       if the export was already consumed, imported or closed
     * @throws InvalidTensorException      for a field TensorFlow 2.18 refuses or would read wrongly (a versioned or
     *                                     {@code READ_ONLY} struct, dtype or lanes, strides that are not compact
     *                                     row-major, {@code byte_offset} other than 0, data not aligned to 64 bytes),
     *                                     naming it
     * @throws org.jdlpack.abi.UnsupportedDeviceException for a device other than CPU 0
     */
    public TType toTensor(ExportedTensor export) {
        DLPackInputs.check(export);
        long managed = export.consume().address();
        long handle = LibTensorFlow.handleFromDLPack(managed, context);
        long tfTensor;
        try {
            tfTensor = LibTensorFlow.resolve(handle);
        } finally {
            LibTensorFlow.deleteTensorHandle(handle); // the TF_Tensor keeps the buffer: TensorFlow's deleter waits for it
        }
        return RawTensors.wrap(tfTensor);
    }

    @Override
    public String toString() {
        return "TensorFlowDLPack[TensorFlow Java " + version() + ", TensorFlow " + tensorFlowVersion + ", " + library() + "]";
    }
}
