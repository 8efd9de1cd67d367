package org.jdlpack.python;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLPackStats;
import org.jdlpack.abi.TensorSpec;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.python.internal.bridge.Capsules;
import org.jdlpack.testsupport.ChildJvm;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Java tensors handed to NumPy as {@code __dlpack__} objects: {@code np.from_dlpack(x)} with no
 * capsule code, zero copy both ways, the protocol's arguments honoured, one deleter call each.
 */
@ExtendWith(NothingLeftBehind.class)
class JavaToNumPyTest {

    private static PythonRuntime python;

    @BeforeAll
    static void startNumPy() {
        python = PythonPeers.numpy();
    }

    @AfterEach
    void pythonHoldsNoJavaTensor() {
        PythonPeers.assertPythonHoldsNoJavaTensor(python);
    }

    @ParameterizedTest
    @ValueSource(strings = {"np.from_dlpack(x)", "np.from_dlpack(x, copy=False)", "np.asarray(np.from_dlpack(x))"})
    void npFromDlpackSeesJavasValuesAndJavaSeesNumPysWrites(String consume) {
        OwnedHostTensor tensor = OwnedHostTensor.copyOf(new float[] {1, 2, 3, 4, 5, 6}, 2, 3);
        PythonPeers.bind(python, "x", tensor);
        python.exec("arr = " + consume);
        assertThat(python.evalString("arr.dtype")).isEqualTo("float32");
        assertThat(python.evalString("arr.shape")).isEqualTo("(2, 3)");
        assertThat(python.evalString("arr.tolist()")).isEqualTo("[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]");
        assertThat(python.evalString("arr.ctypes.data")).isEqualTo(Long.toString(tensor.spec().data().address()));
        // NumPy 2 asks with max_version, so it gets a versioned, writable tensor.
        python.exec("arr[1, 2] = 42");
        assertThat(tensor.host().getFloat(5)).isEqualTo(42f);
        tensor.host().setFloat(0, -1);
        assertThat(python.evalString("float(arr[0, 0])")).isEqualTo("-1.0");

        assertThat(tensor.references()).as("Java's reference and NumPy's").isEqualTo(2);
        python.exec("del arr, x\ngc.collect()");
        assertThat(tensor.references()).as("NumPy's deleter ran exactly once").isEqualTo(1);
        tensor.close();
        assertThat(tensor.references()).isZero();
    }

    @Test
    void maxVersionPicksTheStructAndDlpackDeviceIsCpu() {
        try (OwnedHostTensor tensor = OwnedHostTensor.copyOf(new int[] {7, 8, 9}, 3)) {
            PythonPeers.bind(python, "x", tensor);
            assertThat(python.evalString("x.__dlpack_device__()")).isEqualTo("(1, 0)");
            python.exec("legacy = x.__dlpack__()\nold = x.__dlpack__(max_version=(0, 8))\nnew = x.__dlpack__(max_version=(1, 0))");
            assertThat(python.evalString("legacy")).contains("\"dltensor\"");
            assertThat(python.evalString("old")).contains("\"dltensor\"");
            assertThat(python.evalString("new")).contains("\"dltensor_versioned\"");
            assertThat(tensor.references()).as("three unconsumed exports").isEqualTo(4);
            python.exec("del legacy, old, new, x\ngc.collect()");
            assertThat(tensor.references()).as("each unconsumed capsule released its tensor (once: the count cannot go below 1)").isEqualTo(1);
        }
    }

    @Test
    void aMaxVersionThatCanChangeIsReadOnEveryCall() {
        try (OwnedHostTensor tensor = OwnedHostTensor.copyOf(new int[] {7, 8}, 2)) {
            PythonPeers.bind(python, "x", tensor);
            assertThat(Capsules.readsNamesDirectly()).as("CPython's capsule layout found: our destructor reads the name itself").isTrue();
            // The same list, changed between calls, must be read each time; the tuples (which cannot
            // change) are remembered by address, and must still give each its own answer.
            python.exec("""
                    def capsule_name(capsule):
                        return repr(capsule).split('"')[1]
                    seen = []
                    v = [1, 0]
                    for major in (1, 0, 1, 0):
                        v[0] = major
                        seen.append(capsule_name(x.__dlpack__(max_version=v)))
                    for t in ((1, 0), (0, 8), (1, 0), (0, 8)):
                        seen.append(capsule_name(x.__dlpack__(max_version=t)))
                    """);
            assertThat(python.evalString("seen")).isEqualTo(
                    "['dltensor_versioned', 'dltensor', 'dltensor_versioned', 'dltensor', "
                            + "'dltensor_versioned', 'dltensor', 'dltensor_versioned', 'dltensor']");
            assertThat(tensor.references()).as("each unconsumed capsule released its export").isEqualTo(1);
            python.exec("del x, v, t, seen, capsule_name\ngc.collect()");
        }
    }

    @Test
    void unconsumedCapsulesAreReleasedOnceByOurDestructorBeforeNumPyIsLoadedAndByNumPysAfter() {
        ChildJvm.Outcome outcome = ChildJvm.create().timeoutSeconds(120).run(CapsuleDestructorMain.class);
        assertThat(outcome.result().lines()).as(outcome.output()).containsExactly(
                "RESULT without NumPy: NumPy loaded False, NumPy's destructors false, references 3 -> 1, released by dlpack-python's destructor 2",
                "RESULT with NumPy: NumPy loaded True, NumPy's destructors true, references 4 -> 2, released by dlpack-python's destructor 0",
                "RESULT at the end: references 1");
    }

    @Test
    void copyTrueGivesACopyMarkedIsCopied() {
        try (OwnedHostTensor tensor = OwnedHostTensor.copyOf(new double[] {1, 2, 3}, 3)) {
            PythonPeers.bind(python, "x", tensor);
            python.exec("c = np.from_dlpack(x, copy=True)\nc[0] = 100");
            assertThat(tensor.host().getDouble(0)).as("the copy is not the original").isEqualTo(1.0);
            assertThat(python.evalString("c.tolist()")).isEqualTo("[100.0, 2.0, 3.0]");
            // IS_COPIED is visible to a versioned consumer: Java reads it back through the protocol.
            try (PythonObject capsule = python.eval("x.__dlpack__(max_version=(1, 3), copy=True)");
                 var imported = python.importTensor(capsule)) {
                assertThat(imported.layout().flags() & 2).as("IS_COPIED").isEqualTo(2);
                assertThat(imported.dataAddress()).isNotEqualTo(tensor.spec().data().address());
            }
            python.exec("del c, x\ngc.collect()");
            assertThat(tensor.references()).isEqualTo(1);
        }
    }

    @Test
    void requestsItCannotHonourAreBufferErrors() {
        try (OwnedHostTensor tensor = OwnedHostTensor.copyOf(new float[] {1, 2}, 2)) {
            PythonPeers.bind(python, "x", tensor);
            assertThatThrownBy(() -> python.exec("x.__dlpack__(dl_device=(2, 0))")).isInstanceOf(PythonException.class)
                    .satisfies(e -> assertThat(((PythonException) e).lastLine()).startsWith("BufferError").contains("(2, 0)"));
            assertThatThrownBy(() -> python.exec("np.from_dlpack(x, device='cpu', copy=None); x.__dlpack__(stream=5)"))
                    .isInstanceOf(PythonException.class)
                    .satisfies(e -> assertThat(((PythonException) e).lastLine()).startsWith("BufferError").contains("stream=5"));
            assertThatThrownBy(() -> python.exec("x.__dlpack__(copy='yes')")).isInstanceOf(PythonException.class)
                    .hasMessageContaining("TypeError");
            assertThatThrownBy(() -> python.exec("x.__dlpack__(None)")).as("arguments are keyword-only")
                    .isInstanceOf(PythonException.class).hasMessageContaining("TypeError");
            assertThat(python.evalString("np.from_dlpack(x, device='cpu').tolist()")).isEqualTo("[1.0, 2.0]");
            python.exec("del x\ngc.collect()");
            assertThat(tensor.references()).isEqualTo(1);
        }
    }

    @Test
    void aReleasedJavaTensorIsABufferErrorNotACrash() {
        OwnedHostTensor tensor = OwnedHostTensor.copyOf(new float[] {1, 2}, 2);
        PythonPeers.bind(python, "x", tensor);
        tensor.close();
        assertThat(python.evalString("type(x).__name__")).isEqualTo("JavaTensor");
        assertThatThrownBy(() -> python.exec("np.from_dlpack(x)")).isInstanceOf(PythonException.class)
                .satisfies(e -> assertThat(((PythonException) e).lastLine()).startsWith("BufferError"));
        python.exec("del x");
    }

    @Test
    void theLastReferenceMayDieOnAPythonThread() {
        OwnedHostTensor tensor = OwnedHostTensor.copyOf(new double[] {1, 2, 3}, 3);
        PythonPeers.bind(python, "x", tensor);
        python.exec("holder = [np.from_dlpack(x)]\ndel x");
        tensor.close(); // NumPy's array now holds the last reference
        python.exec("""
                seen = []
                def drop():
                    seen.append(float(holder[0].sum()))
                    holder.clear()
                    gc.collect()
                t = threading.Thread(target=drop)
                t.start()
                t.join()
                """);
        assertThat(python.evalString("seen")).isEqualTo("[6.0]");
        assertThat(tensor.references()).as("released by NumPy's deleter on a Python thread").isZero();
    }

    @Test
    void pythonThreadsCallDlpackConcurrently() {
        try (OwnedHostTensor tensor = OwnedHostTensor.copyOf(new long[] {1, 2, 3, 4}, 4)) {
            PythonPeers.bind(python, "x", tensor);
            python.exec("""
                    sums = []
                    def work():
                        for _ in range(200):
                            sums.append(int(np.from_dlpack(x).sum()))
                    ts = [threading.Thread(target=work) for _ in range(4)]
                    for t in ts: t.start()
                    for t in ts: t.join()
                    """);
            assertThat(python.evalString("(len(sums), set(sums))")).isEqualTo("(800, {10})");
            python.exec("del x, sums\ngc.collect()");
            assertThat(tensor.references()).isEqualTo(1);
        }
    }

    @Test
    void readOnlyTensorsReachNumPyReadOnlyOrAsACopy() {
        try (OwnedHostTensor source = OwnedHostTensor.copyOf(new int[] {1, 2, 3}, 3)) {
            OwnedHostTensor readOnly = OwnedHostTensor.wrap(TensorSpec.of(source.spec().data().asReadOnly(), DLDataType.INT32, 3), () -> { });
            PythonPeers.bind(python, "ro", readOnly);
            python.exec("r = np.from_dlpack(ro)");
            assertThat(python.evalString("r.flags.writeable")).isEqualTo("False");
            assertThatThrownBy(() -> python.exec("r[0] = 9")).isInstanceOf(PythonException.class).hasMessageContaining("read-only");
            // A legacy consumer cannot be told read-only, so it gets a BufferError unless it asks for a copy.
            assertThatThrownBy(() -> python.exec("ro.__dlpack__()")).isInstanceOf(PythonException.class)
                    .satisfies(e -> assertThat(((PythonException) e).lastLine()).startsWith("BufferError").contains("read-only"));
            python.exec("legacy_copy = ro.__dlpack__(copy=True)");
            try (PythonObject capsule = python.get("legacy_copy"); var imported = python.importTensor(capsule)) {
                assertThat(imported.kind().structName()).isEqualTo("DLManagedTensor");
            }
            python.exec("del r, ro, legacy_copy\ngc.collect()");
            readOnly.close();
        }
    }

    @Test
    void aCapsuleIsConsumedOnceAndRenamedUsed() {
        try (OwnedHostTensor tensor = OwnedHostTensor.allocate(DLDataType.FLOAT32, 4)) {
            PythonPeers.bind(python, "x", tensor);
            python.exec("cap = x.__dlpack__(max_version=(1, 0))");
            try (PythonObject capsule = python.get("cap")) {
                python.importTensor(capsule).close();
                assertThat(python.evalString("cap")).contains("used_dltensor_versioned");
                assertThatThrownBy(() -> python.importTensor(capsule)).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("used_dltensor_versioned");
            }
            python.exec("del cap, x\ngc.collect()");
            assertThat(tensor.references()).isEqualTo(1);
            assertThat(DLPackStats.liveExports()).isZero();
        }
    }

    @Test
    void theBuiltInFunctionRefusesWrongArgumentsWithATypeErrorNamingTheArgument() {
        try (OwnedHostTensor tensor = OwnedHostTensor.copyOf(new float[] {1, 2}, 2)) {
            PythonPeers.bind(python, "x", tensor);
            // Every built-in function of the module, given a str: a TypeError from that function,
            // never a failed conversion left pending (which Python reports later as SystemError).
            python.exec("import _jdlpack");
            String builtins = python.evalString(
                    "' '.join(n for n in dir(_jdlpack) if type(getattr(_jdlpack, n)).__name__ == 'builtin_function_or_method')");
            assertThat(builtins).isNotEmpty();
            List<String> outcomes = new ArrayList<>();
            for (String name : builtins.split(" ")) {
                for (String arguments : new String[] {"'x'", "'x', True, None, -1"}) {
                    try {
                        python.exec("_jdlpack." + name + "(" + arguments + ")");
                        outcomes.add(name + "(" + arguments + ") -> returned");
                    } catch (PythonException e) {
                        outcomes.add(name + "(" + arguments + ") -> " + e.lastLine());
                    }
                }
            }
            assertThat(outcomes).allSatisfy(outcome -> assertThat(outcome).matches("(\\w+)\\(.*\\) -> TypeError: \\1\\(\\) .*"));
            python.exec("reg = x._jdlpack_registration");
            assertRaises("_jdlpack._jdlpack_dlpack(1)",
                    "TypeError: _jdlpack_dlpack() takes 4 arguments (registration, versioned, stream, copy), not 1");
            assertRaises("_jdlpack._jdlpack_dlpack('a', True, None, -1)",
                    "TypeError: _jdlpack_dlpack() argument 1 (registration) must be a JavaTensor's 'jdlpack.tensor' capsule, not str");
            assertRaises("_jdlpack._jdlpack_dlpack(-5, True, None, -1)",
                    "TypeError: _jdlpack_dlpack() argument 1 (registration) must be a JavaTensor's 'jdlpack.tensor' capsule, not int");
            assertRaises("_jdlpack._jdlpack_dlpack(np.arange(2).__dlpack__(), True, None, -1)",
                    "TypeError: _jdlpack_dlpack() argument 1 (registration) must be a JavaTensor's 'jdlpack.tensor' capsule, not PyCapsule");
            assertRaises("_jdlpack._jdlpack_dlpack(reg, 1, None, -1)",
                    "TypeError: _jdlpack_dlpack() argument 2 (versioned) must be True or False, not int");
            assertRaises("_jdlpack._jdlpack_dlpack(reg, True, 'x', -1)",
                    "TypeError: _jdlpack_dlpack() argument 3 (stream) must be None or an int, not str");
            assertRaises("_jdlpack._jdlpack_dlpack(reg, True, 2**70, -1)",
                    "OverflowError: _jdlpack_dlpack() argument 3 (stream) does not fit in a signed 64-bit integer");
            assertRaises("_jdlpack._jdlpack_dlpack(reg, True, None, None)",
                    "TypeError: _jdlpack_dlpack() argument 4 (copy) must be an int, not NoneType");
            assertRaises("_jdlpack._jdlpack_dlpack(reg, True, None, 5)",
                    "ValueError: _jdlpack_dlpack() argument 4 (copy) must be -1 (None), 0 (False) or 1 (True), not 5");
            assertThat(python.evalString("np.from_dlpack(x).tolist()")).as("x still exports").isEqualTo("[1.0, 2.0]");
            python.exec("del x, reg\ngc.collect()");
            assertThat(tensor.references()).isEqualTo(1);
        }
    }

    @Test
    void noFunctionOfTheModuleDisablesAnotherObject() {
        try (OwnedHostTensor tensor = OwnedHostTensor.copyOf(new float[] {1, 2}, 2)) {
            PythonPeers.bind(python, "victim", tensor);
            // Whatever the attacker finds (the victim's attributes, guessed ids, junk), given to
            // every built-in function of the module, leaves the victim working.
            python.exec("""
                    import _jdlpack
                    handles = [getattr(victim, s) for s in type(victim).__slots__ if hasattr(victim, s)]
                    handles += list(range(-2, 1000)) + ['x', None, 1.5, (1, 0), victim]
                    for name in dir(_jdlpack):
                        f = getattr(_jdlpack, name)
                        if type(f).__name__ != 'builtin_function_or_method':
                            continue
                        for h in handles:
                            for args in ((h,), (h, True, None, -1), (h, False, None, 0)):
                                try:
                                    f(*args)
                                except Exception:
                                    pass
                    gc.collect()
                    """);
            assertThat(python.evalString("np.from_dlpack(victim).tolist()")).as("the victim still exports").isEqualTo("[1.0, 2.0]");
            // Nor does re-initializing or rewriting the object itself take its registration away.
            python.exec("""
                    for h in handles:
                        for attempt in (lambda: victim.__init__(h, 1, 0), lambda: setattr(victim, '_jdlpack_registration', h),
                                        lambda: delattr(victim, '_jdlpack_registration')):
                            try:
                                attempt()
                            except (TypeError, AttributeError):
                                pass
                    attempt = None
                    gc.collect()
                    """);
            assertThat(python.evalString("np.from_dlpack(victim).tolist()")).as("the victim still exports").isEqualTo("[1.0, 2.0]");
            python.exec("del victim, handles, f, h, args\ngc.collect()");
            assertThat(tensor.references()).isEqualTo(1);
        }
    }

    @Test
    void copiesAndPicklesOfAJavaTensorObjectAreTypeErrorsAndTheOriginalKeepsWorking() {
        try (OwnedHostTensor tensor = OwnedHostTensor.copyOf(new float[] {1, 2, 3}, 3)) {
            PythonPeers.bind(python, "x", tensor);
            python.exec("""
                    import copy, pickle
                    errors = []
                    for f in (copy.copy, copy.deepcopy, pickle.dumps):
                        try:
                            y = f(x)
                            errors.append(f.__name__ + ': no error')
                        except TypeError as e:
                            errors.append(f.__name__ + ': ' + str(e))
                        y = None
                        gc.collect()
                    """);
            // The copy (when one was made) has been collected: the original must still be registered.
            assertThat(python.evalString("np.from_dlpack(x).tolist()")).as("the original still exports").isEqualTo("[1.0, 2.0, 3.0]");
            String guidance = "pass the object itself; np.from_dlpack(x) shares its memory, np.from_dlpack(x).copy() copies it";
            assertThat(python.evalString("'\\n'.join(errors)").lines()).containsExactly(
                    "copy: a JavaTensor stands for a Java tensor and cannot be copied: " + guidance,
                    "deepcopy: a JavaTensor stands for a Java tensor and cannot be copied: " + guidance,
                    "dumps: a JavaTensor stands for a Java tensor and cannot be pickled: " + guidance);
            assertThatThrownBy(() -> python.exec("x._jdlpack_registration = None")).isInstanceOf(PythonException.class)
                    .satisfies(e -> assertThat(((PythonException) e).lastLine()).isEqualTo("AttributeError: JavaTensor attributes are read-only"));
            python.exec("del x, errors\ngc.collect()");
            assertThat(tensor.references()).isEqualTo(1);
        }
    }

    @Test
    void aClosedOwnerExportsNothingMoreWhileNumPysEarlierArrayStillReadsItsValues() {
        OwnedHostTensor tensor = OwnedHostTensor.copyOf(new double[] {1, 2, 3}, 3);
        PythonPeers.bind(python, "x", tensor);
        python.exec("held = np.from_dlpack(x)");
        tensor.close(); // NumPy's export is still live: it holds the memory
        for (String export : new String[] {"np.from_dlpack(x)", "x.__dlpack__()", "x.__dlpack__(max_version=(1, 3))"}) {
            assertThatThrownBy(() -> python.exec(export)).as(export).isInstanceOf(PythonException.class)
                    .satisfies(e -> assertThat(((PythonException) e).lastLine()).startsWith("BufferError"));
        }
        assertThat(python.evalString("held.tolist()")).isEqualTo("[1.0, 2.0, 3.0]");
        assertThat(tensor.references()).as("NumPy's export alone").isEqualTo(1);
        python.exec("del held, x\ngc.collect()");
        assertThat(tensor.references()).isZero();
    }

    private static void assertRaises(String expression, String lastLine) {
        assertThatThrownBy(() -> python.exec(expression)).as(expression).isInstanceOf(PythonException.class)
                .satisfies(e -> assertThat(((PythonException) e).lastLine()).isEqualTo(lastLine));
    }
}
