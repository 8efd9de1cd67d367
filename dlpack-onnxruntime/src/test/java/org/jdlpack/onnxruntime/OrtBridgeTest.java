package org.jdlpack.onnxruntime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLDataTypeCode;
import org.jdlpack.abi.DLPackStats;
import org.jdlpack.abi.DLTensorFlag;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.TensorLayout;
import org.jdlpack.abi.UnsupportedDeviceException;
import org.jdlpack.cpu.HostTensorView;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.testsupport.CPeer;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.testsupport.PeerTensor;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(NothingLeftBehind.class)
class OrtBridgeTest {

    private static final float[] X = {1, 2, 3, 4, 5, 6, 7, 8};

    private static OrtEnvironment env;
    private static OrtSession tiny;
    private static OrtBridge ort;

    @BeforeAll
    static void session() throws OrtException {
        env = OrtEnvironment.getEnvironment();
        tiny = Models.session(env, "tiny.onnx");
        ort = OrtBridge.of(env);
    }

    @AfterAll
    static void closeSession() throws OrtException {
        tiny.close();
    }

    private static float[] floats(HostTensorView view) {
        float[] values = new float[Math.toIntExact(view.layout().elementCount())];
        view.copyTo(values);
        return values;
    }

    @Test
    void anImportedTensorIsReadInPlaceAndMovedIn() throws OrtException {
        try (OwnedHostTensor producer = OwnedHostTensor.copyOf(X, 2, 4);
             OrtOutput y = ort.allocateOutput(DLDataType.FLOAT32, 2, 3)) {
            ImportedTensor imported = ImportedTensor.of(ManagedTensorKind.VERSIONED, producer.export().consume());
            long address = imported.hostSegment().address();
            try (OrtInput x = ort.input(imported)) {
                assertThat(x.isCopy()).isFalse();
                assertThat(x.dataAddress()).as("ONNX Runtime reads the producer's memory").isEqualTo(address)
                        .isEqualTo(producer.host().segment().address());
                assertThat(imported.isAlive()).as("the import moved into the input").isFalse();
                imported.close(); // does nothing: the input owns the managed tensor now
                assertThat(DLPackStats.ownedManagedTensors()).as("the input's import (the output's hold is a bare export)")
                        .isEqualTo(1);

                ort.run(tiny, Map.of("x", x), Map.of("y", y));
                assertThat(floats(y.host())).containsExactly(Models.tiny(X), within(1e-6f));
                assertThat(floats(y.host())).containsExactly(new float[] {6.1f, 5.2f, 3.3f, 16.1f, 9.2f, 11.3f}, within(1e-5f));

                // A write on the Java side after the OnnxTensor was made is what ONNX Runtime reads next.
                producer.host().setFloat(0, 11);
                float[] changed = X.clone();
                changed[0] = 11;
                ort.run(tiny, Map.of("x", x), Map.of("y", y));
                assertThat(floats(y.host())).containsExactly(Models.tiny(changed), within(1e-6f));
                // ONNX Runtime's write is in the output tensor's own memory: the same address, seen by Java without a copy.
                assertThat(y.dataAddress()).isEqualTo(y.tensor().host().segment().address());
                assertThat(y.tensor().host().getFloat(0)).isEqualTo(Models.tiny(changed)[0], within(1e-6f));
            }
            assertThat(producer.references()).as("the input's close ran the producer's deleter").isEqualTo(1);
        }
    }

    @Test
    void anOwnedTensorClosedBeforeTheRunStaysAliveForTheInput() throws OrtException {
        OwnedHostTensor input = OwnedHostTensor.copyOf(X, 2, 4);
        OwnedHostTensor output = OwnedHostTensor.allocate(DLDataType.FLOAT32, 2, 3);
        try (OrtInput x = ort.input(input); OrtOutput y = ort.output(output)) {
            assertThat(x.dataAddress()).isEqualTo(input.host().segment().address());
            assertThat(y.dataAddress()).isEqualTo(output.host().segment().address());
            input.close();
            output.close(); // the wrong order: both memories are still held by the input and the output
            assertThat(input.references()).isEqualTo(1);
            assertThat(output.references()).isEqualTo(1);
            // Java's own holds, not DLPack structs: before, each was an export no consumer would take.
            assertThat(DLPackStats.liveExports()).as("the input's and output's holds are retains").isZero();
            assertThat(DLPackStats.exportHeaderBytes()).isZero();
            ort.run(tiny, Map.of("x", x), Map.of("y", y));
            assertThat(floats(y.host())).containsExactly(Models.tiny(X), within(1e-6f));
        }
        assertThat(input.references()).isZero();
        assertThat(output.references()).isZero();
    }

    @Test
    void aPinnedOutputExportsToADLPackConsumerWithoutACopy() throws OrtException {
        try (OwnedHostTensor input = OwnedHostTensor.copyOf(X, 2, 4);
             OrtInput x = ort.input(input);
             OrtOutput y = ort.allocateOutput(DLDataType.FLOAT32, 2, 3)) {
            ort.run(tiny, Map.of("x", x), Map.of("y", y));
            try (ImportedTensor consumer = ImportedTensor.of(ManagedTensorKind.VERSIONED, y.tensor().export().consume())) {
                assertThat(consumer.dataAddress()).isEqualTo(y.dataAddress());
                assertThat(floats(HostTensorView.of(consumer))).containsExactly(Models.tiny(X), within(1e-6f));
            }
            MemorySegment managed = y.tensor().export().consume();
            double sum = CPeer.get().sumF32(managed, false);
            CPeer.get().delete(managed, false); // the C consumer is done: it calls the deleter
            assertThat(sum).isCloseTo(6.1 + 5.2 + 3.3 + 16.1 + 9.2 + 11.3, within(1e-4));
        }
    }

    @Test
    void aConfinedViewIsReadInPlaceAndItsFreedMemoryIsRefusedAtTheRun() throws OrtException {
        try (OrtOutput y = ort.allocateOutput(DLDataType.FLOAT32, 2, 3)) {
            Arena arena = Arena.ofConfined();
            MemorySegment data = arena.allocateFrom(ValueLayout.JAVA_FLOAT, X);
            try (OrtInput x = ort.input(HostTensorView.of(data, DLDataType.FLOAT32, 2, 4))) {
                assertThat(x.copyReason()).isEmpty();
                assertThat(x.dataAddress()).isEqualTo(data.address());
                ort.run(tiny, Map.of("x", x), Map.of("y", y));
                assertThat(floats(y.host())).containsExactly(Models.tiny(X), within(1e-6f));
                arena.close();
                assertThatThrownBy(() -> ort.run(tiny, Map.of("x", x), Map.of("y", y)))
                        .isInstanceOf(IllegalStateException.class).hasMessageContaining("was freed");
            }
            // The refused run gave the output back: it runs again.
            try (OwnedHostTensor source = OwnedHostTensor.copyOf(X, 2, 4); OrtInput x = ort.input(source.host())) {
                ort.run(tiny, Map.of("x", x), Map.of("y", y));
            }
        }
    }

    @Test
    void viewsOfMemoryOthersCouldFreeAreCopiedOnceAndSaySo() throws OrtException {
        try (Arena shared = Arena.ofShared(); OrtOutput y = ort.allocateOutput(DLDataType.FLOAT32, 2, 3)) {
            MemorySegment data = shared.allocateFrom(ValueLayout.JAVA_FLOAT, X);
            List<HostTensorView> views = List.of(HostTensorView.of(data, DLDataType.FLOAT32, 2, 4),
                    HostTensorView.of(MemorySegment.ofArray(X.clone()), DLDataType.FLOAT32, 2, 4));
            for (HostTensorView view : views) {
                try (OrtInput x = ort.input(view)) {
                    assertThat(x.copyReason()).isPresent();
                    assertThat(x.dataAddress()).isNotEqualTo(view.segment().address());
                    ort.run(tiny, Map.of("x", x), Map.of("y", y));
                    assertThat(floats(y.host())).containsExactly(Models.tiny(X), within(1e-6f));
                }
                assertThatThrownBy(() -> ort.zeroCopyOnly().input(view)).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("zero-copy input refused");
            }
            try (OrtInput x = ort.shared().input(HostTensorView.of(Arena.ofAuto().allocateFrom(ValueLayout.JAVA_FLOAT, X),
                    DLDataType.FLOAT32, 2, 4))) {
                assertThat(x.copyReason().orElseThrow()).contains("shared bridge");
            }
        }
    }

    @Test
    void aStridedTensorIsCopiedOnceOrRefused() throws OrtException {
        // x^T stored as [4, 2]: the [2, 4] view with strides [1, 2] reads it transposed.
        float[] transposed = {1, 5, 2, 6, 3, 7, 4, 8};
        try (OwnedHostTensor storage = OwnedHostTensor.copyOf(transposed, 4, 2);
             OrtOutput y = ort.allocateOutput(DLDataType.FLOAT32, 2, 3)) {
            HostTensorView view = HostTensorView.of(storage.host().segment(),
                    TensorLayout.of(DLDataType.FLOAT32, new long[] {2, 4}, new long[] {1, 2}, 0, 0));
            try (OrtInput x = ort.input(view)) {
                assertThat(x.copyReason().orElseThrow()).contains("not compact row-major").contains("[1, 2]");
                assertThat(x.layout().isCompactRowMajor()).isTrue();
                ort.run(tiny, Map.of("x", x), Map.of("y", y));
                assertThat(floats(y.host())).containsExactly(Models.tiny(X), within(1e-6f));
            }
            ImportedTensor imported = ImportedTensor.of(ManagedTensorKind.VERSIONED, storage.export().consume());
            try (imported) {
                // Imports keep their strides: make one strided through a spec-shaped copy of the layout.
                assertThat(imported.layout().isCompactRowMajor()).isTrue();
            }
            assertThatThrownBy(() -> ort.zeroCopyOnly().input(view)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("not compact row-major");
        }
    }

    @Test
    void aStridedImportIsCopiedAndItsDeleterRunsAtOnce() throws OrtException {
        CPeer peer = CPeer.get();
        CPeer.Produced produced = peer.make(PeerTensor.versioned().shape(2, 4).strides(1, 2));
        ImportedTensor imported = ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer());
        float[] expected = new float[8];
        HostTensorView.of(imported).copyTo(expected);
        try (OrtInput x = ort.input(imported); OrtOutput y = ort.allocateOutput(DLDataType.FLOAT32, 2, 3)) {
            assertThat(x.isCopy()).isTrue();
            assertThat(peer.deleterCalls(produced.id())).as("copied, then released").isEqualTo(1);
            ort.run(tiny, Map.of("x", x), Map.of("y", y));
            assertThat(floats(y.host())).containsExactly(Models.tiny(expected), within(1e-5f));
        }
    }

    @Test
    void everyMappedElementTypeRoundTripsThroughIdentity() throws OrtException {
        record Case(String model, DLDataType dtype) {
        }
        List<Case> cases = List.of(new Case("float", DLDataType.FLOAT32), new Case("double", DLDataType.FLOAT64),
                new Case("float16", DLDataType.FLOAT16), new Case("bfloat16", DLDataType.BFLOAT16),
                new Case("int8", DLDataType.INT8), new Case("uint8", DLDataType.UINT8), new Case("int16", DLDataType.INT16),
                new Case("int32", DLDataType.INT32), new Case("int64", DLDataType.INT64), new Case("bool", DLDataType.BOOL));
        for (Case c : cases) {
            try (OrtSession session = Models.session(env, "id_" + c.model() + ".onnx");
                 OwnedHostTensor source = OwnedHostTensor.allocate(c.dtype(), 5);
                 OrtInput x = ort.input(source);
                 OrtOutput y = ort.allocateOutput(c.dtype(), 5)) {
                MemorySegment bytes = source.host().segment();
                for (long i = 0; i < bytes.byteSize(); i++) {
                    // bool is one byte, 0 or 1; the others take any bit pattern (bfloat16/float16 NaNs stay as they are).
                    bytes.set(ValueLayout.JAVA_BYTE, i, c.dtype().equals(DLDataType.BOOL) ? (byte) (i % 2) : (byte) (i * 7 + 3));
                }
                ort.run(session, Map.of("x", x), Map.of("y", y));
                assertThat(y.host().segment().toArray(ValueLayout.JAVA_BYTE)).as(c.model())
                        .containsExactly(bytes.toArray(ValueLayout.JAVA_BYTE));
            }
        }
    }

    @Test
    void typesOnnxRuntimeJavaLacksAreRefusedByName() {
        for (DLDataType dtype : List.of(DLDataType.UINT16, DLDataType.UINT32, DLDataType.UINT64)) {
            try (OwnedHostTensor tensor = OwnedHostTensor.allocate(dtype, 3)) {
                assertThatThrownBy(() -> ort.input(tensor)).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining(dtype.toString()).hasMessageContaining("no uint" + dtype.bits());
                assertThat(tensor.references()).as("a refusal takes nothing").isEqualTo(1);
            }
        }
        for (DLDataType dtype : List.of(DLDataType.COMPLEX64, new DLDataType(DLDataTypeCode.FLOAT8_E4M3FN, 8, 1),
                new DLDataType(DLDataTypeCode.FLOAT, 32, 2), DLDataType.fromRaw((byte) 18, (byte) 32, (short) 1))) {
            try (OwnedHostTensor tensor = OwnedHostTensor.allocate(dtype, 3)) {
                assertThatThrownBy(() -> ort.input(tensor)).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining(dtype.toString());
                assertThatThrownBy(() -> ort.allocateOutput(dtype, 3)).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining(dtype.toString());
            }
        }
        try (OwnedHostTensor tensor = OwnedHostTensor.allocate(DLDataType.BCOMPLEX32, 3)) {
            assertThatThrownBy(() -> ort.input(tensor)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("DLTensor.dtype is bcomplex32").hasMessageContaining("OnnxJavaType has no complex type");
        }
    }

    @Test
    void deviceMemoryIsRefusedAndTheImportLeftToItsOwner() {
        CPeer peer = CPeer.get();
        CPeer.Produced produced = peer.make(PeerTensor.versioned().shape(4).device(2).dummyData());
        try (ImportedTensor onGpu = ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer())) {
            assertThatThrownBy(() -> ort.input(onGpu)).isInstanceOf(UnsupportedDeviceException.class)
                    .hasMessageContaining("CUDA").hasMessageContaining("copy it to host memory");
            assertThat(onGpu.isAlive()).isTrue();
        }
        assertThat(peer.deleterCalls(produced.id())).isEqualTo(1);
    }

    @Test
    @SuppressWarnings("restricted")
    void tensorsOverTheByteBufferLimitAreRefusedNamingIt() {
        long floats = (OrtBridge.MAX_TENSOR_BYTES + 1 + 3) / 4;
        // Never touched: the size is checked before anything reads or maps the memory.
        MemorySegment huge = MemorySegment.ofAddress(4096).reinterpret(floats * 4);
        assertThatThrownBy(() -> ort.input(HostTensorView.of(huge, DLDataType.FLOAT32, floats)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("2147483639 bytes");
        assertThatThrownBy(() -> ort.allocateOutput(DLDataType.FLOAT32, floats)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("2147483639 bytes");
    }

    @Test
    void readOnlyAndStridedTensorsAreRefusedAsOutputs() {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment data = arena.allocate(24);
            try (OwnedHostTensor readOnly = OwnedHostTensor.wrap(data.asReadOnly(), DLDataType.FLOAT32, new long[] {2, 3}, () -> { })) {
                assertThatThrownBy(() -> ort.output(readOnly)).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("READ_ONLY").hasMessageContaining("would write into it");
                assertThat(readOnly.references()).isEqualTo(1);
            }
        }
        try (OwnedHostTensor wide = OwnedHostTensor.allocate(DLDataType.FLOAT32, 3, 2)) {
            TensorLayout transposed = TensorLayout.of(DLDataType.FLOAT32, new long[] {2, 3}, new long[] {1, 2}, 0, 0);
            try (OwnedHostTensor strided = OwnedHostTensor.wrap(org.jdlpack.abi.TensorSpec.builder(wide.host().segment(), transposed)
                    .build(), () -> { })) {
                assertThatThrownBy(() -> ort.output(strided)).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("not compact row-major");
            }
        }
    }

    @Test
    void aReadOnlyTensorIsFineAsAnInput() throws OrtException {
        // In place: a READ_ONLY import, which the input holds.
        MemorySegment managed = CPeer.get().make(PeerTensor.versioned().shape(2, 4).flags(DLTensorFlag.READ_ONLY.mask())).pointer();
        ImportedTensor imported = ImportedTensor.of(ManagedTensorKind.VERSIONED, managed);
        float[] values = floats(HostTensorView.of(imported));
        try (OrtInput x = ort.input(imported);
             OrtOutput y = ort.allocateOutput(DLDataType.FLOAT32, 2, 3)) {
            assertThat(x.isCopy()).isFalse();
            ort.run(tiny, Map.of("x", x), Map.of("y", y));
            assertThat(floats(y.host())).containsExactly(Models.tiny(values), within(1e-6f));
        }
        // Copied: a read-only segment the tensor wraps, not owns. The copy is writable (before: "the tensor is read-only").
        try (Arena arena = Arena.ofShared()) {
            MemorySegment data = arena.allocateFrom(ValueLayout.JAVA_FLOAT, X);
            try (OwnedHostTensor readOnly = OwnedHostTensor.wrap(data.asReadOnly(), DLDataType.FLOAT32, new long[] {2, 4}, () -> { });
                 OrtInput x = ort.input(readOnly);
                 OrtOutput y = ort.allocateOutput(DLDataType.FLOAT32, 2, 3)) {
                assertThat(x.isCopy()).isTrue();
                ort.run(tiny, Map.of("x", x), Map.of("y", y));
                assertThat(floats(y.host())).containsExactly(Models.tiny(X), within(1e-6f));
            }
        }
    }

    @Test
    void anOnnxRuntimeFailureLeavesInputsAndOutputsUsable() throws OrtException {
        try (OwnedHostTensor source = OwnedHostTensor.copyOf(X, 2, 4);
             OrtInput x = ort.input(source.host());
             OrtOutput wrong = ort.allocateOutput(DLDataType.FLOAT32, 2, 4);
             OrtOutput y = ort.allocateOutput(DLDataType.FLOAT32, 2, 3)) {
            assertThatThrownBy(() -> ort.run(tiny, Map.of("x", x), Map.of("y", wrong))).isInstanceOf(OrtException.class)
                    .hasMessageContaining("invalid dimensions");
            assertThatThrownBy(() -> ort.run(tiny, Map.of("nope", x), Map.of("y", y))).isInstanceOf(OrtException.class);
            ort.run(tiny, Map.of("x", x), Map.of("y", y));
            assertThat(floats(y.host())).containsExactly(Models.tiny(X), within(1e-6f));
        }
    }

    @Test
    void closedInputsAndOutputsAreRefusedBeforeOnnxRuntimeSeesThem() throws OrtException {
        OwnedHostTensor source = OwnedHostTensor.copyOf(X, 2, 4);
        OrtInput x = ort.input(source.host());
        source.close();
        OrtOutput y = ort.allocateOutput(DLDataType.FLOAT32, 2, 3);
        x.close();
        x.close(); // a second close does nothing
        assertThatThrownBy(() -> ort.run(tiny, Map.of("x", x), Map.of("y", y))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("was closed");
        y.close();
        try (OwnedHostTensor source2 = OwnedHostTensor.copyOf(X, 2, 4); OrtInput fresh = ort.input(source2.host())) {
            assertThatThrownBy(() -> ort.run(tiny, Map.of("x", fresh), Map.of("y", y))).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("OrtOutput").hasMessageContaining("was closed");
        }
    }

    @Test
    void aConfinedInputRefusesOtherThreads() throws Exception {
        try (OwnedHostTensor source = OwnedHostTensor.copyOf(X, 2, 4);
             OrtInput x = ort.input(source.host());
             OrtOutput y = ort.allocateOutput(DLDataType.FLOAT32, 2, 3)) {
            Thread other = Thread.ofVirtual().start(() -> {
                assertThatThrownBy(() -> ort.run(tiny, Map.of("x", x), Map.of("y", y))).isInstanceOf(WrongThreadException.class)
                        .hasMessageContaining("OrtBridge.shared()");
                assertThatThrownBy(x::close).isInstanceOf(WrongThreadException.class);
            });
            other.join();
            assertThat(x.isOpen()).isTrue();
            ort.run(tiny, Map.of("x", x), Map.of("y", y));
        }
    }

    @Test
    void sharedInputsServeConcurrentRunsEachWithItsOwnOutput() throws Exception {
        OrtBridge shared = ort.shared();
        ImportedTensor imported;
        try (OwnedHostTensor producer = OwnedHostTensor.copyOf(X, 2, 4)) {
            imported = ImportedTensor.of(ManagedTensorKind.VERSIONED, producer.export().consume());
        }
        try (OrtInput x = shared.input(imported); ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<Integer>> results = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                results.add(threads.submit((Callable<Integer>) () -> {
                    int wrong = 0;
                    try (OrtOutput y = shared.allocateOutput(DLDataType.FLOAT32, 2, 3)) {
                        for (int i = 0; i < 200; i++) {
                            shared.run(tiny, Map.of("x", x), Map.of("y", y));
                            if (Math.abs(y.host().getFloat(3) - 16.1f) > 1e-5f) {
                                wrong++;
                            }
                        }
                    }
                    return wrong;
                }));
            }
            for (Future<Integer> result : results) {
                assertThat(result.get()).isZero();
            }
        }
    }

    @Test
    void aPinnedOutputIsWrittenByOneRunAtATimeAndACloseDuringARunWaitsForIt() throws OrtException {
        OrtBridge shared = ort.shared();
        OrtOutput y = shared.allocateOutput(DLDataType.FLOAT32, 2, 3);
        OwnedHostTensor source = OwnedHostTensor.copyOf(X, 2, 4);
        OrtInput x = shared.input(source);
        source.close(); // the input holds the memory
        y.borrow(); // a run in flight on another thread
        assertThatThrownBy(() -> shared.run(tiny, Map.of("x", x), Map.of("y", y))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("pinned output of another run");
        x.borrow();
        x.close();
        y.close();
        assertThat(source.references()).as("the input's retain, held by the run in flight").isEqualTo(1);
        assertThat(y.tensor().references()).as("the output's tensor and its retain, held by the run in flight").isEqualTo(2);
        x.giveBack();
        y.giveBack();
        assertThat(x.isOpen()).isFalse();
        assertThat(source.references()).as("the last run's end released the input").isZero();
    }

    @Test
    void outputsOfUnknownShapeAreCopiedOnceIntoExportableTensors() throws OrtException {
        try (OrtSession nonzero = Models.session(env, "nonzero.onnx");
             OwnedHostTensor source = OwnedHostTensor.copyOf(new float[] {0, 1, 0, 2, 3}, 5);
             OrtInput x = ort.input(source);
             CopiedOutputs copies = ort.run(nonzero, Map.of("x", x), Map.of(), Set.of("y"))) {
            OwnedHostTensor y = copies.get("y");
            assertThat(y.spec().layout().dtype()).isEqualTo(DLDataType.INT64);
            assertThat(y.spec().layout().shape()).containsExactly(1, 3);
            long[] indices = new long[3];
            y.host().copyTo(indices);
            assertThat(indices).containsExactly(1, 3, 4);
            assertThatThrownBy(() -> copies.get("z")).hasMessageContaining("[y]");
        }
        try (OrtSession cast = Models.session(env, "cast_uint32.onnx");
             OwnedHostTensor source = OwnedHostTensor.copyOf(new int[] {-1, 7}, 2);
             OrtInput x = ort.input(source);
             CopiedOutputs copies = ort.run(cast, Map.of("x", x), Map.of(), Set.of("y"))) {
            OwnedHostTensor y = copies.get("y");
            assertThat(y.spec().layout().dtype()).as("the unsigned type survives").isEqualTo(DLDataType.UINT32);
            assertThat(y.host().getLong(0)).isEqualTo(4294967295L);
            assertThat(y.host().getLong(1)).isEqualTo(7);
        }
    }

    @Test
    void emptyAndScalarTensorsRun() throws OrtException {
        try (OrtSession id = Models.session(env, "id_float.onnx");
             OwnedHostTensor empty = OwnedHostTensor.allocate(DLDataType.FLOAT32, 0);
             OrtInput x = ort.input(empty);
             OrtOutput y = ort.allocateOutput(DLDataType.FLOAT32, 0)) {
            ort.run(id, Map.of("x", x), Map.of("y", y));
            assertThat(y.layout().elementCount()).isZero();
        }
        try (OrtSession tinyAgain = Models.session(env, "tiny.onnx");
             OwnedHostTensor empty = OwnedHostTensor.allocate(DLDataType.FLOAT32, 0, 4);
             OrtInput x = ort.input(empty);
             OrtOutput y = ort.allocateOutput(DLDataType.FLOAT32, 0, 3)) {
            ort.run(tinyAgain, Map.of("x", x), Map.of("y", y));
        }
    }
}
