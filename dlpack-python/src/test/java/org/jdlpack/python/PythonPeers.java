package org.jdlpack.python;

import static org.assertj.core.api.Assertions.assertThat;

import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.python.internal.bridge.ExchangeImports;
import org.jdlpack.python.internal.bridge.ForeignDeleterGuard;
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

    /** The pip line that installs the peer set (.ci/python-peers/requirements.txt), for skip messages. */
    static final String PEERS_PIP = "pip install torch==2.13.0+cpu jax==0.10.2 jaxlib==0.10.2 tensorflow-cpu==2.21.0 "
            + "pyarrow==25.0.1 'numpy==2.4.*' ml_dtypes into a venv of a CPython 3.11 with a shared libpython "
            + "(.ci/python-peers/make-venv does it and prints its python3), then set JDLPACK_PEERS_PYTHON to that python3";

    /**
     * {@return the runtime of the peers venv, with {@code module} imported as {@code alias}} For the
     * peer suites (tag {@code peers}), each run by its surefire execution with {@code JDLPACK_PYTHON}
     * set to the venv's python3, or to {@code none} when {@code JDLPACK_PEERS_PYTHON} was not set.
     *
     * @param version the version the suite was written against (a prefix of {@code module.__version__})
     */
    static PythonRuntime peer(String module, String alias, String peer, String version) {
        String name = peer + " " + version.replaceAll("\\.$", "") + " (embedded CPython of the peers venv)";
        if ("none".equals(System.getenv("JDLPACK_PYTHON"))) {
            throw PeerRequirement.missing(name, "JDLPACK_PEERS_PYTHON is not set; " + PEERS_PIP);
        }
        PythonRuntime python = withPackage(module, alias, name, PEERS_PIP);
        String found = python.evalString(alias + ".__version__");
        if (!found.startsWith(version)) {
            throw PeerRequirement.missing(name, python.description() + " has " + module + " " + found + "; " + PEERS_PIP);
        }
        python.exec("import numpy as np, ml_dtypes");
        return python;
    }

    /** Binds a new Python object for {@code tensor} to the global {@code name}. */
    static void bind(PythonRuntime python, String name, OwnedHostTensor tensor) {
        try (PythonObject x = python.toPython(DLPackSource.of(tensor))) {
            python.set(name, x);
        }
    }

    /** {@return how many Python-made tensors Java holds and has not released (their deleters not yet called)} */
    static long pendingForeignTensors() {
        return ForeignDeleterGuard.pending();
    }

    /** {@return how many imports went through a type's exchange API, and how many fell back to {@code __dlpack__}} */
    static long[] exchangeImports() {
        return new long[] {ExchangeImports.TAKEN.get(), ExchangeImports.FELL_BACK.get()};
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
