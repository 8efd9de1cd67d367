package org.jdlpack.cpu;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.Objects;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLDataTypeCode;
import org.jdlpack.abi.DLTensorFlag;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.TensorExtent;
import org.jdlpack.abi.TensorGeometry;
import org.jdlpack.abi.TensorSpec;
import org.jdlpack.abi.UnsupportedDeviceException;

/**
 * A tensor in host-addressable memory, read and written from Java: typed element access for every
 * DLPack data type, and bulk copies to and from Java arrays.
 *
 * <p>A host tensor is a view: it does not own its memory. It is backed by a {@link MemorySegment}
 * bounded to exactly the bytes its shape, strides and dtype reach, and it lives as long as that
 * segment's scope: after an {@link ImportedTensor} is closed, or a {@link CpuTensor}'s memory is
 * released, every access throws {@link IllegalStateException} instead of touching freed memory.
 *
 * <h2>Indexing</h2>
 * Elements are addressed by their position in row-major (C) order, {@code 0} to
 * {@code elementCount() - 1}, whatever the strides; {@link #index(long...)} turns a
 * multi-dimensional index into that position. An element has {@code dtype().lanes()} lanes; a
 * complex lane has a real and an imaginary part.
 *
 * <h2>Values</h2>
 * {@link #getDouble(long, int)} decodes every numeric type (integers, IEEE floats, bfloat16,
 * float8/float6/float4 through {@link MinifloatFormat}, the real part of complex, bool as 0 or 1);
 * {@link #getLong(long, int)} reads integer, bool and opaque-handle types exactly (unsigned 64-bit
 * values as their bit pattern). Packed sub-byte types (bits * lanes not a multiple of 8) are
 * located by bit position, little bit-endian, unless the tensor says values are padded to bytes.
 * Data is native-endian.
 *
 * <p>Thread safety: a host tensor is immutable; reads may run on any number of threads. Writes to
 * the same elements from several threads race as they would on any shared memory. Packed sub-byte
 * writes read-modify-write whole bytes, so concurrent writes to neighbouring packed elements race.
 */
public final class HostTensor {

    private final MemorySegment segment;
    /** Byte offset of element 0 in the segment. */
    private final long origin;
    private final DLDataType dtype;
    private final long[] shape;
    private final long[] strides;
    private final boolean readOnly;
    private final boolean padded;
    private final long count;
    private final boolean compact;
    /** Bytes per element for byte-addressable types, 0 for packed sub-byte types. */
    private final long elementBytes;

    private HostTensor(MemorySegment segment, long origin, DLDataType dtype, long[] shape, long[] strides, long flags) {
        this.segment = segment;
        this.origin = origin;
        this.dtype = dtype;
        this.shape = shape;
        this.strides = strides;
        this.readOnly = DLTensorFlag.READ_ONLY.isSet(flags) || segment.isReadOnly();
        this.padded = DLTensorFlag.IS_SUBBYTE_TYPE_PADDED.isSet(flags);
        this.count = TensorGeometry.elementCount(shape);
        this.compact = TensorGeometry.isCompactRowMajor(shape, strides);
        this.elementBytes = dtype.byteSize(padded);
    }

    /**
     * A view of an imported tensor's memory, for the device types the CPU can address (CPU, CUDA
     * host, ROCm host, CUDA managed). It lives as long as the imported tensor.
     *
     * @param tensor the imported tensor
     * @return the view
     * @throws UnsupportedDeviceException if the device's memory is not host-accessible
     * @throws IllegalStateException      if the tensor is closed
     */
    public static HostTensor of(ImportedTensor tensor) {
        MemorySegment segment = tensor.hostSegment();
        return new HostTensor(segment, -tensor.extent().startByte(), tensor.dtype(), tensor.shape(), tensor.strides(),
                tensor.flags());
    }

    /**
     * A view of the memory a spec describes.
     *
     * @param spec a spec on a host-accessible device
     * @return the view
     * @throws UnsupportedDeviceException if the spec's device is not host-accessible
     */
    public static HostTensor of(TensorSpec spec) {
        if (!spec.device().isHostAccessible()) {
            throw new UnsupportedDeviceException(spec.device(), "a tensor on " + spec.device() + " is not host-accessible");
        }
        TensorExtent extent = spec.extent();
        MemorySegment segment = extent.byteSize() == 0
                ? spec.data().asSlice(0, 0)
                : spec.data().asSlice(spec.byteOffset() + extent.startByte(), extent.byteSize());
        return new HostTensor(segment, -extent.startByte(), spec.dtype(), spec.shape(), spec.strides(), spec.flags());
    }

    /**
     * A compact row-major view of a segment that starts with element 0.
     *
     * @param segment native or heap memory holding the elements
     * @param dtype   the element type
     * @param shape   the extents
     * @return the view
     * @throws IllegalArgumentException if the elements do not fit in the segment
     */
    public static HostTensor of(MemorySegment segment, DLDataType dtype, long... shape) {
        long[] copy = shape.clone();
        long[] strides = TensorGeometry.compactStrides(copy);
        TensorGeometry.checkShape(copy, strides);
        long bytes = TensorGeometry.extent(copy, strides, dtype, false).byteSize();
        if (bytes > segment.byteSize()) {
            throw new IllegalArgumentException("shape " + Arrays.toString(shape) + " of " + dtype + " needs " + bytes
                    + " bytes; the segment has " + segment.byteSize());
        }
        return new HostTensor(segment.asSlice(0, bytes), 0, dtype, copy, strides, segment.isReadOnly() ? 1 : 0);
    }

    /**
     * The element type.
     *
     * @return the dtype
     */
    public DLDataType dtype() {
        return dtype;
    }

    /**
     * The extents.
     *
     * @return a copy of the shape
     */
    public long[] shape() {
        return shape.clone();
    }

    /**
     * The strides, in elements.
     *
     * @return a copy of the strides
     */
    public long[] strides() {
        return strides.clone();
    }

    /**
     * The number of dimensions.
     *
     * @return ndim
     */
    public int ndim() {
        return shape.length;
    }

    /**
     * The number of elements.
     *
     * @return the product of the extents
     */
    public long elementCount() {
        return count;
    }

    /**
     * Whether writes are refused: the producer set {@link DLTensorFlag#READ_ONLY}, or the memory
     * is a read-only segment.
     *
     * @return {@code true} when read-only
     */
    public boolean isReadOnly() {
        return readOnly;
    }

    /**
     * Whether the elements are contiguous in row-major order, so that bulk copies are one copy.
     *
     * @return {@code true} for compact C-order strides
     */
    public boolean isCompactRowMajor() {
        return compact;
    }

    /**
     * The memory the elements occupy, bounded to exactly the reachable bytes.
     *
     * @return the segment (read-only when the tensor is)
     */
    public MemorySegment segment() {
        return segment;
    }

    /**
     * Offset of element 0 within {@link #segment()}: 0 unless some stride is negative.
     *
     * @return the byte offset
     */
    public long originByte() {
        return origin;
    }

    /**
     * The row-major position of a multi-dimensional index.
     *
     * @param indices one index per dimension
     * @return the position, for the element accessors
     * @throws IndexOutOfBoundsException if the count or any index is out of range
     */
    public long index(long... indices) {
        if (indices.length != shape.length) {
            throw new IndexOutOfBoundsException(indices.length + " indices for a " + shape.length + "-d tensor");
        }
        long position = 0;
        for (int d = 0; d < shape.length; d++) {
            Objects.checkIndex(indices[d], shape[d]);
            position = position * shape[d] + indices[d];
        }
        return position;
    }

    /** Offset in elements from element 0 of the element at a row-major position. */
    private long elementOffset(long position) {
        Objects.checkIndex(position, count);
        return compact ? position : TensorGeometry.elementOffset(shape, strides, position);
    }

    // ----- raw values -----

    /** Width of one scalar slot: a lane, or half a complex lane. */
    private int slotBits() {
        return dtype.code() == DLDataTypeCode.COMPLEX ? dtype.bits() / 2 : dtype.bits();
    }

    private void checkSlot(int lane, int part) {
        if (slotBits() > 64) {
            throw new UnsupportedOperationException(dtype + " values are " + slotBits()
                    + " bits wide; scalar access reads and writes at most 64 bits (copy them with copyTo(HostTensor) or through segment())");
        }
        Objects.checkIndex(lane, dtype.lanes());
        if (part != 0 && dtype.code() != DLDataTypeCode.COMPLEX) {
            throw new UnsupportedOperationException(dtype + " has no imaginary part");
        }
    }

    /** Reads the bits of one scalar slot, zero-extended. */
    private long rawBits(long position, int lane, int part) {
        checkSlot(lane, part);
        int width = slotBits();
        int slot = dtype.code() == DLDataTypeCode.COMPLEX ? lane * 2 + part : lane;
        long element = elementOffset(position);
        if (elementBytes > 0 && width % 8 == 0) {
            long at = origin + element * elementBytes + (long) slot * (width / 8);
            return switch (width) {
                case 8 -> segment.get(JAVA_BYTE, at) & 0xFFL;
                case 16 -> segment.get(JAVA_SHORT_UNALIGNED, at) & 0xFFFFL;
                case 32 -> segment.get(JAVA_INT_UNALIGNED, at) & 0xFFFF_FFFFL;
                case 64 -> segment.get(JAVA_LONG_UNALIGNED, at);
                default -> readBits(at * 8, width);
            };
        }
        if (elementBytes > 0) {
            // Padded sub-byte values: each in its own whole bytes, low bits first.
            long at = origin + element * elementBytes + (long) slot * Math.ceilDiv(width, 8);
            return readBits(at * 8, width);
        }
        long bit = origin * 8 + element * dtype.bitsPerElement() + (long) slot * width;
        return readBits(bit, width);
    }

    /** Little bit-endian read of up to 57 bits starting at a bit position. */
    private long readBits(long bitPosition, int width) {
        long firstByte = Math.floorDiv(bitPosition, 8);
        int shift = (int) Math.floorMod(bitPosition, 8);
        int bytes = (shift + width + 7) / 8;
        long word = 0;
        for (int i = 0; i < bytes; i++) {
            word |= (segment.get(JAVA_BYTE, firstByte + i) & 0xFFL) << (8 * i);
        }
        return (word >>> shift) & ((1L << width) - 1);
    }

    private void writeRawBits(long position, int lane, int part, long bits) {
        if (readOnly) {
            throw new UnsupportedOperationException("the tensor is read-only (DLPack READ_ONLY flag or a read-only segment)");
        }
        checkSlot(lane, part);
        int width = slotBits();
        int slot = dtype.code() == DLDataTypeCode.COMPLEX ? lane * 2 + part : lane;
        long element = elementOffset(position);
        long bitPosition;
        if (elementBytes > 0 && width % 8 == 0) {
            long at = origin + element * elementBytes + (long) slot * (width / 8);
            switch (width) {
                case 8 -> segment.set(JAVA_BYTE, at, (byte) bits);
                case 16 -> segment.set(JAVA_SHORT_UNALIGNED, at, (short) bits);
                case 32 -> segment.set(JAVA_INT_UNALIGNED, at, (int) bits);
                case 64 -> segment.set(JAVA_LONG_UNALIGNED, at, bits);
                default -> writeBits(at * 8, width, bits);
            }
            return;
        } else if (elementBytes > 0) {
            bitPosition = (origin + element * elementBytes + (long) slot * Math.ceilDiv(width, 8)) * 8;
        } else {
            bitPosition = origin * 8 + element * dtype.bitsPerElement() + (long) slot * width;
        }
        writeBits(bitPosition, width, bits);
    }

    private void writeBits(long bitPosition, int width, long bits) {
        long firstByte = Math.floorDiv(bitPosition, 8);
        int shift = (int) Math.floorMod(bitPosition, 8);
        int bytes = (shift + width + 7) / 8;
        long mask = ((1L << width) - 1) << shift;
        long value = (bits << shift) & mask;
        for (int i = 0; i < bytes; i++) {
            long at = firstByte + i;
            int old = segment.get(JAVA_BYTE, at) & 0xFF;
            int byteMask = (int) (mask >>> (8 * i)) & 0xFF;
            int updated = (old & ~byteMask) | ((int) (value >>> (8 * i)) & byteMask);
            segment.set(JAVA_BYTE, at, (byte) updated);
        }
    }

    // ----- typed access -----

    /**
     * Lane 0 of an element as a double (the real part for complex types).
     *
     * @param position the row-major position
     * @return the value
     * @see #getDouble(long, int)
     */
    public double getDouble(long position) {
        return getDouble(position, 0);
    }

    /**
     * One lane of an element as a double: exact for every type except 64-bit integers beyond
     * 2<sup>53</sup>; the real part of a complex lane; 0 or 1 for bool; unsigned types as
     * unsigned.
     *
     * @param position the row-major position
     * @param lane     0 to {@code dtype().lanes() - 1}
     * @return the value
     * @throws UnsupportedOperationException for opaque handles
     */
    public double getDouble(long position, int lane) {
        return decode(rawBits(position, lane, 0));
    }

    /**
     * The imaginary part of one lane of a complex element.
     *
     * @param position the row-major position
     * @param lane     0 to {@code dtype().lanes() - 1}
     * @return the imaginary part
     * @throws UnsupportedOperationException if the type is not complex
     */
    public double getImaginary(long position, int lane) {
        return decode(rawBits(position, lane, 1));
    }

    /**
     * Lane 0 of an element as a float; for float32 this is exact and fast.
     *
     * @param position the row-major position
     * @return the value, rounded to float
     */
    public float getFloat(long position) {
        if (dtype.equals(DLDataType.FLOAT32)) {
            return segment.get(JAVA_FLOAT_UNALIGNED, origin + elementOffset(position) * 4);
        }
        return (float) getDouble(position, 0);
    }

    /**
     * Lane 0 of an integer, bool or handle element.
     *
     * @param position the row-major position
     * @return the value
     * @see #getLong(long, int)
     */
    public long getLong(long position) {
        return getLong(position, 0);
    }

    /**
     * One lane of an integer, bool or opaque-handle element, exactly: signed types sign-extended,
     * unsigned types zero-extended (a uint64 comes back as its bit pattern; read it with
     * {@link Long#toUnsignedString(long)}).
     *
     * @param position the row-major position
     * @param lane     0 to {@code dtype().lanes() - 1}
     * @return the value
     * @throws UnsupportedOperationException for floating-point and complex types
     */
    public long getLong(long position, int lane) {
        long raw = rawBits(position, lane, 0);
        return switch (dtype.code()) {
            case INT -> dtype.bits() == 64 ? raw : (raw << (64 - dtype.bits())) >> (64 - dtype.bits());
            case UINT, OPAQUE_HANDLE -> raw;
            case BOOL -> raw != 0 ? 1 : 0;
            default -> throw new UnsupportedOperationException(dtype + " is not an integer type; use getDouble");
        };
    }

    /**
     * Lane 0 of an element as a boolean: non-zero is true.
     *
     * @param position the row-major position
     * @return the value
     */
    public boolean getBoolean(long position) {
        return rawBits(position, 0, 0) != 0;
    }

    /**
     * Writes lane 0 of an element.
     *
     * @param position the row-major position
     * @param value    the value
     * @see #setDouble(long, int, double)
     */
    public void setDouble(long position, double value) {
        setDouble(position, 0, value);
    }

    /**
     * Writes one lane of an element (the real part for complex types), converting as a C cast
     * would for integers (truncation towards zero) and rounding to nearest for narrower floats.
     *
     * @param position the row-major position
     * @param lane     0 to {@code dtype().lanes() - 1}
     * @param value    the value
     * @throws UnsupportedOperationException if the tensor is read-only, or for opaque handles
     */
    public void setDouble(long position, int lane, double value) {
        writeRawBits(position, lane, 0, encode(value));
    }

    /**
     * Writes the imaginary part of one lane of a complex element.
     *
     * @param position the row-major position
     * @param lane     0 to {@code dtype().lanes() - 1}
     * @param value    the imaginary part
     * @throws UnsupportedOperationException if read-only or not complex
     */
    public void setImaginary(long position, int lane, double value) {
        writeRawBits(position, lane, 1, encode(value));
    }

    /**
     * Writes lane 0 of an element as a float.
     *
     * @param position the row-major position
     * @param value    the value
     */
    public void setFloat(long position, float value) {
        setDouble(position, 0, value);
    }

    /**
     * Writes lane 0 of an integer, bool or handle element.
     *
     * @param position the row-major position
     * @param value    the value, truncated to the type's width
     */
    public void setLong(long position, long value) {
        setLong(position, 0, value);
    }

    /**
     * Writes one lane of an integer, bool or handle element, keeping the low {@code bits} bits
     * (bool stores 1 for any non-zero value).
     *
     * @param position the row-major position
     * @param lane     0 to {@code dtype().lanes() - 1}
     * @param value    the value
     * @throws UnsupportedOperationException if read-only, or for floating-point and complex types
     */
    public void setLong(long position, int lane, long value) {
        long raw = switch (dtype.code()) {
            case INT, UINT, OPAQUE_HANDLE -> value;
            case BOOL -> value != 0 ? 1 : 0;
            default -> throw new UnsupportedOperationException(dtype + " is not an integer type; use setDouble");
        };
        writeRawBits(position, lane, 0, raw);
    }

    /**
     * Writes lane 0 of an element as a boolean.
     *
     * @param position the row-major position
     * @param value    the value
     */
    public void setBoolean(long position, boolean value) {
        writeRawBits(position, 0, 0, value ? 1 : 0);
    }

    private double decode(long raw) {
        int width = slotBits();
        return switch (dtype.code()) {
            case INT -> width == 64 ? raw : (raw << (64 - width)) >> (64 - width);
            case UINT -> raw >= 0 ? raw : unsignedToDouble(raw);
            case BOOL -> raw != 0 ? 1 : 0;
            case FLOAT, COMPLEX -> switch (width) {
                case 16 -> Float.float16ToFloat((short) raw);
                case 32 -> Float.intBitsToFloat((int) raw);
                default -> Double.longBitsToDouble(raw);
            };
            case BFLOAT -> Float.intBitsToFloat((int) raw << 16);
            case OPAQUE_HANDLE -> throw new UnsupportedOperationException("an opaque handle has no numeric value; use getLong");
            default -> MinifloatFormat.of(dtype.code()).toFloat((int) raw);
        };
    }

    /** A uint64 above 2^63 as the nearest double: halve with a sticky low bit, so rounding is right. */
    private static double unsignedToDouble(long raw) {
        return (double) ((raw >>> 1) | (raw & 1)) * 2.0;
    }

    private long encode(double value) {
        int width = slotBits();
        return switch (dtype.code()) {
            case INT, UINT -> (long) value;
            case BOOL -> value != 0 ? 1 : 0;
            case FLOAT, COMPLEX -> switch (width) {
                case 16 -> Float.floatToFloat16((float) value) & 0xFFFFL;
                case 32 -> Float.floatToRawIntBits((float) value) & 0xFFFF_FFFFL;
                default -> Double.doubleToRawLongBits(value);
            };
            case BFLOAT -> bfloat16(Float.floatToRawIntBits((float) value));
            case OPAQUE_HANDLE -> throw new UnsupportedOperationException("an opaque handle has no numeric value; use setLong");
            default -> MinifloatFormat.of(dtype.code()).fromFloat((float) value);
        };
    }

    /** float32 bits to bfloat16 bits, rounding to nearest even, NaN kept NaN. */
    private static long bfloat16(int bits) {
        if ((bits & 0x7F80_0000) == 0x7F80_0000 && (bits & 0x007F_FFFF) != 0) {
            return ((bits >>> 16) | 0x40) & 0xFFFF;
        }
        int rounding = 0x7FFF + ((bits >>> 16) & 1);
        return ((bits + rounding) >>> 16) & 0xFFFF;
    }

    // ----- bulk copies -----

    private void checkBulk(int javaBits, String javaType, long length) {
        if (dtype.bitsPerElement() != javaBits || dtype.isSubByte()) {
            throw new IllegalArgumentException("cannot copy " + dtype + " elements as " + javaType + " values; the widths differ");
        }
        if (length != count) {
            throw new IllegalArgumentException("the array has " + length + " values; the tensor has " + count + " elements");
        }
    }

    /**
     * Copies every element, in row-major order, into an array: one bulk copy when the tensor is
     * compact, a row-by-row or element-by-element gather otherwise. For 32-bit types
     * ({@code float32}, {@code int32}, {@code uint32}) the bits are copied unchanged.
     *
     * @param destination an array of exactly {@link #elementCount()} values
     * @throws IllegalArgumentException if the element width is not 32 bits or the length differs
     */
    public void copyTo(float[] destination) {
        checkBulk(32, "float", destination.length);
        gather(destination, JAVA_FLOAT_UNALIGNED);
    }

    /**
     * Copies every element into a double array; see {@link #copyTo(float[])}.
     *
     * @param destination an array of exactly {@link #elementCount()} values; 64-bit elements
     */
    public void copyTo(double[] destination) {
        checkBulk(64, "double", destination.length);
        gather(destination, JAVA_DOUBLE_UNALIGNED);
    }

    /**
     * Copies every element into an int array; see {@link #copyTo(float[])}.
     *
     * @param destination an array of exactly {@link #elementCount()} values; 32-bit elements
     */
    public void copyTo(int[] destination) {
        checkBulk(32, "int", destination.length);
        gather(destination, JAVA_INT_UNALIGNED);
    }

    /**
     * Copies every element into a long array; see {@link #copyTo(float[])}.
     *
     * @param destination an array of exactly {@link #elementCount()} values; 64-bit elements
     */
    public void copyTo(long[] destination) {
        checkBulk(64, "long", destination.length);
        gather(destination, JAVA_LONG_UNALIGNED);
    }

    /**
     * Copies every element into a short array (16-bit types: raw bits of float16 and bfloat16);
     * see {@link #copyTo(float[])}.
     *
     * @param destination an array of exactly {@link #elementCount()} values; 16-bit elements
     */
    public void copyTo(short[] destination) {
        checkBulk(16, "short", destination.length);
        gather(destination, JAVA_SHORT_UNALIGNED);
    }

    /**
     * Copies every element into a byte array (8-bit types); see {@link #copyTo(float[])}.
     *
     * @param destination an array of exactly {@link #elementCount()} values; 8-bit elements
     */
    public void copyTo(byte[] destination) {
        checkBulk(8, "byte", destination.length);
        gather(destination, JAVA_BYTE);
    }

    /**
     * Overwrites every element, in row-major order, from an array; one bulk copy when compact.
     *
     * @param source exactly {@link #elementCount()} values; 32-bit elements
     * @throws UnsupportedOperationException if the tensor is read-only
     */
    public void copyFrom(float[] source) {
        checkBulk(32, "float", source.length);
        scatter(source, JAVA_FLOAT_UNALIGNED);
    }

    /**
     * Overwrites every element from a double array; see {@link #copyFrom(float[])}.
     *
     * @param source exactly {@link #elementCount()} values; 64-bit elements
     */
    public void copyFrom(double[] source) {
        checkBulk(64, "double", source.length);
        scatter(source, JAVA_DOUBLE_UNALIGNED);
    }

    /**
     * Overwrites every element from an int array; see {@link #copyFrom(float[])}.
     *
     * @param source exactly {@link #elementCount()} values; 32-bit elements
     */
    public void copyFrom(int[] source) {
        checkBulk(32, "int", source.length);
        scatter(source, JAVA_INT_UNALIGNED);
    }

    /**
     * Overwrites every element from a long array; see {@link #copyFrom(float[])}.
     *
     * @param source exactly {@link #elementCount()} values; 64-bit elements
     */
    public void copyFrom(long[] source) {
        checkBulk(64, "long", source.length);
        scatter(source, JAVA_LONG_UNALIGNED);
    }

    /**
     * Overwrites every element from a short array; see {@link #copyFrom(float[])}.
     *
     * @param source exactly {@link #elementCount()} values; 16-bit elements
     */
    public void copyFrom(short[] source) {
        checkBulk(16, "short", source.length);
        scatter(source, JAVA_SHORT_UNALIGNED);
    }

    /**
     * Overwrites every element from a byte array; see {@link #copyFrom(float[])}.
     *
     * @param source exactly {@link #elementCount()} values; 8-bit elements
     */
    public void copyFrom(byte[] source) {
        checkBulk(8, "byte", source.length);
        scatter(source, JAVA_BYTE);
    }

    private void gather(Object array, ValueLayout layout) {
        transfer(array, layout, false);
    }

    private void scatter(Object array, ValueLayout layout) {
        if (readOnly) {
            throw new UnsupportedOperationException("the tensor is read-only (DLPack READ_ONLY flag or a read-only segment)");
        }
        transfer(array, layout, true);
    }

    /**
     * Moves elements between the tensor and an array in row-major order: one copy for compact
     * tensors, one copy per row when the last dimension is contiguous, else one per element.
     */
    private void transfer(Object array, ValueLayout layout, boolean intoTensor) {
        if (count == 0) {
            return;
        }
        long size = layout.byteSize();
        if (compact) {
            copy(array, 0, layout, origin, (int) count, intoTensor);
            return;
        }
        int last = shape.length - 1;
        long rowLength = shape[last];
        boolean rowsContiguous = strides[last] == 1 || rowLength == 1;
        long[] counter = new long[shape.length];
        long elementAt = 0; // element offset of the current row's first element
        for (int arrayIndex = 0; arrayIndex < count; arrayIndex += (int) rowLength) {
            if (rowsContiguous) {
                copy(array, arrayIndex, layout, origin + elementAt * size, (int) rowLength, intoTensor);
            } else {
                long at = origin + elementAt * size;
                long step = strides[last] * size;
                for (int i = 0; i < rowLength; i++, at += step) {
                    copy(array, arrayIndex + i, layout, at, 1, intoTensor);
                }
            }
            // Advance the odometer over every dimension but the last.
            for (int d = last - 1; d >= 0; d--) {
                elementAt += strides[d];
                if (++counter[d] < shape[d]) {
                    break;
                }
                elementAt -= strides[d] * shape[d];
                counter[d] = 0;
            }
        }
    }

    private void copy(Object array, int arrayIndex, ValueLayout layout, long offset, int length, boolean intoTensor) {
        if (intoTensor) {
            MemorySegment.copy(array, arrayIndex, segment, layout, offset, length);
        } else {
            MemorySegment.copy(segment, layout, offset, array, arrayIndex, length);
        }
    }

    /**
     * Copies the elements into fresh compact row-major memory from {@code arena}, 256-byte
     * aligned as DLPack recommends.
     *
     * @param arena where the copy lives
     * @return a compact, writable tensor with the same dtype and shape
     */
    public HostTensor toContiguous(Arena arena) {
        long[] compactStrides = TensorGeometry.compactStrides(shape);
        long bytes = TensorGeometry.extent(shape, compactStrides, dtype, padded).byteSize();
        MemorySegment target = arena.allocate(bytes, 256);
        HostTensor copy = new HostTensor(target, 0, dtype, shape.clone(), compactStrides,
                padded ? DLTensorFlag.IS_SUBBYTE_TYPE_PADDED.mask() : 0);
        copyTo(copy);
        return copy;
    }

    /**
     * Copies every element into another tensor of the same dtype and shape, whatever the strides
     * of either: one bulk copy when both are compact.
     *
     * @param target the destination
     * @throws IllegalArgumentException      if the dtypes or shapes differ
     * @throws UnsupportedOperationException if the target is read-only
     */
    public void copyTo(HostTensor target) {
        if (!Arrays.equals(shape, target.shape) || !dtype.equals(target.dtype)) {
            throw new IllegalArgumentException("cannot copy " + this + " into " + target + ": dtypes or shapes differ");
        }
        if (target.readOnly) {
            throw new UnsupportedOperationException("the target tensor is read-only");
        }
        if (compact && target.compact && elementBytes > 0 && elementBytes == target.elementBytes) {
            MemorySegment.copy(segment, origin, target.segment, target.origin, count * elementBytes);
            return;
        }
        if (elementBytes > 0 && elementBytes == target.elementBytes) {
            for (long i = 0; i < count; i++) {
                MemorySegment.copy(segment, origin + elementOffset(i) * elementBytes, target.segment,
                        target.origin + target.elementOffset(i) * elementBytes, elementBytes);
            }
            return;
        }
        int slots = dtype.code() == DLDataTypeCode.COMPLEX ? 2 : 1;
        for (long i = 0; i < count; i++) {
            for (int lane = 0; lane < dtype.lanes(); lane++) {
                for (int part = 0; part < slots; part++) {
                    target.writeRawBits(i, lane, part, rawBits(i, lane, part));
                }
            }
        }
    }

    @Override
    public String toString() {
        return "HostTensor[" + dtype + ", shape=" + Arrays.toString(shape) + ", strides=" + Arrays.toString(strides)
                + (readOnly ? ", read-only" : "") + "]";
    }
}
