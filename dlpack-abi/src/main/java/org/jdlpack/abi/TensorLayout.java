package org.jdlpack.abi;

import java.util.Arrays;
import java.util.Objects;

/**
 * Where a tensor's elements lie relative to its {@code data}: the element type, shape, strides
 * (in elements), {@code byte_offset}, flags, and the bytes the elements reach. These are the
 * {@code DLTensor} fields every tensor in this library has, whoever owns the memory; a
 * {@link TensorSpec}, an {@link ImportedTensor} and the host and device views each return one.
 *
 * <p>A layout is validated when it is made: ndim at most {@link #MAX_NDIM}, no
 * negative extent or offset, one stride per dimension, no size that overflows 64 bits. It says
 * nothing about which memory holds the elements; that is checked where a layout meets its data.
 *
 * <p>A value: immutable, compared by its fields, safe to share between threads. It is a class and
 * not a record so that its arrays stay private without being copied on every construction.
 *
 * @since 0.1
 */
public final class TensorLayout {

    /**
     * The largest {@code ndim} this library accepts: 256. NumPy 2 allows 64 dimensions and
     * PyTorch has no fixed limit, but no real tensor comes near 256; the bound keeps a hostile
     * {@code ndim} from making the importer read megabytes of shape and strides.
     */
    public static final int MAX_NDIM = 256;

    private final DLDataType dtype;
    private final long[] shape;
    private final long[] strides;
    private final long byteOffset;
    private final long flags;
    private final TensorExtent extent;
    private final long elementCount;

    /** Trusted: the caller has validated every field and hands over arrays no one else holds. */
    TensorLayout(DLDataType dtype, long[] shape, long[] strides, long byteOffset, long flags, TensorExtent extent,
                 long elementCount) {
        this.dtype = dtype;
        this.shape = shape;
        this.strides = strides;
        this.byteOffset = byteOffset;
        this.flags = flags;
        this.extent = extent;
        this.elementCount = elementCount;
    }

    /**
     * A compact row-major layout starting at {@code data}: {@code byte_offset} 0, no flags.
     *
     * @param dtype the element type
     * @param shape the extents
     * @return the layout
     * @throws IllegalArgumentException naming the field: a negative extent, too many dimensions, or
     *                                  a size that overflows
     */
    public static TensorLayout of(DLDataType dtype, long... shape) {
        return of(dtype, shape, null, 0, 0);
    }

    /**
     * A layout with every field given.
     *
     * @param dtype      the element type
     * @param shape      the extents
     * @param strides    the strides in elements, any sign, one per dimension; {@code null} for
     *                   compact row-major
     * @param byteOffset the offset of element 0 from {@code data}, in bytes; not negative, need not
     *                   be aligned
     * @param flags      the raw {@link DLTensorFlag} word, unknown bits kept
     * @return the layout
     * @throws IllegalArgumentException naming the field: a negative extent or offset, too many
     *                                  dimensions, a strides array of the wrong length, or a size
     *                                  that overflows
     */
    public static TensorLayout of(DLDataType dtype, long[] shape, long[] strides, long byteOffset, long flags) {
        Objects.requireNonNull(dtype, "dtype");
        long[] ownShape = shape.clone();
        if (byteOffset < 0) {
            throw new IllegalArgumentException("byte_offset is " + byteOffset + ", must not be negative");
        }
        try {
            long[] ownStrides = strides == null ? TensorGeometry.compactStrides(ownShape) : strides.clone();
            TensorGeometry.checkShape(ownShape, ownStrides);
            long count = TensorGeometry.elementCount(ownShape);
            TensorExtent extent = TensorGeometry.extent(ownShape, ownStrides, dtype, DLTensorFlag.IS_SUBBYTE_TYPE_PADDED.isSet(flags));
            return new TensorLayout(dtype, ownShape, ownStrides, byteOffset, flags, extent, count);
        } catch (InvalidTensorException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }

    /**
     * {@return this layout with element 0 at another offset from {@code data}}
     *
     * @param newByteOffset the offset in bytes, not negative
     * @throws IllegalArgumentException if the offset is negative
     */
    public TensorLayout withByteOffset(long newByteOffset) {
        if (newByteOffset < 0) {
            throw new IllegalArgumentException("byte_offset is " + newByteOffset + ", must not be negative");
        }
        return newByteOffset == byteOffset ? this
                : new TensorLayout(dtype, shape, strides, newByteOffset, flags, extent, elementCount);
    }

    /**
     * {@return this layout with another flags word}
     *
     * @param newFlags the raw flags
     * @throws IllegalArgumentException if the new flags change {@link DLTensorFlag#IS_SUBBYTE_TYPE_PADDED}
     *                                  and with it the extent beyond 64 bits
     */
    public TensorLayout withFlags(long newFlags) {
        if (newFlags == flags) {
            return this;
        }
        if (DLTensorFlag.IS_SUBBYTE_TYPE_PADDED.isSet(newFlags ^ flags)) {
            return of(dtype, shape, strides, byteOffset, newFlags);
        }
        return new TensorLayout(dtype, shape, strides, byteOffset, newFlags, extent, elementCount);
    }

    /** {@return the element type} */
    public DLDataType dtype() {
        return dtype;
    }

    /** {@return the number of dimensions, 0 for a scalar} */
    public int ndim() {
        return shape.length;
    }

    /** {@return a copy of the extents} */
    public long[] shape() {
        return shape.clone();
    }

    /**
     * {@return the extent of one dimension}
     *
     * @param dimension 0 to {@code ndim() - 1}
     * @throws IndexOutOfBoundsException if there is no such dimension
     */
    public long shape(int dimension) {
        return shape[Objects.checkIndex(dimension, shape.length)];
    }

    /** {@return a copy of the strides, in elements} */
    public long[] strides() {
        return strides.clone();
    }

    /**
     * {@return the stride of one dimension, in elements}
     *
     * @param dimension 0 to {@code ndim() - 1}
     * @throws IndexOutOfBoundsException if there is no such dimension
     */
    public long stride(int dimension) {
        return strides[Objects.checkIndex(dimension, strides.length)];
    }

    /** {@return the offset of element 0 from {@code data}, in bytes} */
    public long byteOffset() {
        return byteOffset;
    }

    /** {@return the raw flags word, unknown bits included} */
    public long flags() {
        return flags;
    }

    /** {@return whether {@link DLTensorFlag#READ_ONLY} is set} */
    public boolean isReadOnly() {
        return DLTensorFlag.READ_ONLY.isSet(flags);
    }

    /** {@return whether sub-byte values are padded to whole bytes ({@link DLTensorFlag#IS_SUBBYTE_TYPE_PADDED})} */
    public boolean isSubbytePadded() {
        return DLTensorFlag.IS_SUBBYTE_TYPE_PADDED.isSet(flags);
    }

    /** {@return the bytes the elements reach, relative to {@code data + byte_offset}} */
    public TensorExtent extent() {
        return extent;
    }

    /** {@return the number of elements: the product of the extents, 1 for a scalar} */
    public long elementCount() {
        return elementCount;
    }

    /**
     * {@return whether every byte the elements reach lies inside a buffer of {@code size} bytes that
     * starts at {@code data}; always true for a tensor with no elements}
     *
     * @param size the buffer's size in bytes
     */
    public boolean fitsIn(long size) {
        if (extent.byteSize() == 0) {
            return true;
        }
        // byte_offset >= 0 and startByte <= 0, so neither sum can overflow; endByte > 0 (element 0 is reached).
        return byteOffset + extent.startByte() >= 0 && byteOffset <= size - extent.endByte();
    }

    /** {@return the bytes the elements reach, relative to {@code data}, as {@code [first, end)}, for messages} */
    String reachText() {
        return "[" + (byteOffset + extent.startByte()) + ", " + (byteOffset + extent.endByte()) + ")";
    }

    /** {@return whether the elements are contiguous in row-major (C) order} */
    public boolean isCompactRowMajor() {
        return TensorGeometry.isCompactRowMajor(shape, strides);
    }

    // Read without copying by the struct writer.
    long[] shapeArray() {
        return shape;
    }

    long[] stridesArray() {
        return strides;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof TensorLayout that && dtype.equals(that.dtype) && byteOffset == that.byteOffset
                && flags == that.flags && Arrays.equals(shape, that.shape) && Arrays.equals(strides, that.strides);
    }

    @Override
    public int hashCode() {
        return Objects.hash(dtype, Arrays.hashCode(shape), Arrays.hashCode(strides), byteOffset, flags);
    }

    @Override
    public String toString() {
        return dtype + ", shape=" + Arrays.toString(shape) + ", strides=" + Arrays.toString(strides) + ", byte_offset="
                + byteOffset + (flags == 0 ? "" : ", flags=0x" + Long.toHexString(flags));
    }
}
