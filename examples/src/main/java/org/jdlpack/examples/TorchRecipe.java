package org.jdlpack.examples;

import java.io.PrintStream;
import java.util.Arrays;

import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.cpu.HostTensorView;
import org.jdlpack.python.DLPackSource;
import org.jdlpack.python.PythonObject;
import org.jdlpack.python.PythonRuntime;

/**
 * Recipe: PyTorch and Java sharing tensors both ways, with PyTorch running in this JVM
 * (dlpack-python). {@code torch.from_dlpack(x)} takes a Java tensor object as it takes any
 * {@code __dlpack__} producer; a torch tensor imports into Java the same way a NumPy array does.
 * PyTorch 1.13 speaks legacy DLPack only, which the Java object gives it when asked without
 * {@code max_version}.
 */
public final class TorchRecipe {

    private TorchRecipe() {
    }

    /**
     * Runs the recipe.
     *
     * @param args ignored
     */
    public static void main(String[] args) {
        run(System.out);
    }

    /**
     * Runs the recipe, narrating to {@code out}.
     *
     * @param out where the story goes
     */
    public static void run(PrintStream out) {
        PythonRuntime python = PythonRuntime.get();
        python.exec("import torch");

        // Java -> PyTorch: torch.from_dlpack(x) on a Java tensor object, no copy.
        try (OwnedHostTensor tensor = OwnedHostTensor.copyOf(new float[] {1, 2, 3, 4, 5, 6}, 2, 3);
             PythonObject x = python.toPython(DLPackSource.of(tensor))) {
            python.set("x", x);
            python.exec("t = torch.from_dlpack(x)\nt.mul_(2)");
            out.println("Java -> PyTorch: t = " + python.evalString("t.tolist()") + " (torch doubled it in place; Java reads "
                    + tensor.host().getFloat(5) + ")");
            python.exec("del t, x\nimport gc\ngc.collect()");
            out.println("PyTorch released its reference: " + (tensor.references() == 1));
        }

        // PyTorch -> Java: a transposed torch view, read in place.
        python.exec("w = torch.arange(6, dtype=torch.float64).reshape(2, 3).t()");
        try (PythonObject w = python.get("w"); ImportedTensor imported = python.importTensor(w)) {
            HostTensorView view = HostTensorView.of(imported);
            double[] values = new double[(int) view.layout().elementCount()];
            view.copyTo(values);
            out.println("PyTorch -> Java: shape " + Arrays.toString(imported.layout().shape()) + ", strides "
                    + Arrays.toString(imported.layout().strides()) + ", " + Arrays.toString(values));
        }
        python.exec("del w");
    }
}
