package org.jdlpack.python;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLPackStats;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.TensorSpec;
import org.jdlpack.cpu.HostTensorView;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.testsupport.ExchangePeer;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.python.internal.bridge.ExchangeImports;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The DLPack 1.3 C exchange API both ways: the Java tensor type's table exercised by a C consumer
 * that is not jdlpack's (exchange_peer.c, loaded with ctypes), hostile tables refused without a
 * crash, and {@link PythonRuntime#importTensor} through a type's table (the Java type's, and a
 * small C producer type's) with its fallback to {@code __dlpack__}.
 */
@ExtendWith(NothingLeftBehind.class)
class ExchangeApiTest {

    private static PythonRuntime python;

    @BeforeAll
    static void start() {
        python = PythonPeers.numpy();
        python.exec(ExchangePeer.pythonSetup("xc"));
        python.exec("out = (ctypes.c_int64 * 12)()");
    }

    @AfterEach
    void pythonHoldsNoJavaTensor() {
        PythonPeers.assertPythonHoldsNoJavaTensor(python);
    }

    private static long out(int index) {
        return Long.parseLong(python.evalString("out[" + index + "]"));
    }

    @Test
    void theJavaTensorTypeCarriesTheTableAsTheHeaderSays() {
        try (OwnedHostTensor tensor = OwnedHostTensor.copyOf(new float[] {1, 2}, 2)) {
            PythonPeers.bind(python, "x", tensor);
            assertThat(python.evalString("type(type(x).__dlpack_c_exchange_api__).__name__")).isEqualTo("PyCapsule");
            assertThat(python.evalString("type(x).__dlpack_c_exchange_api__")).contains("\"dlpack_exchange_api\"");
            python.exec("""
                    ctypes.pythonapi.PyCapsule_GetPointer.restype = ctypes.c_void_p
                    ctypes.pythonapi.PyCapsule_GetPointer.argtypes = (ctypes.py_object, ctypes.c_char_p)
                    table = ctypes.pythonapi.PyCapsule_GetPointer(type(x).__dlpack_c_exchange_api__, b'dlpack_exchange_api')
                    words = (ctypes.c_uint32 * 2).from_address(table)
                    slots = (ctypes.c_void_p * 7).from_address(table)
                    """);
            assertThat(python.evalString("(words[0], words[1], slots[1])")).as("version 1.3, no prev_api").isEqualTo("(1, 3, None)");
            assertThat(python.evalString("all(slots[i] for i in range(2, 7))")).as("every function set").isEqualTo("True");
            python.exec("del x, table, words, slots");
        }
    }

    @Test
    void aCConsumerTakesVersionedTensorsWhoseDeleterRunsOnceEach() {
        try (OwnedHostTensor tensor = OwnedHostTensor.copyOf(new float[] {1.5f, 2, 3, 4, 5, 6}, 2, 3)) {
            PythonPeers.bind(python, "x", tensor);
            assertThat(python.evalString("xc.xc_consume_exchange(x, 5, out)")).isEqualTo("0");
            assertThat(out(0)).as("ndim").isEqualTo(2);
            assertThat(out(1)).as("shape[0]").isEqualTo(2);
            assertThat(out(2)).as("dtype code").isEqualTo(2);
            assertThat(out(3)).as("dtype bits").isEqualTo(32);
            assertThat(out(4)).as("data: the Java memory, no copy").isEqualTo(tensor.spec().data().address());
            assertThat(out(5)).as("flags").isZero();
            assertThat(out(6)).as("version minor").isEqualTo(3);
            assertThat(out(7)).as("current_work_stream for the CPU: NULL").isZero();
            assertThat(Float.intBitsToFloat((int) out(8))).as("element 0").isEqualTo(1.5f);
            assertThat(out(9)).as("tensors taken").isEqualTo(5);
            assertThat(tensor.references()).as("every deleter ran: Java's reference only").isEqualTo(1);
            assertThat(DLPackStats.liveExports()).isZero();
            python.exec("del x");
        }
    }

    @Test
    void aCConsumerViewsTheTensorThroughDltensorFromPyObjectValidUntilControlReturns() {
        OwnedHostTensor tensor = OwnedHostTensor.copyOf(new float[] {7, 8, 9}, 3);
        PythonPeers.bind(python, "x", tensor);
        assertThat(python.evalString("xc.xc_view_exchange(x, 100, out)")).isEqualTo("0");
        assertThat(out(0)).isEqualTo(1);
        assertThat(out(1)).isEqualTo(3);
        assertThat(out(4)).as("the Java memory").isEqualTo(tensor.spec().data().address());
        assertThat(Float.intBitsToFloat((int) out(8))).isEqualTo(7f);
        assertThat(out(9)).isEqualTo(100);
        assertThat(tensor.references()).as("Java's reference and the one export every view of this object reads").isEqualTo(2);
        tensor.close();
        assertThatThrownBy(() -> python.exec("xc.xc_view_exchange(x, 1, out)")).isInstanceOf(PythonException.class)
                .satisfies(e -> assertThat(((PythonException) e).lastLine()).startsWith("BufferError").contains("closed"));
        python.exec("del x\ngc.collect()");
        assertThat(tensor.references()).as("the view's export went with the object").isZero();
    }

    @Test
    void aReadOnlyTensorIsNotViewedAsADLTensorWhichCannotSaySo() {
        try (OwnedHostTensor source = OwnedHostTensor.copyOf(new int[] {1, 2}, 2)) {
            OwnedHostTensor readOnly = OwnedHostTensor.wrap(TensorSpec.of(source.spec().data().asReadOnly(), DLDataType.INT32, 2), () -> { });
            PythonPeers.bind(python, "ro", readOnly);
            assertThatThrownBy(() -> python.exec("xc.xc_view_exchange(ro, 1, out)")).isInstanceOf(PythonException.class)
                    .satisfies(e -> assertThat(((PythonException) e).lastLine()).startsWith("BufferError").contains("read-only"));
            assertThat(python.evalString("xc.xc_consume_exchange(ro, 1, out)")).isEqualTo("0");
            assertThat(out(5)).as("the managed tensor says READ_ONLY").isEqualTo(1);
            python.exec("del ro\ngc.collect()");
            readOnly.close();
        }
    }

    @Test
    void failuresAreRaisedAsPythonExceptionsNeverCrashes() {
        OwnedHostTensor tensor = OwnedHostTensor.copyOf(new float[] {1}, 1);
        PythonPeers.bind(python, "x", tensor);
        python.exec("a = np.arange(3.0)");
        assertThatThrownBy(() -> python.exec("xc.xc_from_py_object_of(x, a)")).isInstanceOf(PythonException.class)
                .satisfies(e -> assertThat(((PythonException) e).lastLine())
                        .isEqualTo("TypeError: managed_tensor_from_py_object_no_sync: expected a _jdlpack.JavaTensor, got a ndarray"));
        tensor.close();
        assertThatThrownBy(() -> python.exec("xc.xc_consume_exchange(x, 1, out)")).isInstanceOf(PythonException.class)
                .satisfies(e -> assertThat(((PythonException) e).lastLine()).startsWith("BufferError"));
        python.exec("del x, a");
    }

    @Test
    void theAllocatorMakesAJdlpackOwnedTensorFreedByItsDeleter() {
        try (OwnedHostTensor tensor = OwnedHostTensor.copyOf(new float[] {1}, 1)) {
            PythonPeers.bind(python, "x", tensor);
            python.exec("shape = (ctypes.c_int64 * 2)(4, 5)\nkind = ctypes.create_string_buffer(256)\nmsg = ctypes.create_string_buffer(256)");
            long exports = DLPackStats.liveExports();
            assertThat(python.evalString("xc.xc_allocate(x, 1, 2, shape, 2, 32, kind, msg, out)")).isEqualTo("0");
            assertThat(out(0)).isEqualTo(2);
            assertThat(out(1)).isEqualTo(4);
            assertThat(out(10)).as("zero-filled").isEqualTo(1);
            assertThat(out(11)).as("SetError calls").isZero();
            assertThat(DLPackStats.liveExports()).as("the consumer deleted it").isEqualTo(exports);
            python.exec("del x");
        }
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "a CUDA prototype  | 2, 1, shape, 2, 32 | host (CPU) tensors only",
        "a bad dtype       | 1, 1, shape, 99, 32 | not a DLPack 1.3 type code",
        "a negative ndim   | 1, -1, shape, 2, 32 | ndim is -1",
        "no shape          | 1, 2, None, 2, 32 | prototype shape is NULL"})
    void theAllocatorReportsWhatItCannotMakeThroughSetError(String what, String arguments, String message) {
        try (OwnedHostTensor tensor = OwnedHostTensor.copyOf(new float[] {1}, 1)) {
            PythonPeers.bind(python, "x", tensor);
            python.exec("shape = (ctypes.c_int64 * 2)(4, 5)\nkind = ctypes.create_string_buffer(256)\nmsg = ctypes.create_string_buffer(256)");
            assertThat(python.evalString("xc.xc_allocate(x, " + arguments + ", kind, msg, out)")).isEqualTo("-1");
            assertThat(out(11)).as("SetError called exactly once").isEqualTo(1);
            assertThat(python.evalString("kind.value.decode()")).isEqualTo("ValueError");
            assertThat(python.evalString("msg.value.decode()")).contains(message);
            assertThat(python.evalString("1 + 1")).as("the allocator sets no Python exception").isEqualTo("2");
            python.exec("del x");
        }
    }

    @Test
    void toPyObjectTakesAForeignTensorIntoANewJavaTensor() {
        long deleted = Long.parseLong(python.evalString("xc.xc_producer_deleted()"));
        try (OwnedHostTensor tensor = OwnedHostTensor.copyOf(new float[] {1}, 1)) {
            PythonPeers.bind(python, "x", tensor);
            python.exec("y = xc.xc_to_py(x, 4)");
            assertThat(python.evalString("type(y).__name__")).isEqualTo("JavaTensor");
            assertThat(python.evalString("np.from_dlpack(y).tolist()")).isEqualTo("[0.0, 0.5, 1.0, 1.5]");
            python.exec("held = np.from_dlpack(y)\ndel y\ngc.collect()");
            assertThat(python.evalString("xc.xc_producer_deleted()")).as("NumPy's array still holds it")
                    .isEqualTo(Long.toString(deleted));
            python.exec("del held\ngc.collect()");
            assertThat(python.evalString("xc.xc_producer_deleted()")).as("the C producer's deleter, once")
                    .isEqualTo(Long.toString(deleted + 1));
            // A Java tensor taken out and given back to its own type: the same memory.
            python.exec("z = xc.xc_round_trip(x)");
            assertThat(python.evalString("np.from_dlpack(z).ctypes.data")).isEqualTo(Long.toString(tensor.spec().data().address()));
            python.exec("del z, x\ngc.collect()");
            assertThat(tensor.references()).isEqualTo(1);
        }
    }

    @ParameterizedTest(name = "variant {0}: {1}")
    @CsvSource(delimiter = '|', value = {
        "0 | every slot NULL            | -13 | 23",
        "1 | from_py_object NULL         | -13 | 2",
        "2 | current_work_stream NULL    | -13 | 16",
        "3 | major 2, no prev_api        | -12 | -1",
        "5 | major 0                     | -12 | -1",
        "6 | a capsule of another name   | -11 | -1",
        "7 | an int, not a capsule       | -11 | -1"})
    void aCConsumerRefusesHostileTablesWithoutACrash(int variant, String what, int code, long nullSlots) {
        python.exec("class Hostile:\n    __dlpack_c_exchange_api__ = xc.xc_hostile_capsule(" + variant + ")\n    n = 3\nh = Hostile()");
        python.exec("out[0] = -1");
        assertThat(python.evalString("xc.xc_consume_exchange(h, 1, out)")).as(what).isEqualTo(Integer.toString(code));
        assertThat(out(0)).as("the NULL slots it saw").isEqualTo(nullSlots);
        python.exec("del Hostile, h");
    }

    @Test
    void aConsumerWalksPrevApiToATableItKnows() {
        python.exec("class Newer:\n    __dlpack_c_exchange_api__ = xc.xc_hostile_capsule(4)\n    n = 3\nh = Newer()");
        assertThat(python.evalString("xc.xc_consume_exchange(h, 1, out)")).isEqualTo("0");
        assertThat(out(1)).isEqualTo(3);
        try (PythonObject h = python.get("h"); ImportedTensor tensor = python.importTensor(h)) {
            assertThat(HostTensorView.of(tensor).getFloat(2)).isEqualTo(1.0f);
        }
        python.exec("del Newer, h");
    }

    @Test
    void importTensorTakesAJavaTensorThroughItsTypesTable() {
        try (OwnedHostTensor tensor = OwnedHostTensor.copyOf(new double[] {1, 2, 3}, 3)) {
            PythonPeers.bind(python, "x", tensor);
            long taken = ExchangeImports.TAKEN.get();
            try (PythonObject x = python.get("x"); ImportedTensor imported = python.importTensor(x)) {
                assertThat(ExchangeImports.TAKEN.get()).as("through the exchange API").isEqualTo(taken + 1);
                assertThat(imported.kind()).isEqualTo(ManagedTensorKind.VERSIONED);
                assertThat(imported.dataAddress()).isEqualTo(tensor.spec().data().address());
                assertThat(HostTensorView.of(imported).getDouble(2)).isEqualTo(3.0);
                assertThat(tensor.references()).isEqualTo(2);
            }
            assertThat(tensor.references()).isEqualTo(1);
            python.exec("del x");
        }
    }

    @Test
    void importTensorTakesTheCProducersTensorThroughItsTableAndNotItsDunderDlpack() {
        python.exec("class ExchangeOnly(CTensor):\n    def __dlpack__(self, **kwargs):\n        raise RuntimeError('__dlpack__ called')");
        long deleted = Long.parseLong(python.evalString("xc.xc_producer_deleted()"));
        long taken = ExchangeImports.TAKEN.get();
        try (PythonObject c = python.eval("ExchangeOnly(5)"); ImportedTensor tensor = python.importTensor(c)) {
            assertThat(ExchangeImports.TAKEN.get()).isEqualTo(taken + 1);
            HostTensorView view = HostTensorView.of(tensor);
            assertThat(view.layout().shape()).containsExactly(5);
            assertThat(view.getFloat(4)).isEqualTo(2.0f);
            assertThat(tensor.version().orElseThrow().minor()).isEqualTo(3);
        }
        assertThat(python.evalString("xc.xc_producer_deleted()")).as("its deleter, once").isEqualTo(Long.toString(deleted + 1));
        python.exec("del ExchangeOnly");
    }

    @Test
    void aProducersErrorIsAPythonExceptionAndNothingLeaks() {
        long deleted = Long.parseLong(python.evalString("xc.xc_producer_deleted()"));
        try (PythonObject c = python.eval("CTensor(-1)")) {
            assertThatThrownBy(() -> python.importTensor(c)).isInstanceOf(PythonException.class)
                    .hasMessageContaining("managed_tensor_from_py_object_no_sync returned -1")
                    .satisfies(e -> assertThat(((PythonException) e).lastLine())
                            .isEqualTo("BufferError: a C producer tensor of negative length"));
        }
        assertThat(python.evalString("1 + 1")).as("no exception left pending").isEqualTo("2");
        assertThat(python.evalString("xc.xc_producer_deleted()")).isEqualTo(Long.toString(deleted));
    }

    @Test
    void aProducerGivingTheSameTensorTwiceLeavesTheFirstOwnersReleaseIntact() {
        // Before: the second take installed the deleter guard over the first owner's before the
        // refusal, so the first owner's close found "no live Python import" and the producer's
        // deleter never ran.
        python.exec("class SameTwice:\n    __dlpack_c_exchange_api__ = xc.xc_hostile_capsule(8)\n    n = 3\ns = SameTwice()");
        long deleted = Long.parseLong(python.evalString("xc.xc_producer_deleted()"));
        try (PythonObject same = python.get("s")) {
            ImportedTensor first = python.importTensor(same);
            assertThatThrownBy(() -> python.importTensor(same)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("already owned");
            assertThat(HostTensorView.of(first).getFloat(2)).isEqualTo(1.0f);
            assertThat(python.evalString("xc.xc_producer_deleted()")).as("the refusal called nothing").isEqualTo(Long.toString(deleted));
            first.close();
        }
        assertThat(python.evalString("xc.xc_producer_deleted()")).as("the first owner's close: the producer's deleter, once")
                .isEqualTo(Long.toString(deleted + 1));
        python.exec("del SameTwice, s");
    }

    @Test
    void aCConsumerGivingOneTensorTwiceToOurTypeLeavesTheFirstOwnersReleaseIntact() {
        long deleted = Long.parseLong(python.evalString("xc.xc_producer_deleted()"));
        try (OwnedHostTensor tensor = OwnedHostTensor.copyOf(new float[] {1}, 1)) {
            PythonPeers.bind(python, "x", tensor);
            python.exec("rc = (ctypes.c_int64 * 1)()\ny = xc.xc_to_py_twice(x, 4, rc)");
            assertThat(python.evalString("rc[0]")).as("the second hand-over refused").isEqualTo("-1");
            assertThat(python.evalString("np.from_dlpack(y).tolist()")).isEqualTo("[0.0, 0.5, 1.0, 1.5]");
            assertThat(python.evalString("xc.xc_producer_deleted()")).isEqualTo(Long.toString(deleted));
            python.exec("del y, x, rc\ngc.collect()");
        }
        assertThat(python.evalString("xc.xc_producer_deleted()")).as("the first owner's release: the producer's deleter, once")
                .isEqualTo(Long.toString(deleted + 1));
    }

    @Test
    void aProducerThatSucceedsWithAnExceptionSetFailsTheImportAndLeavesNothingPending() {
        // Before: the import succeeded and the next, unrelated call (1 + 1) raised the producer's RuntimeError.
        python.exec("class ErrorSet:\n    __dlpack_c_exchange_api__ = xc.xc_hostile_capsule(9)\n    n = 3\ne = ErrorSet()");
        long deleted = Long.parseLong(python.evalString("xc.xc_producer_deleted()"));
        try (PythonObject e = python.get("e")) {
            assertThatThrownBy(() -> python.importTensor(e)).isInstanceOf(PythonException.class)
                    .hasMessageContaining("returned 0 with a Python exception set")
                    .satisfies(t -> assertThat(((PythonException) t).lastLine()).isEqualTo("RuntimeError: left set by a producer that returned 0"));
        }
        assertThat(python.evalString("1 + 1")).as("no exception left pending").isEqualTo("2");
        assertThat(python.evalString("xc.xc_producer_deleted()")).as("the tensor given back: its deleter, once")
                .isEqualTo(Long.toString(deleted + 1));
        python.exec("del ErrorSet, e");
    }

    @ParameterizedTest(name = "variant {0}")
    @CsvSource({"0", "1", "3", "5", "6", "7"})
    void importTensorFallsBackToDunderDlpackWhenTheTableIsNotUsable(int variant) {
        python.exec("class Wrapped:\n    __dlpack_c_exchange_api__ = xc.xc_hostile_capsule(" + variant + ")\n"
                + "    def __init__(self, a):\n        self.a = a\n"
                + "    def __dlpack__(self, **kwargs):\n        return self.a.__dlpack__(**kwargs)\n"
                + "w = Wrapped(np.arange(4.0))");
        long fellBack = ExchangeImports.FELL_BACK.get();
        try (PythonObject w = python.get("w"); ImportedTensor tensor = python.importTensor(w)) {
            assertThat(ExchangeImports.FELL_BACK.get()).isEqualTo(fellBack + 1);
            assertThat(HostTensorView.of(tensor).getDouble(3)).isEqualTo(3.0);
        }
        python.exec("del Wrapped, w");
    }

    /** A source on a device (CUDA 0, as far as DLPack says: host memory nobody reads) that names a work stream. */
    private static DLPackSource deviceSource(org.jdlpack.abi.ExportOwner owner, java.lang.foreign.Arena arena, long stream) {
        TensorSpec spec = TensorSpec.builder(arena.allocate(16), DLDataType.FLOAT32, 4).device(new org.jdlpack.abi.DLDevice(2, 0))
                .capacity(16).build();
        return new DLPackSource() {
            @Override
            public org.jdlpack.abi.DLDevice device() {
                return spec.device();
            }

            @Override
            public org.jdlpack.abi.ExportedTensor export(ExportRequest request) {
                return owner.export(spec, org.jdlpack.abi.ExportOptions.of(request.kind()));
            }

            @Override
            public java.util.OptionalLong currentWorkStream() {
                return java.util.OptionalLong.of(stream);
            }
        };
    }

    @Test
    void currentWorkStreamIsNullForTheCpuAndTheDevicesSourceStreamOtherwise() {
        try (OwnedHostTensor tensor = OwnedHostTensor.copyOf(new float[] {1}, 1); java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofShared();
             org.jdlpack.abi.ExportOwner owner = org.jdlpack.abi.ExportOwner.of(() -> { })) {
            PythonPeers.bind(python, "x", tensor);
            python.exec("out[0] = -1");
            assertThat(python.evalString("xc.xc_current_work_stream(x, 1, 0, out)")).isEqualTo("0");
            assertThat(out(0)).as("the CPU: NULL").isZero();
            try (PythonObject d = python.toPython(deviceSource(owner, arena, 0x1234))) {
                python.set("d", d);
            }
            assertThat(python.evalString("xc.xc_consume_exchange(d, 2, out)")).isEqualTo("0");
            assertThat(out(7)).as("the consumer asked for the tensor's device right after taking it").isEqualTo(0x1234);
            assertThat(python.evalString("xc.xc_current_work_stream(d, 2, 0, out)")).isEqualTo("0");
            assertThat(out(0)).isEqualTo(0x1234);
            assertThat(python.evalString("xc.xc_current_work_stream(d, 2, 1, out)")).isEqualTo("0");
            assertThat(out(0)).as("another device: NULL").isZero();
            // importTensor gives a device tensor back and takes it through __dlpack__, which orders the streams.
            long taken = ExchangeImports.TAKEN.get();
            long fellBack = ExchangeImports.FELL_BACK.get();
            try (PythonObject d = python.get("d"); ImportedTensor imported = python.importTensor(d)) {
                assertThat(imported.device().deviceType()).isEqualTo(2);
                assertThat(ExchangeImports.TAKEN.get()).isEqualTo(taken);
                assertThat(ExchangeImports.FELL_BACK.get()).isEqualTo(fellBack + 1);
            }
            assertThat(DLPackStats.liveExports()).as("the export the exchange API gave is released").isZero();
            python.exec("del x, d\ngc.collect()");
        }
    }

    @Test
    void virtualThreadsImportJavaTensorsThroughTheTableConcurrently() throws InterruptedException {
        java.util.concurrent.atomic.AtomicReference<Throwable> failure = new java.util.concurrent.atomic.AtomicReference<>();
        Thread[] threads = new Thread[16];
        for (int t = 0; t < threads.length; t++) {
            int seed = t;
            threads[t] = Thread.ofVirtual().start(() -> {
                try (OwnedHostTensor tensor = OwnedHostTensor.copyOf(new long[] {seed, 1}, 2);
                     PythonObject x = python.toPython(DLPackSource.of(tensor))) {
                    for (int i = 0; i < 200; i++) {
                        try (ImportedTensor imported = python.importTensor(x)) {
                            if (HostTensorView.of(imported).getLong(0) != seed) {
                                throw new AssertionError("read another tensor");
                            }
                        }
                        Thread.yield();
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            });
        }
        for (Thread thread : threads) {
            thread.join();
        }
        assertThat(failure.get()).isNull();
    }

    @Test
    void aNumPyArrayHasNoTableAndIsImportedThroughDunderDlpack() {
        assertThat(python.evalString("hasattr(np.ndarray, '__dlpack_c_exchange_api__')")).isEqualTo("False");
        long fellBack = ExchangeImports.FELL_BACK.get();
        try (PythonObject a = python.eval("np.arange(3.0)"); ImportedTensor tensor = python.importTensor(a)) {
            assertThat(ExchangeImports.FELL_BACK.get()).isEqualTo(fellBack + 1);
            assertThat(tensor.kind()).isEqualTo(ManagedTensorKind.VERSIONED);
        }
    }
}
