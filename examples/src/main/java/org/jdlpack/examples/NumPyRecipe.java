package org.jdlpack.examples;

import java.io.PrintStream;

import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.ManagedTensorHandle;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.peer.NumPyPeer;
import org.jdlpack.cpu.CpuTensor;
import org.jdlpack.cpu.HostTensor;

/**
 * Recipe: NumPy and Java sharing arrays both ways, with NumPy running in this JVM through the
 * embedded-CPython peer. In an application the capsule usually crosses through your own Python
 * bridge; the DLPack steps are the same.
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
        NumPyPeer numpy = NumPyPeer.require();

        // NumPy -> Java: ask for a versioned capsule, consume it (rename to used_dltensor_versioned), import.
        numpy.exec("a = np.linspace(0, 1, 5, dtype=np.float64)\ncap = a.__dlpack__(max_version=(1, 0))");
        try (ImportedTensor tensor = ManagedTensorHandle.of(ManagedTensorKind.VERSIONED,
                numpy.consumeCapsule("cap", ManagedTensorKind.VERSIONED)).importTensor()) {
            HostTensor view = HostTensor.of(tensor);
            double[] values = new double[(int) view.elementCount()];
            view.copyTo(values);
            out.println("NumPy -> Java: " + java.util.Arrays.toString(values));
            view.setDouble(4, 42);
        }
        numpy.exec("del cap");
        out.println("Java wrote into NumPy's array: a[4] = " + numpy.eval("a[4]"));

        // Java -> NumPy: export a Java tensor in a capsule and let np.from_dlpack consume it.
        try (CpuTensor tensor = CpuTensor.copyOf(new float[] {1, 2, 3, 4}, 2, 2)) {
            numpy.putCapsule("cap", tensor.exportVersioned());
            numpy.exec("b = np.from_dlpack(JavaTensor(cap))\ndel cap\nb *= 10");
            out.println("Java -> NumPy: b = " + numpy.eval("b.tolist()") + " (NumPy multiplied in place; Java reads "
                    + tensor.host().getFloat(3) + ")");
            numpy.exec("del b\ngc.collect()");
            out.println("NumPy released its reference: " + (tensor.references() == 1));
        }
    }
}
