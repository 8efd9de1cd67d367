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
 * read whole by a model: 3 GiB of float32 (805,306,368 elements; the machine has 24 GiB, and the
 * test suites of the modules run one after another), zero but for one value in the last GiB,
 * which ReduceMax must find.
 */
class OrtCApiLargeTensorTest {

    @Test
    void reduceMaxReadsTheLastGiBOfAThreeGiBFloat32Input() {
        long n = (3L << 30) / Float.BYTES;
        long values = OrtApi.LIVE_VALUES.get();
        try (OrtCApiSession session = OrtCApiSession.open(OnnxModelBytes.reduceMax(1), 1); // 1: FLOAT
             OwnedHostTensor x = OwnedHostTensor.allocate(DLDataType.FLOAT32, n); // zeroed
             OwnedHostTensor y = OwnedHostTensor.allocate(DLDataType.FLOAT32)) {
            MemorySegment xElements = HostMemory.elements(x);
            assertThat(xElements.byteSize()).isEqualTo(3L << 30);
            xElements.setAtIndex(ValueLayout.JAVA_FLOAT, n - 3, 201.5f); // only the end of the tensor holds a non-zero value
            try (OrtCApiTensor xt = OrtCApiSession.tensor(x); OrtCApiTensor yt = OrtCApiSession.tensor(y)) {
                session.run(Map.of("x", xt), Map.of("y", yt));
            }
            assertThat(HostMemory.elements(y).get(ValueLayout.JAVA_FLOAT, 0)).isEqualTo(201.5f);
        }
        assertThat(OrtApi.LIVE_VALUES.get()).isEqualTo(values);
    }
}
