package org.jdlpack.abi;

import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import java.util.Arrays;


/**
 * Reads and validates a foreign managed tensor. Everything is copied into Java values once, so a
 * producer that changes the struct afterwards cannot change what was validated. Reads are
 * unaligned: a hostile producer's misaligned struct is rejected by validation, not by a crash.
 */
final class ManagedTensorReader {

    /**
     * Validated single-lane dtypes by {@code code << 8 | bits}, so that an import allocates no
     * dtype of its own. Filled on first use; a racing fill stores an equal immutable value.
     */
    private static final DLDataType[] SINGLE_LANE = new DLDataType[32 << 8];

    private static final boolean LITTLE_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;

    /** The dtype of a {@code DLDataType} read as one 32-bit value: code, bits, then lanes in memory order. */
    private static DLDataType dtype(int raw) {
        byte code = (byte) (LITTLE_ENDIAN ? raw : raw >>> 24);
        byte bits = (byte) (LITTLE_ENDIAN ? raw >>> 8 : raw >>> 16);
        short lanes = (short) (LITTLE_ENDIAN ? raw >>> 16 : raw);
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
     * Reads the struct at {@code address}, then {@link #checkGeometry checks its geometry}. Every
     * message is built in a method of its own.
     *
     * <p>One method on purpose, above C2's size for inlining a hot method ({@code FreqInlineSize},
     * 325 bytecodes): each read through the FFM API adds hundreds of nodes to a compilation, and
     * C2 stops inlining into a method once it holds about 18,000 ({@code NodeCountInliningCutoff}).
     * Inlined into a scoped import, the reader's twenty reads used up that budget before the
     * tensor, its arena and the caller's action were inlined, and all of them stayed on the heap;
     * called, it leaves the budget to them (benchmarks/notes.md, "Imports at the cost of the ABI").
     *
     * @throws UnsupportedVersionException before reading anything past the version
     * @throws InvalidTensorException      naming the first malformed field
     */
    static ImportedFields read(ManagedTensorKind kind, long address) {
        ImportedFields fields = new ImportedFields();
        if (kind == ManagedTensorKind.VERSIONED) {
            readVersionAndFlags(address, fields);
        }
        long t = address + kind.dlTensorOffset();
        // ndim and dtype are adjacent 32-bit fields, and so are device_type and device_id: one
        // 64-bit read for each pair (fewer bounds-checked reads per import).
        long ndimAndDtype = NativeMemory.readLong(t + DLTensorLayout.NDIM);
        int ndim = firstInt(ndimAndDtype);
        if (ndim < 0 || ndim > TensorLayout.MAX_NDIM) {
            throw badNdim(ndim);
        }
        fields.ndim = ndim;
        fields.dtype = dtype(secondInt(ndimAndDtype));
        long device = NativeMemory.readLong(t + DLTensorLayout.DEVICE);
        fields.deviceType = firstInt(device);
        fields.deviceId = secondInt(device);

        long shapePointer = NativeMemory.readLong(t + DLTensorLayout.SHAPE);
        if (shapePointer == 0 && ndim > 0) {
            throw nullShape(ndim);
        }
        long stridesPointer = NativeMemory.readLong(t + DLTensorLayout.STRIDES);
        // NULL strides meant compact row-major before DLPack 1.2; later producers that still
        // write NULL are read the same way rather than failing the user.
        fields.stridesWereNull = stridesPointer == 0;
        if (ndim > ImportedFields.INLINE_NDIM) {
            fields.dims = readDims(shapePointer, stridesPointer, ndim);
        } else if (ndim > 0) {
            // Up to four dimensions without a loop: the fields are named, not indexed.
            fields.shape0 = extent(shapePointer, 0);
            if (ndim > 1) {
                fields.shape1 = extent(shapePointer, 1);
            }
            if (ndim > 2) {
                fields.shape2 = extent(shapePointer, 2);
            }
            if (ndim > 3) {
                fields.shape3 = extent(shapePointer, 3);
            }
            if (stridesPointer == 0) {
                compactStrides(fields);
            } else {
                fields.stride0 = NativeMemory.readLong(stridesPointer);
                if (ndim > 1) {
                    fields.stride1 = NativeMemory.readLong(stridesPointer + 8);
                }
                if (ndim > 2) {
                    fields.stride2 = NativeMemory.readLong(stridesPointer + 16);
                }
                if (ndim > 3) {
                    fields.stride3 = NativeMemory.readLong(stridesPointer + 24);
                }
            }
        }

        long byteOffset = NativeMemory.readLong(t + DLTensorLayout.BYTE_OFFSET);
        if (byteOffset < 0) {
            throw badByteOffset(byteOffset);
        }
        fields.byteOffset = byteOffset;
        fields.data = NativeMemory.readLong(t + DLTensorLayout.DATA);
        checkGeometry(fields);
        return fields;
    }

    /** The element count, the extent, and where the elements lie: data may be NULL only without elements, host extents lie in user space. */
    private static void checkGeometry(ImportedFields fields) {
        long count = elementCount(fields); // kept by nobody: the layout counts again when asked (an import that never asks is 8 bytes smaller)
        if (count == 0) {
            return; // the extent stays empty: (0, 0)
        }
        extent(fields);
        if (fields.data == 0) {
            throw nullData(count);
        }
        if (DLDeviceType.isHostAccessible(fields.deviceType)) {
            checkHostAddressRange(fields);
        }
    }

    private static void readVersionAndFlags(long address, ImportedFields fields) {
        long version = NativeMemory.readLong(address + DLManagedTensorVersionedLayout.VERSION); // major, then minor
        int major = firstInt(version);
        int minor = secondInt(version);
        if (Integer.toUnsignedLong(major) != DLPackVersion.SUPPORTED_MAJOR) {
            throw unsupported(major, minor);
        }
        fields.versionMinor = minor; // the major is the one supported
        fields.flags = NativeMemory.readLong(address + DLManagedTensorVersionedLayout.FLAGS);
    }

    /** {@return the 32-bit field at the lower address of a 64-bit native read} */
    static int firstInt(long pair) {
        return LITTLE_ENDIAN ? (int) pair : (int) (pair >>> 32);
    }

    /** {@return the 32-bit field at the higher address of a 64-bit native read} */
    static int secondInt(long pair) {
        return LITTLE_ENDIAN ? (int) (pair >>> 32) : (int) pair;
    }

    /** {@code shape[i]}, checked not negative. */
    private static long extent(long shapePointer, int i) {
        long extent = NativeMemory.readLong(shapePointer + 8L * i);
        if (extent < 0) {
            throw negativeExtent(i, extent);
        }
        return extent;
    }

    /** Shape then strides of a tensor with more than {@value ImportedFields#INLINE_NDIM} dimensions, in one array. */
    private static long[] readDims(long shapePointer, long stridesPointer, int ndim) {
        long[] dims = new long[2 * ndim];
        for (int i = 0; i < ndim; i++) {
            dims[i] = extent(shapePointer, i);
        }
        if (stridesPointer == 0) {
            TensorGeometry.compactStrides(dims, dims, ndim, ndim);
        } else {
            MemorySegment.copy(NativeMemory.at(stridesPointer, 8L * ndim), JAVA_LONG_UNALIGNED, 0, dims, ndim, ndim);
        }
        return dims;
    }

    /**
     * {@link TensorGeometry#compactStrides(long[], long[], int, int)} for 1 to
     * {@value ImportedFields#INLINE_NDIM} dimensions in fields: the last stride is 1, each one
     * before it the product of the extents after it (an extent of 0 counts as 1).
     */
    private static void compactStrides(ImportedFields fields) {
        int ndim = fields.ndim;
        long stride = 1;
        try {
            if (ndim > 3) {
                fields.stride3 = stride;
                stride = Math.multiplyExact(stride, Math.max(fields.shape3, 1));
            }
            if (ndim > 2) {
                fields.stride2 = stride;
                stride = Math.multiplyExact(stride, Math.max(fields.shape2, 1));
            }
            if (ndim > 1) {
                fields.stride1 = stride;
                stride = Math.multiplyExact(stride, Math.max(fields.shape1, 1));
            }
        } catch (ArithmeticException e) {
            throw TensorGeometry.compactStridesOverflow(fields.shape(), e); // a stride that needs the product exists
        }
        fields.stride0 = stride;
    }

    /** {@link TensorGeometry#elementCount(long[], int)} of the fields. */
    private static long elementCount(ImportedFields fields) {
        int ndim = fields.ndim;
        if (fields.dims != null) {
            return TensorGeometry.elementCount(fields.dims, ndim);
        }
        long a = ndim > 0 ? fields.shape0 : 1;
        long b = ndim > 1 ? fields.shape1 : 1;
        long c = ndim > 2 ? fields.shape2 : 1;
        long d = ndim > 3 ? fields.shape3 : 1;
        if (a == 0 || b == 0 || c == 0 || d == 0) {
            return 0;
        }
        try {
            return Math.multiplyExact(Math.multiplyExact(Math.multiplyExact(a, b), c), d);
        } catch (ArithmeticException e) {
            throw TensorGeometry.elementCountOverflow(fields.shape(), e);
        }
    }

    /**
     * {@link TensorGeometry#extent} of the fields, for a tensor with at least one element. The
     * fields of dimensions past ndim are 0, so their reach, {@code 0 * (0 - 1)}, adds nothing.
     */
    private static void extent(ImportedFields fields) {
        boolean padded = DLTensorFlag.IS_SUBBYTE_TYPE_PADDED.isSet(fields.flags);
        if (fields.dims != null) {
            TensorExtent extent = TensorGeometry.extent(fields.dims, 0, fields.dims, fields.ndim, fields.ndim, fields.dtype, padded);
            fields.extentStart = extent.startByte();
            fields.extentSize = extent.byteSize();
            return;
        }
        try {
            long lowest = 0;
            long highest = 0;
            long reach = Math.multiplyExact(fields.stride0, fields.shape0 - 1);
            if (reach < 0) {
                lowest = reach;
            } else {
                highest = reach;
            }
            reach = Math.multiplyExact(fields.stride1, fields.shape1 - 1);
            if (reach < 0) {
                lowest = Math.addExact(lowest, reach);
            } else {
                highest = Math.addExact(highest, reach);
            }
            reach = Math.multiplyExact(fields.stride2, fields.shape2 - 1);
            if (reach < 0) {
                lowest = Math.addExact(lowest, reach);
            } else {
                highest = Math.addExact(highest, reach);
            }
            reach = Math.multiplyExact(fields.stride3, fields.shape3 - 1);
            if (reach < 0) {
                lowest = Math.addExact(lowest, reach);
            } else {
                highest = Math.addExact(highest, reach);
            }
            TensorExtent extent = TensorGeometry.byteExtent(lowest, highest, fields.dtype, padded);
            fields.extentStart = extent.startByte();
            fields.extentSize = extent.byteSize();
        } catch (ArithmeticException e) {
            throw TensorGeometry.extentOverflow(fields.shape(), fields.strides(), fields.dtype, e);
        }
    }

    /**
     * On the host, data + byte_offset + the extent must be addresses of user space: no
     * wrap-around, nothing below 0, nothing at or above {@link #USER_ADDRESS_LIMIT}. The message
     * names the first field that leaves user space.
     */
    private static void checkHostAddressRange(ImportedFields fields) {
        long first;
        long end;
        try {
            long origin = Math.addExact(fields.data, fields.byteOffset);
            first = Math.addExact(origin, fields.extentStart);
            end = Math.addExact(first, fields.extentSize);
        } catch (ArithmeticException e) {
            throw outsideUserSpace(fields);
        }
        if (fields.data < 0 || first < 0 || end > USER_ADDRESS_LIMIT) {
            throw outsideUserSpace(fields);
        }
    }

    // The messages, built only when something is wrong.

    private static UnsupportedVersionException unsupported(int major, int minor) {
        return new UnsupportedVersionException(DLPackVersion.ofRaw(major, minor));
    }

    private static InvalidTensorException badNdim(int ndim) {
        return ndim < 0 ? new InvalidTensorException("DLTensor.ndim is " + ndim + ", must not be negative")
                : new InvalidTensorException("DLTensor.ndim is " + ndim + ", above the maximum " + TensorLayout.MAX_NDIM);
    }

    private static InvalidTensorException nullShape(int ndim) {
        return new InvalidTensorException("DLTensor.shape is NULL with ndim " + ndim);
    }

    private static InvalidTensorException negativeExtent(int i, long extent) {
        return new InvalidTensorException("DLTensor.shape[" + i + "] is " + extent + ", must not be negative");
    }

    private static InvalidTensorException badByteOffset(long byteOffset) {
        return new InvalidTensorException("DLTensor.byte_offset is " + Long.toUnsignedString(byteOffset)
                + ", above the largest supported offset 2^63-1");
    }

    private static InvalidTensorException nullData(long count) {
        return new InvalidTensorException("DLTensor.data is NULL with " + count + " elements");
    }

    private static InvalidTensorException outsideUserSpace(ImportedFields fields) {
        long data = fields.data;
        long byteOffset = fields.byteOffset;
        TensorExtent extent = fields.extent();
        long origin;
        long end;
        try {
            if (data < 0) {
                throw new ArithmeticException("data above 2^63");
            }
            origin = Math.addExact(data, byteOffset);
            long first = Math.addExact(origin, extent.startByte());
            end = Math.addExact(origin, extent.endByte());
            if (first < 0) {
                throw new ArithmeticException("below address 0");
            }
        } catch (ArithmeticException e) {
            return new InvalidTensorException(range(data, byteOffset, extent) + " does not describe a host address range", e);
        }
        String field = data >= USER_ADDRESS_LIMIT ? "DLTensor.data 0x" + Long.toHexString(data)
                : origin >= USER_ADDRESS_LIMIT ? "DLTensor.byte_offset " + byteOffset
                : "DLTensor.shape " + Arrays.toString(fields.shape()) + " with strides " + Arrays.toString(fields.strides());
        return new InvalidTensorException(field + " reaches host address 0x" + Long.toHexString(end - 1) + " (" + range(data, byteOffset, extent)
                + "), above the user address space, which ends at " + limitText());
    }

    private static String range(long data, long byteOffset, TensorExtent extent) {
        return "DLTensor.data 0x" + Long.toHexString(data) + " with byte_offset " + byteOffset + " and extent " + extent;
    }
}
