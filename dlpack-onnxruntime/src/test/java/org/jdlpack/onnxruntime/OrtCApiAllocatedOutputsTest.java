package org.jdlpack.onnxruntime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Map;
import java.util.Set;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.ExportedTensor;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.cpu.internal.HostMemory;
import org.jdlpack.testsupport.CPeer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Outputs whose shape the model decides, through the C route: ONNX Runtime allocates them, and
 * each comes back as an OwnedHostTensor over ONNX Runtime's own OrtValue (no copy) whose last
 * reference releases the value exactly once, on whichever thread drops it. NonZero's output
 * [1, count] is known only after the run.
 */
@ExtendWith({NothingLeftBehind.class, NoOrtObjectLeft.class})
class OrtCApiAllocatedOutputsTest {

    private static final int FLOAT = 1;
    private static final int INT64 = 7;

    private long released;

    @BeforeEach
    void counts() {
        released = OrtApi.VALUES_RELEASED.get();
    }

    @Test
    void aDataDependentOutputIsOnnxRuntimesValueExportedWithoutACopyAndReleasedOnceByANativeThreadsDeleter() {
        CPeer peer = CPeer.get();
        try (OrtCApiSession session = OrtCApiSession.open(OnnxModelBytes.nonZero(FLOAT), 1);
             OwnedHostTensor x = OwnedHostTensor.copyOf(new float[] {0, 1, 0, 2, 3}, 5);
             OrtCApiTensor xt = OrtCApiSession.tensor(x)) {
            long withInput = OrtApi.LIVE_VALUES.get();
            AllocatedOutputs outputs = session.run(Map.of("x", xt), Map.of(), Set.of("y"));
            OwnedHostTensor y = outputs.get("y");
            assertThat(y.layout().dtype()).isEqualTo(DLDataType.INT64);
            assertThat(y.layout().shape()).containsExactly(1, 3);
            assertThat(y.host().segment().toArray(ValueLayout.JAVA_LONG)).containsExactly(1, 3, 4);
            assertThat(y.ownsMemory()).as("the value's memory is the tensor's: only its release frees it").isTrue();
            assertThat(OrtApi.LIVE_VALUES.get()).as("ONNX Runtime's value is the tensor's memory, held, not copied and released")
                    .isEqualTo(withInput + 1);

            ExportedTensor exported = y.export();
            outputs.close(); // Java's reference: the export keeps the value
            assertThat(OrtApi.LIVE_VALUES.get()).isEqualTo(withInput + 1);
            assertThat(OrtApi.VALUES_RELEASED.get()).isEqualTo(released);

            peer.deleteOnNewThread(exported.consume(), false); // the consumer's deleter, on a thread of its own
            assertThat(OrtApi.LIVE_VALUES.get()).as("released by the deleter").isEqualTo(withInput);
            assertThat(OrtApi.VALUES_RELEASED.get()).as("exactly once").isEqualTo(released + 1);
            outputs.close(); // again: nothing more
            assertThat(OrtApi.VALUES_RELEASED.get()).isEqualTo(released + 1);
        }
    }

    @Test
    void eachRunAllocatesAfreshSoThatAnEarlierOutputKeepsItsValues() {
        try (OrtCApiSession session = OrtCApiSession.open(OnnxModelBytes.nonZero(FLOAT), 1);
             OwnedHostTensor x = OwnedHostTensor.copyOf(new float[] {5, 0, 0, 7}, 4);
             OrtCApiTensor xt = OrtCApiSession.tensor(x);
             OrtCApiRun run = session.prepare(Map.of("x", xt), Map.of(), Set.of("y"));
             AllocatedOutputs first = run.run()) {
            HostMemory.elements(x).setAtIndex(ValueLayout.JAVA_FLOAT, 1, 9); // the next run reads the memory as it is then
            try (AllocatedOutputs second = run.run()) {
                assertThat(second.get("y").host().segment().toArray(ValueLayout.JAVA_LONG)).containsExactly(0, 1, 3);
            }
            assertThat(first.get("y").host().segment().toArray(ValueLayout.JAVA_LONG)).containsExactly(0, 3);
            HostMemory.elements(x).fill((byte) 0);
            try (AllocatedOutputs none = run.run()) {
                assertThat(none.get("y").layout().shape()).as("no element is non-zero").containsExactly(1, 0);
                try (org.jdlpack.abi.ImportedTensor empty = none.get("y").export().importTensor()) {
                    assertThat(empty.layout().elementCount()).as("exported as any tensor").isZero();
                }
            }
        }
    }

    @ParameterizedTest
    @MethodSource("org.jdlpack.onnxruntime.OrtCApiSessionTest#types")
    void everyTypeComesBackAllocatedWithItsValues(DLDataType dtype, int onnxType) {
        int n = 24;
        try (OrtCApiSession session = OrtCApiSession.open(OnnxModelBytes.identity(onnxType), 1);
             OwnedHostTensor x = OwnedHostTensor.allocate(dtype, n);
             OrtCApiTensor xt = OrtCApiSession.tensor(x)) {
            byte[] bytes = OrtCApiSessionTest.fill(x, dtype);
            try (AllocatedOutputs outputs = session.run(Map.of("x", xt), Map.of(), Set.of("y"))) {
                OwnedHostTensor y = outputs.get("y");
                assertThat(y.layout().dtype()).isEqualTo(dtype);
                assertThat(y.layout().shape()).containsExactly(n);
                assertThat(HostMemory.elements(y).address()).as("ONNX Runtime's memory, not the input's").isNotEqualTo(
                        HostMemory.elements(x).address());
                assertThat(HostMemory.elements(y).toArray(ValueLayout.JAVA_BYTE)).isEqualTo(bytes);
            }
        }
    }

    @Test
    void anAllocatedOutputIsTheNextRunsInputInPlace() {
        try (OrtCApiSession nonZero = OrtCApiSession.open(OnnxModelBytes.nonZero(FLOAT), 1);
             OrtCApiSession negate = OrtCApiSession.open(OnnxModelBytes.unaryAnyShape("Neg", INT64), 1);
             OwnedHostTensor x = OwnedHostTensor.copyOf(new float[] {0, 4, 4}, 3);
             OrtCApiTensor xt = OrtCApiSession.tensor(x);
             AllocatedOutputs indices = nonZero.run(Map.of("x", xt), Map.of(), Set.of("y"));
             OrtCApiTensor in = OrtCApiSession.tensor(indices.get("y")); // accepted in place: the tensor owns ONNX Runtime's memory
             AllocatedOutputs negated = negate.run(Map.of("x", in), Map.of(), Set.of("y"))) {
            assertThat(in.layout().shape()).containsExactly(1, 2);
            assertThat(negated.get("y").host().segment().toArray(ValueLayout.JAVA_LONG)).containsExactly(-1, -2);
        }
    }

    @Test
    void anOutputOfATypeDLPackLacksIsRefusedNamingItAndItsValueReleased() {
        try (OrtCApiSession session = OrtCApiSession.open(OnnxModelBytes.cast(FLOAT, 8), 1); // float to string
             OwnedHostTensor x = OwnedHostTensor.copyOf(new float[] {1, 2}, 2);
             OrtCApiTensor xt = OrtCApiSession.tensor(x)) {
            long before = OrtApi.LIVE_VALUES.get();
            assertThatThrownBy(() -> session.run(Map.of("x", xt), Map.of(), Set.of("y")))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("the output \"y\"").hasMessageContaining("string (8)");
            assertThat(OrtApi.LIVE_VALUES.get()).isEqualTo(before);
        }
    }

    @Test
    void namesAreCheckedBeforeTheRun() {
        try (OrtCApiSession session = OrtCApiSession.open(OnnxModelBytes.identity(FLOAT), 1);
             OwnedHostTensor x = OwnedHostTensor.allocate(DLDataType.FLOAT32, 2);
             OrtCApiTensor xt = OrtCApiSession.tensor(x)) {
            assertThatThrownBy(() -> session.prepare(Map.of("x", xt), Map.of(), Set.of("z"))).hasMessageContaining("no output \"z\"");
            assertThatThrownBy(() -> session.prepare(Map.of("x", xt), Map.of("y", xt), Set.of("y")))
                    .hasMessageContaining("both pinned and allocated");
            assertThatThrownBy(() -> session.prepare(Map.of("x", xt), Map.of(), Set.of())).hasMessageContaining("at least one output");
        }
    }

    @Test
    void aTensorOverOnnxRuntimesMemoryRefusesRawAccessAfterItsRelease() {
        try (OrtCApiSession session = OrtCApiSession.open(OnnxModelBytes.nonZero(FLOAT), 1);
             OwnedHostTensor x = OwnedHostTensor.copyOf(new float[] {1}, 1);
             OrtCApiTensor xt = OrtCApiSession.tensor(x)) {
            MemorySegment raw;
            try (AllocatedOutputs outputs = session.run(Map.of("x", xt), Map.of(), Set.of("y"))) {
                raw = outputs.get("y").spec().data();
                assertThat(raw.get(ValueLayout.JAVA_LONG, 0)).isZero();
            }
            MemorySegment freed = raw;
            assertThatThrownBy(() -> freed.get(ValueLayout.JAVA_LONG, 0)).as("the raw segment ends at the release")
                    .isInstanceOf(IllegalStateException.class);
        }
    }
}
