package org.jdlpack.onnxruntime;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Optional;
import java.util.function.Supplier;

import ai.onnxruntime.OnnxJavaType;
import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import org.jdlpack.abi.DLDevice;
import org.jdlpack.abi.ExportOwner;
import org.jdlpack.abi.ImportLifetime;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.TensorLayout;
import org.jdlpack.abi.UnsupportedDeviceException;
import org.jdlpack.cpu.HostTensorView;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.cpu.internal.HostMemory;

/**
 * Makes the bridge's inputs and outputs for one set of its settings (copy or refuse, confined or
 * shared): the checks every refusal comes from, the {@code OnnxTensor} over the memory, and the
 * hold that keeps the memory alive. {@link OrtBridge} documents what each source gives; this type
 * is how. Immutable; any thread.
 */
final class OrtTensors {

    /** The most bytes one tensor may hold; see {@link OrtBridge#MAX_TENSOR_BYTES}. */
    static final long MAX_TENSOR_BYTES = Integer.MAX_VALUE - 8;

    private static final long COPY_ALIGNMENT = 64;

    private final OrtEnvironment environment;
    private final boolean zeroCopyOnly;
    private final boolean shared;

    OrtTensors(OrtEnvironment environment, boolean zeroCopyOnly, boolean shared) {
        this.environment = environment;
        this.zeroCopyOnly = zeroCopyOnly;
        this.shared = shared;
    }

    // ------------------------------------------------------------------ inputs

    OrtInput input(ImportedTensor tensor) throws OrtException {
        TensorLayout layout = tensor.layout();
        long address = tensor.managedTensorAddress();
        String struct = tensor.kind().structName();
        Supplier<String> source = () -> "the ImportedTensor of the " + struct + " at 0x" + Long.toHexString(address);
        OnnxJavaType type = check(source, tensor.device(), layout);
        String copyReason = copyReasonOrRefuse(source, layout, null);
        ImportedTensor mine = tensor.moveTo(shared ? ImportLifetime.SHARED : ImportLifetime.CONFINED);
        if (copyReason != null) {
            try {
                return copied(HostTensorView.of(mine), type, source, copyReason);
            } finally {
                mine.close(); // the copy is ONNX Runtime's now: the producer may free its memory
            }
        }
        try {
            MemorySegment data = mine.hostSegment();
            return new OrtInput(tensorOver(data, layout.shape(), type), compact(layout), data.address(), Optional.empty(), null,
                    source, shared, mine::close);
        } catch (OrtException | RuntimeException | Error e) {
            mine.close();
            throw e;
        }
    }

    OrtInput input(OwnedHostTensor tensor) throws OrtException {
        if (tensor.isClosed()) {
            // The retain below says so for a tensor read in place; a copy takes no retain, so ask here.
            throw new IllegalStateException(tensor + " was closed; it is no longer yours to give ONNX Runtime (an input made "
                    + "before the close stays valid)");
        }
        Supplier<String> source = tensor::toString;
        TensorLayout layout = tensor.layout();
        OnnxJavaType type = check(source, tensor.device(), layout);
        String copyReason = copyReasonOrRefuse(source, layout, notOwnedCopyReason(tensor, "an input"));
        if (copyReason != null) {
            return copied(tensor.host(), type, source, copyReason); // through the FFM runtime's checks: a closed arena throws
        }
        ExportOwner.Retained hold = tensor.retain(); // the memory's reference for as long as ONNX Runtime may read it
        try {
            MemorySegment data = HostMemory.elements(tensor); // under the hold: no scope of its own, no handshake at the release
            return new OrtInput(tensorOver(data, layout.shape(), type), compact(layout), data.address(), Optional.empty(),
                    null, source, shared, hold::close);
        } catch (OrtException | RuntimeException | Error e) {
            hold.close();
            throw e;
        }
    }

    OrtInput input(HostTensorView view) throws OrtException {
        TensorLayout layout = view.layout();
        Supplier<String> source = () -> "a HostTensorView[" + layout + "]";
        OnnxJavaType type = check(source, DLDevice.CPU, layout);
        MemorySegment data = view.segment();
        if (!data.scope().isAlive()) {
            throw new IllegalStateException(source.get() + ": its memory was freed (its arena or tensor was closed)");
        }
        String copyReason = copyReasonOrRefuse(source, layout, borrowedCopyReason(data));
        if (copyReason != null) {
            return copied(view, type, source, copyReason);
        }
        return new OrtInput(tensorOver(data, layout.shape(), type), compact(layout), data.address(), Optional.empty(),
                data, source, false, () -> { });
    }

    /** Why a compact view's memory cannot be read in place, or null if it can. */
    private String borrowedCopyReason(MemorySegment data) {
        if (!data.isNative()) {
            return "the view is over heap memory, which ONNX Runtime's Java API does not read in place";
        }
        if (shared) {
            return "a shared bridge's inputs may run on any thread, and a view has no owner the input could hold";
        }
        if (!data.isAccessibleBy(Thread.currentThread()) || data.isAccessibleBy(OtherThread.INSTANCE)) {
            return "the view borrows memory that another thread (or its owner) could free while ONNX Runtime reads it; "
                    + "pass its owner (OwnedHostTensor, ImportedTensor) for zero copy";
        }
        return null;
    }

    /** A thread that owns no arena, to tell a confined segment from a shared one. Made when first needed. */
    private static final class OtherThread {
        static final Thread INSTANCE = Thread.ofVirtual().unstarted(() -> { });
    }

    // ------------------------------------------------------------------ outputs

    OrtOutput output(OwnedHostTensor tensor, boolean owns) throws OrtException {
        TensorLayout layout = tensor.layout();
        Supplier<String> source = tensor::toString;
        if (layout.isReadOnly() || HostMemory.elements(tensor).isReadOnly()) {
            throw new IllegalArgumentException(source.get() + " is READ_ONLY and cannot be an output: ONNX Runtime would write into it "
                    + "(it does not check); pin a writable tensor");
        }
        if (!layout.isCompactRowMajor()) {
            throw new IllegalArgumentException(source.get() + " is not compact row-major (strides " + Arrays.toString(layout.strides())
                    + "), and ONNX Runtime writes outputs compact; pin a compact tensor (OrtBridge.allocateOutput)");
        }
        OnnxJavaType type = check(source, tensor.device(), layout);
        if (!tensor.ownsMemory()) {
            throw new IllegalArgumentException(source.get() + " cannot be an output: it wraps memory it does not own "
                    + "(OwnedHostTensor.wrap), whose arena its caller could close while ONNX Runtime writes through raw addresses, "
                    + "which no reference of the bridge can prevent; pin a tensor that owns its memory (OrtBridge.allocateOutput, "
                    + "OwnedHostTensor.allocate, HostTensorPool.take) and copy from it");
        }
        ExportOwner.Retained hold = tensor.retain(); // the memory's reference for as long as ONNX Runtime may write it
        try {
            OnnxTensor onnx = tensorOver(HostMemory.elements(tensor), layout.shape(), type); // under the hold
            return new OrtOutput(onnx, tensor, shared, owns ? () -> {
                try {
                    hold.close();
                } finally {
                    if (!tensor.isClosed()) { // its user may have closed the output's own tensor first
                        tensor.close();
                    }
                }
            } : hold::close);
        } catch (OrtException | RuntimeException | Error e) {
            hold.close();
            throw e;
        }
    }

    /**
     * {@return why a tensor's memory must be copied because the tensor does not own it (a wrapped
     * one: its caller's arena may close on any thread while ONNX Runtime reads, and a retain holds
     * only the tensor's count), or null for memory the tensor owns} Refuses memory freed already.
     */
    private static String notOwnedCopyReason(OwnedHostTensor tensor, String as) {
        if (tensor.ownsMemory()) {
            return null;
        }
        if (!tensor.spec().data().scope().isAlive()) {
            throw new IllegalStateException(tensor + " cannot be " + as + ": it wraps a segment whose arena was closed, so its "
                    + "memory is gone (OwnedHostTensor.wrap: the memory must stay valid until the tensor's release runs)");
        }
        return "the tensor wraps memory it does not own (OwnedHostTensor.wrap), whose arena its caller could close while ONNX "
                + "Runtime reads it; pass a tensor that owns its memory (OwnedHostTensor.allocate, HostTensorPool.take) for zero copy";
    }

    // ------------------------------------------------------------------ shared steps

    /** Checks device, type and size; returns ONNX Runtime's type. Throws naming {@code source}. */
    static OnnxJavaType check(Supplier<String> source, DLDevice device, TensorLayout layout) {
        if (!device.isHostAccessible()) {
            throw new UnsupportedDeviceException(device, source.get() + " is on " + device + ", which ONNX Runtime's CPU sessions "
                    + "cannot read; copy it to host memory first");
        }
        OnnxJavaType type = OrtTypes.javaType(layout.dtype()).orElseThrow(() -> OrtTypes.refusal(layout.dtype(), source.get()));
        long bytes = Math.multiplyExact(layout.elementCount(), (long) (layout.dtype().bits() / 8));
        if (bytes > MAX_TENSOR_BYTES) {
            throw new IllegalArgumentException(source.get() + " holds " + bytes + " bytes; ONNX Runtime's Java API takes at most "
                    + MAX_TENSOR_BYTES + " bytes (2 GiB - 9) per tensor, the limit of a java.nio.ByteBuffer; split it (a "
                    + "smaller batch)");
        }
        return type;
    }

    /** Why the values must be copied (null: they need not), or a refusal if this bridge never copies. */
    private String copyReasonOrRefuse(Supplier<String> source, TensorLayout layout, String memoryReason) {
        String reason = !layout.isCompactRowMajor()
                ? "the tensor is not compact row-major (shape " + Arrays.toString(layout.shape()) + ", strides "
                        + Arrays.toString(layout.strides()) + "), and ONNX Runtime reads compact tensors"
                : memoryReason;
        if (reason != null && zeroCopyOnly) {
            throw new IllegalArgumentException("zero-copy input refused for " + source.get() + ": " + reason);
        }
        return reason;
    }

    /** Copies {@code source}'s values once into compact memory this input owns. */
    private OrtInput copied(HostTensorView source, OnnxJavaType type, Supplier<String> description, String reason)
            throws OrtException {
        TensorLayout layout = source.layout();
        // Compact and flagless: a read-only source's copy is this input's own, written here once.
        TensorLayout target = TensorLayout.of(layout.dtype(), layout.shape());
        Arena arena = shared ? Arena.ofShared() : Arena.ofConfined();
        try {
            MemorySegment copy = arena.allocate(target.extent().byteSize(), COPY_ALIGNMENT);
            source.copyTo(HostTensorView.of(copy, target));
            return new OrtInput(tensorOver(copy, layout.shape(), type), target, copy.address(),
                    Optional.of(reason + "; its values were copied once into compact memory"), null, description, shared,
                    arena::close);
        } catch (OrtException | RuntimeException | Error e) {
            arena.close();
            throw e;
        }
    }

    /** The layout ONNX Runtime reads: the source's own when it is compact from element 0, else a compact one. */
    private static TensorLayout compact(TensorLayout layout) {
        return layout.isCompactRowMajor() && layout.byteOffset() == 0 ? layout : TensorLayout.of(layout.dtype(), layout.shape());
    }

    /** An OnnxTensor over {@code data} (element 0 first, compact), through a native-order direct buffer: no copy. */
    private OnnxTensor tensorOver(MemorySegment data, long[] shape, OnnxJavaType type) throws OrtException {
        // An empty tensor may have no address at all (NULL data); ONNX Runtime gets an empty buffer of its own.
        ByteBuffer buffer = data.byteSize() == 0 ? ByteBuffer.allocateDirect(0) : data.asByteBuffer();
        return OnnxTensor.createTensor(environment, buffer.order(ByteOrder.nativeOrder()), shape, type);
    }
}
