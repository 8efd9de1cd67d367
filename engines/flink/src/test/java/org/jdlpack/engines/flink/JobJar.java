package org.jdlpack.engines.flink;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

/**
 * Builds the job jar at test time: compiles the job's sources (src/job/java, never on the test's
 * class path) and packs them, and, for a child-first job, jdlpack's classes with them, as a user
 * would with the shade or assembly plugin.
 */
final class JobJar {

    private JobJar() {
    }

    /** dlpack-abi, dlpack-cpu and test-support (the C peer), as Maven resolved them: jars or class folders. */
    static List<Path> jdlpack() {
        return List.of(property("jdlpack.abi.jar"), property("jdlpack.cpu.jar"), property("jdlpack.testsupport.jar"));
    }

    /** {@return the test's class path, entry by entry (Surefire's booter jar hides it from java.class.path)} */
    static List<String> testClassPath() {
        String path = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        return Stream.of(path.split(java.io.File.pathSeparator)).filter(e -> !e.isBlank() && Files.exists(Path.of(e))).toList();
    }

    static Path property(String name) {
        String value = System.getProperty(name);
        if (value == null || value.isBlank() || value.startsWith("${")) {
            throw new IllegalStateException("system property " + name + " is not set (Surefire sets it; see engines/flink/pom.xml)");
        }
        return Path.of(value);
    }

    /**
     * Compiles the job and writes {@code jar}; with {@code bundleJdlpack}, jdlpack's classes and the
     * C peer's sources go in too.
     */
    static Path build(Path work, String name, boolean bundleJdlpack) {
        Path classes = work.resolve(name + "-classes");
        Path jar = work.resolve(name + ".jar");
        try {
            Files.createDirectories(classes);
            List<String> sources;
            try (Stream<Path> files = Files.walk(property("jdlpack.engines.job.sources"))) {
                sources = files.filter(p -> p.toString().endsWith(".java")).map(Path::toString).toList();
            }
            // Against Flink (the test's class path), jdlpack, and the test's classes for LoaderProbe.
            List<String> classPath = new ArrayList<>(testClassPath());
            jdlpack().forEach(p -> classPath.add(p.toString()));
            List<String> args = new ArrayList<>(List.of("--release", "22", "-Xlint:all,-processing,-classfile,-serial", "-Werror",
                    "-d", classes.toString(), "-cp", String.join(java.io.File.pathSeparator, classPath)));
            args.addAll(sources);
            JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
            int rc = javac.run(null, null, null, args.toArray(String[]::new));
            if (rc != 0) {
                throw new IllegalStateException("javac failed (" + rc + ") compiling the job: see the output above");
            }
            try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar))) {
                Set<String> seen = new HashSet<>();
                addTree(out, classes, seen);
                if (bundleJdlpack) {
                    for (Path part : jdlpack()) {
                        if (Files.isDirectory(part)) {
                            addTree(out, part, seen);
                        } else {
                            addJar(out, part, seen);
                        }
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return jar;
    }

    /** Module descriptors and manifests stay out: the jar is a class-path jar, one unnamed module. */
    private static boolean skipped(String entry) {
        return entry.endsWith("module-info.class") || entry.startsWith("META-INF/MANIFEST.MF") || entry.endsWith("/");
    }

    private static void addTree(JarOutputStream out, Path root, Set<String> seen) throws IOException {
        List<Path> files;
        try (Stream<Path> walk = Files.walk(root)) {
            files = walk.filter(Files::isRegularFile).sorted().toList();
        }
        for (Path file : files) {
            String entry = root.relativize(file).toString().replace(java.io.File.separatorChar, '/');
            if (!skipped(entry) && seen.add(entry)) {
                out.putNextEntry(new JarEntry(entry));
                Files.copy(file, out);
                out.closeEntry();
            }
        }
    }

    private static void addJar(JarOutputStream out, Path source, Set<String> seen) throws IOException {
        try (JarFile in = new JarFile(source.toFile())) {
            for (Enumeration<JarEntry> entries = in.entries(); entries.hasMoreElements();) {
                JarEntry entry = entries.nextElement();
                if (!skipped(entry.getName()) && seen.add(entry.getName())) {
                    out.putNextEntry(new JarEntry(entry.getName()));
                    in.getInputStream(entry).transferTo((OutputStream) out);
                    out.closeEntry();
                }
            }
        }
    }
}
