package org.jdlpack.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.jdlpack.abi.testing.SourceGraph;
import org.junit.jupiter.api.Test;

/**
 * Nothing is exported to a sibling without a user there (issue 43): for every qualified export
 * ({@code exports p to m1, m2}) in a library module's {@code module-info.java}, each public
 * top-level type of {@code p} is named by the main code of one of the modules it is exported to,
 * and each of those modules names one of its types. A type that only its own module uses belongs
 * in a package of its own module that is not exported ({@code org.jdlpack.abi.stripes},
 * {@code org.jdlpack.cpu.rows}); a module that no longer uses the package comes off the list.
 * Read from the sources (imports and qualified names in code, through the abi test-jar's
 * {@link SourceGraph}), so that a failure names the type or the module. Unqualified exports are
 * the API, whose users are applications, and are not checked here. The checker itself is shown to
 * catch each kind of break.
 */
class QualifiedExportsTest {

    /** The repository root: the parent of this module's folder. */
    private static final Path ROOT = Path.of(System.getProperty("basedir", ".")).toAbsolutePath().getParent();

    private static final Pattern MODULE = Pattern.compile("\\bmodule\\s+([\\w.]+)\\s*\\{");
    private static final Pattern QUALIFIED_EXPORT = Pattern.compile("\\bexports\\s+([\\w.]+)\\s+to\\s+([\\w.,\\s]+);");

    @Test
    void everyQualifiedExportHasAUserInEachModuleItNames() {
        Map<String, Map<String, String>> modules = libraryModules();
        assertThat(modules).as("library modules under " + ROOT).containsKeys("org.jdlpack.abi", "org.jdlpack.cpu",
                "org.jdlpack.adapters", "org.jdlpack.libtorch");
        assertThat(check(modules)).isEmpty();
    }

    @Test
    void theCheckerNamesATypeNoTargetUsesAndATargetThatUsesNothing() {
        Map<String, Map<String, String>> modules = Map.of(
                "org.jdlpack.abi", Map.of(
                        "module-info.java", """
                                module org.jdlpack.abi {
                                    exports org.jdlpack.abi;
                                    exports org.jdlpack.abi.plumbing to org.jdlpack.cpu, org.jdlpack.cuda;
                                    // exports org.jdlpack.abi.gone to org.jdlpack.cpu; (a comment exports nothing)
                                }
                                """,
                        "org/jdlpack/abi/plumbing/Ledger.java", """
                                package org.jdlpack.abi.plumbing;
                                public final class Ledger { Stripes s; }
                                """,
                        "org/jdlpack/abi/plumbing/Stripes.java", """
                                package org.jdlpack.abi.plumbing;
                                public final class Stripes { }
                                """,
                        "org/jdlpack/abi/plumbing/Hidden.java", """
                                package org.jdlpack.abi.plumbing;
                                final class Hidden { }
                                """),
                "org.jdlpack.cpu", Map.of(
                        "module-info.java", "module org.jdlpack.cpu { requires org.jdlpack.abi; }",
                        "org/jdlpack/cpu/Owned.java", """
                                package org.jdlpack.cpu;
                                import org.jdlpack.abi.plumbing.Ledger;
                                public final class Owned { String s = "org.jdlpack.abi.plumbing.Stripes"; }
                                """),
                "org.jdlpack.cuda", Map.of(
                        "module-info.java", "module org.jdlpack.cuda { requires org.jdlpack.abi; }",
                        "org/jdlpack/cuda/Memory.java", """
                                package org.jdlpack.cuda;
                                /** Uses {@link org.jdlpack.abi.plumbing.Ledger} in a comment only. */
                                public final class Memory { }
                                """));
        assertThat(check(modules)).containsExactlyInAnyOrder(
                "org.jdlpack.abi.plumbing.Stripes is exported to [org.jdlpack.cpu, org.jdlpack.cuda], but none of them uses it: "
                        + "make it package-private, or move it to a package org.jdlpack.abi does not export",
                "org.jdlpack.abi exports org.jdlpack.abi.plumbing to org.jdlpack.cuda, which uses none of its types: "
                        + "take org.jdlpack.cuda off the list");
    }

    /** {@return the broken rules, one line each; empty when every qualified export has its users} */
    static List<String> check(Map<String, Map<String, String>> modules) {
        Map<String, String> all = new TreeMap<>();
        Map<String, String> moduleOfPackage = new TreeMap<>();
        modules.forEach((module, sources) -> sources.forEach((path, text) -> {
            all.put(module + "/" + path, text);
            int slash = path.replace('\\', '/').lastIndexOf('/');
            if (slash > 0) {
                moduleOfPackage.put(path.substring(0, slash).replace('\\', '/').replace('/', '.'), module);
            }
        }));
        Map<String, Set<String>> graph = SourceGraph.references(all, "org.jdlpack");
        List<String> broken = new ArrayList<>();
        for (Map.Entry<String, Map<String, String>> module : new TreeMap<>(modules).entrySet()) {
            String descriptor = SourceGraph.codeOnly(module.getValue().getOrDefault("module-info.java", ""));
            Matcher export = QUALIFIED_EXPORT.matcher(descriptor);
            while (export.find()) {
                String pkg = export.group(1);
                Set<String> targets = new TreeSet<>(List.of(export.group(2).strip().split("\\s*,\\s*")));
                Map<String, Set<String>> usersByType = new TreeMap<>();
                graph.keySet().stream().filter(type -> SourceGraph.packageOf(type).equals(pkg)
                                && isPublic(type, all.get(sourceKey(module.getKey(), type))))
                        .forEach(type -> usersByType.put(type, new TreeSet<>()));
                graph.forEach((from, uses) -> uses.stream().filter(usersByType::containsKey)
                        .forEach(type -> usersByType.get(type).add(moduleOfPackage.get(SourceGraph.packageOf(from)))));
                usersByType.forEach((type, users) -> {
                    if (users.stream().noneMatch(targets::contains)) {
                        broken.add(type + " is exported to " + targets + ", but none of them uses it: make it package-private, "
                                + "or move it to a package " + module.getKey() + " does not export");
                    }
                });
                for (String target : targets) {
                    if (usersByType.values().stream().noneMatch(users -> users.contains(target))) {
                        broken.add(module.getKey() + " exports " + pkg + " to " + target + ", which uses none of its types: take "
                                + target + " off the list");
                    }
                }
            }
        }
        return broken;
    }

    private static String sourceKey(String module, String type) {
        return module + "/" + type.replace('.', '/') + ".java";
    }

    /** Whether the top-level type's declaration in {@code source} says {@code public}. */
    private static boolean isPublic(String type, String source) {
        if (source == null) {
            return false;
        }
        Pattern declaration = Pattern.compile("\\bpublic\\s+(?:(?:final|abstract|sealed|non-sealed|strictfp)\\s+)*"
                + "(?:class|interface|record|enum|@interface)\\s+" + SourceGraph.simple(type) + "\\b");
        return declaration.matcher(SourceGraph.codeOnly(source)).find();
    }

    /** {@return each library module's main sources (dlpack-* folders with a module-info.java), by module name} */
    private static Map<String, Map<String, String>> libraryModules() {
        Map<String, Map<String, String>> modules = new TreeMap<>();
        try (Stream<Path> folders = Files.list(ROOT)) {
            for (Path folder : folders.filter(f -> f.getFileName().toString().startsWith("dlpack-")).sorted().toList()) {
                Path sources = folder.resolve("src/main/java");
                Path descriptor = sources.resolve("module-info.java");
                if (Files.isRegularFile(descriptor)) {
                    Matcher name = MODULE.matcher(SourceGraph.codeOnly(Files.readString(descriptor)));
                    assertThat(name.find()).as("a module declaration in " + descriptor).isTrue();
                    modules.put(name.group(1), SourceGraph.read(sources));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return modules;
    }
}
