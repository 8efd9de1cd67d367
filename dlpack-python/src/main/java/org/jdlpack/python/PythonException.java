package org.jdlpack.python;

/**
 * A Python exception raised by code jdlpack ran, carried into Java: the message is Python's
 * formatted traceback (or what failed, then the exception), and {@link #lastLine()} is the
 * exception itself, its type and message.
 *
 * <p>Thread safety: immutable.
 *
 * @since 0.1
 */
public final class PythonException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** The exception as Python's {@code "Type: message"}; its message may run over several lines. */
    private final String exception;

    /** An exception whose {@code "Type: message"} is the last line of {@code traceback}. */
    PythonException(String traceback) {
        this(traceback, traceback.strip().lines().reduce((a, b) -> b).orElse(""));
    }

    /**
     * @param message   the whole message: a traceback, or what failed and then the exception
     * @param exception the exception as {@code "Type: message"}, as Python's {@code traceback} module
     *                  names the type
     */
    PythonException(String message, String exception) {
        super(message);
        this.exception = exception;
    }

    /**
     * {@return the Python exception's type and message, {@code "Type: message"}, as the last line of
     * a Python traceback shows them} A message of several lines gives its first: C++ libraries put
     * their own backtrace on the lines after it (PyTorch's {@code RuntimeError}), which
     * {@link #getMessage()} keeps.
     */
    public String lastLine() {
        return exception.strip().lines().map(String::strip).filter(line -> !line.isEmpty()).findFirst().orElse("");
    }
}
