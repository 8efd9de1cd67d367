package org.jdlpack.python;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.abi.testing.SourceGraph;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * dlpack-python's inside reads one way: the call layer and the GIL at the bottom, Python objects
 * and values above, the tensor bridges above those, {@link PythonRuntime} on top ({@link Layering}
 * says how each file is placed). Read from the sources, so that an import that runs up fails the
 * build, naming both files; the checker itself is shown to catch each kind of break.
 */
@ExtendWith(NothingLeftBehind.class)
class LayersTest {

    private static final Path SOURCES = Path.of(System.getProperty("basedir", "."), "src", "main", "java");

    @Test
    void everyReferenceRunsDownOrSideways() {
        Map<String, String> sources = SourceGraph.read(SOURCES);
        assertThat(sources).as("dlpack-python's sources under " + SOURCES.toAbsolutePath()).hasSizeGreaterThan(20);
        assertThat(Layering.check(sources)).isEmpty();
    }

    @Test
    void onlyTheCallLayerInvokesADowncall() {
        assertThat(Layering.invokeExactOutsideTheCallLayer(SourceGraph.read(SOURCES))).isEmpty();
    }

    @Test
    void theInternalPackagesAreNotExported() throws Exception {
        String moduleInfo = SourceGraph.codeOnly(Files.readString(SOURCES.resolve("module-info.java")));
        assertThat(moduleInfo.lines().map(String::strip).filter(line -> line.startsWith("exports") || line.startsWith("opens")))
                .containsExactly("exports org.jdlpack.python;");
    }

    @Test
    void theCheckerCatchesAnUpwardReferenceACircleAndAnUnplacedFile() {
        Map<String, String> sources = Map.of(
                "a/LibPythonThing.java", """
                        package org.jdlpack.python.internal.capi;
                        import org.jdlpack.python.internal.bridge.Bridge; // up: capi -> bridge
                        public final class LibPythonThing { Bridge b; }
                        """,
                "a/Bridge.java", """
                        package org.jdlpack.python.internal.bridge;
                        public final class Bridge { Other o; /* PythonRuntime in a comment is no reference */ }
                        """,
                "a/Other.java", """
                        package org.jdlpack.python.internal.bridge;
                        public final class Other { Bridge b; String s = "LibPythonThing"; }
                        """,
                "a/Stray.java", """
                        package org.jdlpack.python;
                        final class Stray { }
                        """);
        assertThat(Layering.check(sources)).containsExactlyInAnyOrder(
                "LibPythonThing (capi) uses Bridge (bridge): a lower layer reaches a higher one",
                "these files use each other in a circle: [Bridge, Other]",
                "Stray is in org.jdlpack.python but has no layer: name it in Layering.PUBLIC_PACKAGE");
    }

    @Test
    void theCheckerFindsInvokeExactInCodeOnly() {
        Map<String, String> sources = Map.of(
                "org/jdlpack/python/internal/capi/LibPythonThing.java", "class LibPythonThing { void f() { H.invokeExact(); } }",
                "org/jdlpack/python/internal/bridge/Bridge.java", "class Bridge {\n// invokeExact in a comment\nvoid f() { H.invokeExact(); } }");
        assertThat(Layering.invokeExactOutsideTheCallLayer(sources)).containsExactly("org/jdlpack/python/internal/bridge/Bridge.java:3");
    }
}
