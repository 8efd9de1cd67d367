package org.jdlpack.abi;

/**
 * The root of the exceptions jdlpack throws for DLPack-level problems: a malformed or unsupported
 * tensor, a device a module cannot handle, a native runtime error in a device module.
 *
 * <p>Misuse of the Java API (a closed tensor, a handle consumed twice) is reported with the JDK's
 * {@link IllegalStateException} and {@link IllegalArgumentException} instead.
 *
 * @since 0.1
 */
public class DLPackException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates an exception with a message.
     *
     * @param message what went wrong, naming the field or call and the value
     */
    public DLPackException(String message) {
        super(message);
    }

    /**
     * Creates an exception with a message and a cause.
     *
     * @param message what went wrong
     * @param cause   the underlying failure
     */
    public DLPackException(String message, Throwable cause) {
        super(message, cause);
    }
}
