package org.jdlpack.python;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;

import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.InvalidTensorException;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.cpu.HostTensorView;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.testsupport.ExchangePeer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The DLPack 1.3 C exchange API against a producer jdlpack did not write: PyTorch 2.13's table on
 * {@code torch.Tensor}. {@link PythonRuntime#importTensor} takes torch tensors through it; the C
 * consumer of test-support calls every other slot of torch's table; the fallbacks to
 * {@code __dlpack__(max_version=...)} and to legacy {@code __dlpack__()} are taken by objects
 * without a table; and what {@code torch.from_dlpack} uses of the Java tensor type is counted.
 */
@Tag("peers")
@Tag("peer-torch")
@ExtendWith(NothingLeftBehind.class)
class TorchExchangeApiPeerTest {

    private static PythonRuntime python;

    @BeforeAll
    static void startTorch() {
        python = PythonPeers.peer("torch", "torch", "PyTorch", "2.13.");
        python.exec(ExchangePeer.pythonSetup("xc") + """
                out = (ctypes.c_int64 * 12)()
                ctypes.pythonapi.PyCapsule_GetPointer.restype = ctypes.c_void_p
                ctypes.pythonapi.PyCapsule_GetPointer.argtypes = (ctypes.py_object, ctypes.c_char_p)
                torch_table = ctypes.pythonapi.PyCapsule_GetPointer(torch.Tensor.__dlpack_c_exchange_api__, b'dlpack_exchange_api')
                """);
    }

    @AfterEach
    void nothingHeld() {
        python.exec("t = x = y = None");
        PythonPeers.assertPythonHoldsNoJavaTensor(python);
        assertThat(PythonPeers.pendingForeignTensors()).isZero();
    }

    private static long out(int index) {
        return Long.parseLong(python.evalString("out[" + index + "]"));
    }

    @Test
    void torchsTableIsVersion13WithoutPrevApiAndEverySlotSet() {
        assertThat(python.evalString("torch.Tensor.__dlpack_c_exchange_api__")).contains("\"dlpack_exchange_api\"");
        assertThat(python.evalString("tuple((ctypes.c_uint32 * 2).from_address(torch_table))")).as("version").isEqualTo("(1, 3)");
        // DLPackExchangeAPIHeader: version (8 bytes), prev_api; then the five functions.
        assertThat(python.evalString("(ctypes.c_void_p * 7).from_address(torch_table)[1]")).as("prev_api").isEqualTo("None");
        assertThat(python.evalString("all((ctypes.c_void_p * 7).from_address(torch_table)[i] for i in range(2, 7))"))
                .as("every function slot set").isEqualTo("True");
    }

    @Test
    void importTensorTakesATorchTensorThroughTorchsTableWithNoPythonCall() {
        python.exec("t = torch.arange(6, dtype=torch.float32).reshape(2, 3)\ncalls = []\n"
                + "def count(frame, event, arg):\n    if event == 'c_call':\n        calls.append(getattr(arg, '__name__', '?'))");
        long[] before = PythonPeers.exchangeImports();
        try (PythonObject t = python.get("t")) {
            python.exec("import sys\nsys.setprofile(count)");
            ImportedTensor imported;
            try {
                imported = python.importTensor(t);
            } finally {
                python.exec("sys.setprofile(None)");
            }
            try (imported) {
                long[] after = PythonPeers.exchangeImports();
                assertThat(after[0] - before[0]).as("through the exchange API").isEqualTo(1);
                assertThat(after[1] - before[1]).as("fell back").isZero();
                assertThat(imported.kind()).isEqualTo(ManagedTensorKind.VERSIONED);
                assertThat(HostTensorView.of(imported).getDouble(5)).isEqualTo(5.0);
                assertThat(imported.dataAddress()).isEqualTo(Long.parseLong(python.evalString("t.data_ptr()")));
            }
        }
        // No __dlpack__ or __dlpack_device__ call (only the runtime's own exec and setprofile): the table's C function exported.
        assertThat(python.evalString("[c for c in calls if 'dlpack' in c]")).isEqualTo("[]");
        python.exec("del calls, count");
    }

    /** Torch views whose values are not their memory's, and the bit that says so. */
    static final String[][] VALUE_CHANGING_VIEWS = {
        {"torch.tensor([1+2j, 3-4j]).conj()", "conj"},                             // the conjugate bit
        {"torch.tensor([1+2j, 3-4j], dtype=torch.complex32).conj()", "conj"},
        {"torch.tensor([1+2j, 3-4j]).conj().imag", "neg"},                         // the negative bit: float32
        {"torch.tensor([1+2j, 3-4j], dtype=torch.complex128).conj().imag[1:]", "neg"},
        {"torch._neg_view(torch.tensor([1+2j]))", "neg"},                          // a complex one, not conjugated
        {"torch._neg_view(torch.arange(3))", "neg"},                               // int64
        {"torch.nn.Parameter(torch.tensor([1+2j]), requires_grad=False).conj()", "conj"}, // a subclass of torch.Tensor
    };

    @Test
    void importTensorRefusesATorchViewWhoseValuesAreNotItsMemorysAsDunderDlpackRefusesTheConjugateBit() {
        // Before: the conjugate arrived through torch's table as the memory's 1+2j where torch shows 1-2j, silently.
        // A subclass whose type hides torch's table goes through __dlpack__: the same refusal (torch's own passes the negative bit).
        python.exec("class NoTable(torch.Tensor):\n    __dlpack_c_exchange_api__ = None");
        for (String[] view : VALUE_CHANGING_VIEWS) {
            for (String expression : new String[] {view[0], "(" + view[0] + ").as_subclass(NoTable)"}) {
                python.exec("t = " + expression);
                assertThat(python.evalString("'conj' if t.is_conj() else 'neg' if t.is_neg() else '-'")).as(expression).isEqualTo(view[1]);
                String fix = view[1].equals("conj") ? "call resolve_conj() (a copy)" : "call resolve_neg() (a copy)";
                long[] before = PythonPeers.exchangeImports();
                try (PythonObject t = python.get("t")) {
                    assertThatThrownBy(() -> python.importTensor(t).close()).as(expression).isInstanceOf(PythonException.class)
                            .satisfies(e -> assertThat(((PythonException) e).lastLine()).as(expression)
                                    .startsWith("BufferError: a torch tensor with the " + (view[1].equals("conj") ? "conjugate" : "negative") + " bit set")
                                    .contains(fix));
                }
                assertThat(PythonPeers.exchangeImports()[0] - before[0]).as(expression + ": not taken").isZero();
                assertThat(PythonPeers.pendingForeignTensors()).as(expression + ": what torch's table made was given back").isZero();
            }
        }
        python.exec("del NoTable");
    }

    @Test
    void aTorchZeroTensorWhoseMemoryTorchNeverWroteIsRefusedForItsNullData() {
        // torch's third value flag: a ZeroTensor shows zeros and has no memory (data NULL), which the import refuses.
        python.exec("t = torch._efficientzerotensor(3)");
        assertThat(python.evalString("(t._is_zerotensor(), t.data_ptr())")).isEqualTo("(True, 0)");
        try (PythonObject t = python.get("t")) {
            assertThatThrownBy(() -> python.importTensor(t).close()).isInstanceOf(InvalidTensorException.class)
                    .hasMessageContaining("NULL");
        }
        assertThat(PythonPeers.pendingForeignTensors()).as("torch's deleter ran").isZero();
    }

    @Test
    void aResolvedTorchViewArrivesWithTheValuesTorchShows() {
        // The fixes the refusals name, and torch.conj_physical (a conjugate written to memory): torch's values, through the table.
        String[][] cases = {
            {"torch.tensor([1+2j, 3-4j]).conj().resolve_conj()", "1.0", "-2.0"},
            {"torch.conj_physical(torch.tensor([1+2j, 3-4j]))", "1.0", "-2.0"},
            {"torch.tensor([1+2j, 3-4j]).conj().imag.resolve_neg()", "-2.0", null},
            {"torch.tensor([1+2j, 3-4j]).conj().resolve_conj().imag", "-2.0", null},
            {"torch._efficientzerotensor(3).clone()", "0.0", null},
            {"torch.tensor([1+2j, 3-4j]).imag", "2.0", null},                       // not conjugated: no bit, no call but is_neg()
        };
        for (String[] c : cases) {
            python.exec("t = " + c[0]);
            long[] before = PythonPeers.exchangeImports();
            try (PythonObject t = python.get("t"); ImportedTensor imported = python.importTensor(t)) {
                assertThat(PythonPeers.exchangeImports()[0] - before[0]).as(c[0] + ": through the exchange API").isEqualTo(1);
                HostTensorView host = HostTensorView.of(imported);
                assertThat(String.valueOf(host.getDouble(0))).as(c[0]).isEqualTo(c[1]);
                if (c[2] != null) {
                    assertThat(String.valueOf(host.getImaginary(0, 0))).as(c[0] + ", imaginary part").isEqualTo(c[2]);
                }
            }
        }
    }

    @Test
    void aRefusedTorchConversionsLastLineIsTheExceptionNotTorchsCppBacktrace() {
        // Torch's table raises RuntimeError for these, whose message carries torch's C++ backtrace on the lines after it.
        String[] refused = {
            "torch.quantize_per_tensor(torch.tensor([1.0]), 0.1, 0, torch.qint8)",
            "torch.empty(2, device='meta')",
            "torch.tensor([[1.0, 0.0]]).to_sparse()",
            "torch.tensor([[1.0, 0.0]]).to_sparse_csr()",
            "torch.nested.nested_tensor([torch.tensor([1.0]), torch.tensor([1.0, 2.0])])",
        };
        python.exec("import warnings\nwarnings.simplefilter('ignore')");
        for (String tensor : refused) {
            python.exec("t = " + tensor);
            try (PythonObject t = python.get("t")) {
                assertThatThrownBy(() -> python.importTensor(t).close()).as(tensor).isInstanceOf(PythonException.class)
                        .satisfies(e -> {
                            PythonException failure = (PythonException) e;
                            System.out.println(tensor + " -> " + failure.lastLine());
                            assertThat(failure.lastLine()).as(tensor).matches("(RuntimeError|BufferError|TypeError): \\S.*")
                                    .doesNotContain("frame #").doesNotContain("\n");
                            assertThat(failure.getMessage()).as("the whole message stays").contains(failure.lastLine());
                        });
            }
            // The same through Python code jdlpack runs (a traceback): its last line is the exception too.
            assertThat(Torch2PeerTest.outcome(python, "t.__dlpack__()")).as(tensor).matches("(RuntimeError|BufferError|TypeError): \\S.*")
                    .doesNotContain("frame #");
        }
        python.exec("warnings.resetwarnings()");
    }

    @Test
    void theCConsumerTakesAndViewsTorchTensorsThroughTheTableAndTorchsDeleterRunsOnceEach() {
        python.exec("import sys\nt = torch.tensor([1.5, 2.0, 3.0])");
        assertThat(python.evalString("xc.xc_consume_exchange(t, 5, out)")).as("managed_tensor_from_py_object_no_sync").isEqualTo("0");
        assertThat(new long[] {out(0), out(1), out(2), out(3), out(6), out(9)}).as("ndim, shape[0], code, bits, minor, taken")
                .containsExactly(1, 3, 2, 32, 3, 5);
        assertThat(out(4)).as("torch's memory").isEqualTo(Long.parseLong(python.evalString("t.data_ptr()")));
        assertThat(Float.intBitsToFloat((int) out(8))).isEqualTo(1.5f);
        assertThat(python.evalString("xc.xc_view_exchange(t, 5, out)")).as("dltensor_from_py_object_no_sync").isEqualTo("0");
        assertThat(new long[] {out(0), out(1), out(9)}).containsExactly(1, 3, 5);
        assertThat(out(4)).isEqualTo(Long.parseLong(python.evalString("t.data_ptr()")));
        // After five exports and five deleters, torch holds no extra reference to the tensor's storage.
        assertThat(python.evalString("sys.getrefcount(t)")).isEqualTo("2");
    }

    @Test
    void torchsCurrentWorkStreamForTheCpuIsNull() {
        python.exec("t = torch.ones(1)\nout[0] = 77");
        assertThat(python.evalString("xc.xc_current_work_stream(t, 1, 0, out)")).isEqualTo("0");
        assertThat(out(0)).as("kDLCPU has no stream").isZero();
    }

    @Test
    void torchsAllocatorMakesACompactTensorItsDeleterFreesAndReportsWhatItCannotMake() {
        python.exec("t = torch.ones(1)\nshape = (ctypes.c_int64 * 2)(4, 5)\nkind = ctypes.create_string_buffer(256)\n"
                + "msg = ctypes.create_string_buffer(256)");
        assertThat(python.evalString("xc.xc_allocate(t, 1, 2, shape, 2, 32, kind, msg, out)")).isEqualTo("0");
        // Not necessarily zeroed: the header does not ask for it, and torch allocates as torch.empty does (jdlpack's allocator zeroes).
        assertThat(new long[] {out(0), out(1), out(2), out(3), out(11)}).as("ndim, shape[0], code, bits, SetError calls")
                .containsExactly(2, 4, 2, 32, 0);
        // A prototype torch cannot make: torch reports it through SetError, as the header says.
        String rc = python.evalString("xc.xc_allocate(t, 2, 2, shape, 2, 32, kind, msg, out)");
        System.out.println("torch's allocator for a CUDA prototype on a CPU-only build: rc " + rc + ", SetError " + out(11) + " times: "
                + python.evalString("(kind.value.decode(), msg.value.decode()[:200])"));
        assertThat(rc).isEqualTo("-1");
        assertThat(out(11)).as("SetError called once").isEqualTo(1);
        python.exec("del shape, kind, msg");
    }

    @Test
    void torchsToPyObjectTakesItsOwnTensorBackAsATorchTensorOverTheSameMemory() {
        python.exec("t = torch.arange(4, dtype=torch.int32)\ny = xc.xc_round_trip(t)");
        assertThat(python.evalString("(type(y).__name__, y.tolist(), y.data_ptr() == t.data_ptr())")).isEqualTo("('Tensor', [0, 1, 2, 3], True)");
    }

    @Test
    void objectsWithoutATableFallBackToMaxVersionThenToLegacy() {
        python.exec("""
                class Wrapped:
                    '''A torch tensor behind a plain __dlpack__: no table on this type.'''
                    def __init__(self, t): self.t = t; self.asked = []
                    def __dlpack__(self, **kwargs): self.asked.append(kwargs.get('max_version')); return self.t.__dlpack__(**kwargs)
                    def __dlpack_device__(self): return self.t.__dlpack_device__()
                class Legacy(Wrapped):
                    '''One that predates DLPack 1.0: max_version is a TypeError.'''
                    def __dlpack__(self, stream=None): self.asked.append(stream); return self.t.__dlpack__()
                t = torch.arange(3.0)
                """);
        for (String[] wrapper : new String[][] {{"Wrapped(t)", "VERSIONED", "[(1, 3)]"}, {"Legacy(t)", "LEGACY", "[None]"}}) {
            long[] before = PythonPeers.exchangeImports();
            python.exec("x = " + wrapper[0]);
            try (PythonObject x = python.get("x"); ImportedTensor imported = python.importTensor(x)) {
                long[] after = PythonPeers.exchangeImports();
                assertThat(after[1] - before[1]).as(wrapper[0] + " fell back").isEqualTo(1);
                assertThat(imported.kind().name()).as(wrapper[0]).isEqualTo(wrapper[1]);
                assertThat(python.evalString("x.asked")).as(wrapper[0]).isEqualTo(wrapper[2]);
                assertThat(HostTensorView.of(imported).getDouble(2)).isEqualTo(2.0);
            }
        }
        python.exec("del Wrapped, Legacy");
    }

    @Test
    void torchFromDlpackOfAJavaTensorUsesDunderDlpackNotTheJavaTypesTable() {
        Torch2PeerTest.RecordingSource source = new Torch2PeerTest.RecordingSource();
        try (OwnedHostTensor tensor = OwnedHostTensor.copyOf(new float[] {1, 2, 3}, 3)) {
            source.tensor = tensor;
            try (PythonObject x = python.toPython(source)) {
                python.set("x", x);
            }
            python.exec("""
                    import sys
                    calls = []
                    def count(frame, event, arg):
                        if event == 'c_call':
                            calls.append(getattr(arg, '__name__', '?'))
                    sys.setprofile(count)
                    try:
                        y = torch.from_dlpack(x)
                    finally:
                        sys.setprofile(None)
                    """);
            List<String> used = List.of(python.evalString("','.join(c for c in calls if c.startswith('__dlpack') or c == '_from_dlpack')").split(","));
            System.out.println("torch.from_dlpack(javaTensor) calls: " + used + "; exports asked of Java: " + source.requests);
            assertThat(used).containsExactly("__dlpack_device__", "__dlpack__", "_from_dlpack");
            assertThat(source.requests).as("one export, the versioned struct torch asked for with max_version=(1, 0)")
                    .containsExactly(ExportRequest.of(ManagedTensorKind.VERSIONED));
            assertThat(python.evalString("y.tolist()")).isEqualTo("[1.0, 2.0, 3.0]");
            python.exec("del calls, count\ny = x = None\ngc.collect()");
            assertThat(tensor.references()).isEqualTo(1);
        }
    }
}
