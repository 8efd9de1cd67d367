package org.jdlpack.abi;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.jdlpack.abi.testing.SourceGraph;
import org.junit.jupiter.api.Test;

/**
 * dlpack-abi's inside reads one way (docs/design.md, "dlpack-abi's layers"): the plumbing at the
 * bottom, then the ABI's values, native memory and the counters, the deleters (ours, answered
 * through the export registry, and anyone's, called), one Java owner per pointer, the import
 * side, the export side, and the process-wide views on top. Read from the main sources (imports,
 * qualified names, and the simple names of a file's own package in code; comments and strings
 * left out), so that a reference that runs up, or a new circle, fails the build naming the files.
 * The checker itself is shown to catch each kind of break.
 */
class AbiLayersTest {

    private static final Path SOURCES = Path.of(System.getProperty("basedir", "."), "src", "main", "java");
    private static final String PACKAGE = "org.jdlpack.abi";

    /** The layers, bottom first. */
    enum Layer { PLUMBING, VALUES, NATIVE, DELETERS, OWNERSHIP, IMPORT, EXPORT, PROCESS }

    /**
     * The layer of each file of {@code org.jdlpack.abi}; the plumbing packages are {@link Layer#PLUMBING}
     * as a whole ({@code plumbing}, exported to the siblings, and {@code stripes}, to no module).
     */
    static final Map<String, Layer> FILES = Map.ofEntries(
            // the ABI's values and struct layouts, the tensor's description, the options, the errors
            Map.entry("DLDataType", Layer.VALUES),
            Map.entry("DLDataTypeCode", Layer.VALUES),
            Map.entry("DLDevice", Layer.VALUES),
            Map.entry("DLDeviceType", Layer.VALUES),
            Map.entry("DLPackVersion", Layer.VALUES),
            Map.entry("DLTensorFlag", Layer.VALUES),
            Map.entry("ManagedTensorKind", Layer.VALUES),
            Map.entry("DLDataTypeLayout", Layer.VALUES),
            Map.entry("DLDeviceLayout", Layer.VALUES),
            Map.entry("DLPackVersionLayout", Layer.VALUES),
            Map.entry("DLTensorLayout", Layer.VALUES),
            Map.entry("DLManagedTensorLayout", Layer.VALUES),
            Map.entry("DLManagedTensorVersionedLayout", Layer.VALUES),
            Map.entry("TensorLayout", Layer.VALUES),
            Map.entry("TensorGeometry", Layer.VALUES),
            Map.entry("TensorExtent", Layer.VALUES),
            Map.entry("TensorSpec", Layer.VALUES),
            Map.entry("ExportOptions", Layer.VALUES),
            Map.entry("ImportLifetime", Layer.VALUES),
            Map.entry("DLPackException", Layer.VALUES),
            Map.entry("InvalidTensorException", Layer.VALUES),
            Map.entry("UnsupportedDeviceException", Layer.VALUES),
            Map.entry("UnsupportedVersionException", Layer.VALUES),
            // libc's call layer, the counters
            Map.entry("NativeMemory", Layer.NATIVE),
            Map.entry("Counters", Layer.NATIVE),
            // the deleter contract both ways: our deleter answered through the registry, anyone's called
            Map.entry("ExportHolder", Layer.DELETERS),
            Map.entry("ExportRegistry", Layer.DELETERS),
            Map.entry("ExportDeleterUpcalls", Layer.DELETERS),
            Map.entry("ForeignDeleters", Layer.DELETERS),
            // one Java owner per pointer
            Map.entry("OwnedPointers", Layer.OWNERSHIP),
            Map.entry("Ownership", Layer.OWNERSHIP),
            Map.entry("OwnershipCell", Layer.OWNERSHIP),
            Map.entry("PlainOwnership", Layer.OWNERSHIP),
            // importing
            Map.entry("ManagedTensorReader", Layer.IMPORT),
            Map.entry("ImportedFields", Layer.IMPORT),
            Map.entry("Importer", Layer.IMPORT),
            Map.entry("ImportedTensor", Layer.IMPORT),
            // exporting (ExportedTensor.importTensor takes an export back through the import side's front door)
            Map.entry("ExportOwner", Layer.EXPORT),
            Map.entry("ManagedTensorWriter", Layer.EXPORT),
            Map.entry("ExportedTensor", Layer.EXPORT),
            // the process-wide views
            Map.entry("DLPackStats", Layer.PROCESS),
            Map.entry("DLPackRuntime", Layer.PROCESS));

    /**
     * Circles allowed, each of few types that are one thing: a tensor layout and the arithmetic
     * that checks it; the imported tensor and the import steps that make it.
     */
    static final Set<Set<String>> ALLOWED_CIRCLES = Set.of(
            Set.of(PACKAGE + ".TensorGeometry", PACKAGE + ".TensorLayout"),
            Set.of(PACKAGE + ".ImportedTensor", PACKAGE + ".Importer"));

    /** The bound (issue 43): no set of types that reach each other is larger than this. */
    private static final int LARGEST_CIRCLE = 3;

    @Test
    void everyReferenceRunsDownOrSideways() {
        Map<String, String> sources = SourceGraph.read(SOURCES);
        assertThat(sources).as("dlpack-abi's sources under " + SOURCES.toAbsolutePath()).hasSizeGreaterThan(40);
        assertThat(check(SourceGraph.references(sources, PACKAGE))).isEmpty();
    }

    @Test
    void noMoreThanThreeTypesReachEachOther() {
        List<Set<String>> circles = SourceGraph.circles(SourceGraph.references(SourceGraph.read(SOURCES), PACKAGE));
        assertThat(circles).as("sets of types that reach each other").allSatisfy(circle -> assertThat(circle).hasSizeLessThanOrEqualTo(LARGEST_CIRCLE));
    }

    /**
     * The export side may hand an export back to the import side's front door (an
     * {@code ExportedTensor} imported in this JVM); nothing else on it reads an import.
     */
    @Test
    void theExportSideUsesTheImportSideOnlyToTakeAnExportBack() {
        Map<String, Set<String>> graph = SourceGraph.references(SourceGraph.read(SOURCES), PACKAGE);
        List<String> exportToImport = new ArrayList<>();
        graph.forEach((from, targets) -> targets.stream()
                .filter(to -> layerOf(from) == Layer.EXPORT && layerOf(to) == Layer.IMPORT)
                .forEach(to -> exportToImport.add(SourceGraph.simple(from) + " -> " + SourceGraph.simple(to))));
        assertThat(exportToImport).containsExactlyInAnyOrder("ExportedTensor -> ImportedTensor", "ExportedTensor -> Importer");
    }

    @Test
    void theCheckerCatchesAnUpwardReferenceACircleAndAnUnplacedFile() {
        Map<String, String> sources = Map.of(
                "a/ForeignDeleters.java", """
                        package org.jdlpack.abi;
                        final class ForeignDeleters { ExportOwner owner; } // up: deleters -> export
                        """,
                "a/ExportOwner.java", """
                        package org.jdlpack.abi;
                        public final class ExportOwner { ManagedTensorWriter w; /* DLPackStats in a comment is no reference */ }
                        """,
                "a/ManagedTensorWriter.java", """
                        package org.jdlpack.abi;
                        final class ManagedTensorWriter { ExportOwner o; String s = "DLPackRuntime"; }
                        """,
                "a/DLPackStats.java", """
                        package org.jdlpack.abi;
                        public final class DLPackStats { }
                        """,
                "a/Stray.java", """
                        package org.jdlpack.abi;
                        import org.jdlpack.abi.plumbing.Ledger;
                        final class Stray { }
                        """,
                "a/Ledger.java", """
                        package org.jdlpack.abi.plumbing;
                        public final class Ledger { org.jdlpack.abi.DLPackStats stats; }
                        """);
        assertThat(check(SourceGraph.references(sources, PACKAGE))).containsExactlyInAnyOrder(
                "ForeignDeleters (deleters) uses ExportOwner (export): a lower layer reaches a higher one",
                "Ledger (plumbing) uses DLPackStats (process): a lower layer reaches a higher one",
                "these files use each other in a circle: [ExportOwner, ManagedTensorWriter]",
                "Stray is in org.jdlpack.abi but has no layer: name it in AbiLayersTest.FILES");
    }

    @Test
    void theCheckerFindsEveryCircleAndItsSize() {
        Map<String, Set<String>> graph = Map.of(
                "p.A", Set.of("p.B"), "p.B", Set.of("p.C"), "p.C", Set.of("p.A", "p.D"),
                "p.D", Set.of("p.E"), "p.E", Set.of("p.D"), "p.F", Set.of("p.A"));
        assertThat(SourceGraph.circles(graph)).containsExactly(Set.of("p.A", "p.B", "p.C"), Set.of("p.D", "p.E"));
    }

    /** {@return the broken rules, one line each; empty when the layers hold} */
    static List<String> check(Map<String, Set<String>> graph) {
        List<String> broken = new ArrayList<>();
        for (Map.Entry<String, Set<String>> file : graph.entrySet()) {
            Layer from = placed(file.getKey(), broken);
            for (String target : file.getValue()) {
                Layer to = placed(target, broken);
                if (from != null && to != null && to.compareTo(from) > 0) {
                    broken.add(SourceGraph.simple(file.getKey()) + " (" + name(from) + ") uses " + SourceGraph.simple(target) + " ("
                            + name(to) + "): a lower layer reaches a higher one");
                }
            }
        }
        for (Set<String> circle : SourceGraph.circles(graph)) {
            if (!ALLOWED_CIRCLES.contains(circle)) {
                broken.add("these files use each other in a circle: " + new TreeSet<>(circle.stream().map(SourceGraph::simple).toList()));
            }
        }
        return broken.stream().distinct().toList();
    }

    private static Layer placed(String type, List<String> broken) {
        Layer layer = layerOf(type);
        if (layer == null) {
            broken.add(SourceGraph.simple(type) + " is in " + SourceGraph.packageOf(type) + " but has no layer: name it in AbiLayersTest.FILES");
        }
        return layer;
    }

    private static Layer layerOf(String type) {
        String pkg = SourceGraph.packageOf(type);
        if (pkg.equals(PACKAGE + ".plumbing") || pkg.equals(PACKAGE + ".stripes")) {
            return Layer.PLUMBING;
        }
        return pkg.equals(PACKAGE) ? FILES.get(SourceGraph.simple(type)) : null;
    }

    private static String name(Layer layer) {
        return layer.name().toLowerCase(Locale.ROOT);
    }
}
