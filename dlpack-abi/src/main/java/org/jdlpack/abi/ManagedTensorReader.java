package org.jdlpack.abi;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED;

import java.lang.foreign.MemorySegment;

import org.jdlpack.abi.internal.NativeMemory;
import org.jdlpack.abi.layout.DLDataTypeLayout;
import org.jdlpack.abi.layout.DLDeviceLayout;
import org.jdlpack.abi.layout.DLManagedTensorVersionedLayout;
import org.jdlpack.abi.layout.DLPackVersionLayout;
import org.jdlpack.abi.layout.DLTensorLayout;

/**
 * Reads and validates a foreign managed tensor. Everything is copied into Java values once, so a
 * producer that changes the struct afterwards cannot change what was validated. Reads are
 * unaligned: a hostile producer's misaligned struct is rejected by validation, not by a crash.
 */
final class ManagedTensorReader {

    /** The validated contents of a managed tensor. */
    record Fields(DLPackVersion version, long flags, long data, DLDevice device, DLDataType dtype, long[] shape,
                  long[] strides, boolean stridesWereNull, long byteOffset, long elementCount, TensorExtent extent) {
    }

    private ManagedTensorReader() {
    }

    /**
     * Reads the struct at {@code address}.
     *
     * @throws UnsupportedVersionException before reading anything past the version
     * @throws InvalidTensorException      naming the first malformed field
     */
    static Fields read(ManagedTensorKind kind, long address) {
        MemorySegment struct = NativeMemory.at(address, kind.structSize());
        DLPackVersion version = null;
        long flags = 0;
        if (kind == ManagedTensorKind.VERSIONED) {
            version = DLPackVersion.ofRaw(
                    struct.get(JAVA_INT_UNALIGNED, DLManagedTensorVersionedLayout.VERSION + DLPackVersionLayout.MAJOR),
                    struct.get(JAVA_INT_UNALIGNED, DLManagedTensorVersionedLayout.VERSION + DLPackVersionLayout.MINOR));
            if (!version.isSupported()) {
                throw new UnsupportedVersionException(version);
            }
            flags = struct.get(JAVA_LONG_UNALIGNED, DLManagedTensorVersionedLayout.FLAGS);
        }
        long t = kind.dlTensorOffset();
        int ndim = struct.get(JAVA_INT_UNALIGNED, t + DLTensorLayout.NDIM);
        if (ndim < 0) {
            throw new InvalidTensorException("DLTensor.ndim is " + ndim + ", must not be negative");
        }
        if (ndim > TensorGeometry.MAX_NDIM) {
            throw new InvalidTensorException("DLTensor.ndim is " + ndim + ", above the maximum " + TensorGeometry.MAX_NDIM);
        }
        DLDataType dtype = DLDataType.fromRaw(
                struct.get(JAVA_BYTE, t + DLTensorLayout.DTYPE + DLDataTypeLayout.CODE),
                struct.get(JAVA_BYTE, t + DLTensorLayout.DTYPE + DLDataTypeLayout.BITS),
                struct.get(JAVA_SHORT_UNALIGNED, t + DLTensorLayout.DTYPE + DLDataTypeLayout.LANES));
        DLDevice device = new DLDevice(
                struct.get(JAVA_INT_UNALIGNED, t + DLTensorLayout.DEVICE + DLDeviceLayout.DEVICE_TYPE),
                struct.get(JAVA_INT_UNALIGNED, t + DLTensorLayout.DEVICE + DLDeviceLayout.DEVICE_ID));

        long shapePointer = struct.get(JAVA_LONG_UNALIGNED, t + DLTensorLayout.SHAPE);
        if (shapePointer == 0 && ndim > 0) {
            throw new InvalidTensorException("DLTensor.shape is NULL with ndim " + ndim);
        }
        long[] shape = readLongs(shapePointer, ndim);
        long stridesPointer = struct.get(JAVA_LONG_UNALIGNED, t + DLTensorLayout.STRIDES);
        // NULL strides meant compact row-major before DLPack 1.2; later producers that still
        // write NULL are read the same way rather than failing the user.
        boolean stridesWereNull = stridesPointer == 0;
        for (int i = 0; i < ndim; i++) {
            if (shape[i] < 0) {
                throw new InvalidTensorException("DLTensor.shape[" + i + "] is " + shape[i] + ", must not be negative");
            }
        }
        long[] strides = stridesWereNull ? TensorGeometry.compactStrides(shape) : readLongs(stridesPointer, ndim);

        long byteOffset = struct.get(JAVA_LONG_UNALIGNED, t + DLTensorLayout.BYTE_OFFSET);
        if (byteOffset < 0) {
            throw new InvalidTensorException("DLTensor.byte_offset is " + Long.toUnsignedString(byteOffset)
                    + ", above the largest supported offset 2^63-1");
        }
        long count = TensorGeometry.elementCount(shape);
        TensorExtent extent = TensorGeometry.extent(shape, strides, dtype, DLTensorFlag.IS_SUBBYTE_TYPE_PADDED.isSet(flags));
        long data = struct.get(JAVA_LONG_UNALIGNED, t + DLTensorLayout.DATA);
        if (data == 0 && count > 0) {
            throw new InvalidTensorException("DLTensor.data is NULL with " + count + " elements");
        }
        if (device.isHostAccessible() && count > 0) {
            checkHostAddressRange(data, byteOffset, extent);
        }
        return new Fields(version, flags, data, device, dtype, shape, strides, stridesWereNull, byteOffset, count, extent);
    }

    /** On the host, data + byte_offset + the extent must be addresses, not a wrap-around. */
    private static void checkHostAddressRange(long data, long byteOffset, TensorExtent extent) {
        try {
            if (data < 0) {
                throw new ArithmeticException("data above 2^63");
            }
            long origin = Math.addExact(data, byteOffset);
            long first = Math.addExact(origin, extent.startByte());
            Math.addExact(origin, extent.endByte());
            if (first < 0) {
                throw new ArithmeticException("below address 0");
            }
        } catch (ArithmeticException e) {
            throw new InvalidTensorException("DLTensor.data 0x" + Long.toHexString(data) + " with byte_offset " + byteOffset
                    + " and extent " + extent + " does not describe a host address range", e);
        }
    }

    private static long[] readLongs(long pointer, int count) {
        if (count == 0) {
            return new long[0];
        }
        return NativeMemory.at(pointer, 8L * count).toArray(JAVA_LONG_UNALIGNED);
    }
}
