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
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.peer.NumPyPeer;
import org.jdlpack.arrow.ArrowExport;
import org.jdlpack.arrow.ArrowImport;
import org.jdlpack.arrow.ImportedVector;

/**
 * Recipe: an Arrow embedding column ({@code FixedSizeList<float32>[dim]}) into NumPy without a
 * copy, and NumPy's answer back into an Arrow vector without a copy. NumPy runs in this JVM through
 * the embedded-CPython peer; with PyTorch, {@code torch.from_dlpack} takes the same capsule.
 */
public final class ArrowRecipe {

    private ArrowRecipe() {
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
        NumPyPeer numpy = NumPyPeer.require();
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

                // Arrow -> NumPy: export the column (a rows x dim tensor over Arrow's buffer) and let NumPy consume it.
                numpy.putCapsule("cap", ArrowExport.of(column).readOnly().exportVersioned());
                numpy.exec("emb = np.from_dlpack(JavaTensor(cap))\ndel cap");
                boolean same = numpy.eval("emb.ctypes.data").equals(Long.toString(floats.getDataBuffer().memoryAddress()));
                out.println("NumPy sees " + numpy.eval("emb.shape") + " " + numpy.eval("emb.dtype") + " at Arrow's address: " + same);
                out.println("read-only in NumPy: " + numpy.eval("not emb.flags.writeable"));

                // NumPy computes; its result comes back into Arrow over NumPy's memory.
                numpy.exec("norms = np.linalg.norm(emb, axis=1).astype(np.float32)\ndel emb\ngc.collect()"
                        + "\ncap = norms.__dlpack__(max_version=(1, 0))");
            }
            // The column is closed; NumPy let go of it above, so its memory is back with the allocator.
            try (ImportedVector norms = ArrowImport.into(allocator).named("norm").zeroCopyOnly()
                    .importVersioned(numpy.consumeCapsule("cap", ManagedTensorKind.VERSIONED))) {
                numpy.exec("del cap");
                Float4Vector vector = (Float4Vector) norms.vector();
                boolean same = numpy.eval("norms.ctypes.data").equals(Long.toString(vector.getDataBuffer().memoryAddress()));
                out.printf("Arrow vector '%s' over NumPy's array (%s): [%.4f, %.4f, %.4f, %.4f]%n", vector.getName(),
                        same ? "same address" : "a copy", vector.get(0), vector.get(1), vector.get(2), vector.get(3));
                numpy.exec("del norms\ngc.collect()"); // Arrow's buffer keeps NumPy's array alive until it is closed
            }
            out.println("Allocator back to " + allocator.getAllocatedMemory() + " bytes");
        }
    }
}
