package org.jdlpack.examples.modular;

import org.jdlpack.abi.DLPackStats;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.cpu.HostTensorView;
import org.jdlpack.python.DLPackSource;
import org.jdlpack.python.PythonObject;
import org.jdlpack.python.PythonRuntime;
import org.jdlpack.python.PythonUnavailableException;

/** Exports a Java tensor and imports it back, then hands it to NumPy when there is one. */
public final class ModularMain {

    private ModularMain() {
    }

    public static void main(String[] args) {
        System.out.println("module: " + ModularMain.class.getModule().getName() + ", abi: "
                + ImportedTensor.class.getModule().getName());
        try (OwnedHostTensor tensor = OwnedHostTensor.copyOf(new float[] {1, 2, 3, 4, 5, 6}, 2, 3)) {
            try (ImportedTensor back = tensor.export().importTensor()) {
                System.out.println("round trip element 5: " + HostTensorView.of(back).getFloat(5));
            }
            try {
                PythonRuntime python = PythonRuntime.get();
                python.exec("import numpy as np");
                try (PythonObject x = python.toPython(DLPackSource.of(tensor))) {
                    python.set("x", x);
                }
                System.out.println("numpy sum: " + python.evalString("float(np.from_dlpack(x).sum())"));
                python.exec("del x\nimport gc\ngc.collect()");
            } catch (PythonUnavailableException | org.jdlpack.python.PythonException e) {
                System.out.println("numpy: unavailable");
            }
        }
        System.out.println("live exports: " + DLPackStats.liveExports());
    }
}
