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
 * Where the CPython to embed lives: the {@code python3} named by {@code $JDLPACK_PYTHON}, else the
 * one on PATH, asked through {@code sysconfig} for its shared libpython, its prefix and its
 * {@code sys.path} (an embedded interpreter cannot work these out from the {@code java} executable).
 *
 * @param executable the python3 that was asked
 * @param library    its shared libpython
 * @param home       {@code sys.base_prefix}, for {@code PYTHONHOME}
 * @param path       its {@code sys.path}, for {@code PYTHONPATH}
 * @param version    the Python version, e.g. {@code 3.11.7}
 */
record PythonLocation(String executable, Path library, String home, String path, String version) {

    private static final String INSTALL_HINT = "install a python3 with a shared libpython (Debian/Ubuntu: apt-get install "
            + "python3 libpython3-dev; pyenv: PYTHON_CONFIGURE_OPTS=--enable-shared) or set JDLPACK_PYTHON to such a python3";

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
            "print('version=' + sys.version.split()[0])");

    /** {@return the python3 to embed: {@code $JDLPACK_PYTHON}, else {@code python3}} */
    static String executableFromEnvironment() {
        String configured = System.getenv("JDLPACK_PYTHON");
        return configured == null || configured.isBlank() ? "python3" : configured;
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
                throw new PythonUnavailableException(executable + " failed (" + output.strip() + "); " + INSTALL_HINT);
            }
        } catch (IOException e) {
            throw new PythonUnavailableException("cannot run " + executable + " (" + e.getMessage() + "); " + INSTALL_HINT, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PythonUnavailableException("interrupted while asking " + executable + " for its libpython", e);
        }
        Map<String, String> facts = new HashMap<>();
        output.lines().filter(line -> line.indexOf('=') > 0)
                .forEach(line -> facts.put(line.substring(0, line.indexOf('=')), line.substring(line.indexOf('=') + 1)));
        String library = facts.getOrDefault("lib", "");
        if (!"1".equals(facts.get("shared")) || library.isEmpty() || !Files.isRegularFile(Path.of(library))) {
            throw new PythonUnavailableException(executable + " (Python " + facts.getOrDefault("version", "?")
                    + ") has no shared libpython, which embedding needs; " + INSTALL_HINT);
        }
        return new PythonLocation(executable, Path.of(library), facts.get("home"), facts.getOrDefault("path", ""),
                facts.get("version"));
    }
}
