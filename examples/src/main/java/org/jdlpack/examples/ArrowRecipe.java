package org.jdlpack.examples;

import java.io.PrintStream;
import java.util.List;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.jdlpack.abi.DLDevice;
import org.jdlpack.abi.ExportOptions;
import org.jdlpack.abi.ExportedTensor;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.arrow.ArrowExport;
import org.jdlpack.arrow.ArrowImport;
import org.jdlpack.arrow.ImportedVector;
import org.jdlpack.python.DLPackSource;
import org.jdlpack.python.ExportRequest;
import org.jdlpack.python.PythonObject;
import org.jdlpack.python.PythonRuntime;

/**
 * Recipe: an Arrow embedding column ({@code FixedSizeList<float32>[dim]}) into NumPy without a
 * copy, and NumPy's answer back into an Arrow vector without a copy. NumPy runs in this JVM through
 * dlpack-python; with PyTorch, {@code torch.from_dlpack} takes the same object.
 */
public final class ArrowRecipe {

    private ArrowRecipe() {
    }

    /**
     * An Arrow export as a Python tensor: each {@code __dlpack__} call exports the column afresh,
     * versioned or legacy as the consumer asks (dlpack-arrow does not depend on dlpack-python, so
     * the few lines joining them live with the application).
     *
     * @param export the column's export settings
     */
    record ArrowSource(ArrowExport export) implements DLPackSource {

        @Override
        public DLDevice device() {
            return DLDevice.CPU;
        }

        @Override
        public ExportedTensor export(ExportRequest request) {
            if (request.stream().isPresent() || request.copyRequired()) {
                throw new UnsupportedOperationException("an Arrow column is shared as it is: no stream, no copy=True");
            }
            return request.kind() == ManagedTensorKind.LEGACY ? export.export(ExportOptions.LEGACY) : export.export();
        }
    }

    /**
     * Runs the recipe.
     *
     * @param args ignored
     */
    public static void main(String[] args) {
        run(System.out);
    }

    /**
     * Runs the recipe, narrating to {@code out}.
     *
     * @param out where the story goes
     */
    public static void run(PrintStream out) {
        PythonRuntime python = PythonRuntime.get();
        python.exec("import gc\nimport numpy as np");
        int rows = 4;
        int dim = 3;
        try (BufferAllocator allocator = new RootAllocator()) {
            // An embedding column as a data system hands it over: rows x dim float32 in one Arrow buffer.
            Field values = new Field("$data$", FieldType.nullable(new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)), null);
            Field field = new Field("embedding", FieldType.nullable(new ArrowType.FixedSizeList(dim)), List.of(values));
            try (FixedSizeListVector column = (FixedSizeListVector) field.createVector(allocator)) {
                column.allocateNew();
                Float4Vector floats = (Float4Vector) column.getDataVector();
                for (int r = 0; r < rows; r++) {
                    column.setNotNull(r);
                    for (int c = 0; c < dim; c++) {
                        floats.setSafe(r * dim + c, r + c);
                    }
                }
                column.setValueCount(rows);

                // Arrow -> NumPy: the column as a Python object whose __dlpack__ exports it (a rows x dim
                // tensor over Arrow's buffer); np.from_dlpack takes it directly. Read-only needs the
                // versioned struct, which NumPy 2 asks for; NumPy 1.x asks for the legacy one and gets a
                // BufferError saying so (drop readOnly() there: NumPy 1.x marks the array read-only anyway).
                try (PythonObject x = python.toPython(new ArrowSource(ArrowExport.of(column).readOnly()))) {
                    python.set("x", x);
                }
                python.exec("emb = np.from_dlpack(x)\ndel x");
                boolean same = python.evalString("emb.ctypes.data").equals(Long.toString(floats.getDataBuffer().memoryAddress()));
                out.println("NumPy sees " + python.evalString("emb.shape") + " " + python.evalString("emb.dtype")
                        + " at Arrow's address: " + same);
                out.println("read-only in NumPy: " + python.evalString("not emb.flags.writeable"));

                // NumPy computes; its result comes back into Arrow over NumPy's memory.
                python.exec("norms = np.linalg.norm(emb, axis=1).astype(np.float32)\ndel emb\ngc.collect()");
            }
            // The column is closed; NumPy let go of it above, so its memory is back with the allocator.
            // python.importTensor takes NumPy's tensor; importTensor moves it on to the vector (the imported
            // tensor is dead afterwards), and the vector's close calls NumPy's deleter, on whichever thread.
            try (PythonObject result = python.get("norms");
                 ImportedVector norms = ArrowImport.into(allocator).named("norm").zeroCopyOnly()
                         .importTensor(python.importTensor(result))) {
                Float4Vector vector = (Float4Vector) norms.vector();
                boolean same = python.evalString("norms.ctypes.data").equals(Long.toString(vector.getDataBuffer().memoryAddress()));
                out.printf("Arrow vector '%s' over NumPy's array (%s): [%.4f, %.4f, %.4f, %.4f]%n", vector.getName(),
                        same ? "same address" : "a copy", vector.get(0), vector.get(1), vector.get(2), vector.get(3));
                python.exec("del norms\ngc.collect()"); // Arrow's buffer keeps NumPy's array alive until it is closed
            }
            out.println("Allocator back to " + allocator.getAllocatedMemory() + " bytes");
        }
    }
}
