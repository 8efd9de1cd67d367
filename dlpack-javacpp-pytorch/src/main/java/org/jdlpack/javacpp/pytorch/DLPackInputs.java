package org.jdlpack.javacpp.pytorch;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.MemorySegment;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLDevice;
import org.jdlpack.abi.DLDeviceType;
import org.jdlpack.abi.DLTensorFlag;
import org.jdlpack.abi.InvalidTensorException;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.UnsupportedDeviceException;

/**
 * The gate in front of {@code at::fromDLPack}: reads the managed tensor exactly as libtorch will and
 * refuses, with a Java exception naming the field, every input libtorch 2.10 would answer with a C++
 * {@code throw} (which nothing catches: the process aborts) or would take silently wrong.
 *
 * <p>What libtorch 2.10 does, found by feeding it each case in a child process: it throws for
 * lanes other than 1, for type codes and widths it has no {@code ScalarType} for, for a
 * {@code byte_offset} that is not a multiple of the element size, for a negative stride, and for
 * a device it has no backend for; it honours {@code byte_offset} (it becomes the storage offset);
 * it ignores {@code READ_ONLY} and would let torch write to read-only memory, so that is refused
 * here. Only CPU device 0 is accepted: the JavaCPP build is CPU-only.
 */
final class DLPackInputs {

    /** {@code DLTensor} offsets (the ABI's, checked against the C compiler by dlpack-abi's tests). */
    private static final long DATA = 0;
    private static final long DEVICE_TYPE = 8;
    private static final long DEVICE_ID = 12;
    private static final long NDIM = 16;
    private static final long DTYPE_CODE = 20;
    private static final long DTYPE_BITS = 21;
    private static final long DTYPE_LANES = 22;
    private static final long SHAPE = 24;
    private static final long STRIDES = 32;
    private static final long BYTE_OFFSET = 40;
    private static final long DL_TENSOR_SIZE = 48;
    private static final long VERSIONED_FLAGS = 24;

    /** The most dimensions passed to libtorch (its own kernels assume at most 64 in places). */
    static final int MAX_NDIM = 64;

    private DLPackInputs() {
    }

    /**
     * Checks the managed tensor at {@code address} against what {@code at::fromDLPack} (legacy) or
     * {@code at::fromDLPackVersioned} takes without throwing.
     *
     * @param what names the tensor in messages
     * @throws InvalidTensorException       for a field libtorch refuses or would read wrongly
     * @throws UnsupportedDeviceException   for a device other than CPU 0
     */
    @SuppressWarnings("restricted") // the struct is jdlpack's export, owned by the caller: its size is the kind's
    static void check(ManagedTensorKind kind, long address, String what) {
        MemorySegment struct = MemorySegment.ofAddress(address).reinterpret(kind.structSize());
        if (kind == ManagedTensorKind.VERSIONED) {
            int major = struct.get(JAVA_INT, 0);
            if (major != 1) {
                throw new InvalidTensorException(what + ": DLPack major version " + Integer.toUnsignedString(major)
                        + "; libtorch reads version 1 only");
            }
            long flags = struct.get(JAVA_LONG, VERSIONED_FLAGS);
            if (DLTensorFlag.READ_ONLY.isSet(flags)) {
                throw new InvalidTensorException(what + " is READ_ONLY, and libtorch 2.10 ignores that flag: the torch tensor "
                        + "would let torch write to it. Copy it into writable memory first (an OwnedHostTensor), or export "
                        + "writable memory");
            }
        }
        MemorySegment tensor = struct.asSlice(kind.dlTensorOffset(), DL_TENSOR_SIZE);
        int deviceType = tensor.get(JAVA_INT, DEVICE_TYPE);
        int deviceId = tensor.get(JAVA_INT, DEVICE_ID);
        if (deviceType != DLDeviceType.CPU.code() || deviceId != 0) {
            DLDevice device = new DLDevice(deviceType, deviceId);
            throw new UnsupportedDeviceException(device, what + " is on " + device + "; this adapter hands libtorch CPU "
                    + "device 0 only (JavaCPP's pytorch build is CPU-only): copy it to host memory first");
        }
        int code = Byte.toUnsignedInt(tensor.get(JAVA_BYTE, DTYPE_CODE));
        int bits = Byte.toUnsignedInt(tensor.get(JAVA_BYTE, DTYPE_BITS));
        int lanes = Short.toUnsignedInt(tensor.get(JAVA_SHORT, DTYPE_LANES));
        DLDataType dtype = LibTorch.DTYPES.supported(code, bits, lanes);
        if (dtype == null) {
            throw new InvalidTensorException(what + " has dtype (code " + code + ", bits " + bits + ", lanes " + lanes
                    + "), which libtorch 2.10 has no ScalarType for" + (lanes != 1 ? " (lanes must be 1)" : "")
                    + "; supported: " + LibTorch.DTYPES.supportedText());
        }
        int ndim = tensor.get(JAVA_INT, NDIM);
        if (ndim < 0 || ndim > MAX_NDIM) {
            throw new InvalidTensorException(what + ": ndim is " + ndim + "; libtorch takes 0 to " + MAX_NDIM);
        }
        long shapeAddress = tensor.get(JAVA_LONG, SHAPE);
        long stridesAddress = tensor.get(JAVA_LONG, STRIDES);
        if (ndim > 0 && shapeAddress == 0) {
            throw new InvalidTensorException(what + ": shape is NULL for ndim " + ndim);
        }
        MemorySegment shape = MemorySegment.ofAddress(shapeAddress).reinterpret(ndim * 8L);
        MemorySegment strides = stridesAddress == 0 ? null : MemorySegment.ofAddress(stridesAddress).reinterpret(ndim * 8L);
        long elementBytes = dtype.bits() / 8;
        long elements = 1;
        long lastByte = 0; // the offset of the last element from data + byte_offset, in bytes
        for (int d = 0; d < ndim; d++) {
            long extent = shape.getAtIndex(JAVA_LONG, d);
            if (extent < 0) {
                throw new InvalidTensorException(what + ": shape[" + d + "] is " + extent);
            }
            long stride = strides == null ? 0 : strides.getAtIndex(JAVA_LONG, d);
            if (stride < 0) {
                throw new InvalidTensorException(what + ": strides[" + d + "] is " + stride + "; libtorch 2.10 refuses negative "
                        + "strides (it throws, which would end the process). Copy the tensor into a compact one first");
            }
            try {
                elements = Math.multiplyExact(elements, extent);
                if (extent > 0) {
                    lastByte = Math.addExact(lastByte, Math.multiplyExact(Math.multiplyExact(extent - 1, stride), elementBytes));
                }
            } catch (ArithmeticException e) {
                throw new InvalidTensorException(what + ": its size overflows 64 bits at dimension " + d);
            }
        }
        long byteOffset = tensor.get(JAVA_LONG, BYTE_OFFSET);
        if (byteOffset < 0 || byteOffset % elementBytes != 0) {
            throw new InvalidTensorException(what + ": byte_offset is " + Long.toUnsignedString(byteOffset) + "; libtorch 2.10 "
                    + "takes only a multiple of the element size (" + elementBytes + " bytes). Export with the offset folded into "
                    + "data (the default ExportOptions)");
        }
        if (elements > 0 && tensor.get(JAVA_LONG, DATA) == 0) {
            throw new InvalidTensorException(what + ": data is NULL for " + elements + " elements");
        }
        if (elements > 0 && (lastByte > Long.MAX_VALUE - byteOffset - elementBytes)) {
            throw new InvalidTensorException(what + ": the bytes it reaches overflow 64 bits");
        }
    }
}
