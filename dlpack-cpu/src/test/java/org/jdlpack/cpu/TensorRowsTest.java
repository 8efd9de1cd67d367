package org.jdlpack.cpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLPackStats;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.TensorLayout;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.testsupport.CPeer;
import org.jdlpack.testsupport.PeerTensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Rows i..j of a tensor: a view of the same memory, and a tensor of their own that C reads and that keeps the memory. */
@ExtendWith(NothingLeftBehind.class)
class TensorRowsTest {

    private static final CPeer PEER = CPeer.get();

    private static float[] counting(int n) {
        float[] values = new float[n];
        for (int i = 0; i < n; i++) {
            values[i] = i;
        }
        return values;
    }

    @Test
    void rowsAreAViewOfTheSameMemory() {
        try (OwnedHostTensor tensor = OwnedHostTensor.copyOf(counting(6 * 4), 6, 4)) {
            HostTensorView rows = tensor.host().rows(2, 5);
            assertThat(rows.layout().shape()).containsExactly(3, 4);
            assertThat(rows.layout().byteOffset()).isEqualTo(2 * 4 * 4);
            assertThat(rows.segment().address()).isEqualTo(tensor.spec().data().address() + 32);
            assertThat(rows.segment().byteSize()).isEqualTo(3 * 16);
            assertThat(rows.getFloatAt(0, 0)).isEqualTo(8f);
            rows.setFloatAt(-1f, 2, 3);
            assertThat(tensor.host().getFloatAt(4, 3)).isEqualTo(-1f); // written through the slice
            assertThat(tensor.host().rows(6, 6).layout().elementCount()).isZero();
            assertThat(rows.rows(1, 2).getFloatAt(0, 1)).isEqualTo(13f); // a slice of a slice
        }
    }

    @Test
    void rowsOfAStridedAndAReversedTensorFollowTheirStrides() {
        try (OwnedHostTensor tensor = OwnedHostTensor.copyOf(counting(4 * 3), 4, 3)) {
            MemorySegment data = tensor.spec().data();
            // The transpose, [3, 4] with strides (1, 3): row r is column r of the original.
            HostTensorView transposed = HostTensorView.of(data, TensorLayout.of(DLDataType.FLOAT32, new long[] {3, 4},
                    new long[] {1, 3}, 0, 0));
            HostTensorView column = transposed.rows(2, 3);
            assertThat(new float[] {column.getFloat(0), column.getFloat(1), column.getFloat(3)}).containsExactly(2f, 5f, 11f);
            // Rows reversed: stride -3, element 0 at the last row.
            HostTensorView reversed = HostTensorView.of(data, TensorLayout.of(DLDataType.FLOAT32, new long[] {4, 3},
                    new long[] {-3, 1}, 9 * 4, 0));
            HostTensorView middle = reversed.rows(1, 3); // original rows 2 and 1
            assertThat(middle.getFloatAt(0, 0)).isEqualTo(6f);
            assertThat(middle.getFloatAt(1, 2)).isEqualTo(5f);
        }
    }

    /**
     * A reversed array as every producer sends it: data at element 0, byte_offset 0, the rows
     * before it in memory (NumPy's {@code np.arange(12, dtype=np.float32).reshape(6, 2)[::-1]}).
     * The C peer fills each float with its memory position, so element [r, c] holds 10 - 2r + c.
     */
    @Test
    void rowsOfAReversedImportAreTheSlicesNumPyGives() {
        CPeer.Produced produced = PEER.make(PeerTensor.versioned().shape(6, 2).strides(-2, 1));
        try (ImportedTensor tensor = ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer())) {
            HostTensorView view = HostTensorView.of(tensor);
            assertThat(view.getFloatAt(0, 0)).isEqualTo(10f);
            // Before: "byte_offset is -8, must not be negative" for every start but 0.
            HostTensorView middle = view.rows(1, 3); // NumPy: [[8, 9], [6, 7]]
            float[] values = new float[4];
            middle.copyTo(values);
            assertThat(values).containsExactly(8, 9, 6, 7);
            assertThat(middle.getFloatAt(1, 1)).isEqualTo(7f);
            assertThat(middle.segment().byteSize()).isEqualTo(4 * 4);
            HostTensorView last = view.rows(5, 6);
            assertThat(last.getFloatAt(0, 0)).isZero();
            assertThat(last.getFloatAt(0, 1)).isEqualTo(1f);
            assertThat(view.rows(6, 6).layout().elementCount()).isZero();
            assertThat(view.rows(2, 6).rows(1, 2).getFloatAt(0, 0)).isEqualTo(4f); // a slice of a slice: row 3
            middle.setFloatAt(-8f, 0, 0);
            assertThat(view.getFloatAt(1, 0)).isEqualTo(-8f); // the same memory
        }
    }

    @Test
    void rowsOfAReversedVectorFromCAndFromJavaTakeEveryStart() {
        CPeer.Produced produced = PEER.make(PeerTensor.versioned().shape(8).strides(-1));
        try (ImportedTensor tensor = ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer())) {
            HostTensorView view = HostTensorView.of(tensor); // element i holds 7 - i
            for (int from = 0; from <= 8; from++) {
                for (int to = from; to <= 8; to++) {
                    HostTensorView slice = view.rows(from, to);
                    assertThat(slice.layout().elementCount()).isEqualTo(to - from);
                    for (int i = 0; i < to - from; i++) {
                        assertThat(slice.getFloat(i)).as("rows(%d, %d)[%d]", from, to, i).isEqualTo(7f - from - i);
                    }
                }
            }
        }
        try (OwnedHostTensor tensor = OwnedHostTensor.copyOf(counting(8), 8)) {
            // Java-made: element 0 at the last float, byte_offset 28.
            HostTensorView reversed = HostTensorView.of(tensor.spec().data(), TensorLayout.of(DLDataType.FLOAT32, new long[] {8},
                    new long[] {-1}, 7 * 4, 0));
            assertThat(reversed.rows(8, 8).layout().elementCount()).isZero(); // before: "byte_offset is -4"
            assertThat(reversed.rows(7, 8).getFloat(0)).isZero();
            assertThat(reversed.rows(2, 4).getFloat(1)).isEqualTo(4f);
            assertThat(reversed.rows(2, 4).layout().byteOffset()).isEqualTo(5 * 4); // still relative to the owner's data
        }
    }

    @Test
    void rowsOutOfRangeOrInsideAByteAreRefused() {
        try (OwnedHostTensor tensor = OwnedHostTensor.allocate(DLDataType.FLOAT32, 3, 2);
             OwnedHostTensor bits = OwnedHostTensor.allocate(new DLDataType(org.jdlpack.abi.DLDataTypeCode.INT, 4, 1), 4, 1)) {
            assertThatThrownBy(() -> tensor.host().rows(2, 4)).isInstanceOf(IndexOutOfBoundsException.class);
            assertThatThrownBy(() -> tensor.host().rows(2, 1)).isInstanceOf(IndexOutOfBoundsException.class);
            assertThatThrownBy(() -> tensor.rows(-1, 1)).isInstanceOf(IndexOutOfBoundsException.class);
            assertThatThrownBy(() -> bits.host().rows(1, 2)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("starts at bit 4");
            assertThat(bits.host().rows(2, 4).layout().byteOffset()).isEqualTo(1);
        }
        try (OwnedHostTensor scalar = OwnedHostTensor.allocate(DLDataType.FLOAT32)) {
            assertThatThrownBy(() -> scalar.host().rows(0, 0)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("0-d tensor");
        }
    }

    @Test
    void rowsAsATensorAreExportedOverTheSameMemoryAndKeepIt() {
        OwnedHostTensor batch = OwnedHostTensor.copyOf(counting(8 * 2), 8, 2);
        OwnedHostTensor mine = batch.rows(3, 5);
        MemorySegment data = batch.spec().data();
        assertThat(mine.spec().layout().shape()).containsExactly(2, 2);
        MemorySegment exported = mine.export().consume();
        assertThat(PEER.field(exported, false, 3)).isEqualTo(2);            // ndim
        assertThat(PEER.sumF32(exported, false)).isEqualTo(6 + 7 + 8 + 9);  // C reads batch rows 3 and 4
        long cData = PEER.field(exported, false, 10) + PEER.field(exported, false, 9);
        assertThat(cData).isEqualTo(data.address() + 3 * 2 * 4);

        batch.close();
        mine.close();
        assertThat(data.scope().isAlive()).as("C's export of the rows keeps the batch's memory").isTrue();
        PEER.fillF32(exported, false, 100, 1);
        PEER.deleteOnNewThread(exported, false);
        assertThat(data.scope().isAlive()).isFalse();
        assertThat(DLPackStats.liveExports()).isZero();
        assertThatThrownBy(() -> batch.rows(0, 1)).isInstanceOf(IllegalStateException.class).hasMessageContaining("was closed");
    }
}
