package org.jdlpack.libtorch;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.MemorySegment;
import java.util.function.LongFunction;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.InvalidTensorException;
import org.jdlpack.abi.UnsupportedDeviceException;
import org.jdlpack.adapters.ConsumerGate;

/**
 * What both libtorch releases take in the {@code DLTensor} of {@code at::fromDLPack} without a C++
 * {@code throw} (which nothing catches: the process aborts): CPU device 0 (both adapters' builds
 * are CPU-only), a type of the release's {@link TorchDTypes} with lanes 1, non-negative strides,
 * a {@code byte_offset} that is a multiple of the element size, and no size beyond 64 bits. Each
 * adapter checks the struct kind (versioned or not, {@code READ_ONLY}) itself first: the
 * releases differ there.
 *
 * @param release        names the libtorch in messages, such as {@code "libtorch 2.10"}
 * @param build          why CPU device 0 only, such as {@code "JavaCPP's pytorch build is CPU-only"}
 * @param dtypes         the types the release converts
 * @param stridesNeeded  whether a NULL {@code strides} is refused (2.7.1 reads the array; 2.10 takes NULL as compact)
 * @param byteOffsetRule given the element size, says what {@code byte_offset} is taken (after "byte_offset is N; ")
 *
 * @since 0.1
 */
public record TorchInputs(String release, String build, TorchDTypes dtypes, boolean stridesNeeded,
                          LongFunction<String> byteOffsetRule) {

    /** The most dimensions passed to libtorch (its own kernels assume at most 64 in places). */
    public static final int MAX_NDIM = 64;

    /**
     * Checks the {@code DLTensor} behind {@code gate}.
     *
     * @param gate the struct, its kind already checked
     * @throws InvalidTensorException     for a field libtorch refuses or would read wrongly, naming it
     * @throws UnsupportedDeviceException for a device other than CPU 0
     */
    public void check(ConsumerGate gate) {
        gate.requireCpu0("libtorch", build);
        DLDataType dtype = gate.requireDType(dtypes::supported, release + " has no ScalarType for", "lanes must be 1",
                dtypes::supportedText);
        int ndim = gate.requireNdim(MAX_NDIM, "libtorch");
        if (ndim > 0 && gate.shapeIsNull()) {
            gate.refuseNull("shape", ndim);
        }
        if (ndim > 0 && stridesNeeded && gate.stridesIsNull()) {
            gate.refuseNull("strides", ndim);
        }
        MemorySegment shape = gate.shape(ndim);
        MemorySegment strides = gate.strides(ndim);
        long elementBytes = dtype.bits() / 8;
        long elements = 1;
        long lastByte = 0; // the offset of the last element from data + byte_offset, in bytes
        for (int d = 0; d < ndim; d++) {
            long extent = shape.getAtIndex(JAVA_LONG, d);
            gate.requireExtent(d, extent);
            long stride = strides == null ? 0 : strides.getAtIndex(JAVA_LONG, d);
            if (stride < 0) {
                throw new InvalidTensorException(gate.what() + ": strides[" + d + "] is " + stride + "; " + release + " refuses "
                        + "negative strides (it throws, which would end the process). Copy the tensor into a compact one first");
            }
            try {
                elements = Math.multiplyExact(elements, extent);
                if (extent > 0) {
                    lastByte = Math.addExact(lastByte, Math.multiplyExact(Math.multiplyExact(extent - 1, stride), elementBytes));
                }
            } catch (ArithmeticException e) {
                throw gate.overflow(d);
            }
        }
        long byteOffset = gate.byteOffset();
        if (byteOffset < 0 || byteOffset % elementBytes != 0) {
            throw new InvalidTensorException(gate.what() + ": byte_offset is " + Long.toUnsignedString(byteOffset) + "; "
                    + byteOffsetRule.apply(elementBytes) + ". Export with the offset folded into data (the default ExportOptions)");
        }
        gate.requireData(elements);
        if (elements > 0 && (lastByte > Long.MAX_VALUE - byteOffset - elementBytes)) {
            throw new InvalidTensorException(gate.what() + ": the bytes it reaches overflow 64 bits");
        }
    }
}
