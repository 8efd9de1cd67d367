package org.jdlpack.arrow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;

import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.types.Types.MinorType;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.util.TransferPair;
import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLPackStats;
import org.jdlpack.abi.DLTensorFlag;
import org.jdlpack.abi.ExportOptions;
import org.jdlpack.abi.ExportedTensor;
import org.jdlpack.testsupport.CPeer;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;

/** Arrow vectors read by the C peer through jdlpack exports: same memory, right metadata, deleter releases. */
@ExtendWith(NothingLeftBehind.class)
class ArrowExportTest extends ArrowAllocatorTest {

    private static final int FLAGS = 2;
    private static final int NDIM = 3;
    private static final int CODE = 6;
    private static final int BITS = 7;
    private static final int BYTE_OFFSET = 9;
    private static final int DATA = 10;
    private static final int SHAPE = 100;
    private static final int STRIDES = 200;

    private final CPeer peer = CPeer.get();

    private long field(ExportedTensor handle, int which) {
        return peer.field(MemorySegment.ofAddress(handle.address()), false, which);
    }

    @ParameterizedTest
    @FieldSource("org.jdlpack.arrow.Columns#ZERO_COPY_TYPES")
    void everyFixedWidthTypeIsExportedOverItsValueBufferAndComesBackEqual(MinorType type) {
        try (BaseFixedWidthVector vector = Columns.of(type, allocator, 50)) {
            DLDataType dtype = ArrowTypes.dtypeOf(type).orElseThrow();
            ExportedTensor handle = ArrowExport.of(vector).export();
            assertThat(field(handle, DATA)).as("data is the value buffer: no copy").isEqualTo(vector.getDataBuffer().memoryAddress());
            assertThat(field(handle, BYTE_OFFSET)).isZero();
            assertThat(field(handle, NDIM)).isEqualTo(1);
            assertThat(field(handle, SHAPE)).isEqualTo(50);
            assertThat(field(handle, STRIDES)).isEqualTo(1);
            assertThat(field(handle, CODE)).isEqualTo(dtype.code().code());
            assertThat(field(handle, BITS)).isEqualTo(dtype.bits());
            assertThat(field(handle, FLAGS)).as("neither copied nor read-only").isZero();

            // And back: the tensor imported into Arrow again is the same memory and the same values.
            try (ImportedVector back = ArrowImport.into(allocator).importTensor(handle)) {
                assertThat(back.isCopy()).isFalse();
                assertThat(back.vector().getMinorType()).isEqualTo(type);
                assertThat(((BaseFixedWidthVector) back.vector()).getDataBuffer().memoryAddress())
                        .isEqualTo(vector.getDataBuffer().memoryAddress());
                assertThat(Columns.objects(back.vector())).isEqualTo(Columns.objects(vector));
            }
        }
    }

    @Test
    void aSlicedVectorPointsAtItsFirstValueInTheSharedBuffer() {
        try (Float4Vector whole = (Float4Vector) Columns.of(MinorType.FLOAT4, allocator, 100)) {
            TransferPair pair = whole.getTransferPair(allocator);
            pair.splitAndTransfer(37, 20);
            try (Float4Vector slice = (Float4Vector) pair.getTo()) {
                // Arrow 19 slices the value buffer for a split (no copy); the export must follow it.
                long expected = whole.getDataBuffer().memoryAddress() + 37L * Float.BYTES;
                assertThat(slice.getDataBuffer().memoryAddress()).isEqualTo(expected);
                ExportedTensor handle = ArrowExport.of(slice).export();
                MemorySegment managed = handle.consume();
                assertThat(peer.field(managed, false, DATA)).isEqualTo(expected);
                assertThat(peer.field(managed, false, SHAPE)).isEqualTo(20);
                double sum = 0;
                for (int i = 37; i < 57; i++) {
                    sum += Columns.value(i);
                }
                assertThat(peer.sumF32(managed, false)).isEqualTo(sum);
                peer.delete(managed, false);
            }
        }
    }

    @Test
    void aFixedSizeListColumnIsARowsByWidthMatrix() {
        try (FixedSizeListVector column = Columns.embeddings(allocator, 6, 4)) {
            ExportedTensor handle = ArrowExport.of(column).export();
            MemorySegment managed = handle.consume();
            assertThat(peer.field(managed, false, NDIM)).isEqualTo(2);
            assertThat(peer.field(managed, false, SHAPE)).isEqualTo(6);
            assertThat(peer.field(managed, false, SHAPE + 1)).isEqualTo(4);
            assertThat(peer.field(managed, false, STRIDES)).isEqualTo(4);
            assertThat(peer.field(managed, false, STRIDES + 1)).isEqualTo(1);
            assertThat(peer.field(managed, false, DATA))
                    .isEqualTo(((Float4Vector) column.getDataVector()).getDataBuffer().memoryAddress());
            assertThat(peer.sumF32(managed, false)).isEqualTo(4 * (0 + 1000 + 2000 + 3000 + 4000 + 5000) + 6 * (0 + 1 + 2 + 3));
            peer.delete(managed, false);
        }
    }

    @Test
    void aSlicedFixedSizeListStartsAtItsFirstRow() {
        try (FixedSizeListVector column = Columns.embeddings(allocator, 10, 3)) {
            TransferPair pair = column.getTransferPair(allocator);
            pair.splitAndTransfer(4, 3);
            try (FixedSizeListVector rows = (FixedSizeListVector) pair.getTo();
                 ImportedVector back = ArrowImport.into(allocator).importTensor(ArrowExport.of(rows).export())) {
                long first = ((Float4Vector) column.getDataVector()).getDataBuffer().memoryAddress() + 4L * 3 * Float.BYTES;
                Float4Vector values = (Float4Vector) ((FixedSizeListVector) back.vector()).getDataVector();
                assertThat(values.getDataBuffer().memoryAddress()).isEqualTo(first);
                assertThat(back.vector().getValueCount()).isEqualTo(3);
                assertThat(values.get(0)).isEqualTo(4000f);
                assertThat(values.get(8)).isEqualTo(6002f);
            }
        }
    }

    @Test
    void aListOfListsIsThreeDimensional() {
        Field leaf = new Field("$data$", FieldType.nullable(MinorType.INT.getType()), null);
        Field inner = new Field("$data$", FieldType.nullable(new ArrowType.FixedSizeList(3)), java.util.List.of(leaf));
        Field outer = new Field("cube", FieldType.nullable(new ArrowType.FixedSizeList(2)), java.util.List.of(inner));
        try (FixedSizeListVector cube = (FixedSizeListVector) outer.createVector(allocator)) {
            FixedSizeListVector rows = (FixedSizeListVector) cube.getDataVector();
            IntVector ints = (IntVector) rows.getDataVector();
            for (int i = 0; i < 24; i++) {
                ints.setSafe(i, i);
            }
            for (int i = 0; i < 8; i++) {
                rows.setNotNull(i);
            }
            for (int i = 0; i < 4; i++) {
                cube.setNotNull(i);
            }
            cube.setValueCount(4);
            try (ImportedVector back = ArrowImport.into(allocator).importTensor(ArrowExport.of(cube).export())) {
                assertThat(back.vector().getField().toString()).isEqualTo(cube.getField().toString().replace("cube", "tensor"));
                assertThat(Columns.objects(back.vector())).isEqualTo(Columns.objects(cube));
            }
        }
    }

    @Test
    void nullsAreRefusedWithTheirCountAndNothingLeaks() {
        try (Float4Vector vector = (Float4Vector) Columns.of(MinorType.FLOAT4, allocator, 10)) {
            vector.setNull(2);
            vector.setNull(7);
            long before = allocator.getAllocatedMemory();
            assertThatThrownBy(() -> ArrowExport.of(vector).export()).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("Float4Vector 'column' has 2 null values among 10 rows")
                    .hasMessageContaining("fillNullsWith");
            assertThat(allocator.getAllocatedMemory()).isEqualTo(before);
            assertThat(DLPackStats.liveExports()).isZero();
        }
        try (IntVector longer = (IntVector) Columns.of(MinorType.INT, allocator, 130)) {
            longer.setNull(5);
            longer.setNull(64); // counted a 64-bit word at a time, then bit by bit in the tail
            longer.setNull(129);
            assertThatThrownBy(() -> ArrowExport.of(longer).export()).hasMessageContaining("has 3 null values among 130 rows");
        }
        try (FixedSizeListVector column = Columns.embeddings(allocator, 5, 2)) {
            column.setNull(3);
            assertThatThrownBy(() -> ArrowExport.of(column).export()).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("has 1 null rows among 5 rows");
        }
    }

    @Test
    void nullsFilledAreACopyFlaggedIsCopied() {
        try (Float4Vector vector = (Float4Vector) Columns.of(MinorType.FLOAT4, allocator, 10)) {
            vector.setNull(2);
            ExportedTensor handle = ArrowExport.of(vector).fillNullsWith(Double.NaN).export();
            MemorySegment managed = handle.consume();
            assertThat(peer.field(managed, false, FLAGS)).isEqualTo(DLTensorFlag.IS_COPIED.mask());
            assertThat(peer.field(managed, false, DATA)).isNotEqualTo(vector.getDataBuffer().memoryAddress());
            assertThat(peer.sumF32(managed, false)).isNaN();
            peer.delete(managed, false);

            try (ImportedVector filled = ArrowImport.into(allocator).importTensor(ArrowExport.of(vector).fillNullsWith(-1).export())) {
                Float4Vector values = (Float4Vector) filled.vector();
                assertThat(values.get(2)).isEqualTo(-1f);
                assertThat(values.get(3)).isEqualTo(vector.get(3));
                assertThat(values.getNullCount()).isZero();
            }
        }
        try (FixedSizeListVector column = Columns.embeddings(allocator, 4, 3)) {
            column.setNull(1);
            ((Float4Vector) column.getDataVector()).setNull(10);
            try (ImportedVector filled = ArrowImport.into(allocator).importTensor(ArrowExport.of(column).fillNullsWith(0).export())) {
                Float4Vector values = (Float4Vector) ((FixedSizeListVector) filled.vector()).getDataVector();
                assertThat(values.get(2)).isEqualTo(2f);
                assertThat(values.get(3)).as("the whole null row").isZero();
                assertThat(values.get(5)).isZero();
                assertThat(values.get(9)).isEqualTo(3000f);
                assertThat(values.get(10)).as("a null value in a valid row").isZero();
            }
        }
    }

    @SuppressWarnings("restricted") // reads the copy the peer sees, at the address it reports
    @Test
    void aBitVectorIsExportedAsACopyOfBoolBytes() {
        try (BitVector bits = new BitVector("flags", allocator)) {
            bits.allocateNew(11);
            for (int i = 0; i < 11; i++) {
                bits.set(i, i % 3 == 0 ? 1 : 0);
            }
            bits.setValueCount(11);
            ExportedTensor handle = ArrowExport.of(bits).export();
            MemorySegment managed = handle.consume();
            assertThat(peer.field(managed, false, CODE)).isEqualTo(6);
            assertThat(peer.field(managed, false, BITS)).isEqualTo(8);
            assertThat(peer.field(managed, false, FLAGS)).isEqualTo(DLTensorFlag.IS_COPIED.mask());
            MemorySegment bytes = MemorySegment.ofAddress(peer.field(managed, false, DATA)).reinterpret(11);
            for (int i = 0; i < 11; i++) {
                assertThat(bytes.get(java.lang.foreign.ValueLayout.JAVA_BYTE, i)).isEqualTo((byte) (i % 3 == 0 ? 1 : 0));
            }
            peer.delete(managed, false);

            bits.setNull(4);
            assertThatThrownBy(() -> ArrowExport.of(bits).export()).hasMessageContaining("1 null values");
            try (ImportedVector back = ArrowImport.into(allocator).importTensor(ArrowExport.of(bits).fillNullsWith(1).export())) {
                assertThat(back.vector()).isInstanceOf(BitVector.class);
                assertThat(back.copyReason()).hasValueSatisfying(reason -> assertThat(reason).contains("bool"));
                assertThat(((BitVector) back.vector()).get(3)).isEqualTo(1);
                assertThat(((BitVector) back.vector()).get(4)).as("filled").isEqualTo(1);
                assertThat(((BitVector) back.vector()).get(5)).isZero();
            }
        }
    }

    @Test
    void aVectorClosedWhileTheConsumerHoldsItsTensorStaysAllocatedUntilTheDeleter() {
        Float4Vector vector = (Float4Vector) Columns.of(MinorType.FLOAT4, allocator, 1000);
        long bytes = allocator.getAllocatedMemory();
        MemorySegment managed = ArrowExport.of(vector).export().consume();
        vector.close();
        assertThat(vector.getValueCount()).as("Java sees an empty vector").isZero();
        assertThat(allocator.getAllocatedMemory()).as("the consumer's reference keeps the value buffer").isGreaterThan(0)
                .isLessThanOrEqualTo(bytes);
        assertThat(peer.sumF32(managed, false)).as("the memory is still valid").isEqualTo(sumOfValues(1000));
        peer.deleteOnNewThread(managed, false); // a thread Java never created drops the last reference
        assertThat(allocator.getAllocatedMemory()).isZero();
    }

    private static double sumOfValues(int count) {
        double sum = 0;
        for (int i = 0; i < count; i++) {
            sum += Columns.value(i);
        }
        return sum;
    }

    @Test
    void readOnlyExportsSayReadOnlyAndCannotBeLegacy() {
        try (IntVector vector = (IntVector) Columns.of(MinorType.INT, allocator, 3)) {
            MemorySegment managed = ArrowExport.of(vector).readOnly().export().consume();
            assertThat(peer.field(managed, false, FLAGS)).isEqualTo(DLTensorFlag.READ_ONLY.mask());
            peer.delete(managed, false);
            assertThatThrownBy(() -> ArrowExport.of(vector).readOnly().export(ExportOptions.LEGACY)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("read-only");
            MemorySegment legacy = ArrowExport.of(vector).export(ExportOptions.LEGACY).consume();
            assertThat(peer.field(legacy, true, DATA)).isEqualTo(vector.getDataBuffer().memoryAddress());
            assertThat(peer.consume(legacy, true)).isNotZero();
        }
    }

    @Test
    void typesWithoutATensorFormAreRefusedWithTheReason() {
        try (DecimalVector decimals = new DecimalVector("price", allocator, 10, 2);
             VarCharVector strings = new VarCharVector("name", allocator)) {
            decimals.allocateNew(2);
            decimals.setValueCount(2);
            strings.allocateNew();
            strings.setValueCount(0);
            assertThatThrownBy(() -> ArrowExport.of(decimals).export()).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("DecimalVector 'price'").hasMessageContaining("no decimal type");
            assertThatThrownBy(() -> ArrowExport.of(strings).export()).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("VarCharVector 'name'").hasMessageContaining("fixed-width");
        }
        Field child = new Field("$data$", FieldType.nullable(MinorType.VARCHAR.getType()), null);
        Field field = new Field("words", FieldType.nullable(new ArrowType.FixedSizeList(2)), java.util.List.of(child));
        try (FixedSizeListVector words = (FixedSizeListVector) field.createVector(allocator)) {
            assertThatThrownBy(() -> ArrowExport.of(words).export()).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("FixedSizeList column FixedSizeListVector 'words'");
        }
        assertThat(DLPackStats.liveExports()).isZero();
    }

    @Test
    void anEmptyVectorIsAnEmptyTensor() {
        try (Float4Vector empty = new Float4Vector("empty", allocator);
             ImportedVector back = ArrowImport.into(allocator).importTensor(ArrowExport.of(empty).export())) {
            assertThat(back.vector().getValueCount()).isZero();
        }
    }
}
