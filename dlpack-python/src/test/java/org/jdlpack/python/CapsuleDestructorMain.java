package org.jdlpack.python;

import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.python.internal.bridge.Capsules;

/**
 * Run in a child JVM by {@link JavaToNumPyTest}, in an interpreter that has not imported NumPy:
 * capsules that die unconsumed release their export once through dlpack-python's own destructor
 * while NumPy is not loaded, and through NumPy's once it is (after enough exports for
 * {@code Capsules} to look again); consumed ones are released by their consumer only.
 */
public final class CapsuleDestructorMain {

    private CapsuleDestructorMain() {
    }

    public static void main(String[] args) {
        PythonRuntime python = PythonRuntime.get();
        try (OwnedHostTensor tensor = OwnedHostTensor.copyOf(new float[] {1, 2, 3}, 3)) {
            PythonPeers.bind(python, "x", tensor);
            python.exec("import sys, gc\nnumpy_loaded = 'numpy' in sys.modules\nc = x.__dlpack__(max_version=(1, 0))\nd = x.__dlpack__()");
            long ownBefore = Capsules.UNCONSUMED_RELEASES.get();
            report("without NumPy", python, tensor, ownBefore, "numpy_loaded");
            python.exec("import numpy as np\nfor _ in range(1100):\n    np.from_dlpack(x)");
            python.exec("c = x.__dlpack__(max_version=(1, 0))\nd = x.__dlpack__()\narr = np.from_dlpack(x)");
            report("with NumPy", python, tensor, Capsules.UNCONSUMED_RELEASES.get(), "'numpy' in sys.modules");
            python.exec("del arr, x\ngc.collect()");
            System.out.println("RESULT at the end: references " + tensor.references());
        }
    }

    /** Prints what two unconsumed capsules (c and d) held and what dropping them released, and by whose destructor. */
    private static void report(String when, PythonRuntime python, OwnedHostTensor tensor, long ownBefore, String numpyLoaded) {
        long held = tensor.references();
        python.exec("del c, d");
        System.out.println("RESULT " + when + ": NumPy loaded " + python.evalString(numpyLoaded) + ", NumPy's destructors "
                + Capsules.usesNumPysDestructors() + ", references " + held + " -> " + tensor.references()
                + ", released by dlpack-python's destructor " + (Capsules.UNCONSUMED_RELEASES.get() - ownBefore));
    }
}
