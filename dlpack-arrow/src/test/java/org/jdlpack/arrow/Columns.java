package org.jdlpack.arrow;

import java.util.ArrayList;
import java.util.List;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BaseIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.FloatingPointVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.types.Types.MinorType;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;

/** Test columns with known values. */
final class Columns {

    /** Every vector type exported zero-copy. */
    static final List<MinorType> ZERO_COPY_TYPES = List.of(MinorType.TINYINT, MinorType.SMALLINT, MinorType.INT, MinorType.BIGINT,
            MinorType.UINT1, MinorType.UINT2, MinorType.UINT4, MinorType.UINT8, MinorType.FLOAT2, MinorType.FLOAT4, MinorType.FLOAT8);

    private Columns() {
    }

    /** Value i of a test column: negative and positive, exact in every type (float16 included). */
    static long value(int i) {
        return i * 37L - 100;
    }

    /** A vector of the type with {@code count} values {@link #value(int)}, no nulls. */
    static BaseFixedWidthVector of(MinorType type, BufferAllocator allocator, int count) {
        BaseFixedWidthVector vector = (BaseFixedWidthVector) type.getNewVector("column", FieldType.nullable(type.getType()), allocator, null);
        vector.allocateNew(count);
        for (int i = 0; i < count; i++) {
            set(vector, i, value(i));
        }
        vector.setValueCount(count);
        return vector;
    }

    static void set(BaseFixedWidthVector vector, int index, long value) {
        if (vector instanceof BaseIntVector ints) {
            ints.setWithPossibleTruncate(index, value);
        } else if (vector instanceof org.apache.arrow.vector.Float2Vector halves) {
            halves.setSafeWithPossibleTruncate(index, (float) value);
        } else if (vector instanceof FloatingPointVector floats) {
            floats.setWithPossibleTruncate(index, (double) value);
        } else if (vector instanceof BitVector bits) {
            bits.set(index, (int) (value & 1));
        } else {
            throw new IllegalArgumentException(vector.toString());
        }
    }

    /** The values as Arrow's getObject gives them, for comparing two vectors of one type. */
    static List<Object> objects(FieldVector vector) {
        List<Object> values = new ArrayList<>();
        for (int i = 0; i < vector.getValueCount(); i++) {
            values.add(vector.getObject(i));
        }
        return values;
    }

    /** A FixedSizeList<float32>[width] column with value {@code row * 1000 + column} at each position. */
    static FixedSizeListVector embeddings(BufferAllocator allocator, int rows, int width) {
        Field child = new Field("$data$", FieldType.nullable(new ArrowType.FloatingPoint(
                org.apache.arrow.vector.types.FloatingPointPrecision.SINGLE)), null);
        Field field = new Field("embedding", FieldType.nullable(new ArrowType.FixedSizeList(width)), List.of(child));
        FixedSizeListVector column = (FixedSizeListVector) field.createVector(allocator);
        column.allocateNew();
        Float4Vector values = (Float4Vector) column.getDataVector();
        for (int r = 0; r < rows; r++) {
            column.setNotNull(r);
            for (int c = 0; c < width; c++) {
                values.setSafe(r * width + c, r * 1000 + c);
            }
        }
        column.setValueCount(rows);
        return column;
    }
}
