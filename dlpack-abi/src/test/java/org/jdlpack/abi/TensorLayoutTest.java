package org.jdlpack.abi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import org.jdlpack.testsupport.CPeer;
import org.jdlpack.testsupport.PeerTensor;
import org.junit.jupiter.api.Test;

/** The one layout value every tensor type returns: validation, value semantics, and agreement between them. */
class TensorLayoutTest {

    @Test
    void compactLayoutHasRowMajorStridesAndItsExtent() {
        TensorLayout layout = TensorLayout.of(DLDataType.FLOAT32, 2, 3);
        assertThat(layout.strides()).containsExactly(3, 1);
        assertThat(layout.ndim()).isEqualTo(2);
        assertThat(layout.elementCount()).isEqualTo(6);
        assertThat(layout.isCompactRowMajor()).isTrue();
        assertThat(layout.extent()).isEqualTo(new TensorExtent(0, 24));
        assertThat(layout.byteOffset()).isZero();
        assertThat(layout.flags()).isZero();
    }

    @Test
    void negativeStridesReachBytesBeforeElementZero() {
        TensorLayout layout = TensorLayout.of(DLDataType.INT16, new long[] {4}, new long[] {-1}, 6, 0);
        assertThat(layout.extent()).isEqualTo(new TensorExtent(-6, 8));
        assertThat(layout.isCompactRowMajor()).isFalse();
        assertThat(layout.stride(0)).isEqualTo(-1);
    }

    @Test
    void badFieldsAreRefusedNamingTheField() {
        assertThatThrownBy(() -> TensorLayout.of(DLDataType.FLOAT32, 2, -1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("DLTensor.shape[1] is -1");
        assertThatThrownBy(() -> TensorLayout.of(DLDataType.FLOAT32, new long[] {2}, new long[] {1, 1}, 0, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("DLTensor.strides has 2 entries");
        assertThatThrownBy(() -> TensorLayout.of(DLDataType.FLOAT32, new long[] {2}, null, -4, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("byte_offset is -4");
        assertThatThrownBy(() -> TensorLayout.of(DLDataType.FLOAT32, new long[TensorLayout.MAX_NDIM + 1]))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("DLTensor.ndim is 257");
        assertThatThrownBy(() -> TensorLayout.of(DLDataType.FLOAT64, new long[] {1L << 40, 1L << 40}, null, 0, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("overflows 64 bits");
        assertThatThrownBy(() -> TensorLayout.of(DLDataType.FLOAT32, 2).withByteOffset(-1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("byte_offset is -1");
    }

    @Test
    void arraysAreCopiedInAndOut() {
        long[] shape = {2, 3};
        TensorLayout layout = TensorLayout.of(DLDataType.FLOAT32, shape);
        shape[0] = 99;
        layout.shape()[1] = 99;
        layout.strides()[0] = 99;
        assertThat(layout.shape()).containsExactly(2, 3);
        assertThat(layout.strides()).containsExactly(3, 1);
    }

    @Test
    void equalLayoutsAreEqualValues() {
        TensorLayout a = TensorLayout.of(DLDataType.UINT8, new long[] {2, 2}, new long[] {1, 2}, 8, DLTensorFlag.READ_ONLY.mask());
        TensorLayout b = TensorLayout.of(DLDataType.UINT8, 2, 2).withFlags(DLTensorFlag.READ_ONLY.mask());
        TensorLayout c = TensorLayout.of(DLDataType.UINT8, new long[] {2, 2}, new long[] {1, 2}, 0, DLTensorFlag.READ_ONLY.mask());
        assertThat(c.withByteOffset(8)).isEqualTo(a).hasSameHashCodeAs(a);
        assertThat(b).isNotEqualTo(a);
        assertThat(a.isReadOnly()).isTrue();
        assertThat(a.toString()).contains("uint8", "shape=[2, 2]", "strides=[1, 2]", "byte_offset=8", "flags=0x1");
    }

    @Test
    void paddingSubByteValuesChangesTheExtent() {
        TensorLayout packed = TensorLayout.of(new DLDataType(DLDataTypeCode.INT, 4, 1), 8);
        TensorLayout padded = packed.withFlags(DLTensorFlag.IS_SUBBYTE_TYPE_PADDED.mask());
        assertThat(packed.extent().byteSize()).isEqualTo(4);
        assertThat(padded.extent().byteSize()).isEqualTo(8);
        assertThat(padded.isSubbytePadded()).isTrue();
    }

    @Test
    void specImportAndExportAgreeOnTheLayout() {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment data = arena.allocate(64);
            TensorLayout layout = TensorLayout.of(DLDataType.FLOAT32, new long[] {2, 3}, new long[] {1, 4}, 4, 0);
            TensorSpec spec = TensorSpec.builder(data, layout).build();
            assertThat(spec.layout()).isEqualTo(layout);
            ExportOwner owner = ExportOwner.of(() -> { });
            ExportOptions verbatim = ExportOptions.VERSIONED.withVerbatimByteOffset(true);
            try (ImportedTensor imported = owner.export(spec, verbatim).importTensor()) {
                assertThat(imported.layout()).isEqualTo(layout);
                assertThat(imported.layout()).isSameAs(imported.layout());
            }
            try (ImportedTensor folded = owner.export(spec).importTensor()) {
                assertThat(folded.layout()).isEqualTo(layout.withByteOffset(0));
                assertThat(folded.dataAddress()).isEqualTo(data.address() + 4);
            }
            owner.close();
        }
    }

    @Test
    void legacyImportsHaveNoFlagsAndNullStridesBecomeCompact() {
        CPeer peer = CPeer.get();
        CPeer.Produced produced = peer.make(PeerTensor.legacy().shape(2, 5).strides((long[]) null));
        try (ImportedTensor tensor = ImportedTensor.of(ManagedTensorKind.LEGACY, produced.pointer())) {
            assertThat(tensor.stridesWereNull()).isTrue();
            assertThat(tensor.layout()).isEqualTo(TensorLayout.of(DLDataType.FLOAT32, 2, 5));
        }
    }

    @Test
    void specRefusesElementsOutsideItsData() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment data = arena.allocate(16);
            assertThatThrownBy(() -> TensorSpec.builder(data, TensorLayout.of(DLDataType.FLOAT32, 4).withByteOffset(4)).build())
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("reaches bytes [4, 20) of data, which has 16 bytes");
            assertThat(TensorSpec.builder(data.asReadOnly(), TensorLayout.of(DLDataType.FLOAT32, 4)).build().layout().isReadOnly())
                    .isTrue();
        }
    }
}
