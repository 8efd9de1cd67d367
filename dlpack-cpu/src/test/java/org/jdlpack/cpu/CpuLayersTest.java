package org.jdlpack.cpu;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.jdlpack.abi.testing.SourceGraph;
import org.junit.jupiter.api.Test;

/**
 * dlpack-cpu's types do not grow into a knot (issue 43): no set of top-level types that reach
 * each other, read from the main sources as dlpack-abi's {@code AbiLayersTest} reads its own
 * (imports, qualified names, and the simple names of a file's own package in code; comments and
 * strings left out), has more than two members. A view and the one type that makes it for its
 * owner may know each other; a third type that both reach and that reaches them back means a
 * type was split by something other than its job. A failure names the files.
 */
class CpuLayersTest {

    private static final Path SOURCES = Path.of(System.getProperty("basedir", "."), "src", "main", "java");
    private static final String PREFIX = "org.jdlpack.cpu";

    /** The bound (issue 43): no set of types that reach each other is larger than this. */
    private static final int LARGEST_CIRCLE = 2;

    @Test
    void noMoreThanTwoTypesReachEachOther() {
        Map<String, String> sources = SourceGraph.read(SOURCES);
        assertThat(sources).as("dlpack-cpu's sources under " + SOURCES.toAbsolutePath()).hasSizeGreaterThan(8);
        assertThat(tooLarge(SourceGraph.references(sources, PREFIX))).as("sets of types that reach each other").isEmpty();
    }

    @Test
    void theCheckerNamesACircleOfThreeAndLetsAPairBe() {
        Map<String, String> sources = Map.of(
                "a/View.java", """
                        package org.jdlpack.cpu;
                        public final class View extends Part { Owned owner; }
                        """,
                "a/Part.java", """
                        package org.jdlpack.cpu;
                        abstract class Part { View self() { return (View) this; } }
                        """,
                "a/Owned.java", """
                        package org.jdlpack.cpu;
                        public final class Owned { View view; /* Streams in a comment is no reference */ }
                        """,
                "a/Streams.java", """
                        package org.jdlpack.cpu;
                        final class Streams { Owned o; String s = "View"; }
                        """);
        assertThat(tooLarge(SourceGraph.references(sources, PREFIX))).containsExactly("[Owned, Part, View]");
        Map<String, String> pair = Map.of(
                "a/View.java", """
                        package org.jdlpack.cpu;
                        public final class View { Owned owner; }
                        """,
                "a/Owned.java", """
                        package org.jdlpack.cpu;
                        public final class Owned { View view; }
                        """);
        assertThat(tooLarge(SourceGraph.references(pair, PREFIX))).isEmpty();
    }

    /** {@return each circle of more than {@link #LARGEST_CIRCLE} types, as its files' simple names} */
    private static List<String> tooLarge(Map<String, Set<String>> graph) {
        return SourceGraph.circles(graph).stream()
                .filter(circle -> circle.size() > LARGEST_CIRCLE)
                .map(circle -> new TreeSet<>(circle.stream().map(SourceGraph::simple).toList()).toString())
                .toList();
    }
}
