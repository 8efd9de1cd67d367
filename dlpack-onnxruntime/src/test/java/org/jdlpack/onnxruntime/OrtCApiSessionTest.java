package org.jdlpack.onnxruntime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.Stream;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLDataTypeCode;
import org.jdlpack.abi.DLDevice;
import org.jdlpack.abi.DLDeviceType;
import org.jdlpack.abi.DLTensorFlag;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.UnsupportedDeviceException;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.cpu.internal.HostMemory;
import org.jdlpack.testsupport.CPeer;
import org.jdlpack.testsupport.PeerTensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The C route: the bound C API, runs of every element type, failures as exceptions, and every native object released once. */
@ExtendWith(NoOrtObjectLeft.class)
class OrtCApiSessionTest {

    @Test
    void bindsTheLibraryOnnxRuntimeJavaLoadedAtItsVersion() {
        assertThat(OrtApi.BOUND.failure()).isNull();
        assertThat(OrtApi.BOUND.version()).isEqualTo(ai.onnxruntime.OrtEnvironment.getEnvironment().getVersion());
        assertThat(OrtApi.BOUND.library()).contains("libonnxruntime.so");
    }

    static Stream<Arguments> types() {
        return Stream.of(
                Arguments.of(DLDataType.FLOAT32, 1), Arguments.of(DLDataType.UINT8, 2), Arguments.of(DLDataType.INT8, 3),
                Arguments.of(DLDataType.UINT16, 4), Arguments.of(DLDataType.INT16, 5), Arguments.of(DLDataType.INT32, 6),
                Arguments.of(DLDataType.INT64, 7), Arguments.of(DLDataType.BOOL, 9), Arguments.of(DLDataType.FLOAT16, 10),
                Arguments.of(DLDataType.FLOAT64, 11), Arguments.of(DLDataType.UINT32, 12), Arguments.of(DLDataType.UINT64, 13),
                Arguments.of(DLDataType.BFLOAT16, 16),
                Arguments.of(new DLDataType(DLDataTypeCode.FLOAT8_E4M3FN, 8, 1), 17),
                Arguments.of(new DLDataType(DLDataTypeCode.FLOAT8_E4M3FNUZ, 8, 1), 18),
                Arguments.of(new DLDataType(DLDataTypeCode.FLOAT8_E5M2, 8, 1), 19),
                Arguments.of(new DLDataType(DLDataTypeCode.FLOAT8_E5M2FNUZ, 8, 1), 20));
    }

    @ParameterizedTest
    @MethodSource("types")
    void identityOfEveryTypeReadsTheInputAndWritesThePinnedOutputInPlace(DLDataType dtype, int onnxType) {
        assertThat(OnnxElementTypes.of(dtype)).isEqualTo(onnxType);
        assertThat(OnnxElementTypes.dtype(onnxType)).as("and back").isEqualTo(dtype);
        int n = 24;
        try (OrtCApiSession session = OrtCApiSession.open(OnnxModelBytes.identity(onnxType), 1);
             OwnedHostTensor x = OwnedHostTensor.allocate(dtype, n);
             OwnedHostTensor y = OwnedHostTensor.allocate(dtype, n)) {
            byte[] xBytes = fill(x, dtype);
            try (OrtCApiTensor xt = OrtCApiSession.tensor(x); OrtCApiTensor yt = OrtCApiSession.tensor(y)) {
                session.run(Map.of("x", xt), Map.of("y", yt));
            }
            assertThat(HostMemory.elements(y).toArray(ValueLayout.JAVA_BYTE)).isEqualTo(xBytes);
        }
    }

    /**
     * Fills {@code tensor} with valid values of its type, different byte by byte: bools 0/1, the
     * rest small bytes (no float8 NaN patterns that ONNX Runtime could canonicalize). {@return the bytes}
     */
    static byte[] fill(OwnedHostTensor tensor, DLDataType dtype) {
        MemorySegment bytes = HostMemory.elements(tensor);
        for (long i = 0; i < bytes.byteSize(); i++) {
            bytes.set(ValueLayout.JAVA_BYTE, i, (byte) (dtype.code() == DLDataTypeCode.BOOL ? i % 2 : (i * 7 + 1) % 64));
        }
        return bytes.toArray(ValueLayout.JAVA_BYTE);
    }

    @Test
    void aCudaTensorIsRefusedByNameBeforeOnnxRuntimeSeesItAndTheImportIsLeftToItsOwner() {
        List<String> providers = OrtApi.availableProviders();
        assertThat(providers).contains("CPUExecutionProvider");
        assumeFalse(providers.contains("CUDAExecutionProvider"), "this ONNX Runtime has its CUDA provider: " + providers);
        CPeer peer = CPeer.get();
        CPeer.Produced produced = peer.make(PeerTensor.versioned().shape(4).device(2).dummyData()); // kDLCUDA, never read
        long values = OrtApi.LIVE_VALUES.get();
        try (ImportedTensor onGpu = ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer())) {
            assertThatThrownBy(() -> OrtCApiSession.tensor(onGpu))
                    .isInstanceOfSatisfying(UnsupportedDeviceException.class,
                            e -> assertThat(e.device()).isEqualTo(DLDevice.of(DLDeviceType.CUDA, 0)))
                    .hasMessageContaining("CUDA device memory (kDLCUDA, CUDA:0), refused before ONNX Runtime saw it")
                    .hasMessageContaining("no CUDA execution provider (GetAvailableProviders: " + providers + ")")
                    .hasMessageContaining("com.microsoft.onnxruntime:onnxruntime_gpu")
                    .hasMessageContaining("copy it to host memory first");
            assertThat(OrtApi.LIVE_VALUES.get()).as("no OrtValue was made over it").isEqualTo(values);
            assertThat(onGpu.isAlive()).as("left to its owner").isTrue();
        }
        assertThat(peer.deleterCalls(produced.id())).isEqualTo(1);
        CPeer.Produced rocm = peer.make(PeerTensor.versioned().shape(4).device(10).dummyData());
        try (ImportedTensor onRocm = ImportedTensor.of(ManagedTensorKind.VERSIONED, rocm.pointer())) {
            assertThatThrownBy(() -> OrtCApiSession.tensor(onRocm)).isInstanceOf(UnsupportedDeviceException.class)
                    .hasMessageContaining("is on ROCM:0 (DLDevice.device_type 10), which ONNX Runtime's CPU sessions cannot read");
        }
    }

    @Test
    void anImportedHostTensorIsReadInPlaceAndItsDeleterRunsOnceAfterTheValue() {
        CPeer peer = CPeer.get();
        CPeer.Produced produced = peer.make(PeerTensor.versioned().shape(4)); // float32 [4], the peer's memory
        peer.fillF32(produced.pointer(), false, 1, 1);
        try (OrtCApiSession session = OrtCApiSession.open(OnnxModelBytes.identity(1), 1);
             OwnedHostTensor y = OwnedHostTensor.allocate(DLDataType.FLOAT32, 4);
             OrtCApiTensor yt = OrtCApiSession.tensor(y)) {
            ImportedTensor imported = ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer());
            try (OrtCApiTensor xt = OrtCApiSession.tensor(imported)) {
                imported.close(); // moved into the value: does nothing
                session.run(Map.of("x", xt), Map.of("y", yt));
                assertThat(peer.deleterCalls(produced.id())).as("the value holds the import").isZero();
            }
            assertThat(peer.deleterCalls(produced.id())).isEqualTo(1);
            assertThat(HostMemory.elements(y).toArray(ValueLayout.JAVA_FLOAT)).containsExactly(1, 2, 3, 4);
        }
    }

    @Test
    void aReadOnlyTensorIsNoOutput() {
        CPeer peer = CPeer.get();
        CPeer.Produced produced = peer.make(PeerTensor.versioned().shape(4).flags(DLTensorFlag.READ_ONLY.mask()));
        try (OrtCApiSession session = OrtCApiSession.open(OnnxModelBytes.identity(1), 1);
             OwnedHostTensor x = OwnedHostTensor.allocate(DLDataType.FLOAT32, 4);
             OrtCApiTensor xt = OrtCApiSession.tensor(x);
             OrtCApiTensor readOnly = OrtCApiSession.tensor(ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer()))) {
            assertThatThrownBy(() -> session.prepare(Map.of("x", xt), Map.of("y", readOnly)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("is READ_ONLY and cannot be the output \"y\"");
            assertThatThrownBy(() -> session.bind(Map.of("x", xt), Map.of("y", readOnly))).hasMessageContaining("READ_ONLY");
            session.run(Map.of("x", readOnly), Map.of("y", xt)); // an input it may be
        }
        assertThat(peer.deleterCalls(produced.id())).isEqualTo(1);
    }

    @Test
    void theValueIsOverTheTensorsOwnMemoryWithItsTypeAndShape() {
        try (OwnedHostTensor x = OwnedHostTensor.allocate(DLDataType.UINT64, 3, 5);
             OrtCApiTensor xt = OrtCApiSession.tensor(x);
             java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ValueLayout.JAVA_LONG);
            assertThat(OrtApi.tensorMutableData(xt.value(), out)).isEqualTo(HostMemory.elements(x).address()); // zero copy
            OrtApi.TypeAndShape typeAndShape = OrtApi.typeAndShape(xt.value(), out);
            assertThat(typeAndShape.elementType()).isEqualTo(13); // ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64
            assertThat(typeAndShape.shape()).containsExactly(3, 5);
        }
    }

    @Test
    void tinyFromItsPathMatchesTheModelByHandOverReusedTensors() throws URISyntaxException {
        Path tiny = Path.of(OrtCApiSessionTest.class.getResource("tiny.onnx").toURI());
        float[] x = {1, 2, 3, 4, 5, 6, 7, 8};
        try (OrtCApiSession session = OrtCApiSession.open(tiny, 1);
             OwnedHostTensor xo = OwnedHostTensor.copyOf(x, 2, 4);
             OwnedHostTensor yo = OwnedHostTensor.allocate(DLDataType.FLOAT32, 2, 3);
             OrtCApiTensor xt = OrtCApiSession.tensor(xo);
             OrtCApiTensor yt = OrtCApiSession.tensor(yo);
             OrtCApiRun run = session.prepare(Map.of("x", xt), Map.of("y", yt))) {
            assertThat(session.inputNames()).containsExactly("x");
            assertThat(session.outputNames()).containsExactly("y");
            for (int round = 0; round < 3; round++) {
                HostMemory.elements(yo).fill((byte) 0);
                HostMemory.elements(xo).setAtIndex(ValueLayout.JAVA_FLOAT, 0, round); // the run reads the memory as it is now
                x[0] = round;
                run.run();
                assertThat(HostMemory.elements(yo).toArray(ValueLayout.JAVA_FLOAT)).containsExactly(Models.tiny(x));
            }
        }
    }

    @Test
    void theTensorHoldsItsMemoryAfterTheOwnedHostTensorIsClosed() {
        float[] x = {1, -2, 3, 4};
        try (OrtCApiSession session = OrtCApiSession.open(OnnxModelBytes.identity(1), 1)) {
            OwnedHostTensor xo = OwnedHostTensor.copyOf(x, 4);
            OwnedHostTensor yo = OwnedHostTensor.allocate(DLDataType.FLOAT32, 4);
            MemorySegment yElements = HostMemory.elements(yo);
            try (OrtCApiTensor xt = OrtCApiSession.tensor(xo); OrtCApiTensor yt = OrtCApiSession.tensor(yo)) {
                xo.close(); // the Tensor's hold keeps both memories alive
                yo.close();
                session.run(Map.of("x", xt), Map.of("y", yt));
                assertThat(yElements.toArray(ValueLayout.JAVA_FLOAT)).containsExactly(x);
            }
        }
    }

    @Test
    void aBadModelIsAnOrtStatusExceptionNamingTheCallAndTheStatusIsReleased() {
        long released = OrtApi.STATUSES_RELEASED.get();
        assertThatThrownBy(() -> OrtCApiSession.open(new byte[] {1, 2, 3, 4}, 1))
                .isInstanceOfSatisfying(OrtStatusException.class, e -> {
                    assertThat(e.call()).isEqualTo("CreateSessionFromArray");
                    assertThat(e.codeName()).startsWith("ORT_");
                    assertThat(e.getMessage()).contains("CreateSessionFromArray failed");
                });
        assertThat(OrtApi.STATUSES_RELEASED.get()).isEqualTo(released + 1);
        assertThatThrownBy(() -> OrtCApiSession.open(Path.of("/nonexistent/model.onnx"), 1))
                .isInstanceOfSatisfying(OrtStatusException.class, e -> assertThat(e.call()).isEqualTo("CreateSession"));
    }

    @Test
    void aPinnedOutputOfAnotherShapeFailsTheRunAndReleasesEverything() {
        try (OrtCApiSession session = OrtCApiSession.open(OnnxModelBytes.identity(12), 1);
             OwnedHostTensor x = OwnedHostTensor.allocate(DLDataType.UINT32, 4);
             OwnedHostTensor y = OwnedHostTensor.allocate(DLDataType.UINT32, 5);
             OrtCApiTensor xt = OrtCApiSession.tensor(x);
             OrtCApiTensor yt = OrtCApiSession.tensor(y)) {
            assertThatThrownBy(() -> session.run(Map.of("x", xt), Map.of("y", yt)))
                    .isInstanceOfSatisfying(OrtStatusException.class, e -> assertThat(e.call()).isEqualTo("Run"));
        }
    }

    @Test
    void anInputOfTheWrongElementTypeFailsTheRun() {
        try (OrtCApiSession session = OrtCApiSession.open(OnnxModelBytes.identity(12), 1);
             OwnedHostTensor x = OwnedHostTensor.allocate(DLDataType.INT32, 4);
             OwnedHostTensor y = OwnedHostTensor.allocate(DLDataType.UINT32, 4);
             OrtCApiTensor xt = OrtCApiSession.tensor(x);
             OrtCApiTensor yt = OrtCApiSession.tensor(y)) {
            assertThatThrownBy(() -> session.run(Map.of("x", xt), Map.of("y", yt)))
                    .isInstanceOf(OrtStatusException.class).hasMessageContaining("Run");
        }
    }

    @Test
    void refusalsNameWhatIsWrong() {
        try (OrtCApiSession session = OrtCApiSession.open(OnnxModelBytes.identity(1), 1);
             OwnedHostTensor complex = OwnedHostTensor.allocate(DLDataType.COMPLEX64, 2);
             OwnedHostTensor x = OwnedHostTensor.allocate(DLDataType.FLOAT32, 2);
             OrtCApiTensor xt = OrtCApiSession.tensor(x)) {
            assertThatThrownBy(() -> OrtCApiSession.tensor(complex)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("complex");
            assertThatThrownBy(() -> session.run(Map.of("z", xt), Map.of("y", xt))).hasMessageContaining("no input \"z\"");
            assertThatThrownBy(() -> session.run(Map.of("x", xt), Map.of("w", xt))).hasMessageContaining("no output \"w\"");
            assertThatThrownBy(() -> session.run(Map.of(), Map.of("y", xt))).hasMessageContaining("needs the inputs [x]");
            assertThatThrownBy(() -> OrtCApiSession.open(new byte[0], -1)).hasMessageContaining("intraOpThreads is -1");
        }
    }

    @Test
    void closedObjectsAreRefusedBeforeOrtSeesThem() throws Exception {
        OrtCApiSession session = OrtCApiSession.open(OnnxModelBytes.identity(1), 1);
        try (OwnedHostTensor x = OwnedHostTensor.allocate(DLDataType.FLOAT32, 2);
             OrtCApiTensor yt = OrtCApiSession.tensor(x)) {
            OrtCApiTensor xt = OrtCApiSession.tensor(x);
            try (OrtCApiRun run = session.prepare(Map.of("x", xt), Map.of("y", yt))) {
                xt.close();
                xt.close(); // a second close does nothing
                assertThatThrownBy(run::run).isInstanceOf(IllegalStateException.class).hasMessageContaining("was closed");
            }
            session.close();
            session.close();
            try (OrtCApiRun run = session.prepare(Map.of("x", yt), Map.of("y", yt))) {
                assertThatThrownBy(run::run).isInstanceOf(IllegalStateException.class).hasMessageContaining("was closed");
            }
        }
    }

    @Test
    void aPreparedRunRunsOnAnyThreadOneCallAtATimeAndACloseDuringACallTakesEffectAtItsEnd() throws Exception {
        try (OrtCApiSession session = OrtCApiSession.open(OnnxModelBytes.identity(1), 1);
             OwnedHostTensor x = OwnedHostTensor.allocate(DLDataType.FLOAT32, 2);
             OwnedHostTensor y = OwnedHostTensor.allocate(DLDataType.FLOAT32, 2);
             OrtCApiTensor xt = OrtCApiSession.tensor(x);
             OrtCApiTensor yt = OrtCApiSession.tensor(y)) {
            OrtCApiRun run = session.prepare(Map.of("x", xt), Map.of("y", yt));
            x.host().setFloat(1, 7.5f);
            ExecutorService other = Executors.newSingleThreadExecutor();
            try {
                other.submit(() -> run.run()).get(); // prepared here, run there: a server slot's run on a request's thread
                assertThat(y.host().getFloat(1)).isEqualTo(7.5f);
                Thread.ofVirtual().start(() -> run.run()).join();
                run.begin(); // a call in flight on this thread
                assertThat(other.submit(() -> {
                    try {
                        run.run();
                        return null;
                    } catch (IllegalStateException e) {
                        return e;
                    }
                }).get()).isInstanceOf(IllegalStateException.class).hasMessageContaining("running on another thread");
                run.close(); // during the call: the arrays stay until it ends
                assertThat(run.isAllocated()).isTrue();
                run.end();
                assertThat(run.isAllocated()).isFalse();
                assertThatThrownBy(run::run).isInstanceOf(IllegalStateException.class).hasMessageContaining("was closed");
                run.close(); // a second close does nothing
            } finally {
                other.shutdown();
            }
        }
    }
}
