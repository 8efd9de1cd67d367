package org.jdlpack.abi;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;

import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.testsupport.CPeer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Java memory exported to the C peer: zero copy, exact struct contents, exactly-once deleters. */
@ExtendWith(NothingLeftBehind.class)
class ExportTest {

    private static final CPeer PEER = CPeer.get();

    private static MemorySegment floats(Arena arena, int count) {
        MemorySegment data = arena.allocate(JAVA_FLOAT, count);
        for (int i = 0; i < count; i++) {
            data.setAtIndex(JAVA_FLOAT, i, i + 1);
        }
        return data;
    }

    @ParameterizedTest
    @EnumSource(ManagedTensorKind.class)
    void cReadsJavaMemoryAndJavaSeesWhatCWrites(ManagedTensorKind kind) {
        boolean legacy = kind == ManagedTensorKind.LEGACY;
        Arena arena = Arena.ofShared();
        MemorySegment data = floats(arena, 6);
        AtomicInteger released = new AtomicInteger();
        ExportOwner owner = ExportOwner.of(arena, () -> {
            released.incrementAndGet();
            arena.close();
        });
        MemorySegment pointer = owner.export(TensorSpec.of(data, DLDataType.FLOAT32, 2, 3), ExportOptions.of(kind)).consume();

        assertThat(PEER.sumF32(pointer, legacy)).isEqualTo(21.0);
        assertThat(PEER.field(pointer, legacy, 3)).as("ndim").isEqualTo(2);
        assertThat(PEER.field(pointer, legacy, 100)).as("shape[0]").isEqualTo(2);
        assertThat(PEER.field(pointer, legacy, 101)).as("shape[1]").isEqualTo(3);
        assertThat(PEER.field(pointer, legacy, 11)).as("strides == NULL").isZero();
        assertThat(PEER.field(pointer, legacy, 200)).as("strides[0]").isEqualTo(3);
        assertThat(PEER.field(pointer, legacy, 201)).as("strides[1]").isEqualTo(1);
        assertThat(PEER.field(pointer, legacy, 4)).as("device_type").isEqualTo(1);
        assertThat(PEER.field(pointer, legacy, 5)).as("device_id").isZero();
        assertThat(PEER.field(pointer, legacy, 6)).as("dtype.code").isEqualTo(2);
        assertThat(PEER.field(pointer, legacy, 7)).as("dtype.bits").isEqualTo(32);
        assertThat(PEER.field(pointer, legacy, 8)).as("dtype.lanes").isEqualTo(1);
        assertThat(PEER.field(pointer, legacy, 9)).as("byte_offset").isZero();
        assertThat(PEER.field(pointer, legacy, 10)).as("data").isEqualTo(data.address());
        if (!legacy) {
            assertThat(PEER.field(pointer, false, 0)).as("version.major").isEqualTo(1);
            assertThat(PEER.field(pointer, false, 1)).as("version.minor").isEqualTo(3);
            assertThat(PEER.field(pointer, false, 2)).as("flags").isZero();
        }

        PEER.fillF32(pointer, legacy, 10, 1);
        for (int i = 0; i < 6; i++) {
            assertThat(data.getAtIndex(JAVA_FLOAT, i)).as("element %d written by C", i).isEqualTo(10f + i);
        }

        owner.close();
        assertThat(released).as("released while C still holds the export").hasValue(0);
        assertThat(data.scope().isAlive()).isTrue();
        PEER.delete(pointer, legacy);
        assertThat(released).hasValue(1);
        assertThat(owner.isReleased()).isTrue();
    }

    @ParameterizedTest
    @EnumSource(ManagedTensorKind.class)
    void stridesByteOffsetAndNegativeStridesReachTheRightElements(ManagedTensorKind kind) {
        boolean legacy = kind == ManagedTensorKind.LEGACY;
        try (Arena arena = Arena.ofShared()) {
            MemorySegment data = floats(arena, 12); // 1..12
            ExportOwner owner = ExportOwner.of(() -> { });
            // Every other column of a 2x6 matrix that starts one float in: elements 2,4,6 and 8,10,12.
            TensorSpec strided = TensorSpec.builder(data, DLDataType.FLOAT32, 2, 3).strides(6, 2).byteOffset(4).build();
            MemorySegment p = owner.export(strided, ExportOptions.of(kind)).consume();
            assertThat(PEER.sumF32(p, legacy)).isEqualTo(2 + 4 + 6 + 8 + 10 + 12);
            assertThat(PEER.field(p, legacy, 9)).as("byte_offset, folded into data").isZero();
            assertThat(PEER.field(p, legacy, 10)).as("data, at element 0").isEqualTo(data.address() + 4);
            PEER.delete(p, legacy);

            // The same with byte_offset written verbatim: data at the base, the C side adds the offset.
            MemorySegment v = owner.export(strided, ExportOptions.of(kind).withVerbatimByteOffset(true)).consume();
            assertThat(PEER.sumF32(v, legacy)).isEqualTo(2 + 4 + 6 + 8 + 10 + 12);
            assertThat(PEER.field(v, legacy, 9)).as("byte_offset, verbatim").isEqualTo(4);
            assertThat(PEER.field(v, legacy, 10)).as("data, verbatim").isEqualTo(data.address());
            PEER.delete(v, legacy);

            // Reversed: element 0 is the last float, stride -1.
            TensorSpec reversed = TensorSpec.builder(data, DLDataType.FLOAT32, 12).strides(-1).byteOffset(44).build();
            MemorySegment r = owner.export(reversed, ExportOptions.of(kind)).consume();
            PEER.fillF32(r, legacy, 0, 1);
            assertThat(data.getAtIndex(JAVA_FLOAT, 11)).isEqualTo(0f);
            assertThat(data.getAtIndex(JAVA_FLOAT, 0)).isEqualTo(11f);
            PEER.delete(r, legacy);
            owner.close();
        }
    }

    @ParameterizedTest
    @EnumSource(ManagedTensorKind.class)
    void byteOffsetIsFoldedIntoDataForPointersAndKeptForHandlesOrWhenAskedVerbatim(ManagedTensorKind kind) {
        boolean legacy = kind == ManagedTensorKind.LEGACY;
        Set<DLDeviceType> pointers = Set.of(DLDeviceType.CPU, DLDeviceType.CUDA, DLDeviceType.CUDA_HOST, DLDeviceType.CUDA_MANAGED,
                DLDeviceType.ROCM, DLDeviceType.ROCM_HOST, DLDeviceType.ONE_API, DLDeviceType.TPU_HOST);
        try (Arena arena = Arena.ofShared()) {
            MemorySegment data = floats(arena, 16);
            ExportOwner owner = ExportOwner.of(() -> { });
            for (DLDeviceType type : DLDeviceType.values()) {
                TensorSpec spec = TensorSpec.builder(data, DLDataType.FLOAT32, 4).device(DLDevice.of(type, 0)).capacity(64)
                        .byteOffset(32).build();
                MemorySegment p = owner.exportPointer(spec, ExportOptions.of(kind));
                if (pointers.contains(type)) {
                    assertThat(PEER.field(p, legacy, 10)).as("%s data, folded", type).isEqualTo(data.address() + 32);
                    assertThat(PEER.field(p, legacy, 9)).as("%s byte_offset, folded", type).isZero();
                } else {
                    // OpenCL cl_mem, Vulkan, Metal, WebGPU handles (and devices we cannot interpret): no pointer arithmetic.
                    assertThat(PEER.field(p, legacy, 10)).as("%s data, a handle", type).isEqualTo(data.address());
                    assertThat(PEER.field(p, legacy, 9)).as("%s byte_offset, kept", type).isEqualTo(32);
                }
                PEER.delete(p, legacy);

                MemorySegment v = owner.exportPointer(spec, ExportOptions.of(kind).withVerbatimByteOffset(true));
                assertThat(PEER.field(v, legacy, 10)).as("%s data, verbatim", type).isEqualTo(data.address());
                assertThat(PEER.field(v, legacy, 9)).as("%s byte_offset, verbatim", type).isEqualTo(32);
                PEER.delete(v, legacy);
            }
            // The folded CPU export reads the same elements as the verbatim one: 9..12.
            TensorSpec cpu = TensorSpec.builder(data, DLDataType.FLOAT32, 4).byteOffset(32).build();
            MemorySegment folded = owner.exportPointer(cpu, ExportOptions.of(kind));
            assertThat(PEER.sumF32(folded, legacy)).isEqualTo(9 + 10 + 11 + 12);
            PEER.delete(folded, legacy);
            owner.close();
        }
    }

    @Test
    void theReadOnlyOptionMarksAVersionedExportAndCannotBeAskedOfALegacyOne() {
        try (Arena arena = Arena.ofShared()) {
            ExportOwner owner = ExportOwner.of(() -> { });
            MemorySegment p = owner.exportPointer(TensorSpec.of(floats(arena, 6), DLDataType.FLOAT32, 6),
                    ExportOptions.VERSIONED.withReadOnly(true));
            assertThat(PEER.field(p, false, 2)).as("flags").isEqualTo(DLTensorFlag.READ_ONLY.mask());
            PEER.delete(p, false);
            owner.close();
        }
        assertThatThrownBy(() -> ExportOptions.LEGACY.withReadOnly(true))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("legacy DLManagedTensor cannot be marked read-only");
        assertThat(ExportOptions.LEGACY).isEqualTo(ExportOptions.LEGACY);
        assertThat(ExportOptions.VERSIONED.withKind(ManagedTensorKind.LEGACY)).isEqualTo(ExportOptions.LEGACY);
    }

    @ParameterizedTest
    @EnumSource(ManagedTensorKind.class)
    void tenThousandExportsEachDeletedExactlyOnce(ManagedTensorKind kind) {
        boolean legacy = kind == ManagedTensorKind.LEGACY;
        int n = 10_000;
        AtomicIntegerArray releases = new AtomicIntegerArray(n);
        try (Arena arena = Arena.ofShared()) {
            MemorySegment data = floats(arena, 6);
            TensorSpec spec = TensorSpec.of(data, DLDataType.FLOAT32, 2, 3);
            for (int i = 0; i < n; i++) {
                int index = i;
                ExportOwner owner = ExportOwner.of(() -> releases.incrementAndGet(index));
                MemorySegment pointer = owner.export(spec, ExportOptions.of(kind)).consume();
                owner.close(); // the consumer now holds the last reference
                if (i % 100 == 0) {
                    assertThat(PEER.sumF32(pointer, legacy)).isEqualTo(21.0);
                }
                PEER.delete(pointer, legacy);
            }
        }
        for (int i = 0; i < n; i++) {
            assertThat(releases.get(i)).as("deleter calls for export %d", i).isEqualTo(1);
        }
    }

    @ParameterizedTest
    @EnumSource(ManagedTensorKind.class)
    void deletersFromEightNativeThreadsRunExactlyOnceEach(ManagedTensorKind kind) {
        boolean legacy = kind == ManagedTensorKind.LEGACY;
        int n = 10_000;
        AtomicIntegerArray releases = new AtomicIntegerArray(n);
        Set<Thread> releasingThreads = ConcurrentHashMap.newKeySet();
        try (Arena arena = Arena.ofShared()) {
            TensorSpec spec = TensorSpec.of(floats(arena, 6), DLDataType.FLOAT32, 2, 3);
            List<MemorySegment> pointers = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                int index = i;
                ExportOwner owner = ExportOwner.of(() -> {
                    releases.incrementAndGet(index);
                    releasingThreads.add(Thread.currentThread());
                });
                pointers.add(owner.export(spec, ExportOptions.of(kind)).consume());
                owner.close();
            }
            assertThat(DLPackStats.liveExports()).isEqualTo(n);

            PEER.deleteOnThreads(pointers, legacy, 8);
        }
        for (int i = 0; i < n; i++) {
            assertThat(releases.get(i)).as("deleter calls for export %d", i).isEqualTo(1);
        }
        assertThat(releasingThreads).as("deleters ran on native threads, not the test thread")
                .doesNotContain(Thread.currentThread())
                .hasSizeGreaterThan(1);
        assertThat(DLPackStats.liveExports()).as("registry of owners afterwards").isZero();
    }

    @Test
    void closingTheHandleOfAnUnconsumedExportRunsTheDeleter() {
        AtomicInteger released = new AtomicInteger();
        try (Arena arena = Arena.ofShared()) {
            ExportOwner owner = ExportOwner.of(released::incrementAndGet);
            ExportedTensor handle = owner.export(TensorSpec.of(floats(arena, 6), DLDataType.FLOAT32, 6));
            owner.close();
            assertThat(released).hasValue(0);
            handle.close();
            assertThat(released).hasValue(1);
            assertThatThrownBy(handle::close).isInstanceOf(IllegalStateException.class).hasMessageContaining("already closed");
            assertThatThrownBy(handle::consume).isInstanceOf(IllegalStateException.class);
        }
    }

    @Test
    void importingOurOwnExportRoundTripsWithoutCopying() {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment data = floats(arena, 6);
            ExportOwner owner = ExportOwner.of(() -> { });
            try (ImportedTensor tensor = owner.export(TensorSpec.of(data, DLDataType.FLOAT32, 2, 3)).importTensor()) {
                assertThat(tensor.version()).contains(DLPackVersion.CURRENT);
                assertThat(tensor.hostSegment().address()).isEqualTo(data.address());
                assertThat(tensor.layout().shape()).containsExactly(2, 3);
                assertThat(tensor.layout().strides()).containsExactly(3, 1);
            }
            assertThat(DLPackStats.liveExports()).isZero();
            owner.close();
        }
    }

    @Test
    void exportRefusesWhatCannotBeExportedSafely() {
        MemorySegment heap = MemorySegment.ofArray(new float[6]);
        assertThatThrownBy(() -> TensorSpec.of(heap, DLDataType.FLOAT32, 6))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("heap segment");
        try (Arena arena = Arena.ofShared()) {
            MemorySegment data = floats(arena, 6);
            assertThatThrownBy(() -> TensorSpec.of(data, DLDataType.FLOAT32, 7))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("which has 24 bytes");
            assertThatThrownBy(() -> TensorSpec.builder(data, DLDataType.FLOAT32, 6).strides(-1).build())
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("[-20, 4)");
            assertThatThrownBy(() -> TensorSpec.of(data, DLDataType.FLOAT32, 2, -3))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("DLTensor.shape[1] is -3");

            TensorSpec readOnly = TensorSpec.of(data.asReadOnly(), DLDataType.FLOAT32, 6);
            assertThat(DLTensorFlag.READ_ONLY.isSet(readOnly.layout().flags())).isTrue();
            ExportOwner owner = ExportOwner.of(() -> { });
            assertThatThrownBy(() -> owner.export(readOnly, ExportOptions.LEGACY))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("legacy");
            MemorySegment p = owner.export(readOnly).consume();
            assertThat(PEER.field(p, false, 2)).as("flags").isEqualTo(DLTensorFlag.READ_ONLY.mask());
            PEER.delete(p, false);
            owner.close();
            assertThatThrownBy(() -> owner.export(readOnly))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("was closed");
            assertThatThrownBy(owner::close).isInstanceOf(IllegalStateException.class);
        }
    }

    @Test
    void aThrowingReleaseActionIsCountedAndDoesNotReachNativeCode() {
        long before = DLPackStats.releaseCallbackFailures();
        try (Arena arena = Arena.ofShared()) {
            ExportOwner owner = ExportOwner.of(() -> {
                throw new IllegalStateException("release action failed on purpose");
            });
            MemorySegment p = owner.export(TensorSpec.of(floats(arena, 6), DLDataType.FLOAT32, 6)).consume();
            owner.close();
            PEER.deleteOnNewThread(p, false);
        }
        assertThat(DLPackStats.releaseCallbackFailures()).isEqualTo(before + 1);
    }

    @Test
    void aReleaseActionThatBlocksOnNativeThreadsDelaysOnlyThoseThreads() {
        int n = 64;
        AtomicInteger released = new AtomicInteger();
        List<MemorySegment> pointers = new ArrayList<>();
        try (Arena arena = Arena.ofShared()) {
            TensorSpec spec = TensorSpec.of(floats(arena, 6), DLDataType.FLOAT32, 6);
            for (int i = 0; i < n; i++) {
                ExportOwner owner = ExportOwner.of(() -> {
                    try {
                        Thread.sleep(5); // a release that blocks briefly, inside the deleter upcall
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    released.incrementAndGet();
                });
                pointers.add(owner.export(spec).consume());
                owner.close();
            }
            PEER.deleteOnThreads(pointers, false, 8);
        }
        assertThat(released).hasValue(n);
    }

    @ParameterizedTest
    @EnumSource(ManagedTensorKind.class)
    void exportPointerHandsTheStructOnWithoutAHandle(ManagedTensorKind kind) {
        boolean legacy = kind == ManagedTensorKind.LEGACY;
        AtomicInteger released = new AtomicInteger();
        long ownedBefore = DLPackStats.ownedManagedTensors();
        try (Arena arena = Arena.ofShared()) {
            ExportOwner owner = ExportOwner.of(released::incrementAndGet);
            MemorySegment pointer = owner.exportPointer(TensorSpec.of(floats(arena, 6), DLDataType.FLOAT32, 2, 3), ExportOptions.of(kind));
            assertThat(DLPackStats.ownedManagedTensors()).as("no handle owns it").isEqualTo(ownedBefore);
            assertThat(DLPackStats.liveExports()).isEqualTo(1);
            assertThat(PEER.sumF32(pointer, legacy)).isEqualTo(21.0);
            owner.close();
            PEER.delete(pointer, legacy);
        }
        assertThat(released).hasValue(1);
    }
}
