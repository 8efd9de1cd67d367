package org.jdlpack.onnxruntime;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

import org.jdlpack.abi.DLDevice;
import org.jdlpack.abi.DLDeviceType;
import org.jdlpack.abi.ExportOwner;
import org.jdlpack.abi.ImportLifetime;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.TensorLayout;
import org.jdlpack.abi.UnsupportedDeviceException;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.cpu.internal.HostMemory;

/**
 * An {@code OrtValue} of the C route ({@link OrtCApiSession}) over a host tensor's own memory, no
 * copy: an {@link OwnedHostTensor}'s, holding a reference on that memory (a retain), or an
 * {@link ImportedTensor}'s, which it takes over (the producer's deleter runs when this value is
 * released). The same value serves as an input or as a pinned output, which ONNX Runtime writes in
 * place (its shape must be the one the model produces), in runs ({@link OrtCApiRun}) and bindings
 * ({@link OrtCApiBinding}) of any session.
 *
 * {@snippet :
 * try (OwnedHostTensor x = OwnedHostTensor.allocate(DLDataType.UINT64, 4, 4);
 *      OrtCApiTensor xt = OrtCApiSession.tensor(x)) {
 *     session.run(Map.of("x", xt), Map.of("y", yt));
 * }
 * }
 *
 * <p>The value is released at {@link #close()}, or at the end of the last run or binding that
 * holds it, first the value, then the memory (the retain, or the import's deleter). Memory on a
 * device the CPU cannot read (CUDA) is refused before any C call could reach it, naming the device
 * and whether this ONNX Runtime has a CUDA execution provider. A value forgotten unclosed is
 * released by the safety net and reported as a leak. Thread safety: any thread.
 *
 * @since 0.1
 */
public final class OrtCApiTensor implements AutoCloseable {

    private final long value;
    private final TensorLayout layout;
    /** Held by every run and binding that reads or writes this value: a close waits for them. */
    final Lease lease;

    /** @param release releases the value, then lets go of the memory, once ({@link Once}): {@link #over}'s cleanup holds it too */
    private OrtCApiTensor(long value, TensorLayout layout, Supplier<String> source, Once release) {
        this.value = value;
        this.layout = layout;
        // Made only when a report needs it; neither the name nor the action may reach this object.
        Supplier<String> name = () -> "OrtCApiTensor[" + layout + " from " + source.get() + "]";
        this.lease = new Lease(true, this, new Release(this, name, release));
    }

    /**
     * A value over an {@link OwnedHostTensor}'s memory; see {@link OrtCApiSession#tensor(OwnedHostTensor)}.
     *
     * @param tensor host memory the tensor owns, compact row-major, of a type ONNX Runtime has
     * @return the value; close it
     */
    static OrtCApiTensor of(OwnedHostTensor tensor) {
        Objects.requireNonNull(tensor, "tensor");
        OrtApi.require();
        TensorLayout layout = tensor.layout();
        Supplier<String> source = tensor::toString;
        int type = check(source, tensor.device(), layout);
        if (!tensor.ownsMemory() && layout.elementCount() != 0) {
            throw new IllegalArgumentException(source.get() + " wraps memory it does not own (OwnedHostTensor.wrap), whose arena "
                    + "could close while ONNX Runtime reads it; the C route takes tensors that own their memory "
                    + "(OwnedHostTensor.allocate, copyOf or a HostTensorPool take), or use OrtBridge, which copies it");
        }
        ExportOwner.Retained hold = tensor.retain(); // the memory's reference, for as long as ORT may use it
        MemorySegment data;
        Runnable memory;
        try {
            data = HostMemory.elements(tensor); // under the hold
            memory = hold::close;
        } catch (RuntimeException | Error e) {
            hold.close();
            throw e;
        }
        return over(data, layout, type, source, memory);
    }

    /**
     * A value over an {@link ImportedTensor}'s memory; see {@link OrtCApiSession#tensor(ImportedTensor)}.
     *
     * @param tensor an import on a host-accessible device, compact row-major, of a type ONNX Runtime has
     * @return the value; close it
     */
    static OrtCApiTensor of(ImportedTensor tensor) {
        Objects.requireNonNull(tensor, "tensor");
        TensorLayout layout = tensor.layout();
        long address = tensor.managedTensorAddress();
        String struct = tensor.kind().structName();
        Supplier<String> source = () -> "the ImportedTensor of the " + struct + " at 0x" + Long.toHexString(address);
        OrtApi.require();
        int type = check(source, tensor.device(), layout);
        ImportedTensor mine = tensor.moveTo(ImportLifetime.SHARED); // ours now: its deleter runs after the value's release
        MemorySegment data;
        Runnable memory;
        try {
            data = mine.hostSegment();
            memory = mine::close;
        } catch (RuntimeException | Error e) {
            mine.close();
            throw e;
        }
        return over(data, layout, type, source, memory);
    }

    /**
     * Makes the value over {@code data} and the tensor that owns it and the memory. Whatever
     * throws, the value (once made) is released and the memory let go of, each exactly once: the
     * tensor's ledger entry, once opened, and this cleanup share one {@link Once}.
     *
     * @param memory lets go of the memory the value reads: after the value's release
     */
    private static OrtCApiTensor over(MemorySegment data, TensorLayout layout, int type, Supplier<String> source, Runnable memory) {
        long value = 0;
        Once release = null;
        try {
            value = OrtValues.over(data, layout.shape(), type);
            long made = value;
            release = new Once(Lease.valueThenMemory(() -> OrtApi.releaseValue(made), memory));
            return new OrtCApiTensor(value, layout, source, release);
        } catch (RuntimeException | Error e) {
            if (release != null) {
                release.runAfter(e); // once, even where the tensor's ledger entry holds it already
                throw e;
            }
            try {
                if (value != 0) {
                    OrtApi.releaseValue(value);
                }
            } finally {
                memory.run();
            }
            throw e;
        }
    }

    /** Checks what ONNX Runtime reads in place here: the device first, then type and layout. {@return ONNX Runtime's element type} */
    private static int check(Supplier<String> source, DLDevice device, TensorLayout layout) {
        if (!device.isHostAccessible()) {
            throw deviceRefusal(source.get(), device);
        }
        int type = OnnxElementTypes.of(layout.dtype());
        if (type == OnnxElementTypes.UNDEFINED) {
            throw OnnxElementTypes.refusal(layout.dtype(), source.get());
        }
        if (!layout.isCompactRowMajor()) {
            throw new IllegalArgumentException(source.get() + " is not compact row-major (strides " + Arrays.toString(layout.strides())
                    + "), and ONNX Runtime reads and writes compact tensors; copy it into a compact one");
        }
        return type;
    }

    /**
     * The refusal of memory the CPU cannot read. Decided from the DLPack device alone, before any
     * C call that could reach the memory: an {@code OrtValue} over device memory given to a CPU
     * session would be read as host memory (a crash). For CUDA it says whether this ONNX Runtime
     * has the CUDA execution provider (asked with {@code GetAvailableProviders}, which reads no
     * tensor), and what to do either way.
     */
    private static UnsupportedDeviceException deviceRefusal(String source, DLDevice device) {
        String copy = "copy it to host memory first (dlpack-cuda: CudaTensorView.of(tensor).readTo(host) into an OwnedHostTensor)";
        if (device.type().filter(type -> type == DLDeviceType.CUDA).isEmpty()) {
            return new UnsupportedDeviceException(device, source + " is on " + device + " (DLDevice.device_type " + device.deviceType()
                    + "), which ONNX Runtime's CPU sessions cannot read; " + copy);
        }
        List<String> providers = OrtApi.availableProviders();
        String provider = providers.contains("CUDAExecutionProvider")
                ? "this ONNX Runtime has the CUDA execution provider " + providers + ", but OrtCApiSession opens CPU sessions and "
                        + "does not bind CUDA memory yet (the device path through IOBinding is docs/gpu-check.md's next item)"
                : "this ONNX Runtime (" + OrtApi.BOUND.version() + ") has no CUDA execution provider (GetAvailableProviders: "
                        + providers + "), so nothing in it can read CUDA memory; for that, ONNX Runtime's GPU build "
                        + "(com.microsoft.onnxruntime:onnxruntime_gpu) on a machine with CUDA";
        return new UnsupportedDeviceException(device, source + " is CUDA device memory (kDLCUDA, " + device + "), refused before "
                + "ONNX Runtime saw it: " + provider + ". Meanwhile, " + copy);
    }

    /** {@return the layout ONNX Runtime reads or writes} */
    public TensorLayout layout() {
        return layout;
    }

    long value() {
        return value;
    }

    /** Releases the value and the hold on the memory now, or when the last run or binding holding it is done. */
    @Override
    public void close() {
        lease.close();
    }

    @Override
    public String toString() {
        return "OrtCApiTensor[" + layout + ", " + lease + "]";
    }
}
