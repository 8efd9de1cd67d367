package org.jdlpack.abi;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import java.util.stream.Stream;

import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.testsupport.CPeer;
import org.jdlpack.testsupport.PeerTensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Tensors produced by the C peer: malformed ones are rejected with the field and value named and
 * the deleter called exactly once; unusual but legal ones are accepted and read correctly.
 */
@ExtendWith(NothingLeftBehind.class)
class ImportValidationTest {

    private static final CPeer PEER = CPeer.get();

    static Stream<Arguments> malformed() {
        return Stream.of(
                Arguments.of("negative ndim", PeerTensor.versioned().ndim(-3), InvalidTensorException.class,
                        "DLTensor.ndim is -3, must not be negative"),
                Arguments.of("ndim above the maximum", PeerTensor.versioned().ndim(100_000), InvalidTensorException.class,
                        "DLTensor.ndim is 100000, above the maximum 256"),
                Arguments.of("NULL shape", PeerTensor.versioned().nullShape(), InvalidTensorException.class,
                        "DLTensor.shape is NULL with ndim 2"),
                Arguments.of("negative dimension", PeerTensor.versioned().shape(2, -3).dummyData(), InvalidTensorException.class,
                        "DLTensor.shape[1] is -3"),
                Arguments.of("element count overflow", PeerTensor.versioned().shape(1L << 32, 1L << 32).strides(0, 0).dummyData(),
                        InvalidTensorException.class, "element count overflows 64 bits"),
                Arguments.of("byte extent overflow", PeerTensor.versioned().shape(1L << 61).strides(1).dummyData(),
                        InvalidTensorException.class, "byte extent overflows 64 bits"),
                Arguments.of("stride reach overflow", PeerTensor.versioned().shape(3, 3).strides(Long.MAX_VALUE / 2, 1).dummyData(),
                        InvalidTensorException.class, "byte extent overflows 64 bits"),
                Arguments.of("lanes 0", PeerTensor.versioned().dtype(2, 32, 0), InvalidTensorException.class,
                        "DLTensor.dtype.lanes is 0"),
                Arguments.of("bits 0", PeerTensor.versioned().dtype(2, 0, 1), InvalidTensorException.class,
                        "DLTensor.dtype.bits is 0"),
                Arguments.of("unknown type code", PeerTensor.versioned().dtype(99, 32, 1), InvalidTensorException.class,
                        "DLTensor.dtype.code is 99"),
                Arguments.of("float with 12 bits", PeerTensor.versioned().dtype(2, 12, 1), InvalidTensorException.class,
                        "DLTensor.dtype.bits is 12, impossible for type code FLOAT"),
                Arguments.of("bool with 3 bits", PeerTensor.versioned().dtype(6, 3, 1), InvalidTensorException.class,
                        "DLTensor.dtype.bits is 3, impossible for type code BOOL"),
                Arguments.of("major version 2", PeerTensor.versioned().version(2, 0).ndim(-1).nullShape(),
                        UnsupportedVersionException.class, "version.major is 2"),
                Arguments.of("major version 0", PeerTensor.versioned().version(0, 9), UnsupportedVersionException.class,
                        "version.major is 0"),
                Arguments.of("NULL data with elements", PeerTensor.versioned().nullData(), InvalidTensorException.class,
                        "DLTensor.data is NULL with 6 elements"),
                Arguments.of("byte_offset beyond 2^63", PeerTensor.versioned().byteOffset(-1L).dummyData(),
                        InvalidTensorException.class, "DLTensor.byte_offset is 18446744073709551615"),
                // Issue 13 item 10: extents no host address can have (2^61-element strides give a
                // 2^61-byte segment) are refused, naming the field, before a segment is made.
                Arguments.of("stride of 2^61 leaves user space", PeerTensor.versioned().shape(2).strides(1L << 61).dtype(1, 8, 1).dummyData(),
                        InvalidTensorException.class, "above the user address space"),
                Arguments.of("2^45 x 2^4 elements leave user space", PeerTensor.versioned().shape(1L << 45, 16).dummyData(),
                        InvalidTensorException.class, "DLTensor.shape [35184372088832, 16] with strides"),
                Arguments.of("byte_offset beyond user space", PeerTensor.versioned().byteOffset(1L << 50).dummyData(),
                        InvalidTensorException.class, "DLTensor.byte_offset 1125899906842624 reaches host address"),
                Arguments.of("legacy negative ndim", PeerTensor.legacy().ndim(-1), InvalidTensorException.class,
                        "DLTensor.ndim is -1"),
                Arguments.of("legacy bool with 3 bits", PeerTensor.legacy().dtype(6, 3, 1), InvalidTensorException.class,
                        "DLTensor.dtype.bits is 3"),
                Arguments.of("legacy NULL data", PeerTensor.legacy().nullData(), InvalidTensorException.class,
                        "DLTensor.data is NULL"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformed")
    void malformedTensorsAreRejectedAndStillDeletedOnce(String name, PeerTensor spec, Class<? extends Throwable> type,
                                                        String message) {
        CPeer.Produced produced = PEER.make(spec);
        ManagedTensorKind kind = spec.isLegacy() ? ManagedTensorKind.LEGACY : ManagedTensorKind.VERSIONED;

        assertThatThrownBy(() -> ImportedTensor.of(kind, produced.pointer())).isInstanceOf(type).hasMessageContaining(message);

        assertThat(PEER.deleterCalls(produced.id())).as("deleter calls after rejecting: " + name).isEqualTo(1);
        assertThat(DLPackStats.ownedManagedTensors()).as("nothing is still owned after the rejection").isZero();
    }

    /** Imports, checks, closes, and verifies the deleter ran once. */
    private static float[] importFloats(PeerTensor spec, java.util.function.Consumer<ImportedTensor> check) {
        CPeer.Produced produced = PEER.make(spec);
        float[] values;
        try (ImportedTensor tensor = spec.isLegacy()
                ? ImportedTensor.of(ManagedTensorKind.LEGACY, produced.pointer())
                : ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer())) {
            check.accept(tensor);
            values = readLogical(tensor);
            assertThat(PEER.deleterCalls(produced.id())).isZero();
        }
        assertThat(PEER.deleterCalls(produced.id())).isEqualTo(1);
        return values;
    }

    /** The float32 elements in logical row-major order, through the bounded host segment. */
    private static float[] readLogical(ImportedTensor tensor) {
        MemorySegment segment = tensor.hostSegment();
        long origin = -tensor.layout().extent().startByte();
        long[] shape = tensor.layout().shape();
        long[] strides = tensor.layout().strides();
        float[] values = new float[(int) tensor.layout().elementCount()];
        for (int linear = 0; linear < values.length; linear++) {
            long rest = linear;
            long offset = 0;
            for (int d = shape.length - 1; d >= 0; d--) {
                offset += (rest % shape[d]) * strides[d];
                rest /= shape[d];
            }
            values[linear] = segment.get(JAVA_FLOAT_UNALIGNED, origin + offset * 4);
        }
        return values;
    }

    @Test
    void nullStridesReadAsCompactRowMajor() {
        for (PeerTensor spec : new PeerTensor[] {PeerTensor.legacy().strides((long[]) null),
                PeerTensor.versioned().strides((long[]) null)}) {
            float[] values = importFloats(spec, t -> {
                assertThat(t.stridesWereNull()).isTrue();
                assertThat(t.layout().strides()).containsExactly(3, 1);
                assertThat(t.layout().isCompactRowMajor()).isTrue();
            });
            assertThat(values).containsExactly(0, 1, 2, 3, 4, 5);
        }
    }

    @Test
    void misalignedByteOffsetIsAccepted() {
        float[] values = importFloats(PeerTensor.versioned().byteOffset(3), t -> {
            assertThat(t.layout().byteOffset()).isEqualTo(3);
            assertThat((t.dataAddress() + t.layout().byteOffset()) % 4).isNotZero();
        });
        assertThat(values).containsExactly(0, 1, 2, 3, 4, 5);
    }

    @Test
    void zeroSizeTensorWithNullDataIsAccepted() {
        importFloats(PeerTensor.versioned().shape(0, 3).nullData(), t -> {
            assertThat(t.layout().elementCount()).isZero();
            assertThat(t.dataAddress()).isZero();
            assertThat(t.hostSegment().byteSize()).isZero();
        });
    }

    @Test
    void unknownFlagBitsAreIgnoredAndANewerMinorAccepted() {
        long unknown = 1L << 40 | 1L << 63;
        importFloats(PeerTensor.versioned().version(1, 99).flags(unknown), t -> {
            assertThat(t.layout().flags()).isEqualTo(unknown);
            assertThat(t.layout().isReadOnly()).isFalse();
            assertThat(t.version()).contains(new DLPackVersion(1, 99));
        });
    }

    @Test
    void aLegacyStructHasNoVersionAndKeepsItsKindThroughAMove() {
        // The version is kept as its minor only; whether there is one comes from the owner's kind.
        CPeer.Produced produced = PEER.make(PeerTensor.legacy());
        ImportedTensor legacy = ImportedTensor.of(ManagedTensorKind.LEGACY, produced.pointer());
        assertThat(legacy.version()).isEmpty();
        try (ImportedTensor moved = legacy.moveTo(ImportLifetime.SHARED)) {
            assertThat(moved.kind()).isEqualTo(ManagedTensorKind.LEGACY);
            assertThat(moved.version()).isEmpty();
            assertThat(legacy.kind()).isEqualTo(ManagedTensorKind.LEGACY);
        }
        assertThat(PEER.deleterCalls(produced.id())).isEqualTo(1);
    }

    @Test
    void aNullDeleterIsNeverCalled() {
        CPeer.Produced produced = PEER.make(PeerTensor.versioned().nullDeleter());
        ImportedTensor tensor = ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer());
        tensor.close();
        assertThat(PEER.deleterCalls(produced.id())).isZero();

        CPeer.Produced rejected = PEER.make(PeerTensor.versioned().nullDeleter().ndim(-1));
        assertThatThrownBy(() -> ImportedTensor.of(ManagedTensorKind.VERSIONED, rejected.pointer())).isInstanceOf(InvalidTensorException.class);
        assertThat(PEER.deleterCalls(rejected.id())).isZero();
    }

    @Test
    void unusualButLegalLayoutsReadTheRightElements() {
        // 0-d: one element, no shape.
        assertThat(importFloats(PeerTensor.versioned().shape(), t -> assertThat(t.layout().ndim()).isZero())).containsExactly(0);
        // Negative stride: element i is at memory position 2 - i.
        assertThat(importFloats(PeerTensor.versioned().shape(3).strides(-1),
                t -> assertThat(t.layout().extent()).isEqualTo(new TensorExtent(-8, 12)))).containsExactly(2, 1, 0);
        // Zero stride (broadcast): four views of one element.
        assertThat(importFloats(PeerTensor.versioned().shape(4).strides(0),
                t -> assertThat(t.layout().extent()).isEqualTo(new TensorExtent(0, 4)))).containsExactly(0, 0, 0, 0);
        // Every other element of a row, with a row stride of 6: positions 0, 2, 4 and 6, 8, 10.
        assertThat(importFloats(PeerTensor.versioned().shape(2, 3).strides(6, 2),
                t -> assertThat(t.layout().isCompactRowMajor()).isFalse())).containsExactly(0, 2, 4, 6, 8, 10);
        // Transposed 3x2 view of a 2x3 matrix.
        assertThat(importFloats(PeerTensor.legacy().shape(3, 2).strides(1, 3), t -> { }))
                .containsExactly(0, 3, 1, 4, 2, 5);
    }

    @Test
    void readOnlyTensorsGiveReadOnlySegments() {
        importFloats(PeerTensor.versioned().flags(DLTensorFlag.READ_ONLY.mask()), t -> {
            assertThat(t.layout().isReadOnly()).isTrue();
            MemorySegment segment = t.hostSegment();
            assertThat(segment.isReadOnly()).isTrue();
            assertThatThrownBy(() -> segment.set(JAVA_FLOAT_UNALIGNED, 0, 1f)).isInstanceOf(RuntimeException.class);
        });
        importFloats(PeerTensor.legacy(), t -> assertThat(t.hostSegment().isReadOnly()).isFalse());
    }

    @Test
    void deviceMemoryAndUnknownDevicesAreDescribedButNotMappedOnTheHost() {
        for (int deviceType : new int[] {2, 4, 99}) {
            CPeer.Produced produced = PEER.make(PeerTensor.versioned().device(deviceType).dummyData());
            try (ImportedTensor tensor = ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer())) {
                assertThat(tensor.device().deviceType()).isEqualTo(deviceType);
                assertThatThrownBy(tensor::hostSegment).isInstanceOf(UnsupportedDeviceException.class)
                        .hasMessageContaining("no host-accessible memory");
            }
            assertThat(PEER.deleterCalls(produced.id())).isEqualTo(1);
        }
    }

    @Test
    void theCleanupRunsOnTheClosingThreadAndSegmentsDieWithTheTensor() {
        CPeer.Produced produced = PEER.make(PeerTensor.versioned());
        ImportedTensor tensor = ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer());
        MemorySegment segment = tensor.hostSegment();
        assertThat(segment.byteSize()).isEqualTo(24);
        tensor.close();
        assertThat(PEER.deleterThread(produced.id())).isEqualTo(PEER.currentThread());
        assertThatThrownBy(() -> segment.get(JAVA_FLOAT_UNALIGNED, 0)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(tensor::hostSegment).isInstanceOf(IllegalStateException.class);
    }
}
