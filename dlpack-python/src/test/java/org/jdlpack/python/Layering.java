package org.jdlpack.python;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.jdlpack.abi.testing.SourceGraph;

/**
 * dlpack-python's layers, read from its sources: which file references which (imports, fully
 * qualified names, and simple names of its own package's types, in code only: comments and
 * string literals are left out; read by the abi test-jar's {@link SourceGraph}, as dlpack-abi's
 * {@code AbiLayersTest} reads its own), and the rule that every reference runs down or sideways,
 * never up, and that no files reference each other in a circle but the one named in
 * {@link #ALLOWED_CIRCLES}.
 *
 * <p>The layers, from the bottom: {@code capi} (libpython's call layer and the GIL), {@code objects}
 * (Python objects and values), {@code bridge} (the tensor bridges), {@code runtime}
 * ({@link PythonRuntime} and its start-up). A file's layer is its package's, for the internal
 * packages; the public package {@code org.jdlpack.python} holds types of several layers (Java puts
 * every public type of one API into one package), so each of its files is named in
 * {@link #PUBLIC_PACKAGE}. See docs/design.md, "dlpack-python's layers".
 */
final class Layering {

    /** The layers, bottom first. */
    enum Layer { CAPI, OBJECTS, BRIDGE, RUNTIME }

    static final String PACKAGE = "org.jdlpack.python";

    /** The layer of each internal package. */
    static final Map<String, Layer> INTERNAL_PACKAGES = Map.of(
            PACKAGE + ".internal.capi", Layer.CAPI,
            PACKAGE + ".internal.objects", Layer.OBJECTS,
            PACKAGE + ".internal.bridge", Layer.BRIDGE);

    /** The layer of each file of the public package. */
    static final Map<String, Layer> PUBLIC_PACKAGE = Map.ofEntries(
            // the public exceptions: every layer may throw them (through factories it is given)
            Map.entry("PythonException", Layer.CAPI),
            Map.entry("PythonUnavailableException", Layer.CAPI),
            // Python objects and values: the public PythonObject and the conversions behind it
            Map.entry("PythonObject", Layer.OBJECTS),
            Map.entry("GuardedCalls", Layer.OBJECTS),
            Map.entry("PythonValues", Layer.OBJECTS),
            Map.entry("CallArguments", Layer.OBJECTS),
            // what the bridges export from
            Map.entry("DLPackSource", Layer.BRIDGE),
            Map.entry("ExportRequest", Layer.BRIDGE),
            // the top
            Map.entry("PythonRuntime", Layer.RUNTIME),
            Map.entry("Interpreter", Layer.RUNTIME),
            Map.entry("PythonLocation", Layer.RUNTIME));

    /**
     * The one circle allowed: the public interface whose factory {@code DLPackSource.of} makes its
     * host implementation, which the bridges recognise for their fast path.
     */
    static final Set<Set<String>> ALLOWED_CIRCLES = Set.of(Set.of(PACKAGE + ".DLPackSource", PACKAGE + ".internal.bridge.CpuSource"));

    private Layering() {
    }

    /** {@return the broken rules, one line each; empty when the layers hold} */
    static List<String> check(Map<String, String> sources) {
        Map<String, Set<String>> references = SourceGraph.references(sources, PACKAGE);
        List<String> broken = new ArrayList<>();
        for (Map.Entry<String, Set<String>> file : references.entrySet()) {
            Layer from = layerOf(file.getKey(), broken);
            for (String target : file.getValue()) {
                Layer to = layerOf(target, broken);
                if (from != null && to != null && to.compareTo(from) > 0) {
                    broken.add(SourceGraph.simple(file.getKey()) + " (" + name(from) + ") uses " + SourceGraph.simple(target) + " ("
                            + name(to) + "): a lower layer reaches a higher one");
                }
            }
        }
        for (Set<String> circle : SourceGraph.circles(references)) {
            if (!ALLOWED_CIRCLES.contains(circle)) {
                broken.add("these files use each other in a circle: " + new TreeSet<>(circle.stream().map(SourceGraph::simple).toList()));
            }
        }
        return broken.stream().distinct().toList();
    }

    private static Layer layerOf(String type, List<String> broken) {
        String pkg = SourceGraph.packageOf(type);
        if (pkg.equals(PACKAGE)) {
            Layer layer = PUBLIC_PACKAGE.get(SourceGraph.simple(type));
            if (layer == null) {
                broken.add(SourceGraph.simple(type) + " is in " + PACKAGE + " but has no layer: name it in Layering.PUBLIC_PACKAGE");
            }
            return layer;
        }
        Layer layer = INTERNAL_PACKAGES.get(pkg);
        if (layer == null) {
            broken.add(pkg + " has no layer: name it in Layering.INTERNAL_PACKAGES");
        }
        return layer;
    }

    /** {@return every {@code invokeExact} outside the call layer's {@code LibPython} classes, as "File: line"} */
    static List<String> invokeExactOutsideTheCallLayer(Map<String, String> sources) {
        List<String> found = new ArrayList<>();
        for (Map.Entry<String, String> source : sources.entrySet()) {
            String file = source.getKey().replace('\\', '/');
            boolean callLayer = file.startsWith("org/jdlpack/python/internal/capi/LibPython");
            String[] lines = SourceGraph.codeOnly(source.getValue()).split("\n", -1);
            for (int n = 0; n < lines.length; n++) {
                if (!callLayer && lines[n].contains("invokeExact")) {
                    found.add(file + ":" + (n + 1));
                }
            }
        }
        return found;
    }

    private static String name(Layer layer) {
        return layer.name().toLowerCase(Locale.ROOT);
    }
}
