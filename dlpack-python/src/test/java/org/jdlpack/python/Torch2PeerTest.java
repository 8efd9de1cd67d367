package org.jdlpack.python;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
import org.jdlpack.testsupport.ChildJvm;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * PyTorch 2.13 as a real peer, both directions, through the public API: every dtype torch has
 * (bool, the unsigned types, float8, complex32 included), every layout, versioned and legacy
 * negotiation, read-only, and a differential corpus each way. PyTorch 2.13 speaks DLPack 1.x and
 * offers the C exchange API (its own suite: {@link TorchExchangeApiPeerTest}).
 *
 * <p>Tagged {@code peer-torch}: the {@code peer-torch} surefire execution runs it in a JVM of its
 * own, embedding the peers venv's CPython (.ci/python-peers/make-venv).
 */
@Tag("peers")
@Tag("peer-torch")
@ExtendWith(NothingLeftBehind.class)
class Torch2PeerTest {

    /** Cases per direction of the corpus. */
    static final int CORPUS = 2000;

    /** The dtypes torch 2.13 has, as jdlpack names them (torch's names but complex32, which is torch.complex32 too). */
    static final List<String> TORCH_DTYPES = List.of("bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32",
            "uint64", "float16", "bfloat16", "float32", "float64", "complex32", "complex64", "complex128", "float8_e4m3fn",
            "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu");

    /** The same, as DLPack types for Java tensors. */
    static final List<DLDataType> JAVA_DTYPES = List.of(DLDataType.BOOL, DLDataType.UINT8, DLDataType.INT8, DLDataType.INT16,
            DLDataType.INT32, DLDataType.INT64, DLDataType.UINT16, DLDataType.UINT32, DLDataType.UINT64, DLDataType.FLOAT16,
            DLDataType.BFLOAT16, DLDataType.FLOAT32, DLDataType.FLOAT64, new DLDataType(DLDataTypeCode.COMPLEX, 32, 1),
            DLDataType.COMPLEX64, DLDataType.COMPLEX128, new DLDataType(DLDataTypeCode.FLOAT8_E4M3FN, 8, 1),
            new DLDataType(DLDataTypeCode.FLOAT8_E5M2, 8, 1), new DLDataType(DLDataTypeCode.FLOAT8_E4M3FNUZ, 8, 1),
            new DLDataType(DLDataTypeCode.FLOAT8_E5M2FNUZ, 8, 1), new DLDataType(DLDataTypeCode.FLOAT8_E8M0FNU, 8, 1));

    private static PythonRuntime python;

    @BeforeAll
    static void startTorch() {
        python = PythonPeers.peer("torch", "torch", "PyTorch", "2.13.");
        python.exec("""
                import random, math, weakref
                DTYPES = [getattr(torch, n) for n in %s]
                import ctypes
                def hexof(t):
                    # the tensor's bytes in row-major order, read from its storage with its own strides and offset
                    # (ctypes and NumPy's as_strided: neither torch's copies nor DLPack)
                    if t.numel() == 0:
                        return ''
                    n = t.element_size()
                    storage = t.untyped_storage()
                    memory = np.frombuffer((ctypes.c_uint8 * storage.nbytes()).from_address(storage.data_ptr()), dtype=np.uint8)
                    elements = np.lib.stride_tricks.as_strided(memory[t.storage_offset() * n:], shape=tuple(t.shape) + (n,),
                                                               strides=tuple(s * n for s in t.stride()) + (1,))
                    return elements.tobytes().hex()
                def shapeof(t):
                    return str(list(t.shape))
                def dtypeof(t):
                    name = str(t.dtype)[len('torch.'):]
                    return 'bool' if name == 'bool' else name
                def make(seed):
                    # a random torch view: dtype, 0 to 4 dims, stepped, permuted, offset, sometimes expanded
                    r = random.Random(seed)
                    dt = r.choice(DTYPES)
                    ndim = r.randint(0, 4)
                    shape = [0 if r.random() < 0.05 else r.randint(1, 5) for _ in range(ndim)]
                    steps = [r.randint(1, 3) for _ in range(ndim)]
                    full = [max(1, s * st + r.randint(0, 1)) for s, st in zip(shape, steps)]
                    perm = list(range(ndim)); r.shuffle(perm)
                    count = math.prod(full) + 3
                    itemsize = torch.empty(0, dtype=dt).element_size()
                    raw = torch.frombuffer(bytearray(r.randbytes(count * itemsize)), dtype=torch.uint8)
                    if dt == torch.bool:
                        raw = raw & 1
                    flat = raw.view(dt)
                    if ndim == 0:
                        return flat[r.randrange(count)]
                    start = r.randrange(4)
                    base = flat[start:start + math.prod(full)].reshape([full[p] for p in perm]).permute([perm.index(i) for i in range(ndim)])
                    t = base[tuple(slice(o, o + s * st, st) for s, st, o in
                                   zip(shape, steps, [r.randint(0, f - s * st) if f > s * st else 0 for f, s, st in zip(full, shape, steps)]))]
                    if r.random() < 0.08:
                        d = r.randrange(ndim)
                        if t.shape[d] >= 1:
                            t = t.narrow(d, 0, 1).expand(*[3 if i == d else -1 for i in range(ndim)])
                    return t
                """.formatted(TORCH_DTYPES.stream().map(n -> "'" + n + "'").toList()));
        System.out.println("PyTorch peer: torch " + python.evalString("torch.__version__") + " on " + python.description());
    }

    @AfterEach
    void nothingHeld() {
        python.exec("x = y = v = t = None");
        PythonPeers.assertPythonHoldsNoJavaTensor(python);
        assertThat(PythonPeers.pendingForeignTensors()).as("torch tensors Java has not released").isZero();
    }

    // ---------------------------------------------------------------- torch -> Java

    static Stream<String> torchDtypes() {
        return TORCH_DTYPES.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("torchDtypes")
    void everyTorchDtypeArrivesVersionedWithItsBytesAndDataPointer(String dtype) {
        python.exec("t = torch.frombuffer(bytearray(range(1, 97)), dtype=torch.uint8)"
                + (dtype.equals("bool") ? " & 1" : "") + "\nt = t.view(torch." + dtype + ").reshape(2, -1)");
        String expected = python.evalString("hexof(t)");
        long dataPointer = Long.parseLong(python.evalString("t.data_ptr()"));
        try (PythonObject t = python.get("t"); ImportedTensor imported = python.importTensor(t)) {
            assertThat(imported.kind()).as("torch 2.13 answers max_version with a versioned tensor").isEqualTo(ManagedTensorKind.VERSIONED);
            assertThat(imported.version()).hasValueSatisfying(v -> assertThat(v.major()).isEqualTo(1));
            HostTensorView host = HostTensorView.of(imported);
            assertThat(host.layout().dtype().toString()).isEqualTo(dtype);
            assertThat(imported.dataAddress() + imported.layout().byteOffset()).as("zero copy").isEqualTo(dataPointer);
            assertThat(PeerCorpus.rowMajorHex(host)).isEqualTo(expected);
            assertThat(host.layout().isReadOnly()).as("torch tensors are writable; torch never sets READ_ONLY").isFalse();
        }
    }

    @Test
    void theFourBitPairTypeArrivesAsTorchLabelsIt() {
        // float4_e2m1fn_x2: two float4 values packed in a byte; torch exports it as DLPack float4_e2m1fn, 4 bits, 2 lanes.
        python.exec("t = torch.frombuffer(bytearray([0x21, 0x43, 0x65]), dtype=torch.uint8).view(torch.float4_e2m1fn_x2)");
        try (PythonObject t = python.get("t"); ImportedTensor imported = python.importTensor(t)) {
            DLDataType dtype = imported.layout().dtype();
            System.out.println("torch.float4_e2m1fn_x2 arrives as " + dtype + " (code " + dtype.code().code() + ", bits " + dtype.bits()
                    + ", lanes " + dtype.lanes() + "), shape " + PeerCorpus.pythonList(imported.layout().shape()));
            assertThat(dtype.code()).isEqualTo(DLDataTypeCode.FLOAT4_E2M1FN);
            assertThat((long) dtype.bits() * dtype.lanes()).as("one byte per torch element").isEqualTo(8);
            assertThat(PeerCorpus.rowMajorHex(HostTensorView.of(imported))).isEqualTo("214365");
        }
    }

    @Test
    void layoutsTorchMakesArriveWithTheirStridesAndOffsetAndTorchsNegativeStridesNeverExist() {
        python.exec("b = torch.arange(24, dtype=torch.float32).reshape(4, 6)");
        for (String view : List.of("b.t()", "b[::2, ::3]", "b[1:, 2:5]", "b[:, 3]", "b[2, 3]", "b[1].expand(4, 6)", "b[:0]",
                "b.flip(1)", "b.unsqueeze(1)")) {
            python.exec("t = " + view);
            try (PythonObject t = python.get("t"); ImportedTensor imported = python.importTensor(t)) {
                assertThat(PeerCorpus.pythonList(imported.layout().strides())).as(view).isEqualTo(python.evalString("str(list(t.stride()))"));
                assertThat(PeerCorpus.rowMajorHex(HostTensorView.of(imported))).as(view).isEqualTo(python.evalString("hexof(t)"));
                assertThat(imported.dataAddress() + imported.layout().byteOffset()).as(view).isEqualTo(Long.parseLong(python.evalString("t.data_ptr()")));
            }
        }
        assertThat(python.evalString("b.flip(1).is_contiguous()")).as("flip copies: torch has no negative strides").isEqualTo("True");
        python.exec("del b");
    }

    @Test
    void aTorchTensorOutlivesItsPythonReferencesUntilJavaClosesIt() {
        python.exec("t = torch.arange(6, dtype=torch.int64)\nw = weakref.ref(t)");
        try (PythonObject t = python.get("t")) {
            ImportedTensor imported = python.importTensor(t);
            python.exec("t = None\ngc.collect()");
            // The DLPack tensor holds torch's storage, not the Python object: the object may go, the memory stays.
            assertThat(HostTensorView.of(imported).getLong(5)).isEqualTo(5);
            assertThat(PythonPeers.pendingForeignTensors()).isEqualTo(1);
            imported.close();
            assertThat(PythonPeers.pendingForeignTensors()).as("torch's deleter ran once").isZero();
        }
        python.exec("gc.collect()");
        assertThat(python.evalString("w() is None")).as("the torch tensor died once Java let go").isEqualTo("True");
        python.exec("del w");
    }

    @Test
    void whatTorchsDunderDlpackRefusesItsExchangeApiExportsAsItIsButAConjugatedViewIsRefused() {
        // __dlpack__ refuses a tensor that requires grad and one with the conjugate bit set; torch's exchange API
        // (what importTensor takes) checks neither. The first arrives with its values; the second would arrive with
        // the memory's values, the conjugates of what torch shows (torch keeps the sign in a bit DLPack cannot
        // carry), so importTensor refuses it (TorchExchangeApiPeerTest has each bit).
        python.exec("g = torch.tensor([1.5, 2.5], requires_grad=True)\nc = torch.tensor([1+2j, 3-4j]).conj()");
        assertThat(outcome(python, "g.__dlpack__(max_version=(1, 3))")).isEqualTo("BufferError: Can't export tensors that require gradient, use tensor.detach()");
        assertThat(outcome(python, "c.__dlpack__(max_version=(1, 3))")).isEqualTo("BufferError: Can't export tensors with the conjugate bit set");
        try (PythonObject g = python.get("g"); ImportedTensor imported = python.importTensor(g)) {
            assertThat(HostTensorView.of(imported).getDouble(1)).isEqualTo(2.5);
        }
        try (PythonObject c = python.get("c")) {
            assertThatThrownBy(() -> python.importTensor(c).close()).isInstanceOf(PythonException.class)
                    .satisfies(e -> assertThat(((PythonException) e).lastLine()).contains("conjugate bit set").contains("resolve_conj()"));
        }
        python.exec("c = c.resolve_conj()");
        try (PythonObject c = python.get("c"); ImportedTensor imported = python.importTensor(c)) {
            HostTensorView host = HostTensorView.of(imported);
            assertThat(new double[] {host.getDouble(0), host.getImaginary(0, 0)}).as("torch's 1-2j").containsExactly(1.0, -2.0);
        }
        python.exec("del g, c");
    }

    @Test
    void torchAnswersEachMaxVersionAsTheArrayApiSays() {
        // What jdlpack's fallback relies on: a versioned tensor for (1, x), legacy without max_version or below 1.0.
        assertThat(python.evalString("[type(c).__name__ and str(c).split('\"')[1] for c in (torch.ones(1).__dlpack__(), "
                + "torch.ones(1).__dlpack__(max_version=(0, 8)), torch.ones(1).__dlpack__(max_version=(1, 0)), "
                + "torch.ones(1).__dlpack__(max_version=(1, 3)), torch.ones(1).__dlpack__(max_version=(2, 0)))]"))
                .isEqualTo("['dltensor', 'dltensor', 'dltensor_versioned', 'dltensor_versioned', 'dltensor_versioned']");
        // A legacy capsule torch made is imported as it is.
        python.exec("cap = torch.arange(3.0).__dlpack__()");
        try (PythonObject cap = python.get("cap"); ImportedTensor imported = python.importTensor(cap)) {
            assertThat(imported.kind()).isEqualTo(ManagedTensorKind.LEGACY);
            assertThat(HostTensorView.of(imported).getDouble(2)).isEqualTo(2.0);
        }
        python.exec("del cap");
    }

    // ---------------------------------------------------------------- Java -> torch

    static Stream<DLDataType> javaDtypes() {
        return JAVA_DTYPES.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("javaDtypes")
    void everyJavaDtypeReachesTorchAsItsOwnDtypeWithoutACopy(DLDataType dtype) {
        SplittableRandom random = new SplittableRandom(dtype.hashCode());
        try (OwnedHostTensor tensor = OwnedHostTensor.allocate(dtype, 3, 4)) {
            PeerCorpus.fill(tensor.host().segment(), dtype, random);
            PythonPeers.bind(python, "x", tensor);
            python.exec("y = torch.from_dlpack(x)\ndel x");
            assertThat(python.evalString("dtypeof(y)")).isEqualTo(dtype.toString());
            assertThat(python.evalString("hexof(y)")).isEqualTo(PeerCorpus.rowMajorHex(tensor.host()));
            assertThat(Long.parseLong(python.evalString("y.data_ptr()"))).isEqualTo(tensor.spec().data().address());
            assertThat(tensor.references()).as("Java's and torch's").isEqualTo(2);
            python.exec("y = None\ngc.collect()");
            assertThat(tensor.references()).as("torch's deleter ran once").isEqualTo(1);
        }
    }

    @Test
    void javaLayoutsReachTorchWithTheirStridesAndByteOffset() {
        SplittableRandom random = new SplittableRandom(7);
        for (long[][] layout : new long[][][] {
            {{4, 6}, {6, 1}, {0}}, {{6, 4}, {1, 6}, {0}}, {{2, 3}, {12, 2}, {0}}, {{3, 6}, {0, 1}, {0}}, {{0, 6}, {6, 1}, {0}},
            {{3, 4}, {6, 1}, {7}}, {{4}, {6}, {2}}, {{}, {}, {5}}}) {
            PeerCorpus.Case c = new PeerCorpus.Case(DLDataType.FLOAT32, layout[0], layout[1], layout[2][0], 24, false);
            PeerCorpus.javaToPeer(python, c, "torch.from_dlpack(x)", random);
        }
    }

    @Test
    void aNegativeStrideViewAbortsTorch213InItsOwnCode() {
        // torch 2.13 aborts the process on any DLPack tensor with a negative stride (NumPy's a[::-1] too):
        // computeStorageNbytes throws a c10::Error that nothing catches. Shown in a child JVM; see docs/python.md.
        ChildJvm.Outcome outcome = ChildJvm.create().timeoutSeconds(180).run(TorchNegativeStrideMain.class);
        assertThat(outcome.exitCode()).as(outcome.output()).isEqualTo(134);
        assertThat(outcome.output()).contains("Storage size calculation overflowed with sizes=[4] and strides=[-1]");
    }

    @Test
    void aReadOnlyJavaTensorReachesTorchWritableAndOnlyACopyKeepsItUnwritten() {
        try (OwnedHostTensor base = OwnedHostTensor.copyOf(new float[] {1, 2, 3}, 3)) {
            TensorSpec spec = TensorSpec.builder(base.spec().data(), DLDataType.FLOAT32, 3).flags(DLTensorFlag.READ_ONLY.mask()).build();
            try (OwnedHostTensor readOnly = OwnedHostTensor.wrap(spec, () -> { })) {
                PythonPeers.bind(python, "x", readOnly);
                python.exec("import warnings\nwith warnings.catch_warnings(record=True) as seen:\n"
                        + "    warnings.simplefilter('always')\n    y = torch.from_dlpack(x)\n"
                        + "warned = [str(w.message) for w in seen]");
                String warned = python.evalString("warned");
                System.out.println("torch.from_dlpack of a read-only Java tensor warns: " + warned);
                assertThat(python.evalString("y.tolist()")).isEqualTo("[1.0, 2.0, 3.0]");
                assertThat(Long.parseLong(python.evalString("y.data_ptr()"))).as("torch shares it (it has no read-only tensors)")
                        .isEqualTo(base.spec().data().address());
                // Torch ignores READ_ONLY: a write reaches the Java memory. What docs/python.md says to do instead: a copy.
                python.exec("y[2] = 8.0");
                assertThat(base.host().getFloat(2)).as("torch wrote through the read-only tensor").isEqualTo(8.0f);
                python.exec("z = torch.from_dlpack(x, copy=True)\nz[0] = 9.0");
                assertThat(Long.parseLong(python.evalString("z.data_ptr()"))).as("a copy").isNotEqualTo(base.spec().data().address());
                assertThat(base.host().getFloat(0)).as("the Java memory, unwritten by the copy's write").isEqualTo(1.0f);
                python.exec("y = z = None\ndel x, warned, seen\ngc.collect()");
                assertThat(readOnly.references()).isEqualTo(1);
            }
        }
    }

    @Test
    void torchAsksForDlpack10AndJavaAnswersVersioned() {
        RecordingSource source = new RecordingSource();
        try (OwnedHostTensor tensor = OwnedHostTensor.copyOf(new float[] {5, 6}, 2)) {
            source.tensor = tensor;
            try (PythonObject x = python.toPython(source)) {
                python.set("x", x);
            }
            python.exec("y = torch.from_dlpack(x)\nz = torch.from_dlpack(x, copy=True)");
            assertThat(python.evalString("(y.tolist(), z.tolist(), z.data_ptr() != y.data_ptr())")).isEqualTo("([5.0, 6.0], [5.0, 6.0], True)");
            assertThat(source.requests).containsExactly(ExportRequest.of(ManagedTensorKind.VERSIONED),
                    new ExportRequest(ManagedTensorKind.VERSIONED, java.util.OptionalLong.empty(), ExportRequest.Copy.ALWAYS));
            python.exec("del x, y, z\ngc.collect()");
            assertThat(tensor.references()).isEqualTo(1);
        }
    }

    // ---------------------------------------------------------------- the corpus

    @Test
    void corpusTorchToJava() {
        Map<String, Integer> perDtype = new TreeMap<>();
        for (long seed = 1; seed <= CORPUS; seed++) {
            perDtype.merge(PeerCorpus.peerToJava(python, seed).toString(), 1, Integer::sum);
        }
        System.out.println("torch -> Java corpus: " + CORPUS + " cases, byte-equal; per dtype " + perDtype);
        assertThat(perDtype).as("every torch dtype drawn").hasSize(TORCH_DTYPES.size());
    }

    @Test
    void corpusJavaToTorch() {
        SplittableRandom random = new SplittableRandom(20260);
        for (int i = 0; i < CORPUS; i++) {
            PeerCorpus.javaToPeer(python, PeerCorpus.random(random, JAVA_DTYPES, PeerCorpus.Strides.ANY), "torch.from_dlpack(x)", random);
        }
        System.out.println("Java -> torch corpus: " + CORPUS + " cases, byte-equal");
    }

    /** Python's outcome of an expression: its value's str, or its exception's last line. */
    static String outcome(PythonRuntime python, String expression) {
        try {
            return python.evalString(expression);
        } catch (PythonException e) {
            return e.lastLine();
        }
    }

    /** A host tensor's source that records what each export was asked for. */
    static final class RecordingSource implements DLPackSource {
        OwnedHostTensor tensor;
        final List<ExportRequest> requests = new java.util.concurrent.CopyOnWriteArrayList<>();

        @Override
        public org.jdlpack.abi.DLDevice device() {
            return tensor.spec().device();
        }

        @Override
        public org.jdlpack.abi.ExportedTensor export(ExportRequest request) {
            requests.add(request);
            return DLPackSource.of(tensor).export(request);
        }
    }
}
