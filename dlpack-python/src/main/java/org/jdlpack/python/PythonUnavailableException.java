package org.jdlpack.python;

/**
 * No embeddable CPython here: the {@code python3} to embed could not be run, has no shared
 * libpython, or libpython could not be loaded. The message says what is missing and what to
 * install.
 *
 * <p>Thread safety: immutable.
 *
 * @since 0.1
 */
public final class PythonUnavailableException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** Whether nothing was loaded into the process before the failure (the probe of a python3 failed). */
    private final transient boolean nothingLoaded;

    PythonUnavailableException(String message) {
        this(message, false);
    }

    PythonUnavailableException(String message, boolean nothingLoaded) {
        super(message);
        this.nothingLoaded = nothingLoaded;
    }

    PythonUnavailableException(String message, Throwable cause) {
        this(message, cause, false);
    }

    PythonUnavailableException(String message, Throwable cause, boolean nothingLoaded) {
        super(message, cause);
        this.nothingLoaded = nothingLoaded;
    }

    /** {@return whether the failure left the process untouched, so that another Python may still be tried} */
    boolean nothingLoaded() {
        return nothingLoaded;
    }
}
