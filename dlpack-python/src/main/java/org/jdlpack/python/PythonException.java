package org.jdlpack.python;

/**
 * A Python exception raised by code jdlpack ran, carried into Java: the message is Python's
 * formatted traceback.
 *
 * <p>Thread safety: immutable.
 */
public final class PythonException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    PythonException(String traceback) {
        super(traceback);
    }

    /** {@return the last line of the traceback: the Python exception type and message} */
    public String lastLine() {
        return getMessage().strip().lines().reduce((a, b) -> b).orElse("");
    }
}
