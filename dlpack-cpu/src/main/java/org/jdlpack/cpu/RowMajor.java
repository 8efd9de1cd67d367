package org.jdlpack.cpu;

import java.util.Objects;

import org.jdlpack.abi.TensorExtent;
import org.jdlpack.abi.TensorLayout;

/**
 * The row-major (C order) arithmetic of a host tensor's elements: a multi-dimensional index to a
 * position, a position to the element's offset from element 0 whatever the strides, and where a
 * run of rows of dimension 0 lies. {@link HostTensorView} asks it and keeps the memory and the
 * lifetime checks to itself.
 *
 * <p>Stateless; every method works on the arrays and layout it is given and keeps nothing.
 */
final class RowMajor {

    private RowMajor() {
    }

    /**
     * The row-major position of a multi-dimensional index.
     *
     * @throws IndexOutOfBoundsException if the count or any index is out of range
     */
    static long position(long[] shape, long... indices) {
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

    /**
     * Offset in elements from element 0 of the element at a row-major position: the position
     * itself when the tensor is compact, the strides' sum otherwise.
     *
     * @param count   the tensor's element count
     * @param compact whether the layout is compact row-major
     * @throws IndexOutOfBoundsException if the position is not below {@code count}
     */
    static long elementOffset(long position, long count, boolean compact, long[] shape, long[] strides) {
        Objects.checkIndex(position, count);
        if (compact) {
            return position;
        }
        long offset = 0;
        for (int d = shape.length - 1; d >= 0; d--) {
            offset += (position % shape[d]) * strides[d];
            position /= shape[d];
        }
        return offset;
    }

    /**
     * Where rows {@code from} to {@code to} of dimension 0 lie: their layout, and the bytes of the
     * parent's memory they reach.
     *
     * @param layout     the slice's layout: the parent's strides and flags, {@code byte_offset}
     *                   relative to the owner's data as the parent's is
     * @param start      where the slice's bytes start in the parent's segment
     * @param byteSize   how many bytes they are
     * @param origin     where the slice's element 0 lies in those bytes
     */
    record Rows(TensorLayout layout, long start, long byteSize, long origin) {
    }

    /**
     * Rows {@code from} (inclusive) to {@code to} (exclusive) of dimension 0 of a tensor whose
     * element 0 lies at {@code origin} in its segment.
     *
     * @param elementBytes bytes per element, or 0 for packed sub-byte types
     * @throws IllegalArgumentException  if the tensor is 0-d, or row {@code from} starts inside a byte
     * @throws IndexOutOfBoundsException if {@code from} or {@code to} is out of range
     */
    static Rows rows(TensorLayout layout, long origin, long elementBytes, long from, long to) {
        long[] shape = layout.shape();
        long[] strides = layout.strides();
        if (shape.length == 0) {
            throw new IllegalArgumentException("a 0-d tensor has no rows to slice: " + layout);
        }
        Objects.checkFromToIndex(from, to, shape[0]);
        long[] sliceShape = shape.clone();
        sliceShape[0] = to - from;
        if (layout.elementCount() == 0 || from == to) {
            // No element, so no element 0 to place: the offsets stay, and no stride is multiplied
            // (a zero-size layout's strides may be anything).
            return new Rows(TensorLayout.of(layout.dtype(), sliceShape, strides, layout.byteOffset(), layout.flags()), 0, 0, 0);
        }
        // Row `from` exists and holds elements, so its offset lies inside the extent: no overflow.
        long skipped = from * strides[0]; // elements, from element 0 to the new element 0; negative for reversed rows
        long skippedBits = elementBytes > 0 ? skipped * elementBytes * 8 : skipped * layout.dtype().bitsPerElement();
        if (Math.floorMod(skippedBits, 8) != 0) {
            throw new IllegalArgumentException("row " + from + " of " + layout + " starts at bit " + Math.floorMod(skippedBits, 8)
                    + " of a byte; packed sub-byte rows can be sliced only at whole bytes");
        }
        long skippedBytes = Math.floorDiv(skippedBits, 8);
        // byte_offset relative to the owner's data, as the parent's is; where that would be negative
        // (a producer's reversed rows: data points at element 0 and earlier rows lie below it), the
        // slice's own element 0 is its data, byte_offset 0, as a producer would send the slice.
        long sliceOffset = Math.max(0, layout.byteOffset() + skippedBytes);
        TensorLayout slice = TensorLayout.of(layout.dtype(), sliceShape, strides, sliceOffset, layout.flags());
        TensorExtent extent = slice.extent();
        // Placed from the parent's origin, never from byte offsets, whose base may differ.
        return new Rows(slice, origin + skippedBytes + extent.startByte(), extent.byteSize(), -extent.startByte());
    }
}
