package org.jdlpack.python;

import static java.lang.foreign.ValueLayout.ADDRESS;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Java values into Python objects and Python objects into Java values, for
 * {@link PythonRuntime#call(PythonObject, Object...)} and {@link PythonObject#toLong()} and its
 * siblings.
 *
 * <p>{@link #check} runs before the GIL is taken (it only looks at Java types); the conversions run
 * under it and make only downcalls. Thread safety: stateless.
 */
final class PythonValues {

    private static final MemorySegment QUALNAME = Arena.global().allocateFrom("__qualname__");

    private PythonValues() {
    }

    /**
     * Checks that every argument converts.
     *
     * @throws IllegalArgumentException naming the first argument of a type that does not
     */
    static void check(Object[] arguments) {
        for (int i = 0; i < arguments.length; i++) {
            Object value = arguments[i];
            if (!(value == null || value instanceof PythonObject || value instanceof Long || value instanceof Integer
                    || value instanceof Short || value instanceof Byte || value instanceof Double || value instanceof Float
                    || value instanceof Boolean || value instanceof String)) {
                // getTypeName: "float[]", where getName says "[F".
                throw new IllegalArgumentException("argument " + i + " is a " + value.getClass().getTypeName()
                        + ", which has no Python counterpart here: pass a long, int, short, byte, double, float, boolean, "
                        + "String, null (None) or PythonObject, or make the object in Python and pass its PythonObject"
                        + (value.getClass().isArray()
                                ? "; an array goes as a tensor: toPython(DLPackSource.of(OwnedHostTensor.copyOf(array, shape)))" : ""));
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
            LibPython.incRef(LibPython.NONE);
            return LibPython.NONE;
        } else if (value instanceof PythonObject python) {
            object = python.pointer();
            LibPython.incRef(object);
            return object;
        } else if (value instanceof Boolean bool) {
            object = bool ? LibPython.TRUE : LibPython.FALSE;
            LibPython.incRef(object);
            return object;
        } else if (value instanceof Double || value instanceof Float) {
            object = LibPython.floatFromDouble(((Number) value).doubleValue());
        } else if (value instanceof Number number) {
            object = LibPython.longFromLong(number.longValue());
        } else {
            return GuardedCalls.string(arena, (String) value);
        }
        if (object.address() == 0) {
            LibPython.errClear();
            throw new OutOfMemoryError("Python could not make an object for a " + value.getClass().getSimpleName());
        }
        return object;
    }

    /**
     * {@return the object as a {@code long}, as Python's {@code operator.index} reads it} Needs the GIL.
     *
     * @throws PythonException if Python refuses (not an integer, or too large)
     */
    static long toLong(MemorySegment object) {
        long value = LibPython.longAsLong(object);
        if (value == -1 && LibPython.errOccurred()) {
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
        double value = LibPython.floatAsDouble(object);
        if (value == -1.0 && LibPython.errOccurred()) {
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
        int value = LibPython.objectIsTrue(object);
        if (value < 0) {
            throw raised("toBoolean()", object);
        }
        return value == 1;
    }

    private static PythonException raised(String conversion, MemorySegment object) {
        String error = pendingError();
        return new PythonException("PythonObject." + conversion + " of a Python " + typeName(object) + " failed:\n" + error);
    }

    /**
     * Takes the pending Python exception (clearing it) into a {@link PythonException} whose
     * message is {@code what}, then Python's line, e.g.
     * {@code BufferError: the Java tensor behind this object was released}.
     */
    static PythonException pending(String what) {
        return new PythonException(what + ":\n" + pendingError());
    }

    /** {@return the pending exception as "Type: message", the indicator cleared} Calls Python only once it is clear. */
    private static String pendingError() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment slots = arena.allocate(ADDRESS, 3);
            LibPython.errFetch(slots, slots.asSlice(ADDRESS.byteSize()), slots.asSlice(2 * ADDRESS.byteSize()));
            MemorySegment errorType = slots.getAtIndex(ADDRESS, 0);
            MemorySegment errorValue = slots.getAtIndex(ADDRESS, 1);
            try {
                if (errorType.address() == 0) {
                    return "(no Python exception was set)";
                }
                String name = typeNameOfType(errorType);
                String message = errorValue.address() == 0 ? "" : GuardedCalls.str(errorValue);
                return message.isEmpty() ? name : name + ": " + message;
            } catch (RuntimeException e) {
                return "an exception whose message cannot be read";
            } finally {
                for (int i = 0; i < 3; i++) {
                    LibPython.decRef(slots.getAtIndex(ADDRESS, i)); // NULL is allowed
                }
            }
        }
    }

    /** {@return {@code type(object).__qualname__}, or "?" if Python cannot say} Never leaves an exception set. */
    static String typeName(MemorySegment object) {
        MemorySegment type = LibPython.objectType(object);
        if (type.address() == 0) {
            LibPython.errClear();
            return "?";
        }
        try {
            return typeNameOfType(type);
        } finally {
            LibPython.decRef(type);
        }
    }

    private static String typeNameOfType(MemorySegment type) {
        MemorySegment name = LibPython.objectGetAttrString(type, QUALNAME);
        if (name.address() == 0) {
            LibPython.errClear();
            return "?";
        }
        try {
            return GuardedCalls.utf8(name);
        } finally {
            LibPython.decRef(name);
        }
    }
}
