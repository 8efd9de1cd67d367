package org.jdlpack.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.jdlpack.abi.testing.SourceGraph;
import org.junit.jupiter.api.Test;

/**
 * Every public top-level type of the library modules' main code, outside their {@code internal}
 * packages, says since which release it exists (issue 43): {@code @since} in the javadoc right
 * above its declaration. A new public type without one fails here, naming its file.
 */
class SinceTagsTest {

    /** The repository root: the parent of this module's folder. */
    private static final Path ROOT = Path.of(System.getProperty("basedir", ".")).toAbsolutePath().getParent();

    /** A public top-level declaration at the start of a line, with the javadoc and annotations before it. */
    private static final Pattern DECLARATION = Pattern.compile(
            "^public\\s+(?:(?:abstract|final|sealed|non-sealed|static|strictfp)\\s+)*(?:class|interface|enum|record|@interface)\\s",
            Pattern.MULTILINE);

    @Test
    void everyPublicTypeOfTheLibrariesHasASinceTag() throws IOException {
        int read = 0;
        List<String> missing = new ArrayList<>();
        try (Stream<Path> modules = Files.list(ROOT)) {
            for (Path module : modules.filter(m -> m.getFileName().toString().startsWith("dlpack-")).sorted().toList()) {
                Path sources = module.resolve("src/main/java");
                if (!Files.isDirectory(sources)) {
                    continue;
                }
                for (Map.Entry<String, String> source : SourceGraph.read(sources).entrySet()) {
                    String file = source.getKey();
                    if (file.contains("/internal/") || file.endsWith("module-info.java") || file.endsWith("package-info.java")) {
                        continue;
                    }
                    read++;
                    if (lacksSince(source.getValue())) {
                        missing.add(ROOT.relativize(sources.resolve(file)).toString());
                    }
                }
            }
        }
        assertThat(read).as("library sources under " + ROOT).isGreaterThan(100);
        assertThat(missing).as("public types without @since in their javadoc").isEmpty();
    }

    private static boolean lacksSince(String text) {
        Matcher m = DECLARATION.matcher(text);
        if (!m.find()) {
            return false; // no public top-level type
        }
        String before = text.substring(0, m.start());
        int doc = before.lastIndexOf("/**");
        return doc < 0 || !before.substring(doc).contains("@since");
    }
}
