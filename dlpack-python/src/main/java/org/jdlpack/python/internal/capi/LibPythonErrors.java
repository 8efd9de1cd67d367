package org.jdlpack.python.internal.capi;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import org.jdlpack.abi.plumbing.Downcalls;

/**
 * The libpython functions for the error indicator ({@code PyErr_*}) and the exception types
 * upcalls raise; see {@link LibPython}.
 */
public final class LibPythonErrors {

    /** The exception types upcalls raise: {@code PyExc_...} are {@code PyObject*} variables whose value is the type. */
    public static final MemorySegment BUFFER_ERROR = LibPython.exceptionType("PyExc_BufferError");
    public static final MemorySegment RUNTIME_ERROR = LibPython.exceptionType("PyExc_RuntimeError");
    public static final MemorySegment TYPE_ERROR = LibPython.exceptionType("PyExc_TypeError");
    public static final MemorySegment VALUE_ERROR = LibPython.exceptionType("PyExc_ValueError");
    public static final MemorySegment OVERFLOW_ERROR = LibPython.exceptionType("PyExc_OverflowError");

    private static final MethodHandle ERR_SET_STRING = LibPython.bind("PyErr_SetString", FunctionDescriptor.ofVoid(ADDRESS, ADDRESS));
    private static final MethodHandle ERR_OCCURRED = LibPython.bindLeaf("PyErr_Occurred", FunctionDescriptor.of(ADDRESS));
    private static final MethodHandle ERR_EXCEPTION_MATCHES = LibPython.bind("PyErr_ExceptionMatches", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    private static final MethodHandle ERR_FETCH = LibPython.bind("PyErr_Fetch", FunctionDescriptor.ofVoid(ADDRESS, ADDRESS, ADDRESS));
    private static final MethodHandle ERR_CLEAR = LibPython.bind("PyErr_Clear", FunctionDescriptor.ofVoid());
    private static final MethodHandle ERR_PRINT = LibPython.bind("PyErr_Print", FunctionDescriptor.ofVoid());

    private LibPythonErrors() {
    }

    public static void errSetString(MemorySegment type, MemorySegment message) {
        try {
            ERR_SET_STRING.invokeExact(type, message);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return whether an exception is set} */
    public static boolean errOccurred() {
        try {
            return ((MemorySegment) ERR_OCCURRED.invokeExact()).address() != 0;
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    public static boolean errExceptionMatches(MemorySegment type) {
        try {
            return (int) ERR_EXCEPTION_MATCHES.invokeExact(type) != 0;
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code PyErr_Fetch} into three pointer slots (type, value, traceback; new references or NULL); clears the indicator. */
    public static void errFetch(MemorySegment type, MemorySegment value, MemorySegment traceback) {
        try {
            ERR_FETCH.invokeExact(type, value, traceback);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    public static void errClear() {
        try {
            ERR_CLEAR.invokeExact();
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    public static void errPrint() {
        try {
            ERR_PRINT.invokeExact();
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }
}
