package org.jdlpack.examples;

import static java.lang.foreign.ValueLayout.ADDRESS;

import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.cpu.HostTensorView;
import org.jdlpack.testsupport.CPeer;

/**
 * Recipe: a native library that returns a tensor through a {@code DLManagedTensorVersioned**}
 * out-parameter, as cuVS's C API does. The caller owns what comes back and must call its deleter
 * exactly once: import it at once (ImportedTensor.of validates it, and its close calls the deleter), so that an exception cannot leak it.
 */
public final class OutParameterRecipe {

    private OutParameterRecipe() {
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
        CPeer library = CPeer.get(); // stands in for the native library
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment slot = arena.allocate(ADDRESS); // DLManagedTensorVersioned* result;
            int status = library.makeResult(2, 4, slot);  // status = make_result(2, 4, &result);
            if (status != 0) {
                throw new IllegalStateException("the library failed with status " + status);
            }
            try (ImportedTensor result = ImportedTensor.of(ManagedTensorKind.VERSIONED, slot.get(ADDRESS, 0))) {
                HostTensorView view = HostTensorView.of(result);
                float[] values = new float[8];
                view.copyTo(values);
                out.println("The library returned " + result + " holding " + java.util.Arrays.toString(values));
            }
            out.println("Closing the tensor called the library's deleter.");
        }
    }
}
