package org.jdlpack.python.internal.objects;

/**
 * A Python exception that code below the front doors took off Python's error indicator
 * ({@link PythonErrors#pending}): what failed, then Python's "Type: message" line. The front door
 * that called it rethrows it as the public {@code org.jdlpack.python.PythonException} with the
 * same message and {@link #exception()}, whose constructor only that package can reach.
 *
 * <p>Thread safety: immutable.
 */
public final class PythonError extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String exception;

    PythonError(String message, String exception) {
        super(message);
        this.exception = exception;
    }

    /** {@return the Python exception as "Type: message"; the message may run over several lines} */
    public String exception() {
        return exception;
    }
}
