package org.jdlpack.abi;

import static java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;

import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.testsupport.CPeer;
import org.jdlpack.testsupport.PeerTensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The codes dlpack's main added after v1.3 without raising the minor version (issue 41 item 10):
 * {@code kDLBcomplex = 18} (a complex number of two bfloat16s, 32 bits), {@code kDLTPU = 19},
 * {@code kDLTPUHost = 20} (pinned host memory of the TPU runtime) and {@code kDLAscend = 21}.
 * Written with raw codes, as a producer sends them; codes after those still pass through (devices)
 * or are refused by name (dtypes), as before.
 */
@ExtendWith(NothingLeftBehind.class)
class CodesAfterDLPack13Test {

    private static final CPeer PEER = CPeer.get();

    @Test
    void bcomplexIsTwoBfloat16sIn32Bits() {
        DLDataType bcomplex = DLDataType.fromRaw((byte) 18, (byte) 32, (short) 1);
        assertThat(bcomplex.code().code()).isEqualTo(18);
        assertThat(bcomplex.code().name()).isEqualTo("BCOMPLEX");
        assertThat(bcomplex).hasToString("bcomplex32");
        assertThat(bcomplex.byteSize(false)).isEqualTo(4);
        assertThat(DLDataType.fromRaw((byte) 18, (byte) 32, (short) 2)).hasToString("bcomplex32x2");
        for (int bits : new int[] {16, 64, 128}) {
            assertThatThrownBy(() -> DLDataType.fromRaw((byte) 18, (byte) bits, (short) 1)).isInstanceOf(InvalidTensorException.class)
                    .hasMessage("DLTensor.dtype.bits is " + bits + ", impossible for type code BCOMPLEX");
        }
        assertThatThrownBy(() -> DLDataType.fromRaw((byte) 19, (byte) 32, (short) 1)).isInstanceOf(InvalidTensorException.class)
                .hasMessageContaining("DLTensor.dtype.code is 19").hasMessageContaining("(0 to 18)");
    }

    @Test
    void aBcomplexTensorOnTpuHostMemoryIsImportedAndReadOnTheHost() {
        // The peer's data is the float32 values 0..5; read as bcomplex32, element i is the low and
        // the high half of float i: real 0 (bits 0x0000), imaginary i as a bfloat16.
        CPeer.Produced produced = PEER.make(PeerTensor.versioned().dtype(18, 32, 1).device(20));
        try (ImportedTensor tensor = ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer())) {
            assertThat(tensor.layout().dtype()).hasToString("bcomplex32");
            assertThat(tensor.device()).hasToString("TPU_HOST:0");
            assertThat(tensor.device().isHostAccessible()).isTrue();
            MemorySegment segment = tensor.hostSegment();
            assertThat(segment.byteSize()).isEqualTo(24);
            assertThat(segment.get(JAVA_SHORT_UNALIGNED, 5 * 4)).as("real part of element 5").isZero();
            assertThat(segment.get(JAVA_SHORT_UNALIGNED, 5 * 4 + 2)).as("imaginary part of element 5: bfloat16 5.0")
                    .isEqualTo((short) 0x40A0);
        }
        assertThat(PEER.deleterCalls(produced.id())).isEqualTo(1);
    }

    @Test
    void tpuAndAscendAreDeviceMemoryAndTpuHostIsHostMemory() {
        assertThat(new DLDevice(19, 0)).hasToString("TPU:0");
        assertThat(new DLDevice(20, 1)).hasToString("TPU_HOST:1");
        assertThat(new DLDevice(21, 2)).hasToString("ASCEND:2");
        assertThat(new DLDevice(19, 0).isHostAccessible()).isFalse();
        assertThat(new DLDevice(20, 0).isHostAccessible()).isTrue();
        assertThat(new DLDevice(21, 0).isHostAccessible()).isFalse();
        assertThat(DLDeviceType.of(20).map(DLDeviceType::code)).contains(20);
        // A device code newer than the tables still passes through, unknown and not host-accessible.
        DLDevice later = new DLDevice(22, 0);
        assertThat(later.type()).isEmpty();
        assertThat(later).hasToString("unknown device type 22:0");
        assertThat(later.isHostAccessible()).isFalse();
    }

    @Test
    void tensorsOnTpuAscendAndLaterDevicesImportButAreNotMappedOnTheHost() {
        for (int deviceType : new int[] {19, 21, 22}) {
            CPeer.Produced produced = PEER.make(PeerTensor.versioned().device(deviceType).dummyData());
            try (ImportedTensor tensor = ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer())) {
                assertThat(tensor.device().deviceType()).isEqualTo(deviceType);
                assertThatThrownBy(tensor::hostSegment).isInstanceOf(UnsupportedDeviceException.class)
                        .hasMessageContaining("no host-accessible memory");
            }
            assertThat(PEER.deleterCalls(produced.id())).isEqualTo(1);
        }
    }
}
