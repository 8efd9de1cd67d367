package org.jdlpack.examples.modular;

import java.util.Locale;
import java.util.Map;

import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtSession;
import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLPackStats;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.cpu.HostTensorView;
import org.jdlpack.onnxruntime.OrtBridge;
import org.jdlpack.onnxruntime.OrtInput;
import org.jdlpack.onnxruntime.OrtOutput;
import org.jdlpack.python.DLPackSource;
import org.jdlpack.python.PythonObject;
import org.jdlpack.python.PythonRuntime;
import org.jdlpack.python.PythonUnavailableException;

/**
 * Exports a Java tensor and imports it back, hands it to NumPy when there is one, and runs an ONNX
 * model (its path is the first argument) on a Java tensor without copying it.
 */
public final class ModularMain {

    private ModularMain() {
    }

    public static void main(String[] args) throws Exception {
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
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        OrtBridge ort = OrtBridge.of(env);
        try (OrtSession session = env.createSession(args[0], new OrtSession.SessionOptions());
             OwnedHostTensor ones = OwnedHostTensor.copyOf(new float[] {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 1, 16);
             OrtInput x = ort.input(ones);
             OrtOutput logits = ort.allocateOutput(DLDataType.FLOAT32, 1, 4)) {
            ort.run(session, Map.of("x", x), Map.of("logits", logits));
            HostTensorView y = logits.host();
            System.out.println(String.format(Locale.ROOT, "onnxruntime logits: [%.2f, %.2f, %.2f, %.2f], zero-copy input: %b",
                    y.getFloat(0), y.getFloat(1), y.getFloat(2), y.getFloat(3), !x.isCopy()));
        }
        System.out.println("live exports: " + DLPackStats.liveExports());
    }
}
