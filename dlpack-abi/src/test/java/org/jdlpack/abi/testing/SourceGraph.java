package org.jdlpack.abi.testing;

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
 * Which top-level type of a module uses which, read from its main sources: imports, fully
 * qualified names, and the simple names of its own package's types, in code only (comments,
 * string and character literals are blanked first, so a {@code {@link}} in javadoc is no use).
 * Nested types count as their top-level type. Made for the layer tests, which read the sources
 * rather than the class files so that a failure names the files to change.
 */
public final class SourceGraph {

    private static final Pattern PACKAGE_LINE = Pattern.compile("^package\\s+([\\w.]+)\\s*;", Pattern.MULTILINE);
    private static final Pattern IMPORT_LINE = Pattern.compile("^import\\s+(?:static\\s+)?([\\w.]+)\\s*;", Pattern.MULTILINE);
    private static final Pattern TYPE = Pattern.compile("\\b(?:class|interface|record|enum)\\s+([A-Z]\\w*)");

    private SourceGraph() {
    }

    /** {@return every {@code .java} file under {@code root} (a source folder), by its path from there} */
    public static Map<String, String> read(Path root) {
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

    /**
     * {@return for each top-level type of the sources (qualified name), the other types of the
     * sources its code names} {@code module-info} and {@code package-info} files name no type
     * and are left out.
     *
     * @param qualifiedPrefix the module's package prefix ({@code org.jdlpack.abi}): only names
     *                        starting with it are read as qualified references
     */
    public static Map<String, Set<String>> references(Map<String, String> sources, String qualifiedPrefix) {
        Map<String, String> code = new TreeMap<>();
        for (String source : sources.values()) {
            String text = codeOnly(source);
            Matcher pkg = PACKAGE_LINE.matcher(text);
            Matcher type = TYPE.matcher(text);
            if (pkg.find() && type.find()) {
                code.put(pkg.group(1) + "." + type.group(1), text);
            }
        }
        Pattern qualified = Pattern.compile("\\b(" + Pattern.quote(qualifiedPrefix) + "(?:\\.[a-z]\\w*)*)\\.([A-Z]\\w*)");
        Map<String, Set<String>> graph = new TreeMap<>();
        for (Map.Entry<String, String> file : code.entrySet()) {
            graph.put(file.getKey(), uses(file.getKey(), file.getValue(), code.keySet(), qualified));
        }
        return graph;
    }

    private static Set<String> uses(String self, String text, Set<String> types, Pattern qualified) {
        String ownPackage = packageOf(self);
        Set<String> used = new TreeSet<>();
        Matcher imports = IMPORT_LINE.matcher(text);
        while (imports.find()) {
            addIfType(used, imports.group(1), types);
        }
        Matcher names = qualified.matcher(text);
        while (names.find()) {
            addIfType(used, names.group(1) + "." + names.group(2), types);
        }
        String body = IMPORT_LINE.matcher(text).replaceAll("");
        for (String type : types) {
            if (packageOf(type).equals(ownPackage) && Pattern.compile("\\b" + simple(type) + "\\b").matcher(body).find()) {
                used.add(type);
            }
        }
        used.remove(self);
        return used;
    }

    /** Adds {@code name}'s type when it is one of the sources': a type, or a member of one (a static import). */
    private static void addIfType(Set<String> used, String name, Set<String> types) {
        for (String candidate = name; candidate.indexOf('.') > 0; candidate = candidate.substring(0, candidate.lastIndexOf('.'))) {
            if (types.contains(candidate)) {
                used.add(candidate);
                return;
            }
        }
    }

    /**
     * {@return the strongly connected components of two or more types: the sets whose every
     * member reaches every other (Tarjan's algorithm)} Sorted, largest first.
     */
    public static List<Set<String>> circles(Map<String, Set<String>> graph) {
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
        circles.sort((a, b) -> b.size() != a.size() ? b.size() - a.size() : a.toString().compareTo(b.toString()));
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
                circles.add(component);
            }
        }
    }

    /** {@return {@code source} with comments, string and character literals blanked, line breaks kept} */
    public static String codeOnly(String source) {
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

    /** {@return the package part of a qualified type name} */
    public static String packageOf(String type) {
        return type.substring(0, type.lastIndexOf('.'));
    }

    /** {@return the simple name of a qualified type name} */
    public static String simple(String type) {
        return type.substring(type.lastIndexOf('.') + 1);
    }
}
