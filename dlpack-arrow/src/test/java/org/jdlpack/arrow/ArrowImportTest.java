package org.jdlpack.arrow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.OutOfMemoryException;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.UInt1Vector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.types.Types.MinorType;
import org.apache.arrow.vector.util.TransferPair;
import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLDataTypeCode;
import org.jdlpack.abi.DLTensorFlag;
import org.jdlpack.abi.ImportLifetime;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.InvalidTensorException;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.testsupport.CPeer;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.testsupport.PeerTensor;
import org.jdlpack.cpu.HostTensorView;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;

/** Tensors made by the C peer, imported into Arrow: same memory, deleter once on the last release, accounting back to zero. */
@ExtendWith(NothingLeftBehind.class)
class ArrowImportTest extends ArrowAllocatorTest {

    private static final int DATA = 10;

    private final CPeer peer = CPeer.get();

    private CPeer.Produced make(PeerTensor tensor) {
        return peer.make(tensor);
    }

    /** The peer's data, as a host tensor, for writing values before the import. */
    @SuppressWarnings("restricted")
    private HostTensorView peerData(CPeer.Produced produced, DLDataType dtype, long... shape) {
        long address = peer.field(produced.pointer(), produced.legacy(), DATA);
        long bytes = dtype.isSubByte() ? (HostTensorSize.elements(shape) * dtype.bits() + 7) / 8 : HostTensorSize.elements(shape) * dtype.bits() / 8;
        return HostTensorView.of(MemorySegment.ofAddress(address).reinterpret(bytes), dtype, shape);
    }

    /** Element counting for the helper above. */
    private static final class HostTensorSize {
        static long elements(long... shape) {
            long n = 1;
            for (long extent : shape) {
                n *= extent;
            }
            return n;
        }
    }

    @ParameterizedTest
    @FieldSource("org.jdlpack.arrow.Columns#ZERO_COPY_TYPES")
    void everyArrowTypeWrapsTheProducersMemoryAndTheDeleterRunsOnClose(MinorType type) {
        DLDataType dtype = ArrowTypes.dtypeOf(type).orElseThrow();
        CPeer.Produced produced = make(PeerTensor.versioned().dtype(dtype.code().code(), dtype.bits(), 1).shape(40));
        HostTensorView values = peerData(produced, dtype, 40);
        for (int i = 0; i < 40; i++) {
            if (dtype.code() == DLDataTypeCode.FLOAT) {
                values.setDouble(i, Columns.value(i));
            } else {
                values.setLong(i, Columns.value(i));
            }
        }
        long data = peer.field(produced.pointer(), false, DATA);

        ImportedVector imported = ArrowImport.into(allocator).named("x").importTensor(ManagedTensorKind.VERSIONED, produced.pointer());
        assertThat(imported.isCopy()).isFalse();
        FieldVector vector = imported.vector();
        assertThat(vector.getMinorType()).isEqualTo(type);
        assertThat(vector.getName()).isEqualTo("x");
        assertThat(((BaseFixedWidthVector) vector).getDataBuffer().memoryAddress()).as("no copy").isEqualTo(data);
        try (BaseFixedWidthVector expected = Columns.of(type, allocator, 40)) {
            assertThat(Columns.objects(vector)).isEqualTo(Columns.objects(expected));
        }
        assertThat(allocator.getAllocatedMemory()).as("the tensor's bytes are counted while Arrow holds them")
                .isGreaterThanOrEqualTo(40L * dtype.bits() / 8);
        assertThat(peer.deleterCalls(produced.id())).isZero();
        imported.close();
        assertThat(peer.deleterCalls(produced.id())).isEqualTo(1);
    }

    @Test
    void aMatrixBecomesAFixedSizeListOfRows() {
        CPeer.Produced produced = make(PeerTensor.versioned().shape(3, 4));
        try (ImportedVector imported = ArrowImport.into(allocator).named("embedding").zeroCopyOnly().importTensor(ManagedTensorKind.VERSIONED, produced.pointer())) {
            FixedSizeListVector rows = (FixedSizeListVector) imported.vector();
            assertThat(rows.getListSize()).isEqualTo(4);
            assertThat(rows.getValueCount()).isEqualTo(3);
            assertThat(rows.getNullCount()).isZero();
            Float4Vector values = (Float4Vector) rows.getDataVector();
            assertThat(values.getDataBuffer().memoryAddress()).isEqualTo(peer.field(produced.pointer(), false, DATA));
            assertThat(rows.getObject(2)).isEqualTo(java.util.List.of(8f, 9f, 10f, 11f));
        }
        assertThat(peer.deleterCalls(produced.id())).isEqualTo(1);
    }

    @Test
    void theDeleterRunsOnceWhenTheLastVectorSharingTheMemoryIsReleasedOnAnyThread() throws InterruptedException {
        CPeer.Produced produced = make(PeerTensor.versioned().shape(100));
        ImportedVector imported = ArrowImport.into(allocator).importTensor(ManagedTensorKind.VERSIONED, produced.pointer());
        TransferPair pair = imported.vector().getTransferPair(allocator);
        pair.splitAndTransfer(10, 5);
        Float4Vector slice = (Float4Vector) pair.getTo();
        imported.close();
        assertThat(peer.deleterCalls(produced.id())).as("the slice still shares the memory").isZero();
        assertThat(slice.get(0)).isEqualTo(10f);

        AtomicLong releasingThread = new AtomicLong();
        Thread closer = new Thread(() -> {
            releasingThread.set(peer.currentThread());
            slice.close();
        });
        closer.start();
        closer.join();
        assertThat(peer.deleterCalls(produced.id())).isEqualTo(1);
        assertThat(peer.deleterThread(produced.id())).as("run by the thread that released the last buffer").isEqualTo(releasingThread.get());
    }

    @Test
    void anAlreadyImportedTensorMovesIntoTheVectorAndIsDeadForItsOldOwner() throws InterruptedException {
        CPeer.Produced produced = make(PeerTensor.versioned().shape(6));
        long data = peer.field(produced.pointer(), false, DATA);
        // The default lifetime, confined to this thread: the vector's last buffer is released on another one.
        ImportedTensor tensor = ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer());
        MemorySegment before = tensor.hostSegment();
        ImportedVector imported;
        try (tensor) {
            imported = ArrowImport.into(allocator).zeroCopyOnly().importTensor(tensor);
        } // before: this close ran the producer's deleter under the vector, and the next get crashed the JVM
        assertThat(peer.deleterCalls(produced.id())).as("owned by the vector now").isZero();
        assertThat(((Float4Vector) imported.vector()).getDataBuffer().memoryAddress()).as("no copy").isEqualTo(data);
        assertThat(Columns.objects(imported.vector())).isEqualTo(java.util.List.of(0f, 1f, 2f, 3f, 4f, 5f));
        assertThat(tensor.isAlive()).as("dead for its old owner").isFalse();
        assertThatThrownBy(tensor::layout).isInstanceOf(IllegalStateException.class).hasMessageContaining("was moved");
        assertThatThrownBy(tensor::hostSegment).isInstanceOf(IllegalStateException.class).hasMessageContaining("was moved");
        assertThatThrownBy(() -> before.get(ValueLayout.JAVA_FLOAT, 0)).as("a segment obtained before the move")
                .isInstanceOf(IllegalStateException.class);
        tensor.close(); // does nothing

        AtomicLong releasingThread = new AtomicLong();
        Thread closer = new Thread(() -> {
            releasingThread.set(peer.currentThread());
            imported.close();
        });
        closer.start();
        closer.join();
        assertThat(peer.deleterCalls(produced.id())).isEqualTo(1);
        assertThat(peer.deleterThread(produced.id())).as("released by the thread that dropped the last buffer").isEqualTo(releasingThread.get());

        // A copy releases the tensor during the import; a tensor already moved is refused.
        CPeer.Produced strided = make(PeerTensor.versioned().shape(2, 3).strides(1, 2));
        ImportedTensor confined = ImportedTensor.of(ManagedTensorKind.VERSIONED, strided.pointer());
        try (ImportedVector copy = ArrowImport.into(allocator).importTensor(confined)) {
            assertThat(copy.isCopy()).isTrue();
            assertThat(confined.isAlive()).isFalse();
            assertThat(peer.deleterCalls(strided.id())).isEqualTo(1);
        }
        assertThatThrownBy(() -> ArrowImport.into(allocator).importTensor(confined)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("was moved");
        assertThat(peer.deleterCalls(strided.id())).isEqualTo(1);
    }

    @Test
    void aTensorMovedInsideApplyIsNotReleasedByApply() {
        CPeer.Produced produced = make(PeerTensor.versioned().shape(3));
        ImportedVector imported = ImportedTensor.apply(ManagedTensorKind.VERSIONED, produced.pointer(),
                tensor -> ArrowImport.into(allocator).importTensor(tensor));
        try (imported) {
            assertThat(peer.deleterCalls(produced.id())).as("apply left the moved tensor alone").isZero();
            assertThat(Columns.objects(imported.vector())).isEqualTo(java.util.List.of(0f, 1f, 2f));
        }
        assertThat(peer.deleterCalls(produced.id())).isEqualTo(1);
    }

    @Test
    void aConfinedTensorIsMovedOnlyOnItsImportingThread() throws Exception {
        CPeer.Produced produced = make(PeerTensor.versioned().shape(3));
        try (ImportedTensor tensor = ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer())) {
            java.util.concurrent.atomic.AtomicReference<Throwable> thrown = new java.util.concurrent.atomic.AtomicReference<>();
            Thread other = new Thread(() -> {
                try {
                    ArrowImport.into(allocator).importTensor(tensor).close();
                } catch (Throwable t) {
                    thrown.set(t);
                }
            });
            other.start();
            other.join();
            assertThat(thrown.get()).isInstanceOf(WrongThreadException.class).hasMessageContaining("Nothing moved");
            assertThat(tensor.isAlive()).as("left untouched").isTrue();
            assertThat(HostTensorView.of(tensor).getFloat(2)).isEqualTo(2f);
        }
        assertThat(peer.deleterCalls(produced.id())).isEqualTo(1);
    }

    @Test
    void aTensorInACallersArenaIsRefusedAndLeftToItsArena() {
        CPeer.Produced produced = make(PeerTensor.versioned().shape(4));
        try (Arena arena = Arena.ofConfined()) {
            ImportedTensor inArena = ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer(), ImportLifetime.in(arena));
            // Its arena, not Arrow's last release, would free the memory under the vector.
            assertThatThrownBy(() -> ArrowImport.into(allocator).importTensor(inArena)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("caller's arena");
            assertThat(inArena.isAlive()).isTrue();
            assertThat(peer.deleterCalls(produced.id())).isZero();
        }
        assertThat(peer.deleterCalls(produced.id())).isEqualTo(1);
    }

    @Test
    void anImportedVectorReExportedIsReleasedByTheConsumersDeleterOnANativeThread() {
        CPeer.Produced produced = make(PeerTensor.versioned().shape(8));
        long data = peer.field(produced.pointer(), false, DATA);
        ImportedVector imported = ArrowImport.into(allocator).importTensor(ManagedTensorKind.VERSIONED, produced.pointer());
        MemorySegment managed = ArrowExport.of(imported.vector()).export().consume();
        imported.close();
        assertThat(peer.deleterCalls(produced.id())).as("the re-export holds the producer's memory").isZero();
        assertThat(peer.field(managed, false, DATA)).as("the same memory, passed on").isEqualTo(data);
        assertThat(peer.sumF32(managed, false)).isEqualTo(28);
        peer.deleteOnNewThread(managed, false);
        assertThat(peer.deleterCalls(produced.id())).isEqualTo(1);
        assertThat(peer.deleterThread(produced.id())).as("released inside the consumer's deleter, on its thread")
                .isNotEqualTo(peer.currentThread());
    }

    @Test
    void aStridedTensorIsCopiedWithANoteOrRefusedWhenZeroCopyIsDemanded() {
        // Column-major 2 x 3: element (i, j) sits at memory position i + 2 j, where the peer wrote i + 2 j.
        CPeer.Produced produced = make(PeerTensor.versioned().shape(2, 3).strides(1, 2));
        try (ImportedVector imported = ArrowImport.into(allocator).importTensor(ManagedTensorKind.VERSIONED, produced.pointer())) {
            assertThat(peer.deleterCalls(produced.id())).as("a copy releases the tensor at once").isEqualTo(1);
            assertThat(imported.copyReason()).hasValueSatisfying(reason -> assertThat(reason).contains("not compact row-major")
                    .contains("strides [1, 2]"));
            Float4Vector values = (Float4Vector) ((FixedSizeListVector) imported.vector()).getDataVector();
            assertThat(Columns.objects(values)).isEqualTo(java.util.List.of(0f, 2f, 4f, 1f, 3f, 5f));
        }

        CPeer.Produced refused = make(PeerTensor.versioned().shape(2, 3).strides(1, 2));
        assertThatThrownBy(() -> ArrowImport.into(allocator).zeroCopyOnly().importTensor(ManagedTensorKind.VERSIONED, refused.pointer()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("zero-copy import refused")
                .hasMessageContaining("not compact row-major");
        assertThat(peer.deleterCalls(refused.id())).isEqualTo(1);
    }

    @Test
    void aReadOnlyTensorIsCopiedBecauseArrowVectorsAreWritable() {
        CPeer.Produced produced = make(PeerTensor.versioned().shape(4).flags(DLTensorFlag.READ_ONLY.mask()));
        try (ImportedVector imported = ArrowImport.into(allocator).importTensor(ManagedTensorKind.VERSIONED, produced.pointer())) {
            assertThat(imported.copyReason()).hasValueSatisfying(reason -> assertThat(reason).contains("READ_ONLY"));
            assertThat(((Float4Vector) imported.vector()).getDataBuffer().memoryAddress())
                    .isNotEqualTo(peer.field(produced.pointer(), false, DATA));
            assertThat(Columns.objects(imported.vector())).isEqualTo(java.util.List.of(0f, 1f, 2f, 3f));
        }
        CPeer.Produced refused = make(PeerTensor.versioned().shape(4).flags(DLTensorFlag.READ_ONLY.mask()));
        assertThatThrownBy(() -> ArrowImport.into(allocator).zeroCopyOnly().importTensor(ManagedTensorKind.VERSIONED, refused.pointer()))
                .hasMessageContaining("READ_ONLY");
        assertThat(peer.deleterCalls(produced.id()) + peer.deleterCalls(refused.id())).isEqualTo(2);
    }

    @Test
    void typesArrowLacksConvertExactlyIntoACopy() {
        CPeer.Produced bf16 = make(PeerTensor.versioned().dtype(4, 16, 1).shape(3));
        HostTensorView halves = peerData(bf16, DLDataType.BFLOAT16, 3);
        halves.setDouble(0, 1.5);
        halves.setDouble(1, -256);
        halves.setDouble(2, 0.0078125);
        try (ImportedVector imported = ArrowImport.into(allocator).importTensor(ManagedTensorKind.VERSIONED, bf16.pointer())) {
            assertThat(imported.vector()).isInstanceOf(Float4Vector.class);
            assertThat(imported.copyReason()).hasValueSatisfying(reason -> assertThat(reason).contains("bfloat16"));
            assertThat(Columns.objects(imported.vector())).isEqualTo(java.util.List.of(1.5f, -256f, 0.0078125f));
        }

        CPeer.Produced bools = make(PeerTensor.versioned().dtype(6, 8, 1).shape(10));
        HostTensorView flags = peerData(bools, DLDataType.BOOL, 10);
        for (int i = 0; i < 10; i++) {
            flags.setBoolean(i, i % 4 == 1);
        }
        try (ImportedVector imported = ArrowImport.into(allocator).importTensor(ManagedTensorKind.VERSIONED, bools.pointer())) {
            BitVector bits = (BitVector) imported.vector();
            for (int i = 0; i < 10; i++) {
                assertThat(bits.get(i)).as("bit %d", i).isEqualTo(i % 4 == 1 ? 1 : 0);
            }
        }

        DLDataType int4 = new DLDataType(DLDataTypeCode.INT, 4, 1);
        DLDataType uint4 = new DLDataType(DLDataTypeCode.UINT, 4, 1);
        CPeer.Produced nibbles = make(PeerTensor.versioned().dtype(0, 4, 1).shape(5));
        CPeer.Produced unsignedNibbles = make(PeerTensor.versioned().dtype(1, 4, 1).shape(5));
        HostTensorView signed = peerData(nibbles, int4, 5);
        HostTensorView unsigned = peerData(unsignedNibbles, uint4, 5);
        for (int i = 0; i < 5; i++) {
            signed.setLong(i, i * 3 - 8);
            unsigned.setLong(i, i * 3 + 3);
        }
        try (ImportedVector s = ArrowImport.into(allocator).importTensor(ManagedTensorKind.VERSIONED, nibbles.pointer());
             ImportedVector u = ArrowImport.into(allocator).importTensor(ManagedTensorKind.VERSIONED, unsignedNibbles.pointer())) {
            assertThat(s.vector()).isInstanceOf(TinyIntVector.class);
            assertThat(Columns.objects(s.vector())).isEqualTo(java.util.List.of((byte) -8, (byte) -5, (byte) -2, (byte) 1, (byte) 4));
            assertThat(u.vector()).isInstanceOf(UInt1Vector.class);
            assertThat(((UInt1Vector) u.vector()).getValueAsLong(4)).isEqualTo(15);
        }

        CPeer.Produced refused = make(PeerTensor.versioned().dtype(4, 16, 1).shape(3));
        assertThatThrownBy(() -> ArrowImport.into(allocator).zeroCopyOnly().importTensor(ManagedTensorKind.VERSIONED, refused.pointer()))
                .hasMessageContaining("zero-copy import refused: bfloat16 has no Arrow vector type");
        for (CPeer.Produced p : java.util.List.of(bf16, bools, nibbles, unsignedNibbles, refused)) {
            assertThat(peer.deleterCalls(p.id())).isEqualTo(1);
        }
    }

    @Test
    void tensorsWithNoArrowFormAreRefusedAndReleased() {
        assertRefused(PeerTensor.versioned().dtype(5, 64, 1).shape(3), "DLTensor.dtype is complex64");
        // kDLBcomplex (dlpack's main after v1.3): two bfloat16s, which Arrow has no type for either.
        assertRefused(PeerTensor.versioned().dtype(18, 32, 1).shape(3), "DLTensor.dtype is bcomplex32, which has no Arrow vector type");
        assertRefused(PeerTensor.versioned().dtype(2, 32, 2).shape(3), "DLTensor.dtype is float32x2");
        assertRefused(PeerTensor.versioned().shape(3).device(2), "DLTensor.device is CUDA");
        assertRefused(PeerTensor.versioned().shape(), "DLTensor.ndim is 0");
        assertRefused(PeerTensor.versioned().shape(3, -1).strides(1, 1).dummyData(), "shape");
        assertRefused(PeerTensor.versioned().shape(65536, 65536).dummyData(), "at most " + Integer.MAX_VALUE + " values");
    }

    private void assertRefused(PeerTensor tensor, String message) {
        CPeer.Produced produced = make(tensor);
        assertThatThrownBy(() -> ArrowImport.into(allocator).importTensor(ManagedTensorKind.VERSIONED, produced.pointer()))
                .isInstanceOfAny(IllegalArgumentException.class, InvalidTensorException.class).hasMessageContaining(message);
        assertThat(peer.deleterCalls(produced.id())).as("deleter of a refused tensor").isEqualTo(1);
        assertThat(allocator.getAllocatedMemory()).isZero();
    }

    @Test
    void anAllocatorWithoutRoomRefusesTheTensorAndReleasesIt() {
        try (BufferAllocator small = allocator.newChildAllocator("small", 0, 1024)) {
            CPeer.Produced produced = make(PeerTensor.versioned().shape(1000));
            assertThatThrownBy(() -> ArrowImport.into(small).importTensor(ManagedTensorKind.VERSIONED, produced.pointer())).isInstanceOf(OutOfMemoryException.class);
            assertThat(peer.deleterCalls(produced.id())).isEqualTo(1);
            assertThat(small.getAllocatedMemory()).isZero();
        }
    }

    @Test
    void aLegacyTensorImportsTheSameWay() {
        CPeer.Produced produced = make(PeerTensor.legacy().shape(6));
        try (ImportedVector imported = ArrowImport.into(allocator).zeroCopyOnly().importTensor(ManagedTensorKind.LEGACY, produced.pointer())) {
            assertThat(((Float4Vector) imported.vector()).get(5)).isEqualTo(5f);
        }
        assertThat(peer.deleterCalls(produced.id())).isEqualTo(1);
    }
}
