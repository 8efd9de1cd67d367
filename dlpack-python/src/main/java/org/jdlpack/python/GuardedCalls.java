package org.jdlpack.python;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import org.jdlpack.python.internal.capi.LibPythonErrors;
import org.jdlpack.python.internal.capi.LibPythonObjects;
import org.jdlpack.python.internal.objects.PythonStrings;

/**
 * Calling Python from Java: every call goes through the bootstrap's {@code _guard}, which turns a
 * raised exception into a returned traceback and "Type: message", so that a call either yields a
 * new reference or throws {@link PythonException} and never leaves a Python exception pending.
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
        MemorySegment string = PythonStrings.string(arena, text);
        try {
            MemorySegment[] arguments = new MemorySegment[more.length + 1];
            arguments[0] = string;
            System.arraycopy(more, 0, arguments, 1, more.length);
            return invoke(callable, arguments);
        } finally {
            LibPythonObjects.decRef(string);
        }
    }

    /**
     * {@code _guard(callable, *arguments)}: the new reference to the result, or a
     * {@link PythonException} with the traceback. Arguments are borrowed.
     */
    MemorySegment invoke(MemorySegment callable, MemorySegment... arguments) {
        MemorySegment tuple = LibPythonObjects.tupleNew(arguments.length + 1L);
        if (tuple.address() == 0) {
            LibPythonErrors.errClear();
            throw new OutOfMemoryError("PyTuple_New failed");
        }
        LibPythonObjects.incRef(callable);
        int rc = LibPythonObjects.tupleSetItem(tuple, 0, callable); // steals the reference
        for (int i = 0; i < arguments.length; i++) {
            LibPythonObjects.incRef(arguments[i]);
            rc |= LibPythonObjects.tupleSetItem(tuple, i + 1L, arguments[i]);
        }
        MemorySegment result = rc != 0 ? MemorySegment.NULL : LibPythonObjects.callObject(guard, tuple);
        LibPythonObjects.decRef(tuple);
        if (result.address() == 0) {
            LibPythonErrors.errClear();
            throw new IllegalStateException("calling into Python failed before any Python code ran");
        }
        try {
            MemorySegment ok = LibPythonObjects.tupleGetItem(result, 0);
            MemorySegment value = LibPythonObjects.tupleGetItem(result, 1);
            if (LibPythonObjects.objectIsTrue(ok) == 1) {
                LibPythonObjects.incRef(value);
                return value;
            }
            throw new PythonException(PythonStrings.utf8(value), PythonStrings.utf8(LibPythonObjects.tupleGetItem(result, 2)));
        } finally {
            LibPythonObjects.decRef(result);
        }
    }
}
