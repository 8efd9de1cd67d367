package org.jdlpack.python.internal.objects;

import static java.lang.foreign.ValueLayout.ADDRESS;

import java.lang.foreign.MemorySegment;
import java.util.OptionalLong;

import org.jdlpack.python.internal.capi.LibPython;
import org.jdlpack.python.internal.capi.LibPythonCapsules;
import org.jdlpack.python.internal.capi.LibPythonErrors;
import org.jdlpack.python.internal.capi.LibPythonObjects;

/**
 * The positional arguments of a {@code METH_FASTCALL} built-in whose C function is an upcall,
 * each conversion checked. A wrong count, type or value is a {@link Refused} naming the function
 * and the argument, which the upcall raises as a Python exception; no failed conversion is left
 * pending (Python reports a result returned with an exception set as {@code SystemError}).
 *
 * <p>Needs the GIL (the upcall's). Thread safety: confined to the upcall that made it.
 */
public final class FastcallArguments {

    /** A refused argument: the Python exception type to raise and its message. */
    public static final class Refused extends Exception {

        private static final long serialVersionUID = 1L;

        private final transient MemorySegment type;

        Refused(MemorySegment type, String message) {
            super(message, null, false, false); // raised in Python, never thrown out of Java: no stack trace
            this.type = type;
        }

        /** {@return the Python exception type, a {@code PyExc_...} object} */
        public MemorySegment type() {
            return type;
        }
    }

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
    public FastcallArguments(String function, MemorySegment args, long nargs, String... names) throws Refused {
        this.function = function;
        this.names = names;
        if (nargs != names.length) {
            throw new Refused(LibPythonErrors.TYPE_ERROR, function + "() takes " + names.length + " arguments (" + String.join(", ", names)
                    + "), not " + nargs);
        }
        this.args = LibPython.memory(args, nargs * ADDRESS.byteSize());
    }

    /** {@return argument {@code index}, borrowed} */
    public MemorySegment object(int index) {
        return args.getAtIndex(ADDRESS, index);
    }

    /**
     * {@return the pointer of argument {@code index}, which must be a capsule named {@code name}}
     *
     * @throws Refused (TypeError) if it is not such a capsule
     */
    public MemorySegment capsule(int index, MemorySegment name, String described) throws Refused {
        MemorySegment capsule = object(index);
        if (!LibPythonCapsules.capsuleIsValid(capsule, name)) { // never sets an exception
            throw wrongType(index, described);
        }
        MemorySegment pointer = LibPythonCapsules.capsuleGetPointer(capsule, name);
        if (pointer.address() == 0) {
            LibPythonErrors.errClear();
            throw wrongType(index, described);
        }
        return pointer;
    }

    /**
     * {@return argument {@code index}, which must be {@code True} or {@code False}}
     *
     * @throws Refused (TypeError) otherwise
     */
    public boolean bool(int index) throws Refused {
        MemorySegment value = object(index);
        if (value.equals(LibPython.TRUE)) {
            return true;
        }
        if (value.equals(LibPython.FALSE)) {
            return false;
        }
        throw wrongType(index, "True or False");
    }

    /**
     * {@return argument {@code index} as a 64-bit integer, or empty for None}
     *
     * @throws Refused (TypeError) if it is neither None nor an int, (OverflowError) if it does not
     *                 fit in 64 bits
     */
    public OptionalLong optionalLong(int index) throws Refused {
        return object(index).equals(LibPython.NONE) ? OptionalLong.empty() : OptionalLong.of(toLong(index, "None or an int"));
    }

    /**
     * {@return argument {@code index} as a 64-bit integer}
     *
     * @throws Refused (TypeError) if it is not an int, (OverflowError) if it does not fit in 64 bits
     */
    public long longValue(int index) throws Refused {
        return toLong(index, "an int");
    }

    /** {@return a ValueError for argument {@code index}: it must be {@code expected}} */
    public Refused badValue(int index, String expected, long actual) {
        return new Refused(LibPythonErrors.VALUE_ERROR, describe(index) + " must be " + expected + ", not " + actual);
    }

    private long toLong(int index, String expected) throws Refused {
        long value = LibPythonObjects.longAsLong(object(index));
        if (value == -1 && LibPythonErrors.errOccurred()) {
            boolean overflow = LibPythonErrors.errExceptionMatches(LibPythonErrors.OVERFLOW_ERROR);
            LibPythonErrors.errClear();
            if (overflow) {
                throw new Refused(LibPythonErrors.OVERFLOW_ERROR, describe(index) + " does not fit in a signed 64-bit integer");
            }
            throw wrongType(index, expected);
        }
        return value;
    }

    private Refused wrongType(int index, String expected) {
        String type;
        try {
            type = PythonStrings.typeName(object(index));
        } catch (RuntimeException e) {
            type = "?";
        }
        return new Refused(LibPythonErrors.TYPE_ERROR, describe(index) + " must be " + expected + ", not " + type);
    }

    private String describe(int index) {
        return function + "() argument " + (index + 1) + " (" + names[index] + ")";
    }
}
