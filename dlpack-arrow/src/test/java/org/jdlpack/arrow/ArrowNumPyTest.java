package org.jdlpack.arrow;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.types.Types.MinorType;
import org.jdlpack.python.PythonException;
import org.jdlpack.python.PythonObject;
import org.jdlpack.python.PythonRuntime;
import org.jdlpack.python.PythonUnavailableException;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.testsupport.PeerRequirement;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;

/**
 * Arrow columns into NumPy and NumPy arrays into Arrow, through jdlpack, with the data pointer the
 * same on both sides. The only class of this module that talks to Python: NumPy runs embedded in
 * this JVM through dlpack-python, a test dependency. Arrow exports reach Python as
 * {@code __dlpack__} objects ({@link ArrowSource}); NumPy arrays come back through
 * {@link PythonRuntime#importTensor} and {@link ArrowImport#importTensor(org.jdlpack.abi.ImportedTensor)}.
 */
@ExtendWith(NothingLeftBehind.class)
class ArrowNumPyTest extends ArrowAllocatorTest {

    private static PythonRuntime python;

    @BeforeAll
    static void startNumPy() {
        try {
            python = PythonRuntime.get();
        } catch (PythonUnavailableException e) {
            throw PeerRequirement.missing("NumPy (embedded CPython)", e.getMessage()); // it says what to install
        }
        try {
            python.exec("import gc\nimport numpy as np");
        } catch (PythonException e) {
            throw PeerRequirement.missing("NumPy (embedded CPython)", python.description() + " cannot import numpy ("
                    + e.lastLine() + "); install a python3 with NumPy and a shared libpython (Debian: apt-get install "
                    + "python3-numpy libpython3-dev), or set JDLPACK_PYTHON to one");
        }
    }

    /** Binds {@code name} in Python to an object whose {@code __dlpack__} exports {@code export}. */
    private static void toPython(String name, ArrowExport export) {
        try (PythonObject object = python.toPython(new ArrowSource(export))) {
            python.set(name, object);
        }
    }

    /** Imports the Python global {@code name} (anything with {@code __dlpack__}) through {@code into}. */
    private static ImportedVector fromPython(ArrowImport into, String name) {
        try (PythonObject object = python.get(name)) {
            return into.importTensor(python.importTensor(object));
        }
    }

    /** Runs before {@link ArrowAllocatorTest}'s check: NumPy arrays already deleted release their buffers now. */
    @AfterEach
    void collectPython() {
        python.exec("gc.collect()");
    }

    @Test
    void anEmbeddingColumnReachesNumPyWithoutACopyAndOutlivesTheVector() {
        FixedSizeListVector column = Columns.embeddings(allocator, 5, 4);
        long values = ((Float4Vector) column.getDataVector()).getDataBuffer().memoryAddress();
        toPython("x", ArrowExport.of(column));
        python.exec("emb = np.from_dlpack(x)\ndel x");
        assertThat(python.evalString("emb.ctypes.data")).as("NumPy's data pointer is Arrow's value buffer").isEqualTo(Long.toString(values));
        assertThat(python.evalString("emb.shape")).isEqualTo("(5, 4)");
        assertThat(python.evalString("emb.dtype")).isEqualTo("float32");
        assertThat(python.evalString("emb[3].tolist()")).isEqualTo("[3000.0, 3001.0, 3002.0, 3003.0]");

        if ("True".equals(python.evalString("emb.flags.writeable"))) {
            python.exec("emb[0, 1] = -1");
        } else {
            // NumPy 1.x makes every from_dlpack array read-only: write on the Java side, read in NumPy.
            ((Float4Vector) column.getDataVector()).set(1, -1f);
            assertThat(python.evalString("float(emb[0, 1])")).isEqualTo("-1.0");
        }
        assertThat(((Float4Vector) column.getDataVector()).get(1)).as("one memory, seen from both sides").isEqualTo(-1f);

        column.close();
        assertThat(allocator.getAllocatedMemory()).as("NumPy's reference keeps the values").isPositive();
        assertThat(python.evalString("float(emb.sum())")).isEqualTo(Double.toString(4 * 10000.0 + 5 * 6 - 2));
        python.exec("del emb\ngc.collect()");
        assertThat(allocator.getAllocatedMemory()).as("released by NumPy's deleter").isZero();
    }

    @ParameterizedTest
    @FieldSource("org.jdlpack.arrow.Columns#ZERO_COPY_TYPES")
    void everyTypeReachesNumPyAsItsDtypeAndComesBack(MinorType type) {
        try (BaseFixedWidthVector vector = Columns.of(type, allocator, 9)) {
            toPython("x", ArrowExport.of(vector));
            python.exec("col = np.from_dlpack(x)\ndel x");
            String dtype = ArrowTypes.dtypeOf(type).orElseThrow().toString();
            assertThat(python.evalString("col.dtype")).isEqualTo(dtype);
            assertThat(python.evalString("col.ctypes.data")).isEqualTo(Long.toString(vector.getDataBuffer().memoryAddress()));
            // Arrow wrote value(i) truncated to the type, as a C cast does; NumPy's astype wraps the same way.
            assertThat(python.evalString("bool(np.array_equal(col, np.array([i * 37 - 100 for i in range(9)]).astype(col.dtype)))"))
                    .isEqualTo("True");

            // And back from NumPy: a copy of the array, made by NumPy, imported into Arrow without a copy.
            python.exec("again = col.copy()\ndel col\ngc.collect()");
            try (ImportedVector back = fromPython(ArrowImport.into(allocator).zeroCopyOnly(), "again")) {
                assertThat(Long.toString(((BaseFixedWidthVector) back.vector()).getDataBuffer().memoryAddress()))
                        .isEqualTo(python.evalString("again.ctypes.data"));
                assertThat(Columns.objects(back.vector())).isEqualTo(Columns.objects(vector));
            }
            python.exec("del again");
        }
    }

    @Test
    void aNumPyMatrixBecomesAnArrowFixedSizeListOverNumPysMemory() {
        python.exec("m = np.arange(12, dtype=np.float32).reshape(3, 4)");
        try (ImportedVector imported = fromPython(ArrowImport.into(allocator).named("m").zeroCopyOnly(), "m")) {
            FixedSizeListVector rows = (FixedSizeListVector) imported.vector();
            Float4Vector values = (Float4Vector) rows.getDataVector();
            assertThat(Long.toString(values.getDataBuffer().memoryAddress())).isEqualTo(python.evalString("m.ctypes.data"));
            assertThat(rows.getObject(1)).isEqualTo(List.of(4f, 5f, 6f, 7f));
            python.exec("del m\ngc.collect()"); // Arrow still holds NumPy's array through the deleter
            values.set(11, 42f);
            assertThat(values.get(11)).isEqualTo(42f);
        }
    }

    @Test
    void aTransposedNumPyArrayIsCopiedWithANote() {
        python.exec("t = np.arange(6, dtype=np.int64).reshape(2, 3).T");
        try (ImportedVector imported = fromPython(ArrowImport.into(allocator), "t")) {
            assertThat(imported.copyReason()).hasValueSatisfying(reason -> assertThat(reason).contains("not compact row-major"));
            assertThat(Columns.objects(((FixedSizeListVector) imported.vector()).getDataVector()))
                    .isEqualTo(List.of(0L, 3L, 1L, 4L, 2L, 5L));
        }
        python.exec("del t");
    }

    @Test
    void anEmbeddingColumnReachesPyTorchWithoutACopyWhenPyTorchIsThere() {
        if (!"True".equals(python.evalString("__import__('importlib.util').util.find_spec('torch') is not None"))) {
            // Optional peer (the issue asks for PyTorch "when present"), so not a CI failure.
            String reason = "PyTorch is not installed in the embedded Python (" + python.description()
                    + "); set JDLPACK_PYTHON to a python3 with torch to run this test";
            System.out.println("SKIPPED (" + reason + ")");
            org.junit.jupiter.api.Assumptions.abort(reason);
        }
        try (FixedSizeListVector column = Columns.embeddings(allocator, 3, 2)) {
            // PyTorch 1.x asks for the legacy struct (no max_version), newer versions for the versioned one.
            toPython("x", ArrowExport.of(column));
            python.exec("import torch\ntt = torch.utils.dlpack.from_dlpack(x)\ndel x");
            assertThat(python.evalString("tt.data_ptr()"))
                    .isEqualTo(Long.toString(((Float4Vector) column.getDataVector()).getDataBuffer().memoryAddress()));
            assertThat(python.evalString("tt.sum().item()")).isEqualTo(Double.toString(2 * 3000.0 + 3));
            python.exec("del tt\ngc.collect()");
        }
    }
}
