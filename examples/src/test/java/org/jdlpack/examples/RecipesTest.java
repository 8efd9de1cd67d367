package org.jdlpack.examples;

import static org.assertj.core.api.Assertions.assertThat;

import org.jdlpack.testsupport.PeerRequirement;
import org.junit.jupiter.api.Test;

/** Every recipe the docs point to runs, and says what the docs say it does. */
class RecipesTest {

    @Test
    void numPyRecipe() {
        RecipeOutput.requireNumPy();
        String out = RecipeOutput.of(NumPyRecipe::run);
        assertThat(out).contains("NumPy -> Java: [0.0, 0.25, 0.5, 0.75, 1.0]")
                .contains("a[4] = 42.0")
                .contains("Java -> NumPy: b = [[10.0, 20.0], [30.0, 40.0]] (NumPy multiplied in place; Java reads 40.0)")
                .contains("NumPy released its reference: true");
    }

    @Test
    void outParameterRecipe() {
        assertThat(RecipeOutput.of(OutParameterRecipe::run)).contains("holding [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]")
                .contains("called the library's deleter");
    }

    @Test
    void openCLRecipe() {
        String out = RecipeOutput.of(OpenCLRecipe::run);
        if (out.startsWith("No OpenCL")) {
            throw PeerRequirement.missing("OpenCL", out.strip());
        }
        assertThat(out).contains("Squared on the device, read on the host: [16.0, 25.0, 36.0, 49.0, 64.0, 81.0, 100.0, 121.0]");
    }

    @Test
    void cudaRecipe() {
        String out = RecipeOutput.of(CudaRecipe::run);
        if (out.contains("No CUDA device here")) {
            System.out.println("CUDA recipe ran without a device: " + out.lines().findFirst().orElse(""));
        } else {
            assertThat(out).contains("Deleter ran; device memory freed: true");
        }
    }
}
