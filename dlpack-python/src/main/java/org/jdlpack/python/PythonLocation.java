package org.jdlpack.python;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Where the CPython to embed lives: the {@code python3} chosen (see {@link #chosenExecutable()}),
 * asked through {@code sysconfig} for its shared libpython, its prefix and its {@code sys.path} (an
 * embedded interpreter cannot work these out from the {@code java} executable).
 *
 * @param executable the python3 that was asked
 * @param library    its shared libpython
 * @param home       {@code sys.base_prefix}, for {@code PYTHONHOME}
 * @param path       its {@code sys.path}, for {@code PYTHONPATH}
 * @param version    the Python version, e.g. {@code 3.11.7}
 * @param realExecutable {@code sys.executable} with links resolved, as that Python reports it
 * @param objectSize     {@code object.__basicsize__}: the size of the {@code PyObject} header (16
 *                       bytes, more in a free-threaded build), where this module's type puts its
 *                       fields
 */
record PythonLocation(String executable, Path library, String home, String path, String version, String realExecutable,
                      long objectSize) {

    /** The system property naming the python3 to embed. */
    static final String PROPERTY = "org.jdlpack.python";
    /** The environment variable naming the python3 to embed, read when the property is not set. */
    static final String ENVIRONMENT = "JDLPACK_PYTHON";

    private static final String INSTALL_HINT = "install a python3 with a shared libpython (Debian/Ubuntu: apt-get install "
            + "python3 libpython3-dev; pyenv: PYTHON_CONFIGURE_OPTS=--enable-shared), or name such a python3 with "
            + "PythonRuntime.get(Path), -D" + PROPERTY + "=... or " + ENVIRONMENT;

    private static final String PROBE = String.join("\n",
            "import os, sys, sysconfig",
            "libdir = sysconfig.get_config_var('LIBDIR') or ''",
            "names = [sysconfig.get_config_var('LDLIBRARY') or '', sysconfig.get_config_var('INSTSONAME') or '']",
            "found = [os.path.join(libdir, n) for n in names if n.endswith(('.so', '.dylib')) or '.so.' in n]",
            "found = [f for f in found if os.path.isfile(f)]",
            "print('lib=' + (found[0] if found else ''))",
            "print('shared=' + str(sysconfig.get_config_var('Py_ENABLE_SHARED')))",
            "print('home=' + sys.base_prefix)",
            "print('path=' + os.pathsep.join(p for p in sys.path if p))",
            "print('version=' + sys.version.split()[0])",
            "print('executable=' + os.path.realpath(sys.executable))",
            "print('basicsize=' + str(object.__basicsize__))");

    /**
     * {@return the python3 to embed when the caller names none: the system property
     * {@value #PROPERTY}, else the environment variable {@value #ENVIRONMENT}, else {@code python3}
     * on PATH}
     */
    static String chosenExecutable() {
        String property = System.getProperty(PROPERTY);
        if (property != null && !property.isBlank()) {
            return property;
        }
        return executableFromEnvironment();
    }

    /** {@return {@code $JDLPACK_PYTHON}, else {@code python3}} */
    static String executableFromEnvironment() {
        String configured = System.getenv(ENVIRONMENT);
        return configured == null || configured.isBlank() ? "python3" : configured;
    }

    /** {@return whether this Python is {@code major.minor} or newer} */
    boolean atLeast(int major, int minor) {
        String[] parts = version.split("\\.");
        int actualMajor = Integer.parseInt(parts[0]);
        int actualMinor = parts.length > 1 ? Integer.parseInt(parts[1].replaceAll("\\D.*", "")) : 0;
        return actualMajor > major || actualMajor == major && actualMinor >= minor;
    }

    /**
     * {@return whether {@code requested} names this Python: the same path, or a path that resolves
     * to this interpreter's executable}
     */
    boolean isNamedBy(String requested) {
        if (requested.equals(executable)) {
            return true;
        }
        String resolved = realPath(requested);
        return resolved != null && (resolved.equals(realPath(executable)) || resolved.equals(realExecutable));
    }

    private static String realPath(String executable) {
        try {
            Path path = Path.of(executable);
            if (!path.isAbsolute() && path.getNameCount() == 1) {
                return onPath(executable);
            }
            return path.toRealPath().toString();
        } catch (IOException | java.nio.file.InvalidPathException e) {
            return null;
        }
    }

    private static String onPath(String name) throws IOException {
        String path = System.getenv("PATH");
        if (path == null) {
            return null;
        }
        for (String dir : path.split(java.io.File.pathSeparator)) {
            Path candidate = Path.of(dir.isEmpty() ? "." : dir, name);
            if (Files.isExecutable(candidate)) {
                return candidate.toRealPath().toString();
            }
        }
        return null;
    }

    /**
     * Asks {@code executable} where its libpython is.
     *
     * @throws PythonUnavailableException saying what is missing and what to install
     */
    static PythonLocation probe(String executable) {
        String output;
        try {
            Process process = new ProcessBuilder(List.of(executable, "-c", PROBE)).redirectErrorStream(true).start();
            output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
                process.destroyForcibly();
                throw new PythonUnavailableException(executable + " failed (" + output.strip() + "); " + INSTALL_HINT, true);
            }
        } catch (IOException e) {
            throw new PythonUnavailableException("cannot run " + executable + " (" + e.getMessage() + "); " + INSTALL_HINT, e, true);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PythonUnavailableException("interrupted while asking " + executable + " for its libpython", e, true);
        }
        Map<String, String> facts = new HashMap<>();
        output.lines().filter(line -> line.indexOf('=') > 0)
                .forEach(line -> facts.put(line.substring(0, line.indexOf('=')), line.substring(line.indexOf('=') + 1)));
        String library = facts.getOrDefault("lib", "");
        if (!"1".equals(facts.get("shared")) || library.isEmpty() || !Files.isRegularFile(Path.of(library))) {
            throw new PythonUnavailableException(executable + " (Python " + facts.getOrDefault("version", "?")
                    + ") has no shared libpython, which embedding needs; " + INSTALL_HINT, true);
        }
        return new PythonLocation(executable, Path.of(library), facts.get("home"), facts.getOrDefault("path", ""),
                facts.get("version"), facts.getOrDefault("executable", executable), Long.parseLong(facts.getOrDefault("basicsize", "16")));
    }
}
