package org.jdlpack.abi;

/**
 * A managed tensor failed validation: a field holds a value that is out of range, inconsistent
 * with another field, or would overflow a size computation. The message names the field and the
 * value, for example {@code DLTensor.ndim is -3}.
 *
 * <p>When this is thrown while importing, the tensor's deleter has already been called: ownership
 * was taken, so nothing leaks.
 *
 * @since 0.1
 */
public class InvalidTensorException extends DLPackException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message the field, its value and why it is rejected
     */
    public InvalidTensorException(String message) {
        super(message);
    }

    /**
     * Creates the exception with the arithmetic failure that exposed the problem.
     *
     * @param message the field, its value and why it is rejected
     * @param cause   the underlying failure, typically an {@link ArithmeticException} on overflow
     */
    public InvalidTensorException(String message, Throwable cause) {
        super(message, cause);
    }
}
