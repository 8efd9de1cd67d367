package org.jdlpack.examples;

import static org.assertj.core.api.Assertions.assertThat;

import org.jdlpack.python.PythonException;
import org.jdlpack.python.PythonRuntime;
import org.jdlpack.python.PythonUnavailableException;
import org.jdlpack.testsupport.PeerRequirement;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The PyTorch recipe of docs/recipes.md runs and says what the docs say. Tagged {@code torch}: it
 * runs in the examples' torch test JVM, which embeds the Python that has PyTorch.
 */
@Tag("torch")
class TorchRecipeTest {

    @Test
    void torchRecipe() {
        try {
            PythonRuntime.get().exec("import torch");
        } catch (PythonUnavailableException | PythonException e) {
            throw PeerRequirement.missing("PyTorch (embedded CPython)", e.getMessage().strip().lines().reduce((a, b) -> b).orElse("")
                    + "; install python3-torch (Debian) or set JDLPACK_TORCH_PYTHON to a python3 with PyTorch");
        }
        String out = RecipeOutput.of(TorchRecipe::run);
        assertThat(out).contains("Java -> PyTorch: t = [[2.0, 4.0, 6.0], [8.0, 10.0, 12.0]] (torch doubled it in place; Java reads 12.0)")
                .contains("PyTorch released its reference: true")
                .contains("PyTorch -> Java: shape [3, 2], strides [1, 3], [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]");
    }
}
