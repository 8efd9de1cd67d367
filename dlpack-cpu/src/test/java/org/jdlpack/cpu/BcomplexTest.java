package org.jdlpack.cpu;

import static java.lang.foreign.ValueLayout.JAVA_SHORT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.testsupport.CPeer;
import org.jdlpack.testsupport.PeerTensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code kDLBcomplex} (code 18, added on dlpack's main after v1.3): a complex number of two
 * bfloat16s, real part first, laid out as {@code kDLComplex} is. Host views read and write it as
 * complex values, as they do complex64 and complex128. The dtype is built from its raw code, as
 * a producer sends it.
 */
@ExtendWith(NothingLeftBehind.class)
class BcomplexTest {

    private static final DLDataType BCOMPLEX32 = DLDataType.fromRaw((byte) 18, (byte) 32, (short) 1);

    @Test
    void realAndImaginaryPartsAreBfloat16sRealFirst() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment memory = arena.allocate(JAVA_SHORT, 6);
            short[] parts = {0x3FC0, (short) 0xC000, 0x0000, 0x3F80, (short) 0x7F80, (short) 0xFF80}; // 1.5-2i, 0+1i, inf-inf i
            MemorySegment.copy(parts, 0, memory, JAVA_SHORT, 0, parts.length);
            HostTensorView view = HostTensorView.of(memory, BCOMPLEX32, 3);
            assertThat(view.getDouble(0, 0)).isEqualTo(1.5);
            assertThat(view.getImaginary(0, 0)).isEqualTo(-2.0);
            assertThat(view.getDouble(1, 0)).isZero();
            assertThat(view.getImaginary(1, 0)).isEqualTo(1.0);
            assertThat(view.getDouble(2, 0)).isEqualTo(Double.POSITIVE_INFINITY);
            assertThat(view.getImaginary(2, 0)).isEqualTo(Double.NEGATIVE_INFINITY);

            view.setDouble(1, 0, 3.0);
            view.setImaginary(1, 0, 1.00390625); // 1 + 2^-8: a tie between bfloat16 1.0 and 1.0078125, to even 1.0
            assertThat(memory.getAtIndex(JAVA_SHORT, 2)).isEqualTo((short) 0x4040);
            assertThat(memory.getAtIndex(JAVA_SHORT, 3)).isEqualTo((short) 0x3F80);
            assertThatThrownBy(() -> view.getLong(0)).isInstanceOf(UnsupportedOperationException.class);
        }
    }

    @Test
    void aBcomplexTensorFromCIsReadAsComplexValues() {
        CPeer peer = CPeer.get();
        // The peer fills float32 0..5 by position: element i is float i's low half (real part,
        // 0 for these) and high half (imaginary part, i as a bfloat16).
        CPeer.Produced produced = peer.make(PeerTensor.versioned().dtype(18, 32, 1));
        try (ImportedTensor tensor = ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer())) {
            HostTensorView view = HostTensorView.of(tensor);
            for (int i = 0; i < 6; i++) {
                assertThat(view.getDouble(i, 0)).as("real part of %d", i).isZero();
                assertThat(view.getImaginary(i, 0)).as("imaginary part of %d", i).isEqualTo(i);
            }
        }
        assertThat(peer.deleterCalls(produced.id())).isEqualTo(1);
    }
}
