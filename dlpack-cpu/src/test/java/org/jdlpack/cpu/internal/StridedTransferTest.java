package org.jdlpack.cpu.internal;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLDataTypeCode;
import org.jdlpack.abi.DLTensorFlag;
import org.jdlpack.abi.TensorLayout;
import org.jdlpack.cpu.HostTensorView;
import org.junit.jupiter.api.Test;

/**
 * The transfer planner against a "device" whose buffer is host memory, so that every byte it
 * moves can be checked: the plan each layout gets, and the values, for elements of any width.
 */
class StridedTransferTest {

    private static final DLDataType HANDLE128 = new DLDataType(DLDataTypeCode.OPAQUE_HANDLE, 128, 1);

    /** A device buffer in host memory that records each transfer as "kind:offset:bytes". */
    private static final class HostBufferDevice implements StridedTransfer.Device {
        final MemorySegment buffer;
        final List<String> transfers = new ArrayList<>();

        HostBufferDevice(MemorySegment buffer) {
            this.buffer = buffer;
        }

        @Override
        public void copyContiguous(boolean toHost, long deviceOffset, MemorySegment host) {
            transfers.add("contiguous:" + deviceOffset + ":" + host.byteSize());
            if (toHost) {
                MemorySegment.copy(buffer, deviceOffset, host, 0, host.byteSize());
            } else {
                MemorySegment.copy(host, 0, buffer, deviceOffset, host.byteSize());
            }
        }

        @Override
        public void copyPitched(boolean toHost, long deviceOffset, long devicePitch, MemorySegment host, long hostPitch,
                                long rowBytes, long rows) {
            transfers.add("pitched:" + deviceOffset + ":" + rows + "x" + rowBytes);
            for (long r = 0; r < rows; r++) {
                if (toHost) {
                    MemorySegment.copy(buffer, deviceOffset + r * devicePitch, host, r * hostPitch, rowBytes);
                } else {
                    MemorySegment.copy(host, r * hostPitch, buffer, deviceOffset + r * devicePitch, rowBytes);
                }
            }
        }

        @Override
        public void finish() {
        }
    }

    private static TensorLayout layout(DLDataType dtype, long[] shape, long[] strides) {
        return TensorLayout.of(dtype, shape, strides, 0, 0);
    }

    @Test
    void stridedReadsOfWideElementsCarryEveryByte() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buffer = arena.allocate(16 * 6);
            for (long i = 0; i < buffer.byteSize(); i++) {
                buffer.set(JAVA_BYTE, i, (byte) (i + 1));
            }
            HostBufferDevice device = new HostBufferDevice(buffer);
            // The transpose of a 2x3 block of 128-bit handles: neither compact nor pitched.
            long[] shape = {3, 2};
            HostTensorView destination = HostTensorView.of(arena.allocate(16 * 6), HANDLE128, shape);
            StridedTransfer.read(device, layout(HANDLE128, shape, new long[] {1, 3}), destination);
            assertThat(device.transfers).as("one span read, gathered on the host").containsExactly("contiguous:0:96");
            long[] element = {0, 3, 1, 4, 2, 5};
            for (int position = 0; position < 6; position++) {
                MemorySegment got = destination.segment().asSlice(position * 16L, 16);
                assertThat(got.mismatch(buffer.asSlice(element[position] * 16, 16))).as("element %d", position).isEqualTo(-1);
            }
        }
    }

    @Test
    void writesMoveContiguousRowsWholeAndNeverTouchTheGaps() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buffer = arena.allocate(4 * 24);
            buffer.fill((byte) 0x7F);
            HostBufferDevice device = new HostBufferDevice(buffer);
            // 2x3x2 int32 with contiguous rows of 2 at stride 3 and planes 12 apart: not pitched (3-d).
            long[] shape = {2, 3, 2};
            long[] strides = {12, 3, 1};
            HostTensorView source = HostTensorView.of(arena.allocate(4 * 12), DLDataType.INT32, shape);
            for (int i = 0; i < 12; i++) {
                source.setLong(i, 100 + i);
            }
            StridedTransfer.write(device, layout(DLDataType.INT32, shape, strides), source);
            assertThat(device.transfers).as("one transfer per row").hasSize(6).allMatch(t -> t.endsWith(":8"));
            HostTensorView written = HostTensorView.of(buffer, DLDataType.INT32, 24);
            for (int i = 0; i < 24; i++) {
                long expected = (i % 3 == 2 || i % 12 >= 9) ? 0x7F7F7F7FL : -1;
                if (expected == -1) {
                    int plane = i / 12;
                    int row = (i % 12) / 3;
                    int column = i % 3;
                    expected = 100 + plane * 6 + row * 2 + column;
                }
                assertThat(written.getLong(i)).as("buffer element %d", i).isEqualTo(expected);
            }
        }
    }

    @Test
    void readOnlyDeviceTensorsAreNotWritten() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buffer = arena.allocate(16);
            HostBufferDevice device = new HostBufferDevice(buffer);
            TensorLayout readOnly = TensorLayout.of(DLDataType.FLOAT32, 4).withFlags(DLTensorFlag.READ_ONLY.mask());
            HostTensorView source = HostTensorView.of(arena.allocate(16), DLDataType.FLOAT32, 4);
            assertThatThrownBy(() -> StridedTransfer.write(device, readOnly, source)).isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("read-only");
            assertThat(device.transfers).isEmpty();
            StridedTransfer.read(device, readOnly, source);
            assertThat(device.transfers).containsExactly("contiguous:0:16");
        }
    }
}
