package org.jdlpack.abi;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;


/**
 * Reads and validates a foreign managed tensor. Everything is copied into Java values once, so a
 * producer that changes the struct afterwards cannot change what was validated. Reads are
 * unaligned: a hostile producer's misaligned struct is rejected by validation, not by a crash.
 */
final class ManagedTensorReader {

    /**
     * The validated contents of a managed tensor, kept in few objects because one is made per
     * import: the version packed as {@code major << 32 | minor} (-1 for a legacy struct), shape
     * and strides in one array ({@code dims[i]} is {@code shape[i]}, {@code dims[ndim + i]} is
     * {@code strides[i]}), the extent as two longs.
     */
    record Fields(long version, long flags, long data, int deviceType, int deviceId, DLDataType dtype, long[] dims,
                  boolean stridesWereNull, long byteOffset, long elementCount, long extentStart, long extentSize) {

        DLDevice device() {
            return new DLDevice(deviceType, deviceId);
        }

        int ndim() {
            return dims.length >> 1;
        }

        long[] shape() {
            return Arrays.copyOfRange(dims, 0, ndim());
        }

        long[] strides() {
            return Arrays.copyOfRange(dims, ndim(), dims.length);
        }

        TensorExtent extent() {
            return extentSize == 0 ? TensorExtent.EMPTY : new TensorExtent(extentStart, extentSize);
        }

        /** The validated fields as a layout, with arrays of its own. */
        TensorLayout layout() {
            return new TensorLayout(dtype, shape(), strides(), byteOffset, flags, extent(), elementCount);
        }

        DLPackVersion dlpackVersion() {
            return version < 0 ? null : DLPackVersion.ofRaw((int) (version >>> 32), (int) version);
        }

        /** For leak reports and toString: what was imported, without the pointer. */
        @Override
        public String toString() {
            return device() + ", " + dtype + ", shape " + Arrays.toString(shape());
        }
    }

    /**
     * Validated single-lane dtypes by {@code code << 8 | bits}, so that an import allocates no
     * dtype of its own. Filled on first use; a racing fill stores an equal immutable value.
     */
    private static final DLDataType[] SINGLE_LANE = new DLDataType[32 << 8];

    private static DLDataType dtype(byte code, byte bits, short lanes) {
        int key = (code & 0xff) << 8 | (bits & 0xff);
        if (lanes != 1 || key >= SINGLE_LANE.length) {
            return DLDataType.fromRaw(code, bits, lanes);
        }
        DLDataType known = SINGLE_LANE[key];
        if (known == null) {
            known = DLDataType.fromRaw(code, bits, lanes); // throws for an invalid combination, caching nothing
            SINGLE_LANE[key] = known;
        }
        return known;
    }

    /**
     * The end of the user address space on this platform: host extents reaching above it cannot
     * be memory, whatever the producer says. x86-64 with 4-level paging and Linux on aarch64 with
     * 48-bit virtual addresses give user space below 2^47 and 2^48; 5-level paging and 52-bit
     * aarch64 hand out higher addresses only to programs that ask for them with a hint. Elsewhere
     * the bound is only 2^63.
     */
    static final long USER_ADDRESS_LIMIT = userAddressLimit(System.getProperty("os.arch", ""));

    static long userAddressLimit(String arch) {
        return switch (arch) {
            case "amd64", "x86_64" -> 1L << 47;
            case "aarch64", "arm64" -> 1L << 48;
            default -> Long.MAX_VALUE;
        };
    }

    /** The platform named in messages about {@link #USER_ADDRESS_LIMIT}. */
    private static String limitText() {
        return USER_ADDRESS_LIMIT == Long.MAX_VALUE ? "2^63"
                : "2^" + Long.numberOfTrailingZeros(USER_ADDRESS_LIMIT) + ", the top of user space on " + System.getProperty("os.arch");
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
        long version = -1;
        long flags = 0;
        if (kind == ManagedTensorKind.VERSIONED) {
            int major = struct.get(JAVA_INT_UNALIGNED, DLManagedTensorVersionedLayout.VERSION + DLPackVersionLayout.MAJOR);
            int minor = struct.get(JAVA_INT_UNALIGNED, DLManagedTensorVersionedLayout.VERSION + DLPackVersionLayout.MINOR);
            if (Integer.toUnsignedLong(major) != DLPackVersion.SUPPORTED_MAJOR) {
                throw new UnsupportedVersionException(DLPackVersion.ofRaw(major, minor));
            }
            version = Integer.toUnsignedLong(major) << 32 | Integer.toUnsignedLong(minor);
            flags = struct.get(JAVA_LONG_UNALIGNED, DLManagedTensorVersionedLayout.FLAGS);
        }
        long t = kind.dlTensorOffset();
        int ndim = struct.get(JAVA_INT_UNALIGNED, t + DLTensorLayout.NDIM);
        if (ndim < 0) {
            throw new InvalidTensorException("DLTensor.ndim is " + ndim + ", must not be negative");
        }
        if (ndim > TensorLayout.MAX_NDIM) {
            throw new InvalidTensorException("DLTensor.ndim is " + ndim + ", above the maximum " + TensorLayout.MAX_NDIM);
        }
        DLDataType dtype = dtype(
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
        // dims holds shape then strides: one array per import instead of two.
        long[] dims = new long[2 * ndim];
        if (ndim > 0) {
            MemorySegment.copy(NativeMemory.at(shapePointer, 8L * ndim), JAVA_LONG_UNALIGNED, 0, dims, 0, ndim);
        }
        long stridesPointer = struct.get(JAVA_LONG_UNALIGNED, t + DLTensorLayout.STRIDES);
        // NULL strides meant compact row-major before DLPack 1.2; later producers that still
        // write NULL are read the same way rather than failing the user.
        boolean stridesWereNull = stridesPointer == 0;
        for (int i = 0; i < ndim; i++) {
            if (dims[i] < 0) {
                throw new InvalidTensorException("DLTensor.shape[" + i + "] is " + dims[i] + ", must not be negative");
            }
        }
        if (stridesWereNull) {
            TensorGeometry.compactStrides(dims, dims, ndim, ndim);
        } else if (ndim > 0) {
            MemorySegment.copy(NativeMemory.at(stridesPointer, 8L * ndim), JAVA_LONG_UNALIGNED, 0, dims, ndim, ndim);
        }

        long byteOffset = struct.get(JAVA_LONG_UNALIGNED, t + DLTensorLayout.BYTE_OFFSET);
        if (byteOffset < 0) {
            throw new InvalidTensorException("DLTensor.byte_offset is " + Long.toUnsignedString(byteOffset)
                    + ", above the largest supported offset 2^63-1");
        }
        long count = TensorGeometry.elementCount(dims, ndim);
        TensorExtent extent = count == 0 ? TensorExtent.EMPTY
                : TensorGeometry.extent(dims, 0, dims, ndim, ndim, dtype, DLTensorFlag.IS_SUBBYTE_TYPE_PADDED.isSet(flags));
        long data = struct.get(JAVA_LONG_UNALIGNED, t + DLTensorLayout.DATA);
        if (data == 0 && count > 0) {
            throw new InvalidTensorException("DLTensor.data is NULL with " + count + " elements");
        }
        if (device.isHostAccessible() && count > 0) {
            checkHostAddressRange(data, byteOffset, extent, dims, ndim);
        }
        return new Fields(version, flags, data, device.deviceType(), device.deviceId(), dtype, dims, stridesWereNull, byteOffset, count, extent.startByte(),
                extent.byteSize());
    }

    /**
     * On the host, data + byte_offset + the extent must be addresses of user space: no
     * wrap-around, nothing below 0, nothing at or above {@link #USER_ADDRESS_LIMIT}. The message
     * names the first field that leaves user space.
     */
    private static void checkHostAddressRange(long data, long byteOffset, TensorExtent extent, long[] dims, int ndim) {
        long origin;
        long first;
        long end;
        try {
            if (data < 0) {
                throw new ArithmeticException("data above 2^63");
            }
            origin = Math.addExact(data, byteOffset);
            first = Math.addExact(origin, extent.startByte());
            end = Math.addExact(origin, extent.endByte());
            if (first < 0) {
                throw new ArithmeticException("below address 0");
            }
        } catch (ArithmeticException e) {
            throw new InvalidTensorException(range(data, byteOffset, extent) + " does not describe a host address range", e);
        }
        if (end > USER_ADDRESS_LIMIT) {
            String field = data >= USER_ADDRESS_LIMIT ? "DLTensor.data 0x" + Long.toHexString(data)
                    : origin >= USER_ADDRESS_LIMIT ? "DLTensor.byte_offset " + byteOffset
                    : "DLTensor.shape " + Arrays.toString(Arrays.copyOf(dims, ndim)) + " with strides "
                            + Arrays.toString(Arrays.copyOfRange(dims, ndim, 2 * ndim));
            throw new InvalidTensorException(field + " reaches host address 0x" + Long.toHexString(end - 1) + " (" + range(data, byteOffset, extent)
                    + "), above the user address space, which ends at " + limitText());
        }
    }

    private static String range(long data, long byteOffset, TensorExtent extent) {
        return "DLTensor.data 0x" + Long.toHexString(data) + " with byte_offset " + byteOffset + " and extent " + extent;
    }
}
