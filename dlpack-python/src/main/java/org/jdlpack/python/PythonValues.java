package org.jdlpack.python;

import java.lang.foreign.MemorySegment;

import org.jdlpack.python.internal.capi.LibPythonErrors;
import org.jdlpack.python.internal.capi.LibPythonObjects;
import org.jdlpack.python.internal.objects.PythonErrors;
import org.jdlpack.python.internal.objects.PythonStrings;

/**
 * Python objects read into Java values, for {@link PythonObject#toLong()} and its siblings: what
 * Python refuses is a {@link PythonException} naming the conversion, the type and Python's line.
 *
 * <p>Every method needs the GIL and makes only downcalls. Thread safety: stateless.
 */
final class PythonValues {

    private PythonValues() {
    }

    /**
     * {@return the object as a {@code long}, as Python's {@code operator.index} reads it} Needs the GIL.
     *
     * @throws PythonException if Python refuses (not an integer, or too large)
     */
    static long toLong(MemorySegment object) {
        long value = LibPythonObjects.longAsLong(object);
        if (value == -1 && LibPythonErrors.errOccurred()) {
            throw raised("toLong()", object);
        }
        return value;
    }

    /**
     * {@return the object as a {@code double}, as Python's {@code float()} reads a number} Needs the GIL.
     *
     * @throws PythonException if Python refuses (not a number)
     */
    static double toDouble(MemorySegment object) {
        double value = LibPythonObjects.floatAsDouble(object);
        if (value == -1.0 && LibPythonErrors.errOccurred()) {
            throw raised("toDouble()", object);
        }
        return value;
    }

    /**
     * {@return the object's truth value, as Python's {@code bool()} gives it} Needs the GIL.
     *
     * @throws PythonException if Python refuses (an array of several elements, for one)
     */
    static boolean toBoolean(MemorySegment object) {
        int value = LibPythonObjects.objectIsTrue(object);
        if (value < 0) {
            throw raised("toBoolean()", object);
        }
        return value == 1;
    }

    private static PythonException raised(String conversion, MemorySegment object) {
        String error = PythonErrors.pendingLine(); // first: the type's name is asked of Python with no exception set
        return new PythonException("PythonObject." + conversion + " of a Python " + PythonStrings.typeName(object) + " failed:\n" + error,
                error);
    }
}
