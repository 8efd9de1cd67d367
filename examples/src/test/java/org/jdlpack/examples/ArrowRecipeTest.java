package org.jdlpack.examples;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The Arrow recipe runs and says what docs/recipes.md says it does. */
class ArrowRecipeTest {

    @Test
    void anArrowEmbeddingColumnReachesNumPyAndComesBackWithoutACopy() {
        RecipeOutput.requireNumPy();
        String out = RecipeOutput.of(ArrowRecipe::run);
        assertThat(out).contains("NumPy sees (4, 3) float32 at Arrow's address: true")
                .contains("read-only in NumPy: True")
                .contains("Arrow vector 'norm' over NumPy's array (same address): [2.2361, 3.7417, 5.3852, 7.0711]")
                .contains("Allocator back to 0 bytes");
    }
}
