package org.jdlpack.python;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Calling Python from Java: every call goes through the bootstrap's {@code _guard}, which turns a
 * raised exception into a returned traceback, so that a call either yields a new reference or
 * throws {@link PythonException} and never leaves a Python exception pending. Also the string
 * conversions those calls need.
 *
 * <p>Every method needs the GIL held and makes only downcalls. Thread safety: immutable.
 */
final class GuardedCalls {

    private final MemorySegment guard;

    GuardedCalls(MemorySegment guard) {
        this.guard = guard;
    }

    /**
     * {@code callable(text, *more)} with {@code text} made a Python {@code str} for the call: the
     * new reference to the result, or a {@link PythonException}. {@code more} is borrowed.
     */
    MemorySegment invokeWithString(Arena arena, MemorySegment callable, String text, MemorySegment... more) {
        MemorySegment string = string(arena, text);
        try {
            MemorySegment[] arguments = new MemorySegment[more.length + 1];
            arguments[0] = string;
            System.arraycopy(more, 0, arguments, 1, more.length);
            return invoke(callable, arguments);
        } finally {
            LibPython.decRef(string);
        }
    }

    /**
     * {@code _guard(callable, *arguments)}: the new reference to the result, or a
     * {@link PythonException} with the traceback. Arguments are borrowed.
     */
    MemorySegment invoke(MemorySegment callable, MemorySegment... arguments) {
        MemorySegment tuple = LibPython.tupleNew(arguments.length + 1L);
        if (tuple.address() == 0) {
            LibPython.errClear();
            throw new OutOfMemoryError("PyTuple_New failed");
        }
        LibPython.incRef(callable);
        int rc = LibPython.tupleSetItem(tuple, 0, callable); // steals the reference
        for (int i = 0; i < arguments.length; i++) {
            LibPython.incRef(arguments[i]);
            rc |= LibPython.tupleSetItem(tuple, i + 1L, arguments[i]);
        }
        MemorySegment result = rc != 0 ? MemorySegment.NULL : LibPython.callObject(guard, tuple);
        LibPython.decRef(tuple);
        if (result.address() == 0) {
            LibPython.errClear();
            throw new IllegalStateException("calling into Python failed before any Python code ran");
        }
        try {
            MemorySegment ok = LibPython.tupleGetItem(result, 0);
            MemorySegment value = LibPython.tupleGetItem(result, 1);
            if (LibPython.objectIsTrue(ok) == 1) {
                LibPython.incRef(value);
                return value;
            }
            throw new PythonException(utf8(value));
        } finally {
            LibPython.decRef(result);
        }
    }

    /** {@code str(object)}, for a borrowed {@code object}. */
    static String str(MemorySegment object) {
        MemorySegment text = LibPython.objectStr(object);
        if (text.address() == 0) {
            LibPython.errClear();
            throw new PythonException("str() of the object raised");
        }
        try {
            return utf8(text);
        } finally {
            LibPython.decRef(text);
        }
    }

    /** {@return a new {@code str}} */
    static MemorySegment string(Arena arena, String value) {
        MemorySegment text = LibPython.unicodeFromUtf8(arena, value);
        if (text.address() == 0) {
            LibPython.errClear();
            throw new IllegalArgumentException("Python could not decode the string");
        }
        return text;
    }

    /** {@return the characters of a {@code str}, or "(undecodable)" (the error cleared)} */
    static String utf8(MemorySegment unicode) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment chars = LibPython.unicodeUtf8(unicode, arena);
            if (chars.address() == 0) {
                LibPython.errClear();
                return "(undecodable)";
            }
            return new String(chars.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE), java.nio.charset.StandardCharsets.UTF_8);
        }
    }
}
