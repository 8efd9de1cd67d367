package org.jdlpack.python;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * dlpack-python's layers, read from its sources: which file references which (imports, fully
 * qualified names, and simple names of its own package's types, in code only: comments and
 * string literals are left out), and the rule that every reference runs down or sideways, never
 * up, and that no files reference each other in a circle but the one named in
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

    private static final Pattern PACKAGE_LINE = Pattern.compile("^package\\s+([\\w.]+)\\s*;", Pattern.MULTILINE);
    private static final Pattern IMPORT_LINE = Pattern.compile("^import\\s+(?:static\\s+)?([\\w.]+)\\s*;", Pattern.MULTILINE);
    private static final Pattern QUALIFIED = Pattern.compile("\\b(org\\.jdlpack\\.python(?:\\.[a-z]\\w*)*)\\.([A-Z]\\w*)");

    private Layering() {
    }

    /** {@return every main source file under {@code root} (a source folder), by its path from there} */
    static Map<String, String> read(Path root) {
        Map<String, String> sources = new TreeMap<>();
        try (Stream<Path> files = Files.walk(root)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
                sources.put(root.relativize(file).toString(), Files.readString(file));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return sources;
    }

    /** {@return the broken rules, one line each; empty when the layers hold} */
    static List<String> check(Map<String, String> sources) {
        Map<String, String> code = new TreeMap<>(); // qualified type name -> its code, comments and strings blanked
        for (String source : sources.values()) {
            String text = codeOnly(source);
            Matcher pkg = PACKAGE_LINE.matcher(text);
            if (!pkg.find()) {
                continue; // module-info
            }
            Matcher type = Pattern.compile("\\b(?:class|interface|record|enum)\\s+([A-Z]\\w*)").matcher(text);
            if (type.find()) {
                code.put(pkg.group(1) + "." + type.group(1), text);
            }
        }
        List<String> broken = new ArrayList<>();
        Map<String, Set<String>> references = new TreeMap<>();
        for (Map.Entry<String, String> file : code.entrySet()) {
            Set<String> used = references(file.getKey(), file.getValue(), code.keySet());
            references.put(file.getKey(), used);
            Layer from = layerOf(file.getKey(), broken);
            for (String target : used) {
                Layer to = layerOf(target, broken);
                if (from != null && to != null && to.compareTo(from) > 0) {
                    broken.add(simple(file.getKey()) + " (" + name(from) + ") uses " + simple(target) + " (" + name(to)
                            + "): a lower layer reaches a higher one");
                }
            }
        }
        for (Set<String> circle : circles(references)) {
            if (!ALLOWED_CIRCLES.contains(circle)) {
                broken.add("these files use each other in a circle: " + new TreeSet<>(circle.stream().map(Layering::simple).toList()));
            }
        }
        return broken.stream().distinct().toList();
    }

    /** {@return the module's types that {@code self}'s code names} */
    private static Set<String> references(String self, String text, Set<String> types) {
        String ownPackage = self.substring(0, self.lastIndexOf('.'));
        Set<String> used = new TreeSet<>();
        Matcher imports = IMPORT_LINE.matcher(text);
        while (imports.find()) {
            addIfType(used, imports.group(1), types);
        }
        Matcher qualified = QUALIFIED.matcher(text);
        while (qualified.find()) {
            addIfType(used, qualified.group(1) + "." + qualified.group(2), types);
        }
        String body = IMPORT_LINE.matcher(text).replaceAll("");
        for (String type : types) {
            if (type.startsWith(ownPackage + ".") && type.lastIndexOf('.') == ownPackage.length()
                    && Pattern.compile("\\b" + simple(type) + "\\b").matcher(body).find()) {
                used.add(type);
            }
        }
        used.remove(self);
        return used;
    }

    /** Adds {@code name}'s type when it is one of the module's: a type, or a member of one (a static import). */
    private static void addIfType(Set<String> used, String name, Set<String> types) {
        for (String candidate = name; candidate.indexOf('.') > 0; candidate = candidate.substring(0, candidate.lastIndexOf('.'))) {
            if (types.contains(candidate)) {
                used.add(candidate);
                return;
            }
        }
    }

    private static Layer layerOf(String type, List<String> broken) {
        String pkg = type.substring(0, type.lastIndexOf('.'));
        if (pkg.equals(PACKAGE)) {
            Layer layer = PUBLIC_PACKAGE.get(simple(type));
            if (layer == null) {
                broken.add(simple(type) + " is in " + PACKAGE + " but has no layer: name it in Layering.PUBLIC_PACKAGE");
            }
            return layer;
        }
        Layer layer = INTERNAL_PACKAGES.get(pkg);
        if (layer == null) {
            broken.add(pkg + " has no layer: name it in Layering.INTERNAL_PACKAGES");
        }
        return layer;
    }

    /** {@return the sets of two or more files that reach each other (Tarjan's strongly connected components)} */
    static List<Set<String>> circles(Map<String, Set<String>> graph) {
        Map<String, Integer> index = new HashMap<>();
        Map<String, Integer> low = new HashMap<>();
        Deque<String> stack = new ArrayDeque<>();
        Set<String> onStack = new TreeSet<>();
        List<Set<String>> circles = new ArrayList<>();
        int[] next = {0};
        for (String node : graph.keySet()) {
            if (!index.containsKey(node)) {
                connect(node, graph, index, low, stack, onStack, circles, next);
            }
        }
        return circles;
    }

    private static void connect(String node, Map<String, Set<String>> graph, Map<String, Integer> index, Map<String, Integer> low,
                                Deque<String> stack, Set<String> onStack, List<Set<String>> circles, int[] next) {
        index.put(node, next[0]);
        low.put(node, next[0]++);
        stack.push(node);
        onStack.add(node);
        for (String target : graph.getOrDefault(node, Set.of())) {
            if (!index.containsKey(target)) {
                connect(target, graph, index, low, stack, onStack, circles, next);
                low.put(node, Math.min(low.get(node), low.get(target)));
            } else if (onStack.contains(target)) {
                low.put(node, Math.min(low.get(node), index.get(target)));
            }
        }
        if (low.get(node).equals(index.get(node))) {
            Set<String> component = new TreeSet<>();
            String member;
            do {
                member = stack.pop();
                onStack.remove(member);
                component.add(member);
            } while (!member.equals(node));
            if (component.size() > 1) {
                circles.add(Set.copyOf(component));
            }
        }
    }

    /** {@return {@code source} with comments, string and character literals blanked, line breaks kept} */
    static String codeOnly(String source) {
        StringBuilder out = new StringBuilder(source.length());
        int i = 0;
        while (i < source.length()) {
            char c = source.charAt(i);
            if (source.startsWith("//", i)) {
                while (i < source.length() && source.charAt(i) != '\n') {
                    i++;
                }
            } else if (source.startsWith("/*", i)) {
                int end = source.indexOf("*/", i + 2);
                end = end < 0 ? source.length() : end + 2;
                source.substring(i, end).chars().filter(ch -> ch == '\n').forEach(ch -> out.append('\n'));
                i = end;
            } else if (source.startsWith("\"\"\"", i)) {
                int end = source.indexOf("\"\"\"", i + 3);
                end = end < 0 ? source.length() : end + 3;
                out.append("\"\"");
                i = end;
            } else if (c == '"' || c == '\'') {
                int j = i + 1;
                while (j < source.length() && source.charAt(j) != c) {
                    j += source.charAt(j) == '\\' ? 2 : 1;
                }
                out.append(c).append(c);
                i = j + 1;
            } else {
                out.append(c);
                i++;
            }
        }
        return out.toString();
    }

    /** {@return every {@code invokeExact} outside the call layer's {@code LibPython} classes, as "File: line"} */
    static List<String> invokeExactOutsideTheCallLayer(Map<String, String> sources) {
        List<String> found = new ArrayList<>();
        for (Map.Entry<String, String> source : sources.entrySet()) {
            String file = source.getKey().replace('\\', '/');
            boolean callLayer = file.startsWith("org/jdlpack/python/internal/capi/LibPython");
            String[] lines = codeOnly(source.getValue()).split("\n", -1);
            for (int n = 0; n < lines.length; n++) {
                if (!callLayer && lines[n].contains("invokeExact")) {
                    found.add(file + ":" + (n + 1));
                }
            }
        }
        return found;
    }

    private static String simple(String type) {
        return type.substring(type.lastIndexOf('.') + 1);
    }

    private static String name(Layer layer) {
        return layer.name().toLowerCase(java.util.Locale.ROOT);
    }
}
