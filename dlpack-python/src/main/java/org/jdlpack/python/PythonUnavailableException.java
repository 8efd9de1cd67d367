package org.jdlpack.python;

/**
 * No embeddable CPython here: the {@code python3} to embed could not be run, has no shared
 * libpython, or libpython could not be loaded. The message says what is missing and what to
 * install.
 *
 * <p>Thread safety: immutable.
 */
public final class PythonUnavailableException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    PythonUnavailableException(String message) {
        super(message);
    }

    PythonUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
