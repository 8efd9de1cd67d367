package org.jdlpack.cpu;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.reflect.Array;

import org.jdlpack.abi.DLDataType;

/**
 * Bulk copies of strided host elements, all driven by one row-major walk ({@link Rows}): between a
 * host tensor and a Java array, and between two host tensors of the same dtype and shape.
 * {@link StridedTransfer} walks device layouts with the same {@link Rows}.
 *
 * <p>Whole elements are copied as bytes, whatever their width (opaque handles up to 248 bits
 * included); only packed sub-byte elements go slot by slot through their {@link ElementCodec}.
 *
 * <p>Stateless; a copy touches only the two tensors it is given.
 */
final class StridedCopy {

    private StridedCopy() {
    }

    /**
     * A row-major cursor over the rows of a strided tensor: runs of {@link #length} elements along
     * the last dimension, {@link #stride} elements apart. Starts at the first row; one instance per
     * walk, on one thread.
     */
    static final class Rows {

        /** Elements per row. */
        final long length;
        /** Elements from one element of a row to the next. */
        final long stride;
        /** Number of rows (0 for an empty tensor). */
        final long count;
        private final long[] shape;
        private final long[] strides;
        private final long[] counter;
        private long offset;

        Rows(long[] shape, long[] strides) {
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

        /** {@return the offset, in elements from element 0, of the current row's first element} */
        long offset() {
            return offset;
        }

        /** {@return whether a row's elements are adjacent in memory} */
        boolean contiguous() {
            return stride == 1 || length == 1;
        }

        /** Moves to the next row: an odometer over every dimension but the last. */
        void advance() {
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

    /** Refuses writes to a read-only tensor. */
    static void checkWritable(HostTensor tensor) {
        if (tensor.isReadOnly()) {
            throw new UnsupportedOperationException("the tensor is read-only (DLPack READ_ONLY flag or a read-only segment)");
        }
    }

    /**
     * Moves every element between a tensor and a Java array of {@code javaBits}-bit values, in
     * row-major order: one copy when the tensor is compact, one per row when rows are contiguous,
     * else one per element.
     *
     * @throws IllegalArgumentException      if the element width or the length differs
     * @throws UnsupportedOperationException if {@code intoTensor} and the tensor is read-only
     */
    static void array(HostTensor tensor, Object array, ValueLayout layout, int javaBits, boolean intoTensor) {
        DLDataType dtype = tensor.dtype();
        if (dtype.bitsPerElement() != javaBits || dtype.isSubByte()) {
            throw new IllegalArgumentException("cannot copy " + dtype + " elements as " + layout.carrier().getSimpleName()
                    + " values; the widths differ");
        }
        int length = Array.getLength(array);
        if (length != tensor.elementCount()) {
            throw new IllegalArgumentException("the array has " + length + " values; the tensor has " + tensor.elementCount()
                    + " elements");
        }
        if (intoTensor) {
            checkWritable(tensor);
        }
        MemorySegment segment = tensor.segment();
        long origin = tensor.originByte();
        long size = layout.byteSize();
        if (tensor.isCompactRowMajor()) {
            copy(segment, origin, array, 0, layout, (int) tensor.elementCount(), intoTensor);
            return;
        }
        Rows rows = new Rows(tensor.shape(), tensor.strides());
        int arrayIndex = 0;
        for (long r = 0; r < rows.count; r++, rows.advance(), arrayIndex += (int) rows.length) {
            long at = origin + rows.offset() * size;
            if (rows.contiguous()) {
                copy(segment, at, array, arrayIndex, layout, (int) rows.length, intoTensor);
            } else {
                for (int i = 0; i < rows.length; i++, at += rows.stride * size) {
                    copy(segment, at, array, arrayIndex + i, layout, 1, intoTensor);
                }
            }
        }
    }

    private static void copy(MemorySegment segment, long offset, Object array, int arrayIndex, ValueLayout layout, int length,
                             boolean intoTensor) {
        if (intoTensor) {
            MemorySegment.copy(array, arrayIndex, segment, layout, offset, length);
        } else {
            MemorySegment.copy(segment, layout, offset, array, arrayIndex, length);
        }
    }

    /**
     * Copies every element of {@code source} into {@code target}; the caller has checked that
     * dtype and shape agree and that the target is writable.
     */
    static void elements(HostTensor source, HostTensor target) {
        if (source.elementCount() == 0) {
            return;
        }
        long bytes = source.codec().elementBytes();
        MemorySegment from = source.segment();
        MemorySegment to = target.segment();
        long fromOrigin = source.originByte();
        long toOrigin = target.originByte();
        if (bytes > 0 && bytes == target.codec().elementBytes() && source.isCompactRowMajor() && target.isCompactRowMajor()) {
            MemorySegment.copy(from, fromOrigin, to, toOrigin, source.elementCount() * bytes);
            return;
        }
        long[] shape = source.shape();
        Rows read = new Rows(shape, source.strides());
        Rows write = new Rows(shape, target.strides());
        for (long r = 0; r < read.count; r++, read.advance(), write.advance()) {
            if (bytes > 0 && bytes == target.codec().elementBytes()) {
                if (read.contiguous() && write.contiguous()) {
                    MemorySegment.copy(from, fromOrigin + read.offset() * bytes, to, toOrigin + write.offset() * bytes,
                            read.length * bytes);
                } else {
                    for (long i = 0; i < read.length; i++) {
                        MemorySegment.copy(from, fromOrigin + (read.offset() + i * read.stride) * bytes,
                                to, toOrigin + (write.offset() + i * write.stride) * bytes, bytes);
                    }
                }
            } else {
                for (long i = 0; i < read.length; i++) {
                    copySlots(source, read.offset() + i * read.stride, target, write.offset() + i * write.stride);
                }
            }
        }
    }

    /** Copies one packed (or padded-to-packed) sub-byte element slot by slot. */
    private static void copySlots(HostTensor source, long fromElement, HostTensor target, long toElement) {
        ElementCodec codec = source.codec();
        int lanes = source.dtype().lanes();
        for (int lane = 0; lane < lanes; lane++) {
            for (int part = 0; part < codec.partsPerLane(); part++) {
                long bits = codec.read(source.segment(), source.originByte(), fromElement, lane, part);
                target.codec().write(target.segment(), target.originByte(), toElement, lane, part, bits);
            }
        }
    }
}
