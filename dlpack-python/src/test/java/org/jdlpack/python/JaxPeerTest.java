package org.jdlpack.python;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.stream.Stream;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLDataTypeCode;
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
 * JAX 0.10 (jaxlib's CPU backend) as a real peer, both directions: every dtype JAX has (with
 * {@code JAX_ENABLE_X64}, which the {@code peer-jax} execution sets), layouts JAX takes, and a
 * differential corpus each way. JAX speaks legacy DLPack only: {@code __dlpack__} returns a
 * {@code dltensor} capsule whatever {@code max_version} says, and its arrays are immutable, which
 * legacy DLPack cannot say.
 */
@Tag("peers")
@Tag("peer-jax")
@ExtendWith(NothingLeftBehind.class)
class JaxPeerTest {

    static final int CORPUS = 2000;

    /** JAX's dtypes as jdlpack names them: NumPy's and ml_dtypes' names. */
    static final List<String> JAX_DTYPES = List.of("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
            "float16", "bfloat16", "float32", "float64", "complex64", "complex128", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
            "float8_e5m2fnuz", "float8_e4m3b11fnuz", "float8_e3m4", "float8_e4m3", "float8_e8m0fnu");

    static final List<DLDataType> JAVA_DTYPES = JAX_DTYPES.stream().map(JaxPeerTest::dtype).toList();

    private static PythonRuntime python;

    @BeforeAll
    static void startJax() {
        python = PythonPeers.peer("jax", "jax", "JAX", "0.10.");
        python.exec("""
                import random, math
                import jax.numpy as jnp, jax.dlpack
                assert jax.config.jax_enable_x64, 'JAX_ENABLE_X64 is not set: the peer-jax execution sets it'
                DTYPES = [getattr(ml_dtypes, n, None) or np.dtype(n) for n in %s]
                def hexof(a):
                    return np.asarray(a).tobytes().hex()   # __array__, not DLPack
                def shapeof(a):
                    return str(list(a.shape))
                def dtypeof(a):
                    return str(a.dtype)
                def make(seed):
                    r = random.Random(seed)
                    dt = np.dtype(r.choice(DTYPES))
                    shape = [0 if r.random() < 0.05 else r.randint(1, 5) for _ in range(r.randint(0, 4))]
                    raw = np.frombuffer(r.randbytes(math.prod(shape) * dt.itemsize), dtype=np.uint8)
                    if dt == np.bool_:
                        raw = raw & 1
                    return jnp.asarray(raw.view(dt).reshape(shape))
                """.formatted(JAX_DTYPES.stream().map(n -> "'" + n + "'").toList()));
        System.out.println("JAX peer: jax " + python.evalString("jax.__version__") + ", jaxlib "
                + python.evalString("__import__('jaxlib').__version__") + " on " + python.description());
    }

    @AfterEach
    void nothingHeld() {
        python.exec("x = y = v = a = None");
        PythonPeers.assertPythonHoldsNoJavaTensor(python);
        assertThat(PythonPeers.pendingForeignTensors()).as("JAX arrays Java has not released").isZero();
    }

    static DLDataType dtype(String name) {
        return switch (name) {
            case "bool" -> DLDataType.BOOL;
            case "bfloat16" -> DLDataType.BFLOAT16;
            default -> {
                if (name.startsWith("float8")) {
                    yield new DLDataType(DLDataTypeCode.valueOf(name.toUpperCase(java.util.Locale.ROOT)), 8, 1);
                }
                DLDataTypeCode code = name.startsWith("uint") ? DLDataTypeCode.UINT : name.startsWith("int") ? DLDataTypeCode.INT
                        : name.startsWith("complex") ? DLDataTypeCode.COMPLEX : DLDataTypeCode.FLOAT;
                yield new DLDataType(code, Integer.parseInt(name.replaceAll("[^0-9]", "")), 1);
            }
        };
    }

    // ---------------------------------------------------------------- JAX -> Java

    static Stream<String> jaxDtypes() {
        return JAX_DTYPES.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("jaxDtypes")
    void everyJaxDtypeArrivesLegacyWithItsBytesWithoutACopy(String dtype) {
        python.exec("a = jnp.asarray((np.frombuffer(bytes(range(1, 97)), dtype=np.uint8)" + (dtype.equals("bool") ? " & 1" : "")
                + ").view(np.dtype(DTYPES[" + JAX_DTYPES.indexOf(dtype) + "])).reshape(2, -1))");
        String expected = python.evalString("hexof(a)");
        try (PythonObject a = python.get("a"); ImportedTensor imported = python.importTensor(a)) {
            assertThat(imported.kind()).as("JAX answers max_version=(1, 3) with a legacy capsule").isEqualTo(ManagedTensorKind.LEGACY);
            HostTensorView host = HostTensorView.of(imported);
            assertThat(host.layout().dtype().toString()).isEqualTo(dtype);
            assertThat(PeerCorpus.rowMajorHex(host)).isEqualTo(expected);
            assertThat(imported.dataAddress() + imported.layout().byteOffset()).as("zero copy: JAX's buffer")
                    .isEqualTo(Long.parseLong(python.evalString("a.unsafe_buffer_pointer()")));
            assertThat(host.layout().isReadOnly()).as("legacy DLPack cannot say JAX's arrays are immutable").isFalse();
        }
    }

    @Test
    void jaxAnswersEveryMaxVersionWithALegacyCapsule() {
        assertThat(python.evalString("[str(c).split('\"')[1] for c in (jnp.ones(1).__dlpack__(), jnp.ones(1).__dlpack__(max_version=(1, 0)), "
                + "jnp.ones(1).__dlpack__(max_version=(1, 3)))]")).isEqualTo("['dltensor', 'dltensor', 'dltensor']");
        assertThat(python.evalString("hasattr(type(jnp.ones(1)), '__dlpack_c_exchange_api__')")).isEqualTo("False");
    }

    @Test
    void aJaxArrayOutlivesItsPythonReferenceUntilJavaClosesIt() {
        python.exec("a = jnp.arange(5.0)");
        try (PythonObject a = python.get("a")) {
            ImportedTensor imported = python.importTensor(a);
            python.exec("a = None\ngc.collect()");
            assertThat(HostTensorView.of(imported).getDouble(4)).isEqualTo(4.0);
            assertThat(PythonPeers.pendingForeignTensors()).isEqualTo(1);
            imported.close();
            assertThat(PythonPeers.pendingForeignTensors()).as("JAX's deleter ran once").isZero();
        }
    }

    // ---------------------------------------------------------------- Java -> JAX

    static Stream<DLDataType> javaDtypes() {
        return JAVA_DTYPES.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("javaDtypes")
    void everyJavaDtypeReachesJaxAsItsDtype(DLDataType dtype) {
        try (OwnedHostTensor tensor = OwnedHostTensor.allocate(dtype, 3, 4)) {
            PeerCorpus.fill(tensor.host().segment(), dtype, new SplittableRandom(dtype.hashCode()));
            PythonPeers.bind(python, "x", tensor);
            python.exec("y = jax.dlpack.from_dlpack(x)\ndel x");
            assertThat(python.evalString("dtypeof(y)")).isEqualTo(dtype.toString());
            assertThat(python.evalString("hexof(y)")).isEqualTo(PeerCorpus.rowMajorHex(tensor.host()));
            python.exec("y = None\ngc.collect()");
            assertThat(tensor.references()).as("JAX's deleter ran once (or JAX copied and released at once)").isEqualTo(1);
        }
    }

    @Test
    void jaxSharesAnAlignedJavaTensorAndAsksForWhatItAsks() {
        Torch2PeerTest.RecordingSource source = new Torch2PeerTest.RecordingSource();
        try (OwnedHostTensor tensor = OwnedHostTensor.copyOf(new float[] {1, 2, 3, 4}, 4)) {
            source.tensor = tensor;
            try (PythonObject x = python.toPython(source)) {
                python.set("x", x);
            }
            python.exec("y = jax.dlpack.from_dlpack(x)");
            String shared = python.evalString("y.unsafe_buffer_pointer()");
            System.out.println("jax.dlpack.from_dlpack(javaTensor) asked " + source.requests + "; JAX's buffer "
                    + (Long.parseLong(shared) == tensor.spec().data().address() ? "is" : "is not") + " the Java tensor's memory");
            assertThat(Long.parseLong(shared)).as("zero copy of a 256-byte-aligned tensor").isEqualTo(tensor.spec().data().address());
            assertThat(source.requests).hasSize(1);
            assertThat(python.evalString("y.tolist()")).isEqualTo("[1.0, 2.0, 3.0, 4.0]");
            python.exec("del x\ny = None\ngc.collect()");
            assertThat(tensor.references()).isEqualTo(1);
        }
    }

    @Test
    void whatJaxTakesOfJavaLayoutsAndWhatItRefusesWithItsOwnMessage() {
        SplittableRandom random = new SplittableRandom(11);
        // Taken: compact, transposed (a permutation), zero-size, 0-d, starting inside the buffer.
        for (long[][] layout : new long[][][] {{{4, 6}, {6, 1}, {0}}, {{6, 4}, {1, 6}, {0}}, {{0, 6}, {6, 1}, {0}}, {{}, {}, {5}},
            {{3, 6}, {6, 1}, {6}}}) {
            PeerCorpus.javaToPeer(python, new PeerCorpus.Case(DLDataType.FLOAT32, layout[0], layout[1], layout[2][0], 24, false),
                    "jax.dlpack.from_dlpack(x)", random);
        }
        // Refused: a stepped view and a broadcast one (JAX takes no stride that is not a permutation of a compact layout).
        for (long[][] layout : new long[][][] {{{2, 3}, {12, 2}}, {{3, 6}, {0, 1}}, {{4}, {-1}}}) {
            try (OwnedHostTensor base = OwnedHostTensor.allocate(DLDataType.FLOAT32, 24)) {
                long offset = layout[1][0] < 0 ? 12 : 0;
                TensorSpec spec = TensorSpec.builder(base.spec().data(), DLDataType.FLOAT32, layout[0]).strides(layout[1]).byteOffset(offset).build();
                try (OwnedHostTensor view = OwnedHostTensor.wrap(spec, () -> { })) {
                    PythonPeers.bind(python, "x", view);
                    String outcome = Torch2PeerTest.outcome(python, "jax.dlpack.from_dlpack(x).shape");
                    System.out.println("jax.dlpack.from_dlpack of strides " + PeerCorpus.pythonList(layout[1]) + ": " + outcome);
                    assertThat(outcome).contains("Only DLPack tensors with trivial (compact) striding are supported");
                    python.exec("del x\ngc.collect()");
                    assertThat(view.references()).as("the refused export released once").isEqualTo(1);
                }
            }
        }
    }

    @Test
    void aReadOnlyJavaTensorIsRefusedToJaxsLegacyRequestWithJdlpacksBufferError() {
        try (OwnedHostTensor base = OwnedHostTensor.copyOf(new float[] {1, 2, 3}, 3)) {
            TensorSpec spec = TensorSpec.builder(base.spec().data(), DLDataType.FLOAT32, 3).flags(DLTensorFlag.READ_ONLY.mask()).build();
            try (OwnedHostTensor readOnly = OwnedHostTensor.wrap(spec, () -> { })) {
                PythonPeers.bind(python, "x", readOnly);
                String outcome = Torch2PeerTest.outcome(python, "jax.dlpack.from_dlpack(x).tolist()");
                System.out.println("jax.dlpack.from_dlpack of a read-only Java tensor: " + outcome);
                assertThat(outcome).satisfiesAnyOf(o -> assertThat(o).startsWith("BufferError"), o -> assertThat(o).isEqualTo("[1.0, 2.0, 3.0]"));
                python.exec("del x\ngc.collect()");
                assertThat(readOnly.references()).isEqualTo(1);
            }
        }
    }

    // ---------------------------------------------------------------- the corpus

    @Test
    void corpusJaxToJava() {
        Map<String, Integer> perDtype = new TreeMap<>();
        for (long seed = 1; seed <= CORPUS; seed++) {
            perDtype.merge(PeerCorpus.peerToJava(python, seed).toString(), 1, Integer::sum);
        }
        System.out.println("JAX -> Java corpus: " + CORPUS + " cases, byte-equal; per dtype " + perDtype);
        assertThat(perDtype).hasSize(JAX_DTYPES.size());
    }

    @Test
    void corpusJavaToJax() {
        SplittableRandom random = new SplittableRandom(20261);
        for (int i = 0; i < CORPUS; i++) {
            PeerCorpus.javaToPeer(python, PeerCorpus.random(random, JAVA_DTYPES, PeerCorpus.Strides.PERMUTED), "jax.dlpack.from_dlpack(x)", random);
        }
        System.out.println("Java -> JAX corpus: " + CORPUS + " cases (compact and transposed), byte-equal; released only after gc.collect(): "
                + PeerCorpus.COLLECTED.get());
    }
}
