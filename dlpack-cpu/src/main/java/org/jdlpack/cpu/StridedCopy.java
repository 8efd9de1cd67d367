package org.jdlpack.cpu;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.reflect.Array;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLTensorFlag;
import org.jdlpack.abi.TensorLayout;
import org.jdlpack.cpu.rows.RowCursor;

/**
 * Bulk copies of strided host elements, all driven by one row-major walk ({@link RowCursor}):
 * between a tensor's memory and a Java array, and between the memories of two tensors of the
 * same dtype and shape. {@link org.jdlpack.cpu.internal.StridedTransfer} walks device layouts with
 * the same cursor.
 *
 * <p>Whole elements are copied as bytes, whatever their width (opaque handles up to 248 bits
 * included); only packed sub-byte elements go slot by slot through their {@link ElementCodec}.
 *
 * <p>It works on the memory alone ({@link Elements}): the caller, {@link HostTensorView}, checks
 * that the tensors are live before a copy and names the tensor when the FFM runtime refuses one.
 * Stateless; a copy touches only the memory it is given.
 */
final class StridedCopy {

    private StridedCopy() {
    }

    /**
     * A tensor's elements as a copy reads them: its memory, bounded to the bytes the elements
     * reach, element 0 at {@code origin}, laid out as {@code layout} says, slots located by
     * {@code codec}.
     */
    record Elements(MemorySegment segment, long origin, TensorLayout layout, ElementCodec codec) {
    }

    /** Refuses writes to a read-only tensor. */
    static void checkWritable(TensorLayout layout) {
        if (layout.isReadOnly()) {
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
    static void array(Elements tensor, Object array, ValueLayout layout, int javaBits, boolean intoTensor) {
        DLDataType dtype = tensor.layout().dtype();
        if (dtype.bitsPerElement() != javaBits || dtype.isSubByte()) {
            throw new IllegalArgumentException("cannot copy " + dtype + " elements as " + layout.carrier().getSimpleName()
                    + " values; the widths differ");
        }
        int length = Array.getLength(array);
        if (length != tensor.layout().elementCount()) {
            throw new IllegalArgumentException("the array has " + length + " values; the tensor has " + tensor.layout().elementCount()
                    + " elements");
        }
        if (intoTensor) {
            checkWritable(tensor.layout());
        }
        MemorySegment segment = tensor.segment();
        long origin = tensor.origin();
        long size = layout.byteSize();
        if (tensor.layout().isCompactRowMajor()) {
            copy(segment, origin, array, 0, layout, (int) tensor.layout().elementCount(), intoTensor);
            return;
        }
        RowCursor rows = new RowCursor(tensor.layout().shape(), tensor.layout().strides());
        int arrayIndex = 0;
        for (long r = 0; r < rows.count(); r++, rows.advance(), arrayIndex += (int) rows.length()) {
            long at = origin + rows.offset() * size;
            if (rows.contiguous()) {
                copy(segment, at, array, arrayIndex, layout, (int) rows.length(), intoTensor);
            } else {
                for (int i = 0; i < rows.length(); i++, at += rows.stride() * size) {
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
     * dtype and shape agree and that the target is writable. Overlapping tensors are copied
     * through a compact temporary, so every target element gets the source value from before the
     * copy (NumPy's semantics); the compact-to-compact copy is a memmove and needs none.
     */
    static void elements(Elements source, Elements target) {
        if (source.layout().elementCount() == 0) {
            return;
        }
        long bytes = source.codec().elementBytes();
        if (bytes > 0 && bytes == target.codec().elementBytes()
                && source.layout().isCompactRowMajor() && target.layout().isCompactRowMajor()) {
            MemorySegment.copy(source.segment(), source.origin(), target.segment(), target.origin(),
                    source.layout().elementCount() * bytes);
            return;
        }
        if (source.segment().asOverlappingSlice(target.segment()).isPresent()) {
            // A strided walk would read elements it already overwrote (a vector reversed onto itself).
            try (Arena arena = Arena.ofConfined()) {
                Elements temporary = compact(source.layout(), arena);
                walk(source, temporary);
                walk(temporary, target);
            }
            return;
        }
        walk(source, target);
    }

    /**
     * Fresh compact row-major memory from {@code arena} for elements of {@code layout}'s dtype and
     * shape, 256-byte aligned as DLPack recommends; writable, padded sub-byte values kept padded.
     */
    static Elements compact(TensorLayout layout, Arena arena) {
        TensorLayout compact = TensorLayout.of(layout.dtype(), layout.shape(), null, 0,
                layout.isSubbytePadded() ? DLTensorFlag.IS_SUBBYTE_TYPE_PADDED.mask() : 0);
        MemorySegment memory = arena.allocate(compact.extent().byteSize(), 256);
        return new Elements(memory, 0, compact, new ElementCodec(compact.dtype(), compact.isSubbytePadded()));
    }

    /** The row-major walk of {@link #elements}, for tensors that do not overlap. */
    private static void walk(Elements source, Elements target) {
        long bytes = source.codec().elementBytes();
        MemorySegment from = source.segment();
        MemorySegment to = target.segment();
        long fromOrigin = source.origin();
        long toOrigin = target.origin();
        long[] shape = source.layout().shape();
        RowCursor read = new RowCursor(shape, source.layout().strides());
        RowCursor write = new RowCursor(shape, target.layout().strides());
        for (long r = 0; r < read.count(); r++, read.advance(), write.advance()) {
            if (bytes > 0 && bytes == target.codec().elementBytes()) {
                if (read.contiguous() && write.contiguous()) {
                    MemorySegment.copy(from, fromOrigin + read.offset() * bytes, to, toOrigin + write.offset() * bytes,
                            read.length() * bytes);
                } else {
                    for (long i = 0; i < read.length(); i++) {
                        MemorySegment.copy(from, fromOrigin + (read.offset() + i * read.stride()) * bytes,
                                to, toOrigin + (write.offset() + i * write.stride()) * bytes, bytes);
                    }
                }
            } else {
                for (long i = 0; i < read.length(); i++) {
                    copySlots(source, read.offset() + i * read.stride(), target, write.offset() + i * write.stride());
                }
            }
        }
    }

    /** Copies one packed (or padded-to-packed) sub-byte element slot by slot. */
    private static void copySlots(Elements source, long fromElement, Elements target, long toElement) {
        ElementCodec codec = source.codec();
        int lanes = source.layout().dtype().lanes();
        for (int lane = 0; lane < lanes; lane++) {
            for (int part = 0; part < codec.partsPerLane(); part++) {
                long bits = codec.read(source.segment(), source.origin(), fromElement, lane, part);
                target.codec().write(target.segment(), target.origin(), toElement, lane, part, bits);
            }
        }
    }
}
