package org.jdlpack.python.internal.capi;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import org.jdlpack.abi.plumbing.Downcalls;

/**
 * The libpython functions for the interpreter's life and the GIL: starting the interpreter, asking
 * whether it runs, and taking and releasing the GIL ({@code PyGILState_*}, {@code PyEval_SaveThread}
 * and {@code PyEval_RestoreThread}); see {@link LibPython}. {@link Gil} is the one user of the
 * {@code PyGILState} pair.
 */
public final class LibPythonGil {

    private static final MethodHandle INITIALIZE_EX = LibPython.bind("Py_InitializeEx", FunctionDescriptor.ofVoid(JAVA_INT));
    private static final MethodHandle IS_INITIALIZED = LibPython.bind("Py_IsInitialized", FunctionDescriptor.of(JAVA_INT));
    private static final MethodHandle SAVE_THREAD = LibPython.bind("PyEval_SaveThread", FunctionDescriptor.of(ADDRESS));
    private static final MethodHandle RESTORE_THREAD = LibPython.bind("PyEval_RestoreThread", FunctionDescriptor.ofVoid(ADDRESS));
    private static final MethodHandle GIL_ENSURE = LibPython.bind("PyGILState_Ensure", FunctionDescriptor.of(JAVA_INT));
    private static final MethodHandle GIL_RELEASE = LibPython.bind("PyGILState_Release", FunctionDescriptor.ofVoid(JAVA_INT));

    private LibPythonGil() {
    }

    public static void initializeEx(int initsigs) {
        try {
            INITIALIZE_EX.invokeExact(initsigs);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    public static boolean isInitialized() {
        try {
            return (int) IS_INITIALIZED.invokeExact() != 0;
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    public static MemorySegment saveThread() {
        try {
            return (MemorySegment) SAVE_THREAD.invokeExact();
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    public static void restoreThread(MemorySegment state) {
        try {
            RESTORE_THREAD.invokeExact(state);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    public static int gilEnsure() {
        try {
            return (int) GIL_ENSURE.invokeExact();
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    public static void gilRelease(int state) {
        try {
            GIL_RELEASE.invokeExact(state);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }
}
