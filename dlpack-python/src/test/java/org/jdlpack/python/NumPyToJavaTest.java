package org.jdlpack.python;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigInteger;
import java.util.stream.Stream;

import org.jdlpack.abi.DLDataTypeCode;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.cpu.HostTensorView;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * NumPy arrays imported into Java with {@link PythonRuntime#importTensor}: versioned first (NumPy
 * 2 takes max_version), zero copy, every dtype and view NumPy exports.
 */
@ExtendWith(NothingLeftBehind.class)
class NumPyToJavaTest {

    private static PythonRuntime python;

    @BeforeAll
    static void startNumPy() {
        python = PythonPeers.numpy();
    }

    private static ImportedTensor importGlobal(String name) {
        try (PythonObject object = python.get(name)) {
            return python.importTensor(object);
        }
    }

    static Stream<Arguments> dtypes() {
        return Stream.of(
                Arguments.of("bool", "[True, False, True, True]"),
                Arguments.of("int8", "[0, 1, -1, 127, -128]"),
                Arguments.of("int16", "[0, 1, -1, 32767, -32768]"),
                Arguments.of("int32", "[0, 1, -1, 2**31 - 1, -2**31]"),
                Arguments.of("int64", "[0, 1, -1, 2**63 - 1, -2**63]"),
                Arguments.of("uint8", "[0, 1, 255, 128]"),
                Arguments.of("uint16", "[0, 1, 65535, 32768]"),
                Arguments.of("uint32", "[0, 1, 2**32 - 1, 2**31]"),
                Arguments.of("uint64", "[0, 1, 2**64 - 1, 2**63]"),
                Arguments.of("float16", "[0.0, -0.0, 1.5, -65504.0, 6e-08, float('inf'), float('nan')]"),
                Arguments.of("float32", "[0.0, 1.5, -3.25, 3.4e38, 1e-45, float('-inf'), float('nan')]"),
                Arguments.of("float64", "[0.0, 1.5, -3.25, 1.7e308, 5e-324, float('inf'), float('nan')]"),
                Arguments.of("complex64", "[0, 1+2j, -3.5-0.25j, 1e30j]"),
                Arguments.of("complex128", "[0, 1+2j, -3.5-0.25j, 1e300j]"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("dtypes")
    void everyDtypeNumPyExportsReadsTheSameValuesAndSharesMemory(String dtype, String values) {
        python.exec("a = np.array(" + values + ", dtype=np." + dtype + ").reshape(1, -1)");
        try (ImportedTensor tensor = importGlobal("a")) {
            assertThat(tensor.kind()).as("NumPy 2 answers max_version with a versioned capsule").isEqualTo(ManagedTensorKind.VERSIONED);
            HostTensorView host = HostTensorView.of(tensor);
            assertThat(host.layout().dtype().toString()).isEqualTo(dtype);
            assertThat(host.layout().shape()).containsExactly(1, Long.parseLong(python.evalString("a.size")));
            assertValuesEqual(python, host, "a", dtype);
            // Zero copy: a write from Java is seen by NumPy.
            boolean integral = isIntegral(host);
            if (integral) {
                host.setLong(0, 1);
                assertThat(python.evalString("int(a.flat[0])")).isEqualTo("1");
            } else {
                host.setDouble(0, 0.5);
                assertThat(python.evalString("float(a.flat[0].real)")).isEqualTo("0.5");
            }
        }
        python.exec("del a");
    }

    static Stream<String> views() {
        return Stream.of("b.T", "b[::2]", "b[:, ::-1]", "b[1:, 1:3]", "b[:, 2]",
                "np.broadcast_to(np.arange(4.0, dtype=np.float32), (3, 4))", "np.array(7.5, dtype=np.float32)",
                "np.zeros((0, 3), dtype=np.float32)", "np.arange(24, dtype=np.float32)[5:17].reshape(3, 4)");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("views")
    void viewsGiveTheRightElementsOrTheRefusalNumPyGives(String view) {
        python.exec("b = np.arange(24, dtype=np.float32).reshape(4, 6)\nv = " + view);
        ImportedTensor tensor;
        try {
            tensor = importGlobal("v");
        } catch (PythonException e) {
            // NumPy would not export this view (negative strides); Java sees exactly NumPy's refusal.
            assertThat(e.lastLine()).as("NumPy's refusal of " + view).containsAnyOf("BufferError", "ValueError");
            System.out.println("NumPy refuses to export " + view + ": " + e.lastLine());
            return;
        }
        try (tensor) {
            HostTensorView host = HostTensorView.of(tensor);
            assertThat(host.layout().shape()).containsExactly(parseLongs(python.evalString("list(v.shape)")));
            String[] expected = python.evalString("' '.join(repr(float(x)) for x in v.flat)").split(" ");
            for (int i = 0; i < host.layout().elementCount(); i++) {
                assertThat(host.getDouble(i)).as("%s element %d", view, i).isEqualTo(pythonFloat(expected[i]));
            }
            boolean writeable = Boolean.parseBoolean(python.evalString("v.flags.writeable").toLowerCase());
            assertThat(host.layout().isReadOnly()).as("read-only in Java exactly when NumPy's view is").isEqualTo(!writeable);
        }
        python.exec("del b, v");
    }

    @Test
    void readOnlyArraysArriveReadOnlyAndRefuseWrites() {
        python.exec("r = np.arange(6, dtype=np.float64)\nr.flags.writeable = False");
        try (ImportedTensor tensor = importGlobal("r")) {
            assertThat(tensor.layout().isReadOnly()).isTrue();
            HostTensorView host = HostTensorView.of(tensor);
            assertThatThrownBy(() -> host.setDouble(0, 1)).isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("read-only");
            assertThat(host.getDouble(5)).isEqualTo(5.0);
        }
        python.exec("del r");
    }

    @Test
    void aLegacyCapsuleIsTakenAsItIsAndRenamed() {
        python.exec("a = np.ones(3)\ncap = a.__dlpack__()");
        try (PythonObject capsule = python.get("cap"); ImportedTensor tensor = python.importTensor(capsule)) {
            assertThat(tensor.kind()).isEqualTo(ManagedTensorKind.LEGACY);
            assertThat(python.evalString("cap")).contains("\"used_dltensor\"");
            assertThatThrownBy(() -> python.importTensor(capsule)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("used_dltensor");
        }
        python.exec("del a, cap");
    }

    @Test
    void aProducerOlderThanDlpack1IsAskedAgainWithoutMaxVersion() {
        // The array API's fallback: a producer that does not know max_version raises TypeError.
        python.exec("""
                class Old:
                    def __init__(self, a):
                        self.a = a
                        self.calls = []
                    def __dlpack__(self, stream=None):
                        self.calls.append(stream)
                        return self.a.__dlpack__()
                    def __dlpack_device__(self):
                        return (1, 0)
                old = Old(np.arange(4, dtype=np.int16))
                """);
        try (ImportedTensor tensor = importGlobal("old")) {
            assertThat(tensor.kind()).isEqualTo(ManagedTensorKind.LEGACY);
            assertThat(HostTensorView.of(tensor).getLong(3)).isEqualTo(3);
            assertThat(python.evalString("old.calls")).isEqualTo("[None]");
        }
        python.exec("del old, Old");
    }

    @Test
    void anObjectWithoutDlpackIsAPythonTypeError() {
        try (PythonObject notATensor = python.eval("[1, 2, 3]")) {
            assertThatThrownBy(() -> python.importTensor(notATensor)).isInstanceOf(PythonException.class)
                    .hasMessageContaining("TypeError").hasMessageContaining("builtins.list has no __dlpack__");
        }
    }

    /** Every element of {@code host} equals NumPy's {@code array.flat[i]}, NaN equal to NaN. */
    static void assertValuesEqual(PythonRuntime python, HostTensorView host, String array, String what) {
        boolean complex = host.layout().dtype().code() == DLDataTypeCode.COMPLEX;
        for (int i = 0; i < host.layout().elementCount(); i++) {
            if (isIntegral(host)) {
                BigInteger expected = new BigInteger(python.evalString("int(" + array + ".flat[" + i + "])"));
                BigInteger actual = host.layout().dtype().code() == DLDataTypeCode.UINT
                        ? new BigInteger(Long.toUnsignedString(host.getLong(i)))
                        : BigInteger.valueOf(host.getLong(i));
                assertThat(actual).as("%s element %d", what, i).isEqualTo(expected);
            } else {
                assertSame(host.getDouble(i), pythonFloat(python.evalString("float(" + array + ".flat[" + i + "].real)")),
                        what + " element " + i);
                if (complex) {
                    assertSame(host.getImaginary(i, 0), pythonFloat(python.evalString("float(" + array + ".flat[" + i + "].imag)")),
                            what + " imaginary " + i);
                }
            }
        }
    }

    static boolean isIntegral(HostTensorView host) {
        return switch (host.layout().dtype().code()) {
            case INT, UINT, BOOL -> true;
            default -> false;
        };
    }

    /** Equal values, NaN equal to NaN. */
    static void assertSame(double actual, double expected, String what) {
        if (Double.isNaN(expected)) {
            assertThat(actual).as(what).isNaN();
        } else {
            assertThat(actual).as(what).isEqualTo(expected);
        }
    }

    /** Python's str() of a float, including inf and nan. */
    static double pythonFloat(String text) {
        return switch (text) {
            case "inf" -> Double.POSITIVE_INFINITY;
            case "-inf" -> Double.NEGATIVE_INFINITY;
            case "nan" -> Double.NaN;
            default -> Double.parseDouble(text);
        };
    }

    static long[] parseLongs(String pythonList) {
        String inner = pythonList.replaceAll("[\\[\\]\\s]", "");
        return inner.isEmpty() ? new long[0] : Stream.of(inner.split(",")).mapToLong(Long::parseLong).toArray();
    }
}
