package org.jdlpack.python;

import static java.lang.foreign.ValueLayout.ADDRESS;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The positional arguments of a {@code METH_FASTCALL} built-in whose C function is an upcall,
 * each conversion checked. A wrong count, type or value is a {@link Refused} naming the function
 * and the argument, which the upcall raises as a Python exception; no failed conversion is left
 * pending (Python reports a result returned with an exception set as {@code SystemError}).
 *
 * <p>Needs the GIL (the upcall's). Thread safety: confined to the upcall that made it.
 */
@SuppressWarnings("restricted")
final class FastcallArguments {

    /** A refused argument: the Python exception type to raise and its message. */
    static final class Refused extends Exception {

        private static final long serialVersionUID = 1L;

        private final transient MemorySegment type;

        Refused(MemorySegment type, String message) {
            super(message, null, false, false); // raised in Python, never thrown out of Java: no stack trace
            this.type = type;
        }

        /** {@return the Python exception type, a {@code PyExc_...} object} */
        MemorySegment type() {
            return type;
        }
    }

    private static final MemorySegment QUALNAME = Arena.global().allocateFrom("__qualname__");

    private final LibPython py;
    private final String function;
    private final String[] names;
    private final MemorySegment args;

    /**
     * Checks the count.
     *
     * @param function the Python name of the built-in, for messages
     * @param args     the {@code PyObject* const*} array Python passed
     * @param nargs    its length
     * @param names    the arguments' names, one per expected argument
     * @throws Refused (TypeError) if {@code nargs} is not {@code names.length}
     */
    FastcallArguments(LibPython py, String function, MemorySegment args, long nargs, String... names) throws Refused {
        this.py = py;
        this.function = function;
        this.names = names;
        if (nargs != names.length) {
            throw new Refused(py.typeError, function + "() takes " + names.length + " arguments (" + String.join(", ", names)
                    + "), not " + nargs);
        }
        this.args = args.reinterpret(nargs * ADDRESS.byteSize());
    }

    /** {@return argument {@code index}, borrowed} */
    MemorySegment object(int index) {
        return args.getAtIndex(ADDRESS, index);
    }

    /**
     * {@return the pointer of argument {@code index}, which must be a capsule named {@code name}}
     *
     * @throws Refused (TypeError) if it is not such a capsule
     */
    MemorySegment capsule(int index, MemorySegment name, String described) throws Throwable {
        MemorySegment capsule = object(index);
        if ((int) py.capsuleIsValid.invokeExact(capsule, name) == 0) { // never sets an exception
            throw wrongType(index, described);
        }
        MemorySegment pointer = (MemorySegment) py.capsuleGetPointer.invokeExact(capsule, name);
        if (pointer.address() == 0) {
            py.errClear.invokeExact();
            throw wrongType(index, described);
        }
        return pointer;
    }

    /**
     * {@return argument {@code index}, which must be {@code True} or {@code False}}
     *
     * @throws Refused (TypeError) otherwise
     */
    boolean bool(int index) throws Refused {
        MemorySegment value = object(index);
        if (value.equals(py.trueObject)) {
            return true;
        }
        if (value.equals(py.falseObject)) {
            return false;
        }
        throw wrongType(index, "True or False");
    }

    /**
     * {@return argument {@code index} as a 64-bit integer, or null for None}
     *
     * @throws Refused (TypeError) if it is neither None nor an int, (OverflowError) if it does not
     *                 fit in 64 bits
     */
    Long optionalLong(int index) throws Throwable {
        return object(index).equals(py.none) ? null : toLong(index, "None or an int");
    }

    /**
     * {@return argument {@code index} as a 64-bit integer}
     *
     * @throws Refused (TypeError) if it is not an int, (OverflowError) if it does not fit in 64 bits
     */
    long longValue(int index) throws Throwable {
        return toLong(index, "an int");
    }

    /** {@return a ValueError for argument {@code index}: it must be {@code expected}} */
    Refused badValue(int index, String expected, long actual) {
        return new Refused(py.valueError, describe(index) + " must be " + expected + ", not " + actual);
    }

    private long toLong(int index, String expected) throws Throwable {
        long value = (long) py.longAsLongLong.invokeExact(object(index));
        if (value == -1 && ((MemorySegment) py.errOccurred.invokeExact()).address() != 0) {
            boolean overflow = (int) py.errExceptionMatches.invokeExact(py.overflowError) != 0;
            py.errClear.invokeExact();
            if (overflow) {
                throw new Refused(py.overflowError, describe(index) + " does not fit in a signed 64-bit integer");
            }
            throw wrongType(index, expected);
        }
        return value;
    }

    private Refused wrongType(int index, String expected) {
        String type;
        try {
            type = typeName(object(index));
        } catch (Throwable t) {
            type = "?";
        }
        return new Refused(py.typeError, describe(index) + " must be " + expected + ", not " + type);
    }

    private String describe(int index) {
        return function + "() argument " + (index + 1) + " (" + names[index] + ")";
    }

    /** {@return {@code type(object).__qualname__}, or "?" if Python cannot say} */
    private String typeName(MemorySegment object) throws Throwable {
        MemorySegment type = (MemorySegment) py.objectType.invokeExact(object);
        if (type.address() == 0) {
            py.errClear.invokeExact();
            return "?";
        }
        MemorySegment name = (MemorySegment) py.objectGetAttrString.invokeExact(type, QUALNAME);
        py.decRef.invokeExact(type);
        if (name.address() == 0) {
            py.errClear.invokeExact();
            return "?";
        }
        try {
            MemorySegment chars = (MemorySegment) py.unicodeAsUtf8.invokeExact(name);
            if (chars.address() == 0) {
                py.errClear.invokeExact();
                return "?";
            }
            return chars.reinterpret(Long.MAX_VALUE).getString(0);
        } finally {
            py.decRef.invokeExact(name);
        }
    }
}
