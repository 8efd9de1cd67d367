package org.jdlpack.onnxruntime;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Map;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.cpu.internal.HostMemory;
import org.junit.jupiter.api.Test;

/**
 * A tensor over 2 GiB, which ONNX Runtime Java cannot make (a ByteBuffer holds at most 2 GiB - 1),
 * read whole by a model: 2 GiB + 16 bytes of uint8 (the machine has 24 GiB shared by several
 * builds, so one such tensor, not more), zero but for one byte past the 2 GiB mark, whose value
 * ReduceMax must find.
 */
class OrtCApiLargeTensorTest {

    @Test
    void reduceMaxReadsAByteBeyondTwoGiB() {
        long n = (1L << 31) + 16;
        long values = OrtApi.LIVE_VALUES.get();
        try (OrtCApiSession session = OrtCApiSession.open(OnnxModelBytes.reduceMax(2), 1);
             OwnedHostTensor x = OwnedHostTensor.allocate(DLDataType.UINT8, n); // zeroed
             OwnedHostTensor y = OwnedHostTensor.allocate(DLDataType.UINT8)) {
            MemorySegment xBytes = HostMemory.elements(x);
            assertThat(xBytes.byteSize()).isGreaterThan(Integer.MAX_VALUE);
            xBytes.set(ValueLayout.JAVA_BYTE, n - 3, (byte) 201); // only the end of the tensor holds a non-zero value
            try (OrtCApiTensor xt = OrtCApiSession.tensor(x); OrtCApiTensor yt = OrtCApiSession.tensor(y)) {
                session.run(Map.of("x", xt), Map.of("y", yt));
            }
            assertThat(Byte.toUnsignedInt(HostMemory.elements(y).get(ValueLayout.JAVA_BYTE, 0))).isEqualTo(201);
        }
        assertThat(OrtApi.LIVE_VALUES.get()).isEqualTo(values);
    }
}
