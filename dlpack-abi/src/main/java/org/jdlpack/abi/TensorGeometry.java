package org.jdlpack.abi;

import java.util.Arrays;

/**
 * Shape and stride arithmetic behind import validation and {@link TensorLayout}. Every computation is exact: a result that does not fit 64 bits is an
 * {@link InvalidTensorException}, never a wrapped-around size.
 *
 * <p>Strides are in elements, as in {@code DLTensor}, and may be negative or zero.
 */
final class TensorGeometry {

    private TensorGeometry() {
    }

    /**
     * Compact row-major (C order) strides for a shape: the last dimension has stride 1.
     *
     * @param shape the extents
     * @return the strides in elements
     * @throws InvalidTensorException if a stride overflows 64 bits
     */
    static long[] compactStrides(long[] shape) {
        long[] strides = new long[shape.length];
        compactStrides(shape, strides, 0, shape.length);
        return strides;
    }

    /**
     * Writes the compact row-major strides of {@code shape[0..ndim)} into
     * {@code into[from..from+ndim)} (the importer keeps shape and strides in one array).
     *
     * @throws InvalidTensorException if a stride overflows 64 bits
     */
    static void compactStrides(long[] shape, long[] into, int from, int ndim) {
        long stride = 1;
        for (int i = ndim - 1; i >= 0; i--) {
            into[from + i] = stride;
            try {
                stride = Math.multiplyExact(stride, Math.max(shape[i], 1));
            } catch (ArithmeticException e) {
                // The overflow only matters if a stride that needs it exists.
                if (i > 0) {
                    throw compactStridesOverflow(Arrays.copyOf(shape, ndim), e);
                }
            }
        }
    }

    /**
     * Checks the shape and strides describe a tensor this library can address.
     *
     * @param shape   the extents
     * @param strides the strides in elements, of the same length
     * @throws InvalidTensorException naming the field: ndim above {@link TensorLayout#MAX_NDIM}, a negative
     *                                extent, a strides array of the wrong length
     */
    static void checkShape(long[] shape, long[] strides) {
        if (shape.length > TensorLayout.MAX_NDIM) {
            throw new InvalidTensorException("DLTensor.ndim is " + shape.length + ", above the maximum " + TensorLayout.MAX_NDIM);
        }
        if (strides.length != shape.length) {
            throw new InvalidTensorException("DLTensor.strides has " + strides.length + " entries, ndim is " + shape.length);
        }
        for (int i = 0; i < shape.length; i++) {
            if (shape[i] < 0) {
                throw new InvalidTensorException("DLTensor.shape[" + i + "] is " + shape[i] + ", must not be negative");
            }
        }
    }

    /**
     * The number of elements: the product of the extents, 1 for a 0-d tensor.
     *
     * @param shape the extents, none negative
     * @return the element count
     * @throws InvalidTensorException if the product overflows 64 bits
     */
    static long elementCount(long[] shape) {
        return elementCount(shape, shape.length);
    }

    /**
     * Whether the strides are the compact row-major strides of the shape. Extents of 0 and 1 make
     * their stride irrelevant, as NumPy and PyTorch treat them.
     *
     * @param shape   the extents
     * @param strides the strides in elements
     * @return {@code true} when the elements are contiguous in C order
     */
    static boolean isCompactRowMajor(long[] shape, long[] strides) {
        long expected = 1;
        for (int i = shape.length - 1; i >= 0; i--) {
            if (shape[i] == 0) {
                return true;
            }
            if (shape[i] != 1 && strides[i] != expected) {
                return false;
            }
            expected *= shape[i];
        }
        return true;
    }

    /**
     * The bytes the elements reach, relative to {@code data + byte_offset}. Packed sub-byte
     * elements are located by bit position ({@code index * bits * lanes}), little bit-endian, so
     * their extent is rounded out to whole bytes.
     *
     * @param shape         the extents, none negative
     * @param strides       the strides in elements
     * @param dtype         the element type
     * @param subbytePadded whether sub-byte values are padded to whole bytes
     * @return the extent, {@link TensorExtent#EMPTY} for a tensor with no elements
     * @throws InvalidTensorException if an offset or the size overflows 64 bits
     */
    static TensorExtent extent(long[] shape, long[] strides, DLDataType dtype, boolean subbytePadded) {
        if (elementCount(shape) == 0) {
            return TensorExtent.EMPTY;
        }
        return extent(shape, 0, strides, 0, shape.length, dtype, subbytePadded);
    }

    /**
     * {@link #extent(long[], long[], DLDataType, boolean)} of a tensor with at least one element
     * whose shape and strides start at {@code shapeFrom} and {@code stridesFrom} of their arrays
     * (the importer keeps both in one array).
     */
    static TensorExtent extent(long[] shape, int shapeFrom, long[] strides, int stridesFrom, int ndim, DLDataType dtype,
                               boolean subbytePadded) {
        try {
            long lowest = 0;
            long highest = 0;
            for (int i = 0; i < ndim; i++) {
                long reach = Math.multiplyExact(strides[stridesFrom + i], shape[shapeFrom + i] - 1);
                if (reach < 0) {
                    lowest = Math.addExact(lowest, reach);
                } else {
                    highest = Math.addExact(highest, reach);
                }
            }
            return byteExtent(lowest, highest, dtype, subbytePadded);
        } catch (ArithmeticException e) {
            throw extentOverflow(Arrays.copyOfRange(shape, shapeFrom, shapeFrom + ndim),
                    Arrays.copyOfRange(strides, stridesFrom, stridesFrom + ndim), dtype, e);
        }
    }

    /**
     * The bytes elements reach whose offsets, in elements from element 0, run from {@code lowest}
     * to {@code highest}. Packed sub-byte elements are located by bit position, so their extent is
     * rounded out to whole bytes.
     *
     * @throws ArithmeticException if an offset or the size overflows 64 bits
     */
    static TensorExtent byteExtent(long lowest, long highest, DLDataType dtype, boolean subbytePadded) {
        long elementBytes = dtype.byteSize(subbytePadded);
        if (elementBytes > 0) {
            long start = Math.multiplyExact(lowest, elementBytes);
            long end = Math.multiplyExact(Math.addExact(highest, 1), elementBytes);
            return new TensorExtent(start, Math.subtractExact(end, start));
        }
        long bits = dtype.bitsPerElement();
        long startBit = Math.multiplyExact(lowest, bits);
        long endBit = Math.multiplyExact(Math.addExact(highest, 1), bits);
        long start = Math.floorDiv(startBit, 8);
        long end = Math.ceilDiv(endBit, 8);
        return new TensorExtent(start, Math.subtractExact(end, start));
    }

    static InvalidTensorException compactStridesOverflow(long[] shape, ArithmeticException cause) {
        return new InvalidTensorException("DLTensor.shape " + Arrays.toString(shape) + ": compact strides overflow 64 bits", cause);
    }

    static InvalidTensorException elementCountOverflow(long[] shape, ArithmeticException cause) {
        return new InvalidTensorException("DLTensor.shape " + Arrays.toString(shape) + ": element count overflows 64 bits", cause);
    }

    static InvalidTensorException extentOverflow(long[] shape, long[] strides, DLDataType dtype, ArithmeticException cause) {
        return new InvalidTensorException("DLTensor.shape " + Arrays.toString(shape) + " with strides " + Arrays.toString(strides)
                + " and dtype " + dtype + ": byte extent overflows 64 bits", cause);
    }

    /**
     * The element count of the first {@code ndim} entries of {@code shape}, none negative.
     *
     * @throws InvalidTensorException if the product overflows 64 bits
     */
    static long elementCount(long[] shape, int ndim) {
        for (int i = 0; i < ndim; i++) {
            if (shape[i] == 0) {
                return 0;
            }
        }
        long count = 1;
        try {
            for (int i = 0; i < ndim; i++) {
                count = Math.multiplyExact(count, shape[i]);
            }
        } catch (ArithmeticException e) {
            throw elementCountOverflow(Arrays.copyOf(shape, ndim), e);
        }
        return count;
    }
}
