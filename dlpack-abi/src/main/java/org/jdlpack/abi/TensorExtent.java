package org.jdlpack.abi;

/**
 * The bytes a tensor's elements can reach, relative to {@code data + byte_offset}.
 *
 * <p>With negative strides some elements lie before {@code data + byte_offset}, so
 * {@code startByte} can be negative; with only non-negative strides it is 0. A tensor with no
 * elements has an empty extent {@code (0, 0)}.
 *
 * @param startByte offset of the first reachable byte from {@code data + byte_offset}, at most 0
 * @param byteSize  number of bytes from the first to the last reachable byte, inclusive
 *
 * @since 0.1
 */
public record TensorExtent(long startByte, long byteSize) {

    /** The extent of a tensor with no elements. */
    public static final TensorExtent EMPTY = new TensorExtent(0, 0);

    /**
     * Checks the extent is well formed.
     *
     * @throws IllegalArgumentException if {@code startByte > 0} or {@code byteSize < 0}
     */
    public TensorExtent {
        if (startByte > 0 || byteSize < 0) {
            throw new IllegalArgumentException("extent (" + startByte + ", " + byteSize + ") is malformed");
        }
    }

    /** {@return one past the last reachable byte, relative to {@code data + byte_offset}: {@code startByte + byteSize}} */
    public long endByte() {
        return startByte + byteSize;
    }
}
