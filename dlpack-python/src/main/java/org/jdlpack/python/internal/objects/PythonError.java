package org.jdlpack.python.internal.objects;

/**
 * A Python exception that code below the front doors took off Python's error indicator
 * ({@link PythonErrors#pending}): what failed, then Python's "Type: message" line. The front door
 * that called it rethrows it as the public {@code org.jdlpack.python.PythonException} with the
 * same message, whose constructor only that package can reach.
 *
 * <p>Thread safety: immutable.
 */
public final class PythonError extends RuntimeException {

    private static final long serialVersionUID = 1L;

    PythonError(String message) {
        super(message);
    }
}
