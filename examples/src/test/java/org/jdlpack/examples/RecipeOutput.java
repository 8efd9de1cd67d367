package org.jdlpack.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;

import org.jdlpack.abi.DLPackStats;
import org.jdlpack.testsupport.PeerRequirement;

/** Runs a recipe the docs point to and hands its printed output to the test that checks it. */
final class RecipeOutput {

    private RecipeOutput() {
    }

    /** {@return what the recipe printed} Checks first that it left no export live and no managed tensor owned. */
    static String of(Consumer<PrintStream> recipe) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        recipe.accept(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        assertThat(DLPackStats.liveExports()).isZero();
        assertThat(DLPackStats.ownedManagedTensors()).isZero();
        return bytes.toString(StandardCharsets.UTF_8);
    }

    /** Skips the calling test, saying what to install, when NumPy cannot be embedded here. */
    static void requireNumPy() {
        if (QuickStart.numPyOrNull() == null) {
            throw PeerRequirement.missing("NumPy (embedded CPython)", "no python3 with NumPy and a shared libpython; install "
                    + "python3-numpy and libpython3-dev (Debian), or set JDLPACK_PYTHON to such a python3");
        }
    }
}
