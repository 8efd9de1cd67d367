package org.jdlpack.tensorflow;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.MemorySegment;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLTensorFlag;
import org.jdlpack.abi.ExportedTensor;
import org.jdlpack.abi.InvalidTensorException;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.UnsupportedDeviceException;
import org.jdlpack.adapters.ConsumerGate;

/**
 * The gate in front of {@code tensorflow::TFE_HandleFromDLPack}: reads the managed tensor exactly
 * as TensorFlow will and refuses, with a Java exception naming the field, every input TensorFlow 2.18
 * would refuse, read wrongly, or accept and then abort the process on.
 *
 * <p>What TensorFlow 2.18 does, found by handing it each case
 * directly in a probe (the alignment case in a child process): it reads the
 * legacy {@code DLManagedTensor} only; it refuses through its status a {@code byte_offset} other
 * than 0, strides that are not compact row-major (negative ones included; a size-1 dimension may
 * have any stride) and float8; for a CUDA device it fails after wrapping the memory and calls the
 * deleter; it accepts lanes 2 and reads them as scalars, and accepts CPU device 1; it accepts data
 * aligned to 32 but not 64 bytes, and the first Session run over it ends the process
 * ({@code Check failed: IsAligned()}). From its source: a negative extent or more than 254
 * dimensions fails a {@code TensorShape} {@code CHECK}. All of these are refused here; a strided,
 * offset or misaligned tensor is copied by the caller into an {@code OwnedHostTensor} (compact,
 * 256-byte aligned) if wanted.
 */
final class DLPackInputs {

    /** {@code TensorShape::MaxDimensions()}: a shape with more dimensions fails a CHECK. */
    static final int MAX_NDIM = 254;
    /** The alignment TensorFlow's kernels assume ({@code EIGEN_MAX_ALIGN_BYTES} at its largest; TensorFlow's allocator gives 64). */
    static final long ALIGNMENT = 64;

    private static final String COPY_HINT = "Copy it into a compact tensor first: OwnedHostTensor.copyOf(HostTensorView.of(...))";

    private DLPackInputs() {
    }

    /**
     * Checks an export, if still owned, against what {@code TFE_HandleFromDLPack} takes.
     *
     * @param export an owned export
     * @throws IllegalStateException        if the export is no longer owned
     * @throws InvalidTensorException       for a field TensorFlow refuses or would read wrongly
     * @throws UnsupportedDeviceException   for a device other than CPU 0
     */
    static void check(ExportedTensor export) {
        ConsumerGate gate = ConsumerGate.of(export, "TensorFlow");
        if (gate.kind() == ManagedTensorKind.VERSIONED) {
            if (DLTensorFlag.READ_ONLY.isSet(gate.versionedFlags())) {
                throw new InvalidTensorException(gate.what() + " is READ_ONLY, and TensorFlow 2.18 takes only the legacy "
                        + "DLManagedTensor, which cannot say so: TensorFlow would be free to write to it. Copy it into "
                        + "writable memory first (OwnedHostTensor.copyOf), or export writable memory with ExportOptions.LEGACY");
            }
            throw new InvalidTensorException(gate.what() + " is a DLManagedTensorVersioned; TensorFlow 2.18's "
                    + "TFE_HandleFromDLPack reads the legacy DLManagedTensor only. Export with ExportOptions.LEGACY");
        }
        gate.requireCpu0("TensorFlow", "TensorFlow Java's build is CPU-only");
        DLDataType dtype = gate.requireDType(TensorFlowDTypes::supported, "this adapter does not hand TensorFlow",
                "lanes must be 1: TensorFlow ignores lanes and would read the wrong elements", TensorFlowDTypes::supportedText);
        int ndim = gate.requireNdim(MAX_NDIM, "TensorFlow");
        if (ndim > 0 && gate.shapeIsNull()) {
            gate.refuseNull("shape", ndim);
        }
        MemorySegment shape = gate.shape(ndim);
        long elements = 1;
        for (int d = 0; d < ndim; d++) {
            long extent = shape.getAtIndex(JAVA_LONG, d);
            gate.requireExtent(d, extent);
            try {
                elements = Math.multiplyExact(elements, extent);
                Math.multiplyExact(elements, (long) dtype.bits() / 8);
            } catch (ArithmeticException e) {
                throw gate.overflow(d);
            }
        }
        MemorySegment strides = gate.strides(ndim);
        if (strides != null && elements > 0) {
            checkCompact(strides, shape, ndim, gate);
        }
        long byteOffset = gate.byteOffset();
        if (byteOffset != 0) {
            throw new InvalidTensorException(gate.what() + ": byte_offset is " + Long.toUnsignedString(byteOffset) + "; TensorFlow "
                    + "2.18 takes only 0. Export with the offset folded into data (the default ExportOptions, not "
                    + "withVerbatimByteOffset)");
        }
        long data = gate.requireData(elements);
        if (elements > 0 && data % ALIGNMENT != 0) {
            throw new InvalidTensorException(gate.what() + ": data 0x" + Long.toHexString(data) + " is not aligned to " + ALIGNMENT
                    + " bytes; TensorFlow's kernels fail CHECK(IsAligned()) on it, which ends the process. " + COPY_HINT);
        }
    }

    /** TensorFlow's rule: compact row-major, a stride of a size-1 dimension may be anything. */
    private static void checkCompact(MemorySegment strides, MemorySegment shape, int ndim, ConsumerGate gate) {
        long expected = 1;
        for (int d = ndim - 1; d >= 0; d--) {
            long extent = shape.getAtIndex(JAVA_LONG, d);
            long stride = strides.getAtIndex(JAVA_LONG, d);
            if (extent != 1 && stride != expected) {
                throw new InvalidTensorException(gate.what() + ": strides[" + d + "] is " + stride + " where compact row-major needs "
                        + expected + (stride < 0 ? " (a negative stride)" : "") + "; TensorFlow 2.18 takes compact row-major "
                        + "tensors only. " + COPY_HINT);
            }
            expected *= extent; // no overflow: the element count was checked
        }
    }
}
