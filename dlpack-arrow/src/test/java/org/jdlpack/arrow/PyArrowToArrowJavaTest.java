package org.jdlpack.arrow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.types.Types.MinorType;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.python.PythonException;
import org.jdlpack.python.PythonObject;
import org.jdlpack.python.PythonRuntime;
import org.jdlpack.python.PythonUnavailableException;
import org.jdlpack.testsupport.PeerRequirement;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;

/**
 * pyarrow 25 arrays into Arrow Java vectors through DLPack, without a copy: the value buffer of
 * the Java vector is pyarrow's, past the slice offset. And back as far as pyarrow allows: pyarrow
 * has no {@code from_dlpack}, so an Arrow Java vector reaches it as a NumPy array over the same
 * memory ({@code pa.array(np.from_dlpack(x))}), still without a copy. pyarrow refuses arrays with
 * nulls and bit-packed booleans; a ChunkedArray has no {@code __dlpack__}, its chunks do.
 *
 * <p>Tagged {@code peer-pyarrow}: the {@code peer-pyarrow} execution runs it embedding the peers
 * venv's CPython (.ci/python-peers/make-venv, {@code JDLPACK_PEERS_PYTHON}).
 */
@Tag("peers")
@Tag("peer-pyarrow")
@ExtendWith(NothingLeftBehind.class)
class PyArrowToArrowJavaTest extends ArrowAllocatorTest {

    private static final String PEER = "pyarrow 25 (embedded CPython of the peers venv)";
    private static final String INSTALL = "run .ci/python-peers/make-venv (pip install pyarrow==25.0.1 'numpy==2.4.*' into a venv of a "
            + "CPython 3.11 with a shared libpython) and set JDLPACK_PEERS_PYTHON to the python3 it prints";

    private static PythonRuntime python;

    @BeforeAll
    static void startPyArrow() {
        if ("none".equals(System.getenv("JDLPACK_PYTHON"))) {
            throw PeerRequirement.missing(PEER, "JDLPACK_PEERS_PYTHON is not set; " + INSTALL);
        }
        try {
            python = PythonRuntime.get();
        } catch (PythonUnavailableException e) {
            throw PeerRequirement.missing(PEER, e.getMessage());
        }
        try {
            python.exec("import gc\nimport numpy as np, pyarrow as pa");
        } catch (PythonException e) {
            throw PeerRequirement.missing(PEER, python.description() + " cannot import pyarrow (" + e.lastLine() + "); " + INSTALL);
        }
        if (!python.evalString("pa.__version__").startsWith("25.")) {
            throw PeerRequirement.missing(PEER, python.description() + " has pyarrow " + python.evalString("pa.__version__") + "; " + INSTALL);
        }
    }

    @AfterEach
    void collectPython() {
        python.exec("a = x = y = None\ngc.collect()");
    }

    private static ImportedVector fromPython(ArrowImport into, String name) {
        try (PythonObject object = python.get(name)) {
            return into.importTensor(python.importTensor(object));
        }
    }

    @ParameterizedTest
    @FieldSource("org.jdlpack.arrow.Columns#ZERO_COPY_TYPES")
    void aSlicedPyArrowArrayBecomesAnArrowJavaVectorOverPyArrowsBuffer(MinorType type) {
        String dtype = ArrowTypes.dtypeOf(type).orElseThrow().toString();
        if (dtype.equals("bool")) {
            return; // Arrow's bool is bit-packed; pyarrow refuses it (whatPyArrowRefuses)
        }
        python.exec("a = pa.array((np.arange(12) * 37 - 100).astype(np." + dtype + ")).slice(2, 9)");
        try (ImportedVector imported = fromPython(ArrowImport.into(allocator).named("a").zeroCopyOnly(), "a")) {
            BaseFixedWidthVector vector = (BaseFixedWidthVector) imported.vector();
            long elementBytes = vector.getTypeWidth();
            assertThat(vector.getDataBuffer().memoryAddress()).as("pyarrow's value buffer, past the slice offset")
                    .isEqualTo(Long.parseLong(python.evalString("a.buffers()[1].address")) + 2 * elementBytes);
            assertThat(vector.getValueCount()).isEqualTo(9);
            String expected = python.evalString("a.to_numpy().tobytes().hex()"); // pyarrow's own view of the values
            python.exec("a = None\ngc.collect()"); // the vector alone holds pyarrow's buffer now
            byte[] values = new byte[(int) (9 * elementBytes)];
            vector.getDataBuffer().getBytes(0, values);
            assertThat(java.util.HexFormat.of().formatHex(values)).as(dtype).isEqualTo(expected);
        }
    }

    @Test
    void whatPyArrowRefuses() {
        for (String[] refusal : new String[][] {
            {"pa.array([1.0, None])", "pyarrow.lib.ArrowTypeError: Can only use DLPack on arrays with no nulls."},
            {"pa.array([True, False])", "pyarrow.lib.ArrowTypeError: Bit-packed boolean data type not supported by DLPack."}}) {
            python.exec("a = " + refusal[0]);
            assertThatThrownBy(() -> fromPython(ArrowImport.into(allocator), "a")).as(refusal[0]).isInstanceOf(PythonException.class)
                    .satisfies(e -> assertThat(((PythonException) e).lastLine()).isEqualTo(refusal[1]));
        }
        python.exec("a = pa.chunked_array([[1.0, 2.0], [3.0]])");
        assertThatThrownBy(() -> fromPython(ArrowImport.into(allocator), "a")).isInstanceOf(PythonException.class)
                .hasMessageContaining("pyarrow.lib.ChunkedArray has no __dlpack__");
        // Chunk by chunk, each without a copy.
        for (int chunk = 0; chunk < 2; chunk++) {
            python.exec("y = a.chunk(" + chunk + ")");
            try (ImportedVector imported = fromPython(ArrowImport.into(allocator).zeroCopyOnly(), "y")) {
                assertThat(((Float8Vector) imported.vector()).getDataBuffer().memoryAddress())
                        .isEqualTo(Long.parseLong(python.evalString("y.buffers()[1].address")));
                assertThat(imported.vector().getValueCount()).isEqualTo(chunk == 0 ? 2 : 1);
            }
        }
    }

    @Test
    void anArrowJavaVectorReachesPyArrowThroughNumPyOverTheSameMemory() {
        try (IntVector vector = new IntVector("v", allocator)) {
            vector.allocateNew(5);
            for (int i = 0; i < 5; i++) {
                vector.set(i, i * 11);
            }
            vector.setValueCount(5);
            try (PythonObject x = python.toPython(new ArrowSource(ArrowExport.of(vector)))) {
                python.set("x", x);
            }
            python.exec("y = pa.array(np.from_dlpack(x))\ndel x");
            assertThat(python.evalString("(str(y.type), y.to_pylist())")).isEqualTo("('int32', [0, 11, 22, 33, 44])");
            assertThat(Long.parseLong(python.evalString("y.buffers()[1].address"))).as("pyarrow's buffer is the Arrow Java vector's")
                    .isEqualTo(vector.getDataBuffer().memoryAddress());
            vector.set(4, -1);
            assertThat(python.evalString("y[4].as_py()")).as("one memory").isEqualTo("-1");
        }
        assertThat(allocator.getAllocatedMemory()).as("pyarrow's array still holds the buffer").isPositive();
        python.exec("y = None\ngc.collect()");
        assertThat(allocator.getAllocatedMemory()).as("released when pyarrow's array died").isZero();
    }
}
