package org.jdlpack.python;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;

import org.jdlpack.abi.DLPackStats;
import org.jdlpack.abi.ImportedTensor;

/**
 * Run in a child JVM by {@link FinalizationTest}: imports a NumPy array, lets a host finalize the
 * interpreter ({@code Py_FinalizeEx}, as an application embedding Python may), then releases the
 * tensor and a Python reference. NumPy's deleter must not run, nothing may crash, and both leaks
 * must be counted.
 */
@SuppressWarnings("restricted")
public final class FinalizedInterpreterMain {

    private FinalizedInterpreterMain() {
    }

    public static void main(String[] args) throws Throwable {
        PythonRuntime python = PythonRuntime.get();
        python.exec("import numpy as np\na = np.arange(4.0)");
        PythonObject array = python.get("a");
        ImportedTensor tensor = python.importTensor(array);
        System.out.println("imported " + tensor);

        SymbolLookup libpython = SymbolLookup.libraryLookup(PythonLocation.probe(PythonLocation.executableFromEnvironment()).library(),
                Arena.global());
        Linker linker = Linker.nativeLinker();
        MethodHandle ensure = linker.downcallHandle(libpython.find("PyGILState_Ensure").orElseThrow(), FunctionDescriptor.of(JAVA_INT));
        MethodHandle finalizeEx = linker.downcallHandle(libpython.find("Py_FinalizeEx").orElseThrow(), FunctionDescriptor.of(JAVA_INT));
        int state = (int) ensure.invokeExact();
        int rc = (int) finalizeEx.invokeExact();
        System.out.println("finalized rc=" + rc + " state=" + state);

        tensor.close();
        array.close();
        System.out.println("leaked after finalization: " + PythonRuntime.leakedAfterFinalization());
        System.out.println("owned managed tensors: " + DLPackStats.ownedManagedTensors());
        try {
            python.exec("1");
            System.out.println("exec after finalization: ran");
        } catch (IllegalStateException e) {
            System.out.println("exec after finalization: " + e.getMessage());
        }
    }
}
