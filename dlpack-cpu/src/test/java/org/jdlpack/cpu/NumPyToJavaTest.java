package org.jdlpack.cpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigInteger;
import java.util.stream.Stream;

import org.jdlpack.abi.DLDataTypeCode;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.ManagedTensorHandle;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.peer.NothingLeftBehind;
import org.jdlpack.abi.peer.NumPyPeer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/** NumPy arrays imported into Java through {@code __dlpack__}, legacy and versioned, zero copy. */
@ExtendWith(NothingLeftBehind.class)
class NumPyToJavaTest {

    private static NumPyPeer numpy;

    @BeforeAll
    static void startNumPy() {
        numpy = NumPyPeer.require();
    }

    /** Exports {@code a} from NumPy into Python variable cap and imports it into Java. */
    private static ImportedTensor importArray(String array, ManagedTensorKind kind) {
        String call = kind == ManagedTensorKind.VERSIONED ? array + ".__dlpack__(max_version=(1, 0))" : array + ".__dlpack__()";
        numpy.exec("cap = " + call);
        ImportedTensor tensor = ManagedTensorHandle.of(kind, numpy.consumeCapsule("cap", kind)).importTensor();
        numpy.exec("del cap");
        return tensor;
    }

    static Stream<Arguments> dtypes() {
        String ints = "[0, 1, -1, 7, -8, 100, -100]";
        return Stream.of(ManagedTensorKind.values()).flatMap(kind -> Stream.of(
                Arguments.of(kind, "bool", "[True, False, True, True]"),
                Arguments.of(kind, "int8", "[0, 1, -1, 127, -128]"),
                Arguments.of(kind, "int16", "[0, 1, -1, 32767, -32768]"),
                Arguments.of(kind, "int32", "[0, 1, -1, 2**31 - 1, -2**31]"),
                Arguments.of(kind, "int64", "[0, 1, -1, 2**63 - 1, -2**63]"),
                Arguments.of(kind, "uint8", "[0, 1, 255, 128]"),
                Arguments.of(kind, "uint16", "[0, 1, 65535, 32768]"),
                Arguments.of(kind, "uint32", "[0, 1, 2**32 - 1, 2**31]"),
                Arguments.of(kind, "uint64", "[0, 1, 2**64 - 1, 2**63]"),
                Arguments.of(kind, "float16", "[0.0, -0.0, 1.5, -65504.0, 6e-08, float('inf'), float('nan')]"),
                Arguments.of(kind, "float32", "[0.0, 1.5, -3.25, 3.4e38, 1e-45, float('-inf'), float('nan')]"),
                Arguments.of(kind, "float64", "[0.0, 1.5, -3.25, 1.7e308, 5e-324, float('inf'), float('nan')]"),
                Arguments.of(kind, "complex64", "[0, 1+2j, -3.5-0.25j, 1e30j]"),
                Arguments.of(kind, "complex128", "[0, 1+2j, -3.5-0.25j, 1e300j]"),
                Arguments.of(kind, "int32", ints)));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("dtypes")
    void everyDtypeNumPyExportsReadsTheSameValuesAndSharesMemory(ManagedTensorKind kind, String dtype, String values) {
        numpy.exec("a = np.array(" + values + ", dtype=np." + dtype + ").reshape(1, -1)");
        try (ImportedTensor tensor = importArray("a", kind)) {
            HostTensor host = HostTensor.of(tensor);
            assertThat(host.dtype().toString()).isEqualTo(dtype);
            assertThat(host.shape()).containsExactly(1, Long.parseLong(numpy.eval("a.size")));
            int n = (int) host.elementCount();
            boolean complex = host.dtype().code() == DLDataTypeCode.COMPLEX;
            boolean integral = switch (host.dtype().code()) {
                case INT, UINT, BOOL -> true;
                default -> false;
            };
            for (int i = 0; i < n; i++) {
                if (integral) {
                    BigInteger expected = new BigInteger(numpy.eval("int(a.flat[" + i + "])"));
                    BigInteger actual = host.dtype().code() == DLDataTypeCode.UINT
                            ? new BigInteger(Long.toUnsignedString(host.getLong(i)))
                            : BigInteger.valueOf(host.getLong(i));
                    assertThat(actual).as("%s element %d", dtype, i).isEqualTo(expected);
                } else {
                    assertSame(host.getDouble(i), pythonFloat(numpy.eval("float(a.flat[" + i + "].real)")), dtype + " element " + i);
                    if (complex) {
                        assertSame(host.getImaginary(i, 0), pythonFloat(numpy.eval("float(a.flat[" + i + "].imag)")),
                                dtype + " imaginary " + i);
                    }
                }
            }
            // Zero copy: a write from Java is seen by NumPy.
            if (integral) {
                host.setLong(0, 1);
                assertThat(numpy.eval("int(a.flat[0])")).isEqualTo("1");
            } else {
                host.setDouble(0, 0.5);
                assertThat(numpy.eval("float(a.flat[0].real)")).isEqualTo("0.5");
            }
        }
    }

    static Stream<Arguments> views() {
        return Stream.of(ManagedTensorKind.values()).flatMap(kind -> Stream.of(
                Arguments.of(kind, "b.T"),
                Arguments.of(kind, "b[::2]"),
                Arguments.of(kind, "b[:, ::-1]"),
                Arguments.of(kind, "b[1:, 1:3]"),
                Arguments.of(kind, "np.broadcast_to(np.arange(4.0, dtype=np.float32), (3, 4))"),
                Arguments.of(kind, "np.array(7.5, dtype=np.float32)"),
                Arguments.of(kind, "np.zeros((0, 3), dtype=np.float32)"),
                Arguments.of(kind, "np.arange(24, dtype=np.float32)[5:17].reshape(3, 4)")));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("views")
    void viewsGiveTheRightElementsOrTheRefusalNumPyGives(ManagedTensorKind kind, String view) {
        numpy.exec("b = np.arange(24, dtype=np.float32).reshape(4, 6)\nv = " + view);
        String call = kind == ManagedTensorKind.VERSIONED ? "v.__dlpack__(max_version=(1, 0))" : "v.__dlpack__()";
        String refusal = numpy.eval("_refusal(lambda: " + call + ")");
        if (!refusal.isEmpty()) {
            // NumPy would not export this view; Java sees exactly NumPy's own refusal.
            assertThat(refusal).as("NumPy's refusal of " + view).containsAnyOf("BufferError", "ValueError", "TypeError");
            System.out.println("NumPy refuses " + kind + " export of " + view + ": " + refusal);
            return;
        }
        try (ImportedTensor tensor = importArray("v", kind)) {
            HostTensor host = HostTensor.of(tensor);
            assertThat(host.shape()).containsExactly(parseLongs(numpy.eval("list(v.shape)")));
            String[] expected = numpy.eval("' '.join(repr(float(x)) for x in v.flat)").split(" ");
            for (int i = 0; i < host.elementCount(); i++) {
                assertThat(host.getDouble(i)).as("%s element %d", view, i).isEqualTo(pythonFloat(expected[i]));
            }
            float[] bulk = new float[(int) host.elementCount()];
            host.copyTo(bulk);
            for (int i = 0; i < bulk.length; i++) {
                assertThat((double) bulk[i]).as("%s bulk element %d", view, i).isEqualTo(pythonFloat(expected[i]));
            }
            boolean writeable = Boolean.parseBoolean(numpy.eval("v.flags.writeable").toLowerCase());
            assertThat(host.isReadOnly()).as("read-only in Java exactly when NumPy's view is").isEqualTo(
                    !writeable && kind == ManagedTensorKind.VERSIONED);
        }
    }

    @Test
    void readOnlyArraysArriveReadOnlyAndRefuseWrites() {
        numpy.exec("r = np.arange(6, dtype=np.float64)\nr.flags.writeable = False");
        try (ImportedTensor tensor = importArray("r", ManagedTensorKind.VERSIONED)) {
            assertThat(tensor.isReadOnly()).isTrue();
            HostTensor host = HostTensor.of(tensor);
            assertThat(host.isReadOnly()).isTrue();
            assertThat(host.segment().isReadOnly()).isTrue();
            assertThatThrownBy(() -> host.setDouble(0, 1)).isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("read-only");
            assertThatThrownBy(() -> host.copyFrom(new double[6])).isInstanceOf(UnsupportedOperationException.class);
            assertThat(host.getDouble(5)).isEqualTo(5.0);
        }
        // The legacy struct cannot say read-only, so NumPy refuses it: the same refusal reaches Java.
        assertThatThrownBy(() -> numpy.exec("cap = r.__dlpack__()")).isInstanceOf(NumPyPeer.PythonException.class)
                .hasMessageContaining("BufferError");
    }

    @ParameterizedTest
    @EnumSource(ManagedTensorKind.class)
    void aCapsuleConsumedTwiceIsRefused(ManagedTensorKind kind) {
        numpy.exec("a = np.ones(3)\ncap = " + (kind == ManagedTensorKind.VERSIONED ? "a.__dlpack__(max_version=(1, 0))" : "a.__dlpack__()"));
        ImportedTensor tensor = ManagedTensorHandle.of(kind, numpy.consumeCapsule("cap", kind)).importTensor();
        assertThat(numpy.eval("cap")).contains("used_dltensor");
        assertThatThrownBy(() -> numpy.consumeCapsule("cap", kind)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("already consumed");
        tensor.close();
        numpy.exec("del cap");
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

    private static long[] parseLongs(String pythonList) {
        String inner = pythonList.replaceAll("[\\[\\]\\s]", "");
        return inner.isEmpty() ? new long[0] : Stream.of(inner.split(",")).mapToLong(Long::parseLong).toArray();
    }
}
