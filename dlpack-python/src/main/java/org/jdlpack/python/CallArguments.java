package org.jdlpack.python;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.function.Predicate;

import org.jdlpack.python.internal.capi.LibPython;
import org.jdlpack.python.internal.capi.LibPythonErrors;
import org.jdlpack.python.internal.capi.LibPythonObjects;
import org.jdlpack.python.internal.objects.PythonStrings;

/**
 * The arguments of {@link PythonRuntime#call(PythonObject, Object...)}: Java values made Python
 * objects.
 *
 * <p>{@link #check} runs before the GIL is taken (it only looks at Java types); {@link #toPython}
 * runs under it and makes only downcalls. Thread safety: stateless.
 */
final class CallArguments {

    private CallArguments() {
    }

    /**
     * Checks that every argument converts: here, or in the caller ({@code convertedByCaller}: the
     * Java tensors the runtime makes Python objects of).
     *
     * @throws IllegalArgumentException naming the first argument of a type that does not
     */
    static void check(Object[] arguments, Predicate<Object> convertedByCaller) {
        for (int i = 0; i < arguments.length; i++) {
            Object value = arguments[i];
            if (!(value == null || convertedByCaller.test(value) || value instanceof PythonObject || value instanceof Long
                    || value instanceof Integer || value instanceof Short || value instanceof Byte || value instanceof Double || value instanceof Float
                    || value instanceof Boolean || value instanceof String)) {
                // getTypeName: "float[]", where getName says "[F".
                throw new IllegalArgumentException("argument " + i + " is a " + value.getClass().getTypeName()
                        + ", which has no Python counterpart here: pass a long, int, short, byte, double, float, boolean, "
                        + "String, null (None), DLPackSource or PythonObject, or make the object in Python and pass its "
                        + "PythonObject"
                        + (value.getClass().isArray()
                                ? "; an array goes as a tensor: DLPackSource.of(OwnedHostTensor.copyOf(array, shape))" : ""));
            }
        }
    }

    /**
     * {@return a new reference to the Python value of a {@link #check checked} argument} Needs the
     * GIL.
     */
    static MemorySegment toPython(Arena arena, Object value) {
        MemorySegment object;
        if (value == null) {
            LibPythonObjects.incRef(LibPython.NONE);
            return LibPython.NONE;
        } else if (value instanceof PythonObject python) {
            object = python.pointer();
            LibPythonObjects.incRef(object);
            return object;
        } else if (value instanceof Boolean bool) {
            object = bool ? LibPython.TRUE : LibPython.FALSE;
            LibPythonObjects.incRef(object);
            return object;
        } else if (value instanceof Double || value instanceof Float) {
            object = LibPythonObjects.floatFromDouble(((Number) value).doubleValue());
        } else if (value instanceof Number number) {
            object = LibPythonObjects.longFromLong(number.longValue());
        } else {
            return PythonStrings.string(arena, (String) value);
        }
        if (object.address() == 0) {
            LibPythonErrors.errClear();
            throw new OutOfMemoryError("Python could not make an object for a " + value.getClass().getSimpleName());
        }
        return object;
    }
}
