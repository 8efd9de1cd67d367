package org.jdlpack.python;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.stream.Stream;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLTensorFlag;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.TensorSpec;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.cpu.HostTensorView;
import org.jdlpack.cpu.OwnedHostTensor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * TensorFlow 2.21 (tensorflow-cpu) as a real peer, both directions. TensorFlow speaks legacy
 * DLPack only, both ways: its {@code __dlpack__} returns a {@code dltensor} capsule whatever
 * {@code max_version} says, and {@code tf.experimental.dlpack.from_dlpack} takes a legacy capsule
 * only (not an object with {@code __dlpack__}), with compact row-major strides only. TensorFlow
 * has float8 and float4 types but exports none of them through DLPack.
 */
@Tag("peers")
@Tag("peer-tensorflow")
@ExtendWith(NothingLeftBehind.class)
class TensorFlowPeerTest {

    static final int CORPUS = 2000;

    /** What TensorFlow exchanges through DLPack, as jdlpack names it (TensorFlow's names too). */
    static final List<String> TF_DTYPES = List.of("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
            "float16", "bfloat16", "float32", "float64", "complex64", "complex128");

    static final List<DLDataType> JAVA_DTYPES = TF_DTYPES.stream().map(JaxPeerTest::dtype).toList();

    /** TensorFlow's consumer: a legacy capsule from the Java tensor object. */
    static final String CONSUME = "tf.experimental.dlpack.from_dlpack(x.__dlpack__())";

    private static PythonRuntime python;

    @BeforeAll
    static void startTensorFlow() {
        python = PythonPeers.peer("tensorflow", "tf", "TensorFlow", "2.21.");
        python.exec("""
                import random, math
                DTYPES = [getattr(ml_dtypes, n, None) or np.dtype(n) for n in %s]
                def hexof(t):
                    return t.numpy().tobytes().hex()   # TensorFlow's own copy to NumPy, not DLPack
                def shapeof(t):
                    return str(list(t.shape))
                def dtypeof(t):
                    return t.dtype.name
                def make(seed):
                    r = random.Random(seed)
                    dt = np.dtype(r.choice(DTYPES))
                    shape = [0 if r.random() < 0.05 else r.randint(1, 5) for _ in range(r.randint(0, 4))]
                    raw = np.frombuffer(r.randbytes(math.prod(shape) * dt.itemsize), dtype=np.uint8)
                    if dt == np.bool_:
                        raw = raw & 1
                    return tf.constant(raw.view(dt).reshape(shape))
                """.formatted(TF_DTYPES.stream().map(n -> "'" + n + "'").toList()));
        System.out.println("TensorFlow peer: tensorflow " + python.evalString("tf.__version__") + " on " + python.description());
    }

    @AfterEach
    void nothingHeld() {
        python.exec("x = y = v = t = None");
        PythonPeers.assertPythonHoldsNoJavaTensor(python);
        assertThat(PythonPeers.pendingForeignTensors()).as("TensorFlow tensors Java has not released").isZero();
    }

    static Stream<String> tfDtypes() {
        return TF_DTYPES.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("tfDtypes")
    void everyTensorFlowDtypeArrivesLegacyWithItsBytes(String dtype) {
        python.exec("t = tf.constant((np.frombuffer(bytes(range(1, 97)), dtype=np.uint8)" + (dtype.equals("bool") ? " & 1" : "")
                + ").view(np.dtype(DTYPES[" + TF_DTYPES.indexOf(dtype) + "])).reshape(2, -1))");
        String expected = python.evalString("hexof(t)");
        try (PythonObject t = python.get("t"); ImportedTensor imported = python.importTensor(t)) {
            assertThat(imported.kind()).as("TensorFlow answers max_version=(1, 3) with a legacy capsule").isEqualTo(ManagedTensorKind.LEGACY);
            HostTensorView host = HostTensorView.of(imported);
            assertThat(host.layout().dtype().toString()).isEqualTo(dtype);
            assertThat(PeerCorpus.rowMajorHex(host)).isEqualTo(expected);
        }
    }

    @Test
    void tensorFlowRefusesToExportItsFloat8WithItsOwnMessage() {
        python.exec("t = tf.constant(np.zeros(3, dtype=ml_dtypes.float8_e4m3fn))");
        try (PythonObject t = python.get("t")) {
            String outcome;
            try (ImportedTensor imported = python.importTensor(t)) {
                outcome = "imported " + imported.layout().dtype();
            } catch (PythonException e) {
                outcome = e.lastLine();
            }
            assertThat(outcome).contains("DT_FLOAT8_E4M3FN is not supported by dlpack");
        }
    }

    @Test
    void tensorFlowAnswersEveryMaxVersionWithALegacyCapsuleAndTakesOnlyLegacyOnes() {
        assertThat(python.evalString("[str(c).split('\"')[1] for c in (tf.ones(1).__dlpack__(), tf.ones(1).__dlpack__(max_version=(1, 3)))]"))
                .isEqualTo("['dltensor', 'dltensor']");
        try (OwnedHostTensor tensor = OwnedHostTensor.copyOf(new float[] {1, 2}, 2)) {
            PythonPeers.bind(python, "x", tensor);
            String versioned = Torch2PeerTest.outcome(python, "tf.experimental.dlpack.from_dlpack(x.__dlpack__(max_version=(1, 3)))");
            assertThat(versioned).contains("DLPack tensor must be a capsule with name \"dltensor\"");
            python.exec("try:\n    tf.experimental.dlpack.from_dlpack(x)\n    r = 'taken'\n"
                    + "except Exception as e:\n    r = type(e).__name__ + ': ' + str(e).splitlines()[0]");
            assertThat(python.evalString("r")).as("an object with __dlpack__ is not a capsule")
                    .isEqualTo("TypeError: TFE_FromDlpackCapsule(): incompatible function arguments. The following argument types are supported:");
            python.exec("del r");
            assertThat(python.evalString(CONSUME + ".numpy().tolist()")).isEqualTo("[1.0, 2.0]");
            python.exec("del x\ngc.collect()");
            assertThat(tensor.references()).as("the refused versioned capsule was deleted by its destructor, once").isEqualTo(1);
        }
    }

    static Stream<DLDataType> javaDtypes() {
        return JAVA_DTYPES.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("javaDtypes")
    void everyJavaDtypeReachesTensorFlowWithoutACopy(DLDataType dtype) {
        try (OwnedHostTensor tensor = OwnedHostTensor.allocate(dtype, 3, 4)) {
            PeerCorpus.fill(tensor.host().segment(), dtype, new SplittableRandom(dtype.hashCode()));
            PythonPeers.bind(python, "x", tensor);
            python.exec("y = " + CONSUME + "\ndel x");
            assertThat(python.evalString("dtypeof(y)")).isEqualTo(dtype.toString());
            assertThat(python.evalString("hexof(y)")).isEqualTo(PeerCorpus.rowMajorHex(tensor.host()));
            assertThat(tensor.references()).as("TensorFlow holds the export").isEqualTo(2);
            python.exec("y = None\ngc.collect()");
            assertThat(tensor.references()).as("TensorFlow's deleter ran once").isEqualTo(1);
        }
    }

    @Test
    void whatTensorFlowTakesOfJavaLayoutsAndWhatItRefuses() {
        SplittableRandom random = new SplittableRandom(13);
        for (long[][] layout : new long[][][] {{{4, 6}, {6, 1}, {0}}, {{0, 6}, {6, 1}, {0}}, {{}, {}, {5}}, {{3, 6}, {6, 1}, {6}}}) {
            PeerCorpus.javaToPeer(python, new PeerCorpus.Case(DLDataType.FLOAT32, layout[0], layout[1], layout[2][0], 24, false), CONSUME, random);
        }
        for (long[][] layout : new long[][][] {{{6, 4}, {1, 6}}, {{2, 3}, {12, 2}}, {{3, 6}, {0, 1}}, {{4}, {-1}}}) {
            try (OwnedHostTensor base = OwnedHostTensor.allocate(DLDataType.FLOAT32, 24)) {
                long offset = layout[1][0] < 0 ? 12 : 0;
                TensorSpec spec = TensorSpec.builder(base.spec().data(), DLDataType.FLOAT32, layout[0]).strides(layout[1]).byteOffset(offset).build();
                try (OwnedHostTensor view = OwnedHostTensor.wrap(spec, () -> { })) {
                    PythonPeers.bind(python, "x", view);
                    String outcome = Torch2PeerTest.outcome(python, CONSUME + ".shape");
                    System.out.println("TensorFlow's from_dlpack of strides " + PeerCorpus.pythonList(layout[1]) + ": " + outcome);
                    assertThat(outcome).contains("Invalid strides array from DLPack");
                    python.exec("del x\ngc.collect()");
                    assertThat(view.references()).as("the refused export released once").isEqualTo(1);
                }
            }
        }
    }

    @Test
    void aReadOnlyJavaTensorCannotTravelLegacyAndSaysSo() {
        try (OwnedHostTensor base = OwnedHostTensor.copyOf(new float[] {1, 2, 3}, 3)) {
            TensorSpec spec = TensorSpec.builder(base.spec().data(), DLDataType.FLOAT32, 3).flags(DLTensorFlag.READ_ONLY.mask()).build();
            try (OwnedHostTensor readOnly = OwnedHostTensor.wrap(spec, () -> { })) {
                PythonPeers.bind(python, "x", readOnly);
                String outcome = Torch2PeerTest.outcome(python, CONSUME);
                System.out.println("TensorFlow and a read-only Java tensor: " + outcome);
                assertThat(outcome).startsWith("BufferError");
                // The way through: a copy, which legacy DLPack can carry.
                assertThat(python.evalString("tf.experimental.dlpack.from_dlpack(x.__dlpack__(copy=True)).numpy().tolist()")).isEqualTo("[1.0, 2.0, 3.0]");
                python.exec("del x\ngc.collect()");
                assertThat(readOnly.references()).isEqualTo(1);
            }
        }
    }

    @Test
    void corpusTensorFlowToJava() {
        Map<String, Integer> perDtype = new TreeMap<>();
        for (long seed = 1; seed <= CORPUS; seed++) {
            perDtype.merge(PeerCorpus.peerToJava(python, seed).toString(), 1, Integer::sum);
        }
        System.out.println("TensorFlow -> Java corpus: " + CORPUS + " cases, byte-equal; per dtype " + perDtype);
        assertThat(perDtype).hasSize(TF_DTYPES.size());
    }

    @Test
    void corpusJavaToTensorFlow() {
        SplittableRandom random = new SplittableRandom(20262);
        for (int i = 0; i < CORPUS; i++) {
            PeerCorpus.Case c = PeerCorpus.random(random, JAVA_DTYPES, PeerCorpus.Strides.COMPACT);
            PeerCorpus.javaToPeer(python, c, CONSUME, random);
        }
        System.out.println("Java -> TensorFlow corpus: " + CORPUS + " cases (compact), byte-equal; released only after gc.collect(): "
                + PeerCorpus.COLLECTED.get());
    }
}
