package org.jdlpack.python;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;

import org.jdlpack.abi.DLPackStats;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.python.internal.bridge.JavaTensors;
import org.jdlpack.abi.testing.Collect;
import org.jdlpack.testsupport.ChildJvm;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The front door beyond tensors: choosing the interpreter, Java values into calls, Python values
 * back into Java, and the safety net for a forgotten {@link PythonObject}.
 */
class PythonRuntimeApiTest {

    private static PythonRuntime python;

    @BeforeAll
    static void startNumPy() {
        python = PythonPeers.numpy();
    }

    @Test
    void javaValuesBecomePythonValues() {
        python.exec("def kinds(*args):\n    return ' '.join(type(a).__name__ + '=' + repr(a) for a in args)");
        try (PythonObject kinds = python.get("kinds"); PythonObject list = python.eval("[1, 2]");
             PythonObject result = python.call(kinds, 7L, 3, (short) -2, (byte) 1, 0.5, 1.5f, true, false, "héllo\0x", null, list)) {
            assertThat(result.str()).isEqualTo("int=7 int=3 int=-2 int=1 float=0.5 float=1.5 bool=True bool=False str='héllo\\x00x' "
                    + "NoneType=None list=[1, 2]");
        }
        try (PythonObject full = python.eval("np.full"); PythonObject array = python.call(full, 3, 0.5)) {
            assertThat(array.str()).isEqualTo("[0.5 0.5 0.5]");
        }
    }

    /**
     * A tensor passed straight to a call: NumPy writes it in place through DLPack, its Python
     * object goes with the call unless Python keeps it, and one kept by a call that raises still
     * exports (its registration is the object's, not the failed call's).
     */
    @Test
    void aTensorArgumentIsReadAndWrittenInPlaceAndLivesAsLongAsPythonKeepsIt() {
        python.exec("""
                kept = []
                def scale(x, factor):
                    a = np.from_dlpack(x)
                    a *= factor
                    return float(a.sum())
                def keep_then_fail(x):
                    kept.append(x)
                    raise ValueError('after keeping it')
                """);
        int liveBefore = JavaTensors.live();
        try (PythonObject scale = python.get("scale"); PythonObject keepThenFail = python.get("keep_then_fail");
             OwnedHostTensor x = OwnedHostTensor.copyOf(new float[] {1, 2, 3, 4}, 2, 2)) {
            try (PythonObject sum = python.call(scale, DLPackSource.of(x), 2)) {
                assertThat(sum.str()).isEqualTo("20.0");
            }
            // written where it lies
            assertThat(x.host().segment().toArray(java.lang.foreign.ValueLayout.JAVA_FLOAT)).containsExactly(2, 4, 6, 8);
            assertThat(JavaTensors.live()).as("the argument's object went with the call").isEqualTo(liveBefore);
            assertThat(DLPackStats.liveExports()).as("NumPy's array went with the call").isZero();

            assertThatThrownBy(() -> python.call(keepThenFail, DLPackSource.of(x))).isInstanceOf(PythonException.class)
                    .hasMessageContaining("after keeping it");
            assertThat(JavaTensors.live()).as("the object Python kept").isEqualTo(liveBefore + 1);
            assertThat(python.evalString("str(np.from_dlpack(kept[0]).sum())")).isEqualTo("20.0");
            python.exec("kept.clear()");
            assertThat(JavaTensors.live()).isEqualTo(liveBefore);

            DLPackSource nowhere = new DLPackSource() {
                @Override
                public org.jdlpack.abi.DLDevice device() {
                    return null;
                }

                @Override
                public org.jdlpack.abi.ExportedTensor export(ExportRequest request) {
                    throw new AssertionError("not called");
                }

                @Override
                public String toString() {
                    return "NowhereSource";
                }
            };
            assertThatThrownBy(() -> python.call(scale, DLPackSource.of(x), nowhere)).isInstanceOf(NullPointerException.class)
                    .hasMessage("argument 1: NowhereSource.device() is null");
            assertThat(JavaTensors.live()).as("argument 0's registration dropped with the refusal").isEqualTo(liveBefore);
            DLPackSource failing = new DLPackSource() {
                @Override
                public org.jdlpack.abi.DLDevice device() {
                    throw new IllegalStateException("released");
                }

                @Override
                public org.jdlpack.abi.ExportedTensor export(ExportRequest request) {
                    throw new AssertionError("not called");
                }
            };
            assertThatThrownBy(() -> python.call(scale, DLPackSource.of(x), failing)).isInstanceOf(IllegalStateException.class)
                    .hasMessage("released");
            assertThat(JavaTensors.live()).as("argument 0's registration dropped when argument 1's device() threw")
                    .isEqualTo(liveBefore);
        }
        assertThat(DLPackStats.liveExports()).isZero();
    }

    @Test
    void anArgumentWithoutAPythonCounterpartIsRefusedBeforePythonRuns() {
        python.exec("calls = []\ndef record(*args):\n    calls.append(args)");
        try (PythonObject record = python.get("record")) {
            assertThatThrownBy(() -> python.call(record, 1, new java.math.BigDecimal("1.5")))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("argument 1 is a java.math.BigDecimal")
                    .hasMessageContaining("long, int, short, byte, double, float, boolean, String, null (None), DLPackSource or "
                            + "PythonObject");
            assertThatThrownBy(() -> python.call(record, (Object) new int[] {1})).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("argument 0 is a int[],");
            assertThatThrownBy(() -> python.call(record, 1, new float[] {1})).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("argument 1 is a float[],")
                    .hasMessageContaining("an array goes as a tensor: DLPackSource.of(OwnedHostTensor.copyOf(array, shape))");
        }
        assertThat(python.evalString("len(calls)")).isEqualTo("0");
    }

    @Test
    void resultsReadAsJavaValues() {
        try (PythonObject sum = python.eval("np.arange(10).sum()"); PythonObject big = python.eval("2**63 - 1");
             PythonObject truth = python.eval("True"); PythonObject half = python.eval("np.float32(0.5)");
             PythonObject three = python.eval("3"); PythonObject close = python.eval("np.isclose(1.0, 1.0 + 1e-12)");
             PythonObject empty = python.eval("[]")) {
            assertThat(sum.toLong()).as("a NumPy integer").isEqualTo(45);
            assertThat(big.toLong()).isEqualTo(Long.MAX_VALUE);
            assertThat(truth.toLong()).isEqualTo(1);
            assertThat(half.toDouble()).isEqualTo(0.5);
            assertThat(three.toDouble()).as("an int read as a double").isEqualTo(3.0);
            assertThat(close.toBoolean()).as("numpy.bool_").isTrue();
            assertThat(empty.toBoolean()).isFalse();
            assertThat(three.toBoolean()).isTrue();
        }
    }

    @Test
    void aValueThatDoesNotConvertIsAPythonExceptionNamingTheConversionAndTheType() {
        try (PythonObject real = python.eval("1.5"); PythonObject huge = python.eval("2**64"); PythonObject text = python.eval("'12'");
             PythonObject array = python.eval("np.arange(3)")) {
            assertThatThrownBy(real::toLong).isInstanceOf(PythonException.class)
                    .hasMessageStartingWith("PythonObject.toLong() of a Python float failed")
                    .satisfies(e -> assertThat(((PythonException) e).lastLine())
                            .isEqualTo("TypeError: 'float' object cannot be interpreted as an integer"));
            assertThatThrownBy(huge::toLong).isInstanceOf(PythonException.class)
                    .satisfies(e -> assertThat(((PythonException) e).lastLine()).startsWith("OverflowError:"));
            assertThatThrownBy(text::toDouble).isInstanceOf(PythonException.class)
                    .hasMessageStartingWith("PythonObject.toDouble() of a Python str failed")
                    .satisfies(e -> assertThat(((PythonException) e).lastLine()).startsWith("TypeError:"));
            assertThatThrownBy(array::toBoolean).isInstanceOf(PythonException.class)
                    .hasMessageStartingWith("PythonObject.toBoolean() of a Python ndarray failed")
                    .satisfies(e -> assertThat(((PythonException) e).lastLine()).startsWith("ValueError: The truth value of an array"));
            // Nothing is left pending: the next call works.
            assertThat(python.evalString("1 + 1")).isEqualTo("2");
        }
        PythonObject closed = python.eval("1");
        closed.close();
        assertThatThrownBy(closed::toLong).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    }

    @Test
    void getWithThePythonThatRunsReturnsItAndWithAnotherThrowsNamingBoth() {
        assertThat(PythonRuntime.get(Path.of(python.location().executable()))).isSameAs(python);
        assertThat(PythonRuntime.get(Path.of(python.location().realExecutable()))).isSameAs(python);
        assertThatThrownBy(() -> PythonRuntime.get(Path.of("/opt/another/bin/python3"))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("/opt/another/bin/python3").hasMessageContaining(python.description())
                .hasMessageContaining("one interpreter lives per process");
    }

    @Test
    void theSystemPropertyChoosesTheInterpreterAndAFailedChoiceLeavesRoomForAnother() {
        String real = python.location().realExecutable();
        ChildJvm.Outcome chosen = ChildJvm.create().options("-Dorg.jdlpack.python=" + real).timeoutSeconds(120)
                .run(InterpreterChoiceMain.class, "get", "/opt/another/bin/python3");
        assertThat(chosen.result().lines()).as(chosen.output()).containsExactly(
                "RESULT get -> " + real,
                "RESULT /opt/another/bin/python3 -> IllegalStateException: this process already runs Python " + python.location().version()
                        + " (" + real + ", " + python.location().library() + "), so it cannot embed /opt/another/bin/python3 too: "
                        + "one interpreter lives per process. Name the same python3 in every PythonRuntime.get(Path) call, "
                        + "or use PythonRuntime.get()");

        ChildJvm.Outcome retried = ChildJvm.create().options("-Dorg.jdlpack.python=/opt/missing/python3").timeoutSeconds(120)
                .run(InterpreterChoiceMain.class, "get", "get", real);
        assertThat(retried.result().lines()).as(retried.output()).hasSize(3);
        assertThat(retried.result().lines().toList().get(0)).startsWith("RESULT get -> PythonUnavailableException: cannot run /opt/missing/python3");
        assertThat(retried.result().lines().toList().get(1)).as("the same choice fails the same way")
                .isEqualTo(retried.result().lines().toList().get(0));
        assertThat(retried.result().lines().toList().get(2)).as("another Python may still be tried: nothing was loaded")
                .isEqualTo("RESULT " + real + " -> " + real);
    }

    @Test
    void aForgottenPythonObjectIsDroppedAndReportedAsALeak() throws InterruptedException {
        python.exec("import weakref\nclass Held:\n    pass\nheld = Held()\nheld_ref = weakref.ref(held)");
        long leaks = DLPackStats.leaksReported();
        forget(python.get("held"));
        python.exec("del held");
        assertThat(python.evalString("held_ref() is None")).as("Java's reference keeps it").isEqualTo("False");
        Collect.until(() -> DLPackStats.leaksReported() > leaks, Duration.ofSeconds(30));
        assertThat(DLPackStats.leaksReported()).as("the forgotten PythonObject, reported").isGreaterThan(leaks);
        assertThat(python.evalString("held_ref() is None")).as("its reference was dropped").isEqualTo("True");
    }

    private static void forget(PythonObject object) {
        assertThat(object.toString()).startsWith("PythonObject[0x");
    }
}
