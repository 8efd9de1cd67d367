package org.jdlpack.arrow;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.ValueVector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.types.Types.MinorType;
import org.jdlpack.abi.DLDataType;

/**
 * A vector seen as a tensor: the fixed-width leaf vector that holds the values, the
 * {@code FixedSizeList} levels above it (outermost first) and the resulting shape (rows, then one
 * extent per list level).
 */
final class ColumnLayout {

    private final ValueVector column;
    private final List<FixedSizeListVector> lists;
    private final BaseFixedWidthVector leaf;
    private final DLDataType dtype;
    private final long[] shape;
    private final long elementCount;
    /** spans[k]: the values under one entry of list level k (the product of the extents below it). */
    private final long[] spans;

    private ColumnLayout(ValueVector column, List<FixedSizeListVector> lists, BaseFixedWidthVector leaf, DLDataType dtype,
                         long[] shape, long elementCount) {
        this.column = column;
        this.lists = lists;
        this.leaf = leaf;
        this.dtype = dtype;
        this.shape = shape;
        this.elementCount = elementCount;
        this.spans = new long[lists.size()];
        long span = 1;
        for (int level = lists.size() - 1; level >= 0; level--) {
            span *= shape[level + 1];
            spans[level] = span;
        }
    }

    /**
     * Walks {@code column} down through its FixedSizeList levels.
     *
     * @throws IllegalArgumentException naming the vector and type, if no tensor describes it
     */
    static ColumnLayout of(ValueVector column) {
        List<FixedSizeListVector> lists = new ArrayList<>();
        List<Long> extents = new ArrayList<>();
        extents.add((long) column.getValueCount());
        ValueVector current = column;
        while (current instanceof FixedSizeListVector list) {
            lists.add(list);
            extents.add((long) list.getListSize());
            current = list.getDataVector();
        }
        MinorType type = current.getMinorType();
        DLDataType dtype = ArrowTypes.dtypeOf(type).orElse(null);
        if (dtype == null || !(current instanceof BaseFixedWidthVector leaf)) {
            String where = current == column ? "" : " (the values of FixedSizeList column " + describe(column) + ")";
            throw new IllegalArgumentException("cannot export " + describe(current) + where + " of type " + current.getField().getType()
                    + " as a DLPack tensor: " + ArrowTypes.whyNotExportable(type));
        }
        long[] shape = extents.stream().mapToLong(Long::longValue).toArray();
        long count = 1;
        for (long extent : shape) {
            count = Math.multiplyExact(count, extent);
        }
        if (count > leaf.getValueCount()) {
            throw new IllegalArgumentException(describe(column) + " has " + column.getValueCount() + " rows of shape "
                    + Arrays.toString(Arrays.copyOfRange(shape, 1, shape.length)) + ", which need " + count
                    + " values, but its values vector holds only " + leaf.getValueCount());
        }
        return new ColumnLayout(column, List.copyOf(lists), leaf, dtype, shape, count);
    }

    static String describe(ValueVector vector) {
        return vector.getClass().getSimpleName() + " '" + vector.getName() + "'";
    }

    /** {@return the vector holding the values} */
    BaseFixedWidthVector leaf() {
        return leaf;
    }

    /** {@return the DLPack type of the values; bool for a Bit vector} */
    DLDataType dtype() {
        return dtype;
    }

    /** {@return whether the values are Arrow's bit-packed booleans} */
    boolean isBitPacked() {
        return leaf.getMinorType() == MinorType.BIT;
    }

    /** {@return the tensor shape: rows, then one extent per FixedSizeList level} */
    long[] shape() {
        return shape.clone();
    }

    /** {@return the number of values the tensor covers} */
    long elementCount() {
        return elementCount;
    }

    /** {@return the value bytes the tensor covers (for a Bit vector, one byte per value once unpacked)} */
    long valueBytes() {
        return isBitPacked() ? elementCount : elementCount * leaf.getTypeWidth();
    }

    /** {@return nulls at every level, each counted in its own range: rows and list entries first, values last} */
    long[] nullCounts() {
        long[] counts = new long[lists.size() + 1];
        long entries = column.getValueCount();
        for (int level = 0; level < lists.size(); level++) {
            counts[level] = nulls(lists.get(level), entries);
            entries *= lists.get(level).getListSize();
        }
        counts[lists.size()] = nulls(leaf, entries);
        return counts;
    }

    /**
     * Counts the clear bits among the first {@code entries} of the validity bitmap, a long at a
     * time straight from memory: this scan (one bit per value) is the only part of an export whose
     * cost grows with the column, and Arrow's own counter checks bounds and reference counts on
     * every read.
     */
    private static long nulls(ValueVector vector, long entries) {
        if (entries == 0) {
            return 0;
        }
        ArrowBuf validity = vector.getValidityBuffer();
        long bytes = (entries + 7) / 8;
        if (validity.capacity() < bytes) {
            throw new IllegalStateException(describe(vector) + " has " + entries + " values but a validity buffer of only "
                    + validity.capacity() + " bytes");
        }
        MemorySegment bits = ArrowMemory.segmentAt(validity.memoryAddress(), bytes);
        long words = entries / Long.SIZE;
        long set = 0;
        for (long w = 0; w < words; w++) {
            set += Long.bitCount(bits.get(ValueLayout.JAVA_LONG_UNALIGNED, w * Long.BYTES));
        }
        for (long i = words * Long.SIZE; i < entries; i++) {
            set += (bits.get(ValueLayout.JAVA_BYTE, i >>> 3) >>> (i & 7)) & 1;
        }
        return entries - set;
    }

    /** {@return whether value {@code index} (row-major over the tensor) is null itself or lies in a null row or list} */
    boolean isNull(long index) {
        if (leaf.isNull(Math.toIntExact(index))) {
            return true;
        }
        for (int level = 0; level < lists.size(); level++) {
            if (lists.get(level).isNull(Math.toIntExact(index / spans[level]))) {
                return true;
            }
        }
        return false;
    }

    /** A refusal that counts the nulls, level by level. */
    String nullMessage(long[] counts) {
        StringBuilder found = new StringBuilder();
        for (int level = 0; level < counts.length; level++) {
            if (counts[level] == 0) {
                continue;
            }
            if (!found.isEmpty()) {
                found.append(" and ");
            }
            found.append(counts[level]).append(level == counts.length - 1 ? " null values" : level == 0 ? " null rows" : " null lists at depth " + level);
        }
        return describe(column) + " has " + found + " among " + column.getValueCount() + " rows; a DLPack tensor cannot "
                + "represent nulls: export with ArrowExport.fillNullsWith(value) to send a filled copy, or drop the nulls first";
    }
}
