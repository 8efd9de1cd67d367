package org.jdlpack.python;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Calling Python from Java: every call goes through the bootstrap's {@code _guard}, which turns a
 * raised exception into a returned traceback, so that a call either yields a new reference or
 * throws {@link PythonException} and never leaves a Python exception pending. Also the string
 * conversions those calls need.
 *
 * <p>Every method needs the GIL held. Thread safety: immutable.
 */
@SuppressWarnings("restricted")
final class GuardedCalls {

    private final LibPython py;
    private final MemorySegment guard;

    GuardedCalls(LibPython py, MemorySegment guard) {
        this.py = py;
        this.guard = guard;
    }

    /**
     * {@code callable(text, *more)} with {@code text} made a Python {@code str} for the call: the
     * new reference to the result, or a {@link PythonException}. {@code more} is borrowed.
     */
    MemorySegment invokeWithString(Arena arena, MemorySegment callable, String text, MemorySegment... more) throws Throwable {
        MemorySegment string = string(arena, text);
        try {
            MemorySegment[] arguments = new MemorySegment[more.length + 1];
            arguments[0] = string;
            System.arraycopy(more, 0, arguments, 1, more.length);
            return invoke(callable, arguments);
        } finally {
            py.decRef.invokeExact(string);
        }
    }

    /**
     * {@code _guard(callable, *arguments)}: the new reference to the result, or a
     * {@link PythonException} with the traceback. Arguments are borrowed.
     */
    MemorySegment invoke(MemorySegment callable, MemorySegment... arguments) throws Throwable {
        MemorySegment tuple = (MemorySegment) py.tupleNew.invokeExact((long) arguments.length + 1);
        if (tuple.address() == 0) {
            py.errClear.invokeExact();
            throw new OutOfMemoryError("PyTuple_New failed");
        }
        py.incRef.invokeExact(callable);
        int rc = (int) py.tupleSetItem.invokeExact(tuple, 0L, callable); // steals the reference
        for (int i = 0; i < arguments.length; i++) {
            py.incRef.invokeExact(arguments[i]);
            rc |= (int) py.tupleSetItem.invokeExact(tuple, (long) i + 1, arguments[i]);
        }
        MemorySegment result = rc != 0 ? MemorySegment.NULL : (MemorySegment) py.callObject.invokeExact(guard, tuple);
        py.decRef.invokeExact(tuple);
        if (result.address() == 0) {
            py.errClear.invokeExact();
            throw new IllegalStateException("calling into Python failed before any Python code ran");
        }
        try {
            MemorySegment ok = (MemorySegment) py.tupleGetItem.invokeExact(result, 0L);
            MemorySegment value = (MemorySegment) py.tupleGetItem.invokeExact(result, 1L);
            if ((int) py.objectIsTrue.invokeExact(ok) == 1) {
                py.incRef.invokeExact(value);
                return value;
            }
            throw new PythonException(utf8(value));
        } finally {
            py.decRef.invokeExact(result);
        }
    }

    /** {@code str(object)}, for a borrowed {@code object}. */
    String str(MemorySegment object) throws Throwable {
        MemorySegment text = (MemorySegment) py.objectStr.invokeExact(object);
        if (text.address() == 0) {
            py.errClear.invokeExact();
            throw new PythonException("str() of the object raised");
        }
        try {
            return utf8(text);
        } finally {
            py.decRef.invokeExact(text);
        }
    }

    private MemorySegment string(Arena arena, String value) throws Throwable {
        MemorySegment text = (MemorySegment) py.unicodeFromString.invokeExact(arena.allocateFrom(value));
        if (text.address() == 0) {
            py.errClear.invokeExact();
            throw new IllegalArgumentException("Python could not decode the string");
        }
        return text;
    }

    private String utf8(MemorySegment unicode) throws Throwable {
        MemorySegment chars = (MemorySegment) py.unicodeAsUtf8.invokeExact(unicode);
        if (chars.address() == 0) {
            py.errClear.invokeExact();
            return "(undecodable)";
        }
        return chars.reinterpret(Long.MAX_VALUE).getString(0);
    }
}
