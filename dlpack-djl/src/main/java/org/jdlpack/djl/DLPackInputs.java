package org.jdlpack.djl;

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
 * The gate in front of libtorch 2.7.1's {@code at::fromDLPack}: reads the managed tensor exactly as
 * libtorch will and refuses, with a Java exception naming the field, every input libtorch would
 * answer with a C++ {@code throw} (which nothing catches: the process aborts) or would take
 * silently wrong; then folds {@code byte_offset} into {@code data}.
 *
 * <p>What libtorch 2.7.1 does, found by calling it ungated in a child process: it has only the
 * legacy entry ({@code DLManagedTensor}; no {@code fromDLPackVersioned}); it throws (exit 134)
 * for lanes other than 1, for type codes it has no {@code ScalarType} for (every float8 code: its
 * DLPack header predates them) and for a negative stride; it ignores {@code byte_offset} (a
 * verbatim 16 over float32 reads elements 0.. instead of 4..: silently shifted), so the offset is
 * folded into {@code data} before the call; it takes a CUDA pointer as a CUDA tensor. A versioned
 * export's {@code READ_ONLY} has no legacy field to travel in and libtorch would let torch write
 * anyway, so it is refused, named. Only CPU device 0 is accepted: DJL's CPU natives.
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
     * Checks the managed tensor at {@code address} against what {@code at::fromDLPack} of libtorch
     * 2.7.1 takes without throwing and reads as meant.
     *
     * @param what names the tensor in messages
     * @throws InvalidTensorException       for a field libtorch refuses or would read wrongly, a
     *                                      versioned struct, or {@code READ_ONLY}
     * @throws UnsupportedDeviceException   for a device other than CPU 0
     */
    @SuppressWarnings("restricted") // the struct is jdlpack's export, owned by the caller: its size is the kind's
    static void check(ManagedTensorKind kind, long address, String what) {
        MemorySegment struct = MemorySegment.ofAddress(address).reinterpret(kind.structSize());
        if (kind == ManagedTensorKind.VERSIONED) {
            if (DLTensorFlag.READ_ONLY.isSet(struct.get(JAVA_LONG, VERSIONED_FLAGS))) {
                throw new InvalidTensorException(what + " is READ_ONLY, and libtorch 2.7.1 has no way to honour that flag (its "
                        + "at::fromDLPack takes the legacy struct, which cannot carry it): a DJL NDArray would let torch write to "
                        + "it. Copy it into writable memory first (an OwnedHostTensor), or export writable memory");
            }
            throw new InvalidTensorException(what + " is a DLManagedTensorVersioned, and libtorch 2.7.1 (DJL 0.36) has only "
                    + "at::fromDLPack(DLManagedTensor*): export it with ExportOptions.LEGACY");
        }
        MemorySegment tensor = struct.asSlice(kind.dlTensorOffset(), DL_TENSOR_SIZE);
        int deviceType = tensor.get(JAVA_INT, DEVICE_TYPE);
        int deviceId = tensor.get(JAVA_INT, DEVICE_ID);
        if (deviceType != DLDeviceType.CPU.code() || deviceId != 0) {
            DLDevice device = new DLDevice(deviceType, deviceId);
            throw new UnsupportedDeviceException(device, what + " is on " + device + "; this adapter hands libtorch CPU "
                    + "device 0 only (DJL's pytorch-native-cpu): copy it to host memory first");
        }
        int code = Byte.toUnsignedInt(tensor.get(JAVA_BYTE, DTYPE_CODE));
        int bits = Byte.toUnsignedInt(tensor.get(JAVA_BYTE, DTYPE_BITS));
        int lanes = Short.toUnsignedInt(tensor.get(JAVA_SHORT, DTYPE_LANES));
        DLDataType dtype = LibTorch.DTYPES.supported(code, bits, lanes);
        if (dtype == null) {
            throw new InvalidTensorException(what + " has dtype (code " + code + ", bits " + bits + ", lanes " + lanes
                    + "), which libtorch 2.7.1 has no ScalarType for" + (lanes != 1 ? " (lanes must be 1)" : "")
                    + "; supported: " + LibTorch.DTYPES.supportedText());
        }
        int ndim = tensor.get(JAVA_INT, NDIM);
        if (ndim < 0 || ndim > MAX_NDIM) {
            throw new InvalidTensorException(what + ": ndim is " + ndim + "; libtorch takes 0 to " + MAX_NDIM);
        }
        long shapeAddress = tensor.get(JAVA_LONG, SHAPE);
        long stridesAddress = tensor.get(JAVA_LONG, STRIDES);
        if (ndim > 0 && (shapeAddress == 0 || stridesAddress == 0)) {
            // jdlpack always writes both; libtorch 2.7.1 would read the NULL array.
            throw new InvalidTensorException(what + ": " + (shapeAddress == 0 ? "shape" : "strides") + " is NULL for ndim " + ndim);
        }
        MemorySegment shape = MemorySegment.ofAddress(shapeAddress).reinterpret(ndim * 8L);
        MemorySegment strides = MemorySegment.ofAddress(stridesAddress).reinterpret(ndim * 8L);
        long elementBytes = dtype.bits() / 8;
        long elements = 1;
        for (int d = 0; d < ndim; d++) {
            long extent = shape.getAtIndex(JAVA_LONG, d);
            if (extent < 0) {
                throw new InvalidTensorException(what + ": shape[" + d + "] is " + extent);
            }
            long stride = strides.getAtIndex(JAVA_LONG, d);
            if (stride < 0) {
                throw new InvalidTensorException(what + ": strides[" + d + "] is " + stride + "; libtorch 2.7.1 refuses negative "
                        + "strides (it throws, which would end the process). Copy the tensor into a compact one first");
            }
            try {
                elements = Math.multiplyExact(elements, extent);
                if (extent > 0) {
                    Math.multiplyExact(Math.multiplyExact(extent - 1, stride), elementBytes);
                }
            } catch (ArithmeticException e) {
                throw new InvalidTensorException(what + ": its size overflows 64 bits at dimension " + d);
            }
        }
        long byteOffset = tensor.get(JAVA_LONG, BYTE_OFFSET);
        if (byteOffset < 0 || byteOffset % elementBytes != 0) {
            throw new InvalidTensorException(what + ": byte_offset is " + Long.toUnsignedString(byteOffset) + "; this adapter "
                    + "folds only a multiple of the element size (" + elementBytes + " bytes) into data, so that elements stay "
                    + "aligned. Export with the offset folded into data (the default ExportOptions)");
        }
        if (elements > 0 && tensor.get(JAVA_LONG, DATA) == 0) {
            throw new InvalidTensorException(what + ": data is NULL for " + elements + " elements");
        }
    }

    /**
     * Moves {@code byte_offset} into {@code data} of a struct {@link #check} accepted and the caller
     * now owns (consumed): libtorch 2.7.1 ignores {@code byte_offset}. The deleter does not read
     * either field (jdlpack's deleter finds its owner through {@code manager_ctx}).
     */
    @SuppressWarnings("restricted")
    static void foldByteOffset(ManagedTensorKind kind, long address) {
        MemorySegment tensor = MemorySegment.ofAddress(address).reinterpret(kind.structSize())
                .asSlice(kind.dlTensorOffset(), DL_TENSOR_SIZE);
        long byteOffset = tensor.get(JAVA_LONG, BYTE_OFFSET);
        if (byteOffset != 0) {
            tensor.set(JAVA_LONG, DATA, tensor.get(JAVA_LONG, DATA) + byteOffset);
            tensor.set(JAVA_LONG, BYTE_OFFSET, 0L);
        }
    }
}
