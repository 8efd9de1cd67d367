package org.jdlpack.cpu;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.lang.foreign.MemorySegment;
import java.util.List;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLDataTypeCode;
import org.jdlpack.abi.DLTensorFlag;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.TensorLayout;
import org.jdlpack.abi.TensorSpec;
import org.jdlpack.testsupport.CPeer;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.testsupport.PeerTensor;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Element access, sub-byte packing, lanes and bulk copies on memory laid out by hand or by C. */
@ExtendWith(NothingLeftBehind.class)
class HostTensorViewTest {

    @Test
    void overlappingCopiesBehaveAsIfThroughATemporary() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment values = arena.allocate(JAVA_FLOAT, 8);
            for (int i = 0; i < 8; i++) {
                values.setAtIndex(JAVA_FLOAT, i, i);
            }
            HostTensorView forward = HostTensorView.of(values, DLDataType.FLOAT32, 8);
            // The same eight floats, last first: byte_offset at element 7, stride -1.
            HostTensorView reversed = HostTensorView.of(values, TensorLayout.of(DLDataType.FLOAT32, new long[] {8}, new long[] {-1},
                    7 * 4, 0));
            reversed.copyTo(forward); // NumPy: a[:] = a[::-1] gives the reversed vector
            float[] out = new float[8];
            forward.copyTo(out);
            // Before: the strided walk read elements it had overwritten, [7, 6, 5, 4, 4, 5, 6, 7].
            assertThat(out).containsExactly(7, 6, 5, 4, 3, 2, 1, 0);

            // Overlapping, shifted by one element with a stride of 2 on the target side.
            HostTensorView firstFour = HostTensorView.of(values.asSlice(0, 16), DLDataType.FLOAT32, 4);
            HostTensorView everyOther = HostTensorView.of(values, TensorLayout.of(DLDataType.FLOAT32, new long[] {4}, new long[] {2},
                    4, 0));
            firstFour.copyTo(everyOther); // elements 1, 3, 5, 7 get the old elements 0..3: 7, 6, 5, 4
            forward.copyTo(out);
            assertThat(out).containsExactly(7, 7, 5, 6, 3, 5, 1, 4);
        }
    }

    @Test
    void packedInt4AndUint4AreLittleBitEndian() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment bytes = arena.allocate(2);
            bytes.set(JAVA_BYTE, 0, (byte) 0x9A); // element 0 = 0xA, element 1 = 0x9
            bytes.set(JAVA_BYTE, 1, (byte) 0x07); // element 2 = 0x7, element 3 = 0x0
            HostTensorView unsigned = HostTensorView.of(bytes, new DLDataType(DLDataTypeCode.UINT, 4, 1), 4);
            assertThat(new long[] {unsigned.getLong(0), unsigned.getLong(1), unsigned.getLong(2), unsigned.getLong(3)})
                    .containsExactly(10, 9, 7, 0);
            HostTensorView signed = HostTensorView.of(bytes, new DLDataType(DLDataTypeCode.INT, 4, 1), 4);
            assertThat(new long[] {signed.getLong(0), signed.getLong(1), signed.getLong(2)}).containsExactly(-6, -7, 7);

            signed.setLong(3, -1);
            assertThat(bytes.get(JAVA_BYTE, 1)).isEqualTo((byte) 0xF7);
            assertThat(signed.getLong(2)).as("the neighbour in the same byte is untouched").isEqualTo(7);
        }
    }

    @Test
    void paddedSubByteValuesUseWholeBytes() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment bytes = arena.allocate(3);
            bytes.set(JAVA_BYTE, 0, (byte) 0x03);
            bytes.set(JAVA_BYTE, 1, (byte) 0x0E);
            bytes.set(JAVA_BYTE, 2, (byte) 0x05);
            TensorSpec spec = TensorSpec.builder(bytes, new DLDataType(DLDataTypeCode.FLOAT4_E2M1FN, 4, 1), 3)
                    .flags(DLTensorFlag.IS_SUBBYTE_TYPE_PADDED.mask()).build();
            HostTensorView padded = HostTensorView.of(spec);
            assertThat(new double[] {padded.getDouble(0), padded.getDouble(1), padded.getDouble(2)}).containsExactly(1.5, -4, 3);
        }
    }

    @Test
    void lanesAndComplexPartsAreAddressedSeparately() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment memory = arena.allocate(JAVA_FLOAT, 8);
            for (int i = 0; i < 8; i++) {
                memory.setAtIndex(JAVA_FLOAT, i, i);
            }
            HostTensorView vectors = HostTensorView.of(memory, new DLDataType(DLDataTypeCode.FLOAT, 32, 4), 2);
            assertThat(vectors.getDouble(1, 2)).isEqualTo(6.0);
            HostTensorView complex = HostTensorView.of(memory, DLDataType.COMPLEX64, 4);
            assertThat(complex.getDouble(2, 0)).isEqualTo(4.0);
            assertThat(complex.getImaginary(2, 0)).isEqualTo(5.0);
            complex.setImaginary(3, 0, -1);
            assertThat(memory.getAtIndex(JAVA_FLOAT, 7)).isEqualTo(-1f);
            assertThatThrownBy(() -> vectors.getImaginary(0, 0)).isInstanceOf(UnsupportedOperationException.class);
            assertThatThrownBy(() -> vectors.getDouble(0, 4)).isInstanceOf(IndexOutOfBoundsException.class);
        }
    }

    @Test
    void packedBoolsAndUnsigned64() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment bits = arena.allocate(1);
            bits.set(JAVA_BYTE, 0, (byte) 0b0000_0101);
            HostTensorView bools = HostTensorView.of(bits, new DLDataType(DLDataTypeCode.BOOL, 1, 1), 8);
            assertThat(new boolean[] {bools.getBoolean(0), bools.getBoolean(1), bools.getBoolean(2)}).containsExactly(true, false, true);

            MemorySegment wide = arena.allocate(8);
            HostTensorView u64 = HostTensorView.of(wide, DLDataType.UINT64, 1);
            u64.setLong(0, -1L);
            assertThat(Long.toUnsignedString(u64.getLong(0))).isEqualTo("18446744073709551615");
            assertThat(u64.getDouble(0)).isEqualTo(0x1p64);
        }
    }

    @Test
    void stridedBulkCopiesMatchElementAccessOnCTensors() {
        CPeer peer = CPeer.get();
        // A 3x4 view with row stride 6 and column stride -1 (reversed columns), from C.
        CPeer.Produced produced = peer.make(PeerTensor.versioned().shape(3, 4).strides(6, -1));
        try (ImportedTensor imported = ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer())) {
            HostTensorView host = HostTensorView.of(imported);
            float[] bulk = new float[12];
            host.copyTo(bulk);
            for (int i = 0; i < 12; i++) {
                assertThat(bulk[i]).isEqualTo(host.getFloat(i));
            }
            // Element (r, c) sits at memory position 6r - c from element 0, which is position 3.
            assertThat(bulk).containsExactly(3, 2, 1, 0, 9, 8, 7, 6, 15, 14, 13, 12);
            assertThat(host.getFloat(host.index(2, 1))).isEqualTo(14f);

            try (Arena arena = Arena.ofConfined()) {
                HostTensorView compact = host.toContiguous(arena);
                assertThat(compact.layout().isCompactRowMajor()).isTrue();
                float[] again = new float[12];
                compact.copyTo(again);
                assertThat(again).containsExactly(bulk);
                assertThat(compact.segment().address() % OwnedHostTensor.ALIGNMENT).isZero();
            }
            float[] replacement = new float[12];
            java.util.Arrays.fill(replacement, 9f);
            host.copyFrom(replacement);
            assertThat(host.getFloat(11)).isEqualTo(9f);
        }
        assertThat(peer.deleterCalls(produced.id())).isEqualTo(1);
    }

    @Test
    void bulkCopiesRefuseMismatchedWidthsAndLengths() {
        try (OwnedHostTensor tensor = OwnedHostTensor.allocate(DLDataType.FLOAT64, 2, 2)) {
            assertThatThrownBy(() -> tensor.host().copyTo(new float[4])).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("widths differ");
            assertThatThrownBy(() -> tensor.host().copyTo(new double[3])).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("3 values");
        }
    }

    @Test
    void scalarAccessToHandlesWiderThan64BitsThrowsNamingDtypeAndWidth() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment memory = arena.allocate(32);
            memory.fill((byte) 0x5A);
            HostTensorView handles = HostTensorView.of(memory, new DLDataType(DLDataTypeCode.OPAQUE_HANDLE, 128, 1), 2);
            assertThatThrownBy(() -> handles.getLong(1)).isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("handle128").hasMessageContaining("128 bits");
            assertThatThrownBy(() -> handles.setLong(0, 7)).isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("handle128").hasMessageContaining("128 bits");
            for (long i = 0; i < 32; i++) {
                assertThat(memory.get(JAVA_BYTE, i)).as("byte %d is untouched", i).isEqualTo((byte) 0x5A);
            }
            // Up to 64 bits, handles of any whole-byte width read exactly.
            HostTensorView narrow = HostTensorView.of(memory, new DLDataType(DLDataTypeCode.OPAQUE_HANDLE, 40, 1), 2);
            assertThat(narrow.getLong(1)).isEqualTo(0x5A5A5A5A5AL);
        }
    }

    @Test
    void bulkCopiesOfStridedWideElementsCopyEveryByte() {
        DLDataType handle128 = new DLDataType(DLDataTypeCode.OPAQUE_HANDLE, 128, 1);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment memory = arena.allocate(16 * 6);
            for (long i = 0; i < memory.byteSize(); i++) {
                memory.set(JAVA_BYTE, i, (byte) i);
            }
            // The transpose of a 2x3 block: shape 3x2, strides (1, 3).
            HostTensorView transposed = HostTensorView.of(TensorSpec.builder(memory, handle128, 3, 2).strides(1, 3).build());
            assertThat(transposed.layout().isCompactRowMajor()).isFalse();
            HostTensorView compact = transposed.toContiguous(arena);
            // Row-major element (r, c) of the transpose is memory element r + 3c.
            long[] expectedElement = {0, 3, 1, 4, 2, 5};
            for (int position = 0; position < 6; position++) {
                for (int b = 0; b < 16; b++) {
                    assertThat(compact.segment().get(JAVA_BYTE, position * 16L + b)).as("element %d byte %d", position, b)
                            .isEqualTo((byte) (expectedElement[position] * 16 + b));
                }
            }
            // And back into a strided target.
            MemorySegment back = arena.allocate(16 * 6);
            compact.copyTo(HostTensorView.of(TensorSpec.builder(back, handle128, 3, 2).strides(1, 3).build()));
            assertThat(back.mismatch(memory)).isEqualTo(-1);
        }
    }

    @Test
    void copiesBetweenLayoutsAgreeWithElementAccess() {
        // {shape, strides, byteOffset in elements}: 0-d, broadcast (stride 0), reversed, transposed, gapped 3-d.
        long[][][] layouts = {
            {{}, {}, {0}},
            {{3, 4}, {0, 1}, {0}},
            {{3, 4}, {-4, -1}, {11}},
            {{4, 3}, {1, 4}, {0}},
            {{2, 3, 2}, {12, 4, 2}, {1}},
        };
        DLDataType[] dtypes = {DLDataType.INT16, new DLDataType(DLDataTypeCode.INT, 4, 1), new DLDataType(DLDataTypeCode.INT, 8, 3)};
        try (Arena arena = Arena.ofConfined()) {
            for (DLDataType dtype : dtypes) {
                for (long[][] layout : layouts) {
                    MemorySegment memory = arena.allocate(256);
                    for (long i = 0; i < memory.byteSize(); i++) {
                        memory.set(JAVA_BYTE, i, (byte) (i * 7 + 3));
                    }
                    long offsetBytes = Math.ceilDiv(layout[2][0] * dtype.bitsPerElement(), 8);
                    HostTensorView source = HostTensorView.of(TensorSpec.builder(memory, dtype, layout[0]).strides(layout[1])
                            .byteOffset(offsetBytes).build());
                    HostTensorView compact = source.toContiguous(arena);
                    HostTensorView back = HostTensorView.of(TensorSpec.builder(arena.allocate(256), dtype, layout[0]).strides(layout[1])
                            .byteOffset(offsetBytes).build());
                    if (layout[1].length == 0 || layout[1][0] != 0) { // a broadcast view cannot be written element by element
                        compact.copyTo(back);
                    }
                    for (long i = 0; i < source.layout().elementCount(); i++) {
                        for (int lane = 0; lane < dtype.lanes(); lane++) {
                            assertThat(compact.getLong(i, lane)).as("%s %s element %d", dtype, java.util.Arrays.deepToString(layout), i)
                                    .isEqualTo(source.getLong(i, lane));
                            if (layout[1].length == 0 || layout[1][0] != 0) {
                                assertThat(back.getLong(i, lane)).isEqualTo(source.getLong(i, lane));
                            }
                        }
                    }
                }
            }
        }
    }

    @Test
    void accessAfterTheMemoryIsReleasedIsAnExceptionNotACrash() {
        OwnedHostTensor tensor = OwnedHostTensor.copyOf(new float[] {1, 2}, 2);
        HostTensorView host = tensor.host();
        tensor.close();
        assertThatThrownBy(() -> host.getFloat(0)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("HostTensorView").hasMessageContaining("was released");
        assertThatThrownBy(() -> host.getDouble(1)).isInstanceOf(IllegalStateException.class).hasMessageContaining("was released");
        assertThatThrownBy(() -> host.copyTo(new float[2])).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("was released");
    }

    /**
     * One contract whatever memory an {@link OwnedHostTensor} holds (allocated, a caller's wrapped
     * segment whose arena stays open, a pooled block the pool keeps mapped): after the release,
     * every kind of access through a view kept from before throws, naming the tensor; what reads
     * no memory still answers.
     */
    @ParameterizedTest
    @ValueSource(strings = {"allocated", "wrapped", "pooled"})
    void everyAccessOfAReleasedTensorsViewThrowsNamingIt(String memory) {
        try (Arena arena = Arena.ofShared(); HostTensorPool pool = HostTensorPool.create(1 << 20)) {
            OwnedHostTensor tensor = switch (memory) {
                case "allocated" -> OwnedHostTensor.allocate(DLDataType.FLOAT32, 2, 4);
                case "wrapped" -> OwnedHostTensor.wrap(arena.allocate(32), DLDataType.FLOAT32, new long[] {2, 4}, () -> { });
                default -> pool.take(DLDataType.FLOAT32, 2, 4);
            };
            HostTensorView stale = tensor.host();
            HostTensorView other = HostTensorView.of(arena.allocate(32), DLDataType.FLOAT32, 2, 4);
            tensor.close();
            List<ThrowingCallable> accesses = List.of(
                    () -> stale.getFloat(0), () -> stale.getDouble(1, 0), () -> stale.getBoolean(2), () -> stale.getFloatAt(1, 3),
                    () -> stale.getDoubleAt(0, 1), () -> stale.setFloat(0, 1f), () -> stale.setDouble(1, 0, 2),
                    () -> stale.setBoolean(2, true), () -> stale.setFloatAt(1f, 1, 3), () -> stale.setDoubleAt(1, 0, 1),
                    () -> stale.copyTo(new float[8]), () -> stale.copyTo(new int[8]), () -> stale.copyFrom(new float[8]),
                    () -> stale.copyTo(other), () -> other.copyTo(stale), () -> stale.toContiguous(arena), () -> stale.rows(0, 1),
                    stale::segment, () -> TensorStreams.write(stale, new ByteArrayOutputStream(), new byte[16]),
                    () -> TensorStreams.readFully(new ByteArrayInputStream(new byte[32]), stale, new byte[16]));
            for (int i = 0; i < accesses.size(); i++) {
                assertThatThrownBy(accesses.get(i)).as("access %d of a released %s tensor", i, memory)
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("this HostTensorView of OwnedHostTensor[").hasMessageContaining("was released");
            }
            assertThat(stale.index(1, 3)).isEqualTo(7);
            assertThat(stale.layout().shape()).containsExactly(2, 4);
            assertThat(stale.origin()).isZero();
        }
    }

    @Test
    void readingAConfinedImportFromAnotherThreadSaysWhatToDo() throws InterruptedException {
        CPeer peer = CPeer.get();
        CPeer.Produced produced = peer.make(PeerTensor.versioned().shape(4));
        try (ImportedTensor tensor = ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer())) {
            HostTensorView view = HostTensorView.of(tensor);
            Throwable[] thrown = new Throwable[1];
            Thread other = Thread.ofVirtual().start(() -> {
                try {
                    view.getFloat(1);
                } catch (Throwable t) {
                    thrown[0] = t;
                }
            });
            other.join();
            // Before: the FFM runtime's bare "Attempted access outside owning thread".
            assertThat(thrown[0]).isInstanceOf(WrongThreadException.class).hasMessageContaining("ImportLifetime.SHARED")
                    .hasMessageContaining("HostTensorView");
        }
    }

    @Test
    void streamingAConfinedImportFromAnotherThreadSaysWhatToDo() throws InterruptedException {
        CPeer peer = CPeer.get();
        CPeer.Produced produced = peer.make(PeerTensor.versioned().shape(4));
        try (ImportedTensor tensor = ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer())) {
            HostTensorView view = HostTensorView.of(tensor);
            Throwable[] thrown = new Throwable[3];
            Thread other = Thread.ofVirtual().start(() -> {
                try {
                    TensorStreams.write(view, new java.io.ByteArrayOutputStream(), new byte[8]);
                } catch (Throwable t) {
                    thrown[0] = t;
                }
                try {
                    TensorStreams.readFully(new java.io.ByteArrayInputStream(new byte[16]), view, new byte[8]);
                } catch (Throwable t) {
                    thrown[1] = t;
                }
                try {
                    view.setFloat(0, 1f);
                } catch (Throwable t) {
                    thrown[2] = t;
                }
            });
            other.join();
            // Before: the FFM runtime's bare "Attempted access outside owning thread" from the streams.
            for (Throwable t : thrown) {
                assertThat(t).isInstanceOf(WrongThreadException.class).hasMessageContaining("ImportLifetime.SHARED")
                        .hasMessageContaining("ImportedTensor[");
            }
        }
    }

    /** A caller's confined arena is not an import: the message says what fits it. */
    @Test
    void readingACallersConfinedSegmentFromAnotherThreadSaysWhatToDo() throws InterruptedException {
        try (Arena arena = Arena.ofConfined()) {
            HostTensorView view = HostTensorView.of(arena.allocate(16), DLDataType.FLOAT32, 4);
            Throwable[] thrown = new Throwable[1];
            Thread other = Thread.ofVirtual().start(() -> {
                try {
                    view.copyTo(new float[4]);
                } catch (Throwable t) {
                    thrown[0] = t;
                }
            });
            other.join();
            assertThat(thrown[0]).isInstanceOf(WrongThreadException.class).hasMessageContaining("HostTensorView (float32")
                    .hasMessageContaining("shared arena");
        }
    }

    @Test
    void anAccessAfterTheImportIsClosedNamesTheTensor() {
        CPeer peer = CPeer.get();
        CPeer.Produced produced = peer.make(PeerTensor.versioned().shape(4));
        ImportedTensor tensor = ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer());
        HostTensorView view = HostTensorView.of(tensor);
        tensor.close();
        assertThatThrownBy(() -> view.getFloat(0)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("was released").hasMessageContaining("ImportedTensor[");
        assertThatThrownBy(() -> TensorStreams.write(view, new java.io.ByteArrayOutputStream(), new byte[8]))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("ImportedTensor[");
    }

    @Test
    void multiDimensionalIndicesReadAndWriteTheElementTheyName() {
        try (Arena arena = Arena.ofConfined()) {
            HostTensorView matrix = HostTensorView.of(arena.allocate(JAVA_FLOAT, 6), DLDataType.FLOAT32, 2, 3);
            matrix.setFloatAt(7f, 1, 2);
            assertThat(matrix.getFloatAt(1, 2)).isEqualTo(7f);
            assertThat(matrix.getFloat(5)).isEqualTo(7f);
            matrix.setDoubleAt(2.5, 0, 1);
            assertThat(matrix.getDoubleAt(0, 1)).isEqualTo(2.5);
            assertThatThrownBy(() -> matrix.getFloatAt(2, 0)).isInstanceOf(IndexOutOfBoundsException.class);
            assertThatThrownBy(() -> matrix.getFloatAt(1)).isInstanceOf(IndexOutOfBoundsException.class);
            HostTensorView longs = HostTensorView.of(arena.allocate(8 * 4), DLDataType.INT64, 2, 2);
            longs.setLongAt(-3, 1, 0);
            assertThat(longs.getLongAt(1, 0)).isEqualTo(-3);
        }
    }
}
