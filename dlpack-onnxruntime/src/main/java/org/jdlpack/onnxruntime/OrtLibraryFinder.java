package org.jdlpack.onnxruntime;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import ai.onnxruntime.OrtEnvironment;

/**
 * Finds the libonnxruntime this process already runs, so that the C API is bound from that very
 * copy and never from a second one (two copies would mean two sets of globals, environments and
 * thread pools): by default the file ONNX Runtime Java extracted and loaded, found in
 * {@code /proc/self/maps} after {@code OrtEnvironment.getEnvironment()} loaded it; or the path in
 * the system property {@value #PROPERTY}, which must be that same file when one is mapped already.
 */
final class OrtLibraryFinder {

    /** The system property naming the libonnxruntime to bind, for a process that does not use ONNX Runtime Java's copy. */
    static final String PROPERTY = "jdlpack.onnxruntime.library";

    private static final String DELETED = " (deleted)";

    private OrtLibraryFinder() {
    }

    /** Where the library is, or why it cannot be used (exactly one is non-null). */
    record Found(String library, String failure) {
    }

    static Found find() {
        String named = System.getProperty(PROPERTY);
        if (named == null) {
            try {
                OrtEnvironment.getEnvironment(); // loads ONNX Runtime Java's libonnxruntime, once per process
            } catch (RuntimeException | LinkageError e) {
                return new Found(null, "ONNX Runtime Java did not load its native library (" + e + "); add "
                        + "com.microsoft.onnxruntime:onnxruntime for your platform, or name a libonnxruntime in -D" + PROPERTY);
            }
        }
        List<String> mapped = mapped();
        if (named == null) {
            if (mapped == null) {
                return new Found(null, "cannot read /proc/self/maps to find the libonnxruntime ONNX Runtime Java loaded; "
                        + "name it in -D" + PROPERTY);
            }
            if (mapped.size() != 1) {
                return new Found(null, mapped.isEmpty()
                        ? "ONNX Runtime Java started, but no libonnxruntime is mapped in this process; name it in -D" + PROPERTY
                        : "more than one libonnxruntime is mapped in this process " + mapped + "; name the one to use in -D"
                                + PROPERTY);
            }
            return new Found(mapped.get(0), null);
        }
        String real;
        try {
            real = Path.of(named).toRealPath().toString();
        } catch (IOException | RuntimeException e) {
            return new Found(null, "-D" + PROPERTY + "=" + named + " is not a readable file (" + e.getMessage() + ")");
        }
        if (mapped != null && !mapped.isEmpty() && !mapped.contains(real)) {
            return new Found(null, "-D" + PROPERTY + "=" + named + " names " + real + ", but this process runs " + mapped
                    + " already; jdlpack binds the copy that is loaded, never a second one: name that file, or unset the property");
        }
        return new Found(real, null);
    }

    /**
     * {@return the paths of the libonnxruntime files mapped in this process, or null without /proc}
     * A file deleted after it was loaded (ONNX Runtime Java may remove what it extracted) keeps its
     * path: the dynamic loader matches an already loaded object by that name without opening the file.
     */
    private static List<String> mapped() {
        List<String> maps;
        try {
            maps = Files.readAllLines(Path.of("/proc/self/maps"));
        } catch (IOException | RuntimeException e) {
            return null;
        }
        return maps.stream()
                .map(line -> line.indexOf('/') < 0 ? "" : line.substring(line.indexOf('/')))
                .map(path -> path.endsWith(DELETED) ? path.substring(0, path.length() - DELETED.length()) : path)
                .filter(path -> {
                    String file = path.substring(path.lastIndexOf('/') + 1);
                    return file.equals("libonnxruntime.so") || file.startsWith("libonnxruntime.so.");
                })
                .distinct().toList();
    }
}
