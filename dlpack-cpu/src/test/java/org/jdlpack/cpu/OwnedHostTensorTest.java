package org.jdlpack.cpu;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLDataTypeCode;
import org.jdlpack.abi.DLPackStats;
import org.jdlpack.abi.DLTensorFlag;
import org.jdlpack.abi.ExportOwner;
import org.jdlpack.abi.ExportOptions;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.TensorSpec;
import org.jdlpack.testsupport.CPeer;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Java-owned tensors: aligned, reference counted, exported without copying, or copied on request. */
@ExtendWith(NothingLeftBehind.class)
class OwnedHostTensorTest {

    private static final CPeer PEER = CPeer.get();

    @Test
    void allocatedMemoryIsAlignedZeroedAndFreedAfterTheLastConsumer() {
        OwnedHostTensor tensor = OwnedHostTensor.allocate(DLDataType.FLOAT32, 3, 5);
        MemorySegment data = tensor.spec().data();
        assertThat(data.address() % 256).isZero();
        assertThat(tensor.host().getFloat(14)).isZero();

        MemorySegment exported = tensor.export().consume();
        tensor.close(); // early: C still holds an export
        assertThat(data.scope().isAlive()).isTrue();
        PEER.fillF32(exported, false, 1, 1);
        assertThat(tensor.host().getFloat(14)).isEqualTo(15f);
        PEER.deleteOnNewThread(exported, false);
        assertThat(data.scope().isAlive()).isFalse();
        assertThat(tensor.references()).isZero();
    }

    @Test
    void aClosedTensorExportsNothingMoreWhileAnEarlierExportStaysValid() {
        OwnedHostTensor tensor = OwnedHostTensor.copyOf(new float[] {1, 2, 3}, 3);
        MemorySegment data = tensor.spec().data();
        MemorySegment live = tensor.export().consume();
        tensor.close();

        // Before: the live export's reference let every later export succeed, and a chain of them
        // kept the closed tensor's memory alive for ever.
        assertThatThrownBy(tensor::export).isInstanceOf(IllegalStateException.class).hasMessageContaining("was closed");
        assertThatThrownBy(() -> tensor.export(ExportOptions.LEGACY)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> tensor.exportCopy(ExportOptions.VERSIONED)).isInstanceOf(IllegalStateException.class);
        assertThat(tensor.references()).isEqualTo(1); // the live export's only

        try (ImportedTensor back = ImportedTensor.of(org.jdlpack.abi.ManagedTensorKind.VERSIONED, live)) {
            assertThat(HostTensorView.of(back).getFloat(2)).isEqualTo(3f); // still valid
        }
        assertThat(data.scope().isAlive()).isFalse();
    }

    @Test
    void aRetainKeepsTheMemoryAfterCloseAndIsNoExport() {
        OwnedHostTensor tensor = OwnedHostTensor.copyOf(new float[] {1, 2, 3}, 3);
        MemorySegment data = tensor.spec().data();
        ExportOwner.Retained held = tensor.retain();
        assertThat(tensor.references()).isEqualTo(2);
        assertThat(DLPackStats.liveExports()).as("a retain is Java's reference, not a DLPack struct").isZero();
        assertThat(DLPackStats.exportHeaderBytes()).isZero();

        tensor.close();
        assertThat(data.scope().isAlive()).as("the retain keeps the memory after the tensor's close").isTrue();
        assertThat(tensor.host().getFloat(2)).isEqualTo(3f);
        assertThat(tensor.references()).isEqualTo(1);

        held.close();
        assertThat(data.scope().isAlive()).as("the last reference released it").isFalse();
        assertThat(tensor.references()).isZero();
    }

    @Test
    void aRetainClosesOnceAndAClosedTensorRetainsNothing() {
        OwnedHostTensor tensor = OwnedHostTensor.allocate(DLDataType.FLOAT32, 2);
        ExportOwner.Retained first = tensor.retain();
        ExportOwner.Retained second = tensor.retain();
        first.close();
        assertThat(first.isClosed()).isTrue();
        assertThatThrownBy(first::close).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("OwnedHostTensor[").hasMessageContaining("already closed");
        assertThat(tensor.references()).as("the refused second close dropped nobody's reference").isEqualTo(2);

        tensor.close();
        assertThatThrownBy(tensor::retain).isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith("OwnedHostTensor[").hasMessageContaining("was closed");
        assertThat(tensor.references()).as("a refused retain took nothing").isEqualTo(1);
        second.close();
        assertThat(tensor.references()).isZero();
    }

    @Test
    void rowsHoldTheirTensorByARetainNotAnExport() {
        OwnedHostTensor batch = OwnedHostTensor.copyOf(new float[] {1, 2, 3, 4, 5, 6}, 3, 2);
        MemorySegment data = batch.spec().data();
        OwnedHostTensor rows = batch.rows(1, 3);
        assertThat(batch.references()).as("the batch's own and the rows'").isEqualTo(2);
        // Before: the rows held an export of the batch that no consumer would ever take.
        assertThat(DLPackStats.liveExports()).as("no DLPack struct made for Java's own hold").isZero();
        assertThat(DLPackStats.exportHeaderBytes()).isZero();

        batch.close();
        assertThat(rows.host().getFloat(3)).as("the rows keep the batch's memory").isEqualTo(6f);
        rows.close();
        assertThat(data.scope().isAlive()).isFalse();
        assertThat(batch.references()).isZero();
    }

    @Test
    void wrappingKeepsTheCallersMemoryAndRunsTheirRelease() {
        int[] released = new int[1];
        try (var arena = java.lang.foreign.Arena.ofShared()) {
            MemorySegment mine = arena.allocate(16);
            OwnedHostTensor tensor = OwnedHostTensor.wrap(mine, DLDataType.INT32, new long[] {4}, () -> released[0]++);
            tensor.host().setLong(3, 77);
            try (ImportedTensor back = tensor.export(ExportOptions.LEGACY).importTensor()) {
                assertThat(back.hostSegment().address()).isEqualTo(mine.address());
                assertThat(HostTensorView.of(back).getLong(3)).isEqualTo(77);
            }
            tensor.close();
            assertThat(released[0]).isEqualTo(1);
        }
    }

    @Test
    void copiesAreFlaggedCopiedAndIndependent() {
        try (OwnedHostTensor tensor = OwnedHostTensor.copyOf(new long[] {5, 6, 7}, 3)) {
            try (ImportedTensor copy = tensor.exportCopy(ExportOptions.VERSIONED).importTensor()) {
                assertThat(DLTensorFlag.IS_COPIED.isSet(copy.layout().flags())).isTrue();
                assertThat(copy.hostSegment().address()).isNotEqualTo(tensor.spec().data().address());
                HostTensorView.of(copy).setLong(0, 50);
                assertThat(tensor.host().getLong(0)).isEqualTo(5);
                assertThat(HostTensorView.of(copy).getLong(2)).isEqualTo(7);
            }
        }
    }

    @Test
    void readOnlyMemoryIsExportedReadOnlyOrAsALegacyCopy() {
        try (OwnedHostTensor source = OwnedHostTensor.copyOf(new double[] {1, 2}, 2)) {
            OwnedHostTensor readOnly = OwnedHostTensor.wrap(source.spec().data().asReadOnly(), DLDataType.FLOAT64, new long[] {2}, () -> { });
            assertThat(readOnly.host().layout().isReadOnly()).isTrue();
            assertThatThrownBy(() -> readOnly.export(ExportOptions.LEGACY)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("legacy DLManagedTensor");
            try (ImportedTensor versioned = readOnly.export().importTensor()) {
                assertThat(versioned.layout().isReadOnly()).isTrue();
            }
            try (ImportedTensor legacyCopy = readOnly.exportCopy(ExportOptions.LEGACY).importTensor()) {
                assertThat(legacyCopy.layout().isReadOnly()).isFalse();
                assertThat(HostTensorView.of(legacyCopy).getDouble(1)).isEqualTo(2.0);
            }
            readOnly.close();
        }
    }

    @Test
    void paddedSubByteValuesTravelPaddedOnlyInVersionedStructs() {
        Arena arena = Arena.ofShared();
        MemorySegment bytes = arena.allocate(3);
        bytes.set(JAVA_BYTE, 0, (byte) 0x03); // float4_e2m1fn 1.5, one value per byte
        bytes.set(JAVA_BYTE, 1, (byte) 0x0E); // -4
        bytes.set(JAVA_BYTE, 2, (byte) 0x05); // 3
        DLDataType float4 = new DLDataType(DLDataTypeCode.FLOAT4_E2M1FN, 4, 1);
        TensorSpec spec = TensorSpec.builder(bytes, float4, 3).flags(DLTensorFlag.IS_SUBBYTE_TYPE_PADDED.mask()).build();
        try (OwnedHostTensor padded = OwnedHostTensor.wrap(spec, arena::close)) {
            assertThatThrownBy(() -> padded.export(ExportOptions.LEGACY)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("padded to whole bytes");
            try (ImportedTensor legacy = padded.exportCopy(ExportOptions.LEGACY).importTensor()) {
                assertThat(legacy.layout().isSubbytePadded()).isFalse();
                assertThat(legacy.layout().extent().byteSize()).as("packed: two values a byte").isEqualTo(2);
                HostTensorView values = HostTensorView.of(legacy);
                assertThat(new double[] {values.getDouble(0), values.getDouble(1), values.getDouble(2)}).containsExactly(1.5, -4, 3);
            }
            try (ImportedTensor versioned = padded.exportCopy(ExportOptions.VERSIONED).importTensor()) {
                assertThat(versioned.layout().isSubbytePadded()).isTrue();
                assertThat(HostTensorView.of(versioned).getDouble(1)).isEqualTo(-4);
            }
        }
    }
}
