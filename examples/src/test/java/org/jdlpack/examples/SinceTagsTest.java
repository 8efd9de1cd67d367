package org.jdlpack.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

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
        List<Path> sources;
        try (Stream<Path> modules = Files.list(ROOT)) {
            sources = modules.filter(m -> m.getFileName().toString().startsWith("dlpack-"))
                    .map(m -> m.resolve("src/main/java"))
                    .filter(Files::isDirectory)
                    .flatMap(SinceTagsTest::javaFiles)
                    .toList();
        }
        assertThat(sources).as("library sources under " + ROOT).hasSizeGreaterThan(100);
        List<String> missing = sources.stream().filter(SinceTagsTest::lacksSince).map(p -> ROOT.relativize(p).toString()).toList();
        assertThat(missing).as("public types without @since in their javadoc").isEmpty();
    }

    private static Stream<Path> javaFiles(Path root) {
        try {
            return Files.walk(root)
                    .filter(p -> p.toString().endsWith(".java"))
                    .filter(p -> !p.toString().contains("/internal/"))
                    .filter(p -> !p.getFileName().toString().equals("module-info.java"))
                    .filter(p -> !p.getFileName().toString().equals("package-info.java"))
                    .toList().stream();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static boolean lacksSince(Path source) {
        String text;
        try {
            text = Files.readString(source);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        Matcher m = DECLARATION.matcher(text);
        if (!m.find()) {
            return false; // no public top-level type
        }
        String before = text.substring(0, m.start());
        int doc = before.lastIndexOf("/**");
        return doc < 0 || !before.substring(doc).contains("@since");
    }
}
