package org.jdlpack.cpu.rows;

/**
 * A row-major cursor over the rows of a strided tensor: runs of {@link #length()} elements along
 * the last dimension, {@link #stride()} elements apart. It starts at the first row; one instance
 * serves one walk, on one thread. Every strided copy in jdlpack walks its elements with it.
 *
 * @since 0.1
 */
public final class RowCursor {

    private final long length;
    private final long stride;
    private final long count;
    private final long[] shape;
    private final long[] strides;
    private final long[] counter;
    private long offset;

    /**
     * A cursor at the first row.
     *
     * @param shape   the extents (not copied: the caller keeps them unchanged during the walk)
     * @param strides the strides in elements (not copied either)
     */
    public RowCursor(long[] shape, long[] strides) {
        int last = shape.length - 1;
        this.shape = shape;
        this.strides = strides;
        this.length = last < 0 ? 1 : shape[last];
        this.stride = last < 0 ? 1 : strides[last];
        long elements = 1;
        for (long extent : shape) {
            elements *= extent;
        }
        this.count = elements == 0 ? 0 : elements / length;
        this.counter = new long[Math.max(last, 0)];
    }

    /** {@return the number of elements in a row} */
    public long length() {
        return length;
    }

    /** {@return the distance, in elements, from one element of a row to the next} */
    public long stride() {
        return stride;
    }

    /** {@return the number of rows: 0 for an empty tensor} */
    public long count() {
        return count;
    }

    /** {@return the offset, in elements from element 0, of the current row's first element} */
    public long offset() {
        return offset;
    }

    /** {@return whether a row's elements are adjacent in memory} */
    public boolean contiguous() {
        return stride == 1 || length == 1;
    }

    /** Moves to the next row: an odometer over every dimension but the last. */
    public void advance() {
        for (int d = counter.length - 1; d >= 0; d--) {
            offset += strides[d];
            if (++counter[d] < shape[d]) {
                return;
            }
            offset -= strides[d] * shape[d];
            counter[d] = 0;
        }
    }
}
