package org.jdlpack.python.internal.objects;

import static java.lang.foreign.ValueLayout.ADDRESS;

import java.lang.System.Logger.Level;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import org.jdlpack.abi.plumbing.Diagnostics;
import org.jdlpack.python.internal.capi.LibPythonErrors;
import org.jdlpack.python.internal.capi.LibPythonObjects;

/**
 * Python exceptions both ways: {@link #raise} sets one for an upcall to return (Java's failure
 * told to Python), {@link #pending} takes the one Python left set into Java, as a
 * {@link PythonError}, and {@link #pendingLine} as its "Type: message" line.
 *
 * <p>Every method needs the GIL held and makes only downcalls. Thread safety: stateless.
 */
public final class PythonErrors {

    private PythonErrors() {
    }

    /** Sets a Python exception of {@code type} (a {@code PyExc_...} object) and returns NULL; never throws. */
    public static MemorySegment raise(MemorySegment type, String message) {
        try (Arena arena = Arena.ofConfined()) {
            LibPythonErrors.errSetString(type, arena.allocateFrom(message == null ? "(no message)" : message));
        } catch (Throwable t) {
            Diagnostics.report(Level.ERROR, "could not raise a Python exception", t);
        }
        return MemorySegment.NULL;
    }

    /**
     * Takes the pending Python exception (clearing it) into a {@link PythonError} whose message is
     * {@code what}, then Python's line, e.g.
     * {@code BufferError: the Java tensor behind this object was released}.
     */
    public static PythonError pending(String what) {
        String exception = pendingLine();
        return new PythonError(what + ":\n" + exception, exception);
    }

    /** {@return the pending exception as "Type: message", the indicator cleared} Calls Python only once it is clear. */
    public static String pendingLine() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment slots = arena.allocate(ADDRESS, 3);
            LibPythonErrors.errFetch(slots, slots.asSlice(ADDRESS.byteSize()), slots.asSlice(2 * ADDRESS.byteSize()));
            MemorySegment errorType = slots.getAtIndex(ADDRESS, 0);
            MemorySegment errorValue = slots.getAtIndex(ADDRESS, 1);
            try {
                if (errorType.address() == 0) {
                    return "(no Python exception was set)";
                }
                String name = PythonStrings.typeNameOfType(errorType);
                String message = errorValue.address() == 0 ? "" : PythonStrings.str(errorValue);
                if (message == null) {
                    return "an exception whose message cannot be read";
                }
                return message.isEmpty() ? name : name + ": " + message;
            } catch (RuntimeException e) {
                return "an exception whose message cannot be read";
            } finally {
                for (int i = 0; i < 3; i++) {
                    LibPythonObjects.decRef(slots.getAtIndex(ADDRESS, i)); // NULL is allowed
                }
            }
        }
    }
}
