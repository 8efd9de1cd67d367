package org.jdlpack.python;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.TensorSpec;
import org.jdlpack.cpu.OwnedHostTensor;

/**
 * Run in a child JVM by {@link Torch2PeerTest}: hands PyTorch a Java view with a negative stride
 * (a reversed vector), which PyTorch 2.13's {@code torch.from_dlpack} cannot take: it throws a C++
 * exception that nothing catches, and the process aborts. Prints {@code RESULT} with what torch
 * did if it survives.
 */
public final class TorchNegativeStrideMain {

    private TorchNegativeStrideMain() {
    }

    public static void main(String[] args) {
        PythonRuntime python = PythonRuntime.get();
        python.exec("import torch");
        try (OwnedHostTensor base = OwnedHostTensor.copyOf(new float[] {1, 2, 3, 4}, 4)) {
            TensorSpec reversed = TensorSpec.builder(base.spec().data(), DLDataType.FLOAT32, 4).strides(-1).byteOffset(12).build();
            OwnedHostTensor view = OwnedHostTensor.wrap(reversed, () -> { });
            try (PythonObject x = python.toPython(DLPackSource.of(view))) {
                python.set("x", x);
            }
            System.out.println("RESULT " + python.evalString("torch.from_dlpack(x).tolist()"));
        } catch (PythonException e) {
            System.out.println("RESULT " + e.lastLine());
        }
    }
}
