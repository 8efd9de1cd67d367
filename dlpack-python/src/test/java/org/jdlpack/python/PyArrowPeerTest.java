package org.jdlpack.python;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.stream.Stream;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.InvalidTensorException;
import org.jdlpack.abi.ManagedTensorKind;
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
 * pyarrow 25 as a real peer. pyarrow produces DLPack only, legacy only ({@code max_version} is a
 * {@code TypeError}, so {@link PythonRuntime#importTensor} asks again without it), from a
 * primitive {@code pa.Array} (1-d, compact, its slice offset a data pointer inside the buffer)
 * and from a {@code pa.Tensor} (n-d, strided). It has no {@code from_dlpack}: a Java tensor reaches
 * pyarrow through NumPy ({@code pa.array(np.from_dlpack(x))}, {@code pa.Tensor.from_numpy}), still
 * without a copy. Into Arrow Java vectors: {@code PyArrowToArrowJavaTest} in dlpack-arrow.
 */
@Tag("peers")
@Tag("peer-pyarrow")
@ExtendWith(NothingLeftBehind.class)
class PyArrowPeerTest {

    static final int CORPUS = 2000;

    /** The Arrow types pyarrow exports through DLPack, as NumPy and jdlpack name them. */
    static final List<String> PA_DTYPES = List.of("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
            "float16", "float32", "float64");

    static final List<DLDataType> JAVA_DTYPES = PA_DTYPES.stream().map(JaxPeerTest::dtype).toList();

    private static PythonRuntime python;

    @BeforeAll
    static void startPyArrow() {
        python = PythonPeers.peer("pyarrow", "pa", "pyarrow", "25.");
        python.exec("""
                import random, math
                DTYPES = [np.dtype(n) for n in %s]
                def hexof(a):
                    # pyarrow's own view of its buffer (to_numpy), not DLPack
                    return (a.to_numpy(zero_copy_only=False) if isinstance(a, pa.Array) else a.to_numpy()).tobytes().hex()
                def shapeof(a):
                    return str([len(a)] if isinstance(a, pa.Array) else list(a.shape))
                def dtypeof(a):
                    return str(a.to_numpy(zero_copy_only=False).dtype if isinstance(a, pa.Array) else a.to_numpy().dtype)
                def make(seed):
                    r = random.Random(seed)
                    dt = r.choice(DTYPES)
                    if r.random() < 0.6:
                        # a sliced primitive array: its offset is a byte_offset inside pyarrow's buffer
                        n = r.randint(0, 40)
                        start = r.randint(0, 5)
                        whole = pa.array(np.frombuffer(r.randbytes((n + start + 2) * dt.itemsize), dtype=dt))
                        return whole.slice(start, n)
                    # an n-d tensor, sometimes transposed
                    shape = [r.randint(1, 5) for _ in range(r.randint(1, 4))]
                    # over writable memory: a pa.Tensor over an immutable buffer exports a NULL data pointer (its own test)
                    a = np.frombuffer(bytearray(r.randbytes(math.prod(shape) * dt.itemsize)), dtype=dt).reshape(shape)
                    return pa.Tensor.from_numpy(a.T if r.random() < 0.5 else a)
                """.formatted(PA_DTYPES.stream().map(n -> "'" + n + "'").toList()));
        System.out.println("pyarrow peer: pyarrow " + python.evalString("pa.__version__") + " on " + python.description());
    }

    @AfterEach
    void nothingHeld() {
        python.exec("x = y = v = a = None");
        PythonPeers.assertPythonHoldsNoJavaTensor(python);
        assertThat(PythonPeers.pendingForeignTensors()).as("pyarrow buffers Java has not released").isZero();
    }

    static Stream<String> paDtypes() {
        return PA_DTYPES.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("paDtypes")
    void everyArrowTypePyArrowExportsArrivesLegacyAfterTheMaxVersionRetryWithoutACopy(String dtype) {
        python.exec("a = pa.array(np.frombuffer(bytes(range(1, 97)), dtype=np.uint8).view(np." + dtype + ")).slice(1)");
        String expected = python.evalString("hexof(a)");
        long[] before = PythonPeers.exchangeImports();
        try (PythonObject a = python.get("a"); ImportedTensor imported = python.importTensor(a)) {
            assertThat(PythonPeers.exchangeImports()[1] - before[1]).as("no exchange API: __dlpack__").isEqualTo(1);
            assertThat(imported.kind()).as("pyarrow knows no max_version: asked again, legacy").isEqualTo(ManagedTensorKind.LEGACY);
            HostTensorView host = HostTensorView.of(imported);
            assertThat(host.layout().dtype().toString()).isEqualTo(dtype);
            assertThat(PeerCorpus.rowMajorHex(host)).isEqualTo(expected);
            long elementBytes = host.layout().dtype().bits() / 8;
            assertThat(imported.dataAddress() + imported.layout().byteOffset()).as("pyarrow's value buffer, past the slice offset")
                    .isEqualTo(Long.parseLong(python.evalString("a.buffers()[1].address")) + elementBytes);
        }
    }

    @Test
    void whatPyArrowRefusesToExportIsItsOwnError() {
        for (String[] refusal : new String[][] {
            {"pa.array([1.0, None])", "pyarrow.lib.ArrowTypeError: Can only use DLPack on arrays with no nulls."},
            {"pa.array([True, False])", "pyarrow.lib.ArrowTypeError: Bit-packed boolean data type not supported by DLPack."},
            {"pa.array(['a'])", "pyarrow.lib.ArrowTypeError: DataType is not compatible with DLPack spec: string"},
            {"pa.array([1, 2], type=pa.timestamp('ns'))", "pyarrow.lib.ArrowTypeError: DataType is not compatible with DLPack spec: timestamp[ns]"},
            {"pa.FixedSizeListArray.from_arrays(pa.array([1.0, 2.0]), 2)",
                "pyarrow.lib.ArrowTypeError: DataType is not compatible with DLPack spec: fixed_size_list<item: double>[2]"}}) {
            try (PythonObject a = python.eval(refusal[0])) {
                assertThatThrownBy(() -> python.importTensor(a)).as(refusal[0]).isInstanceOf(PythonException.class)
                        .satisfies(e -> assertThat(((PythonException) e).lastLine()).isEqualTo(refusal[1]));
            }
        }
        try (PythonObject chunked = python.eval("pa.chunked_array([[1.0], [2.0]])")) {
            assertThatThrownBy(() -> python.importTensor(chunked)).as("a ChunkedArray has no __dlpack__; its chunks do")
                    .isInstanceOf(PythonException.class).hasMessageContaining("pyarrow.lib.ChunkedArray has no __dlpack__");
        }
    }

    @Test
    void aPyArrowTensorArrivesWithItsStrides() {
        python.exec("a = pa.Tensor.from_numpy(np.arange(12, dtype=np.int32).reshape(3, 4).T)");
        try (PythonObject a = python.get("a"); ImportedTensor imported = python.importTensor(a)) {
            assertThat(imported.layout().strides()).containsExactly(1, 4);
            assertThat(PeerCorpus.rowMajorHex(HostTensorView.of(imported))).isEqualTo(python.evalString("hexof(a)"));
            assertThat(imported.layout().isReadOnly()).as("legacy: pyarrow's immutable buffer arrives writable").isFalse();
        }
    }

    @Test
    void aPyArrowTensorOverAnImmutableBufferExportsANullDataPointerWhichJavaRefusesAndReleasesOnce() {
        // pyarrow 25 exports a pa.Tensor's mutable data pointer, NULL for an immutable buffer (a read-only NumPy array's);
        // NumPy 2.4 takes it and reads whatever lies there. jdlpack refuses it and gives the tensor back to its deleter.
        python.exec("a = pa.Tensor.from_numpy(np.frombuffer(bytes(24), dtype=np.float32).reshape(2, 3))");
        try (PythonObject a = python.get("a")) {
            assertThatThrownBy(() -> python.importTensor(a)).isInstanceOf(InvalidTensorException.class)
                    .hasMessageContaining("DLTensor.data is NULL with 6 elements");
        }
        assertThat(PythonPeers.pendingForeignTensors()).as("pyarrow's deleter ran").isZero();
    }

    @Test
    void aJavaTensorReachesPyArrowThroughNumPyWithoutACopy() {
        try (OwnedHostTensor tensor = OwnedHostTensor.copyOf(new double[] {1.5, 2.5, 3.5}, 3)) {
            PythonPeers.bind(python, "x", tensor);
            python.exec("y = pa.array(np.from_dlpack(x))\ndel x");
            assertThat(python.evalString("y.to_pylist()")).isEqualTo("[1.5, 2.5, 3.5]");
            assertThat(Long.parseLong(python.evalString("y.buffers()[1].address"))).as("pyarrow's buffer is the Java tensor's memory")
                    .isEqualTo(tensor.spec().data().address());
            assertThat(tensor.references()).isEqualTo(2);
            python.exec("y = None\ngc.collect()");
            assertThat(tensor.references()).as("released once pyarrow's array (and NumPy's under it) died").isEqualTo(1);
        }
    }

    @Test
    void corpusPyArrowToJava() {
        Map<String, Integer> perDtype = new TreeMap<>();
        for (long seed = 1; seed <= CORPUS; seed++) {
            perDtype.merge(PeerCorpus.peerToJava(python, seed).toString(), 1, Integer::sum);
        }
        System.out.println("pyarrow -> Java corpus: " + CORPUS + " cases (sliced arrays, tensors), byte-equal; per dtype " + perDtype);
        assertThat(perDtype).hasSize(PA_DTYPES.size());
    }

    @Test
    void corpusJavaToPyArrowTensors() {
        SplittableRandom random = new SplittableRandom(20263);
        for (int i = 0; i < CORPUS; i++) {
            PeerCorpus.Case c = PeerCorpus.random(random, JAVA_DTYPES, PeerCorpus.Strides.ANY);
            PeerCorpus.javaToPeer(python, c, "pa.Tensor.from_numpy(np.from_dlpack(x))", random);
        }
        System.out.println("Java -> pyarrow (pa.Tensor over np.from_dlpack) corpus: " + CORPUS + " cases, byte-equal");
    }
}
