package org.jdlpack.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import org.jdlpack.abi.DLPackStats;
import org.jdlpack.testsupport.PeerRequirement;
import org.junit.jupiter.api.Test;

/** The Arrow recipe runs and says what docs/recipes.md says it does. */
class ArrowRecipeTest {

    @Test
    void anArrowEmbeddingColumnReachesNumPyAndComesBackWithoutACopy() {
        if (QuickStart.numPyOrNull() == null) {
            throw PeerRequirement.missing("NumPy (embedded CPython)", "no python3 with NumPy and a shared libpython; install "
                    + "python3-numpy and libpython3-dev (Debian), or set JDLPACK_PYTHON to such a python3");
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        ArrowRecipe.run(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        String out = bytes.toString(StandardCharsets.UTF_8);
        assertThat(out).contains("NumPy sees (4, 3) float32 at Arrow's address: true")
                .contains("read-only in NumPy: True")
                .contains("Arrow vector 'norm' over NumPy's array (same address): [2.2361, 3.7417, 5.3852, 7.0711]")
                .contains("Allocator back to 0 bytes");
        assertThat(DLPackStats.liveExports()).isZero();
        assertThat(DLPackStats.ownedManagedTensors()).isZero();
    }
}
