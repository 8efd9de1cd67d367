package org.jdlpack.python;

import static org.assertj.core.api.Assertions.assertThat;

import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.python.internal.bridge.JavaTensors;
import org.jdlpack.testsupport.PeerRequirement;

/**
 * The embedded Python as a test peer, with the package it must have: skipped with the reason
 * (and what to install) when missing, a failure with {@code CI=true}.
 */
final class PythonPeers {

    private PythonPeers() {
    }

    /** {@return the runtime, with NumPy imported as {@code np}} */
    static PythonRuntime numpy() {
        return withPackage("numpy", "np", "NumPy (embedded CPython)",
                "install a python3 with NumPy and a shared libpython (Debian: apt-get install python3-numpy libpython3-dev), "
                        + "or set JDLPACK_PYTHON to one");
    }

    /** {@return the runtime, with PyTorch imported as {@code torch}} */
    static PythonRuntime torch() {
        return withPackage("torch", "torch", "PyTorch (embedded CPython)",
                "install PyTorch (Debian: apt-get install python3-torch, used through /usr/bin/python3), "
                        + "or set JDLPACK_TORCH_PYTHON to a python3 with PyTorch and a shared libpython");
    }

    /** Binds a new Python object for {@code tensor} to the global {@code name}. */
    static void bind(PythonRuntime python, String name, OwnedHostTensor tensor) {
        try (PythonObject x = python.toPython(DLPackSource.of(tensor))) {
            python.set(name, x);
        }
    }

    /** After a collection in Python, asserts that Python holds no Java tensor object any more (for an {@code @AfterEach}). */
    static void assertPythonHoldsNoJavaTensor(PythonRuntime python) {
        python.exec("gc.collect()");
        assertThat(JavaTensors.live()).as("Java tensor objects Python still holds").isZero();
    }

    private static PythonRuntime withPackage(String module, String alias, String peer, String install) {
        PythonRuntime python;
        try {
            python = PythonRuntime.get();
        } catch (PythonUnavailableException e) {
            throw PeerRequirement.missing(peer, e.getMessage()); // it says what to install
        }
        try {
            python.exec("import gc, threading\nimport " + module + " as " + alias);
        } catch (PythonException e) {
            throw PeerRequirement.missing(peer, python.description() + " cannot import " + module + " (" + e.lastLine() + "); " + install);
        }
        return python;
    }
}
