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
 * Recipe: NumPy and Java sharing arrays both ways, with NumPy running in this JVM (dlpack-python).
 * A Java tensor handed to Python is an object with {@code __dlpack__}, so {@code np.from_dlpack(x)}
 * takes it as it takes any array; any Python object with {@code __dlpack__} imports into Java. No
 * capsule code on either side.
 */
public final class NumPyRecipe {

    private NumPyRecipe() {
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
        python.exec("import numpy as np");

        // NumPy -> Java: any object with __dlpack__ imports, zero copy.
        python.exec("a = np.linspace(0, 1, 5, dtype=np.float64)");
        try (PythonObject a = python.get("a"); ImportedTensor tensor = python.importTensor(a)) {
            HostTensorView view = HostTensorView.of(tensor);
            double[] values = new double[(int) view.layout().elementCount()];
            view.copyTo(values);
            out.println("NumPy -> Java: " + Arrays.toString(values));
            view.setDouble(4, 42);
        }
        out.println("Java wrote into NumPy's array: a[4] = " + python.evalString("a[4]"));

        // Java -> NumPy: np.from_dlpack(x) on a Java tensor object.
        try (OwnedHostTensor tensor = OwnedHostTensor.copyOf(new float[] {1, 2, 3, 4}, 2, 2);
             PythonObject x = python.toPython(DLPackSource.of(tensor))) {
            python.set("x", x);
            python.exec("b = np.from_dlpack(x)\nb *= 10");
            out.println("Java -> NumPy: b = " + python.evalString("b.tolist()") + " (NumPy multiplied in place; Java reads "
                    + tensor.host().getFloat(3) + ")");
            python.exec("del a, b, x\nimport gc\ngc.collect()");
            out.println("NumPy released its reference: " + (tensor.references() == 1));
        }
    }
}
