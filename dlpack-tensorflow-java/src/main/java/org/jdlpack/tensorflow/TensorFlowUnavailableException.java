package org.jdlpack.tensorflow;

import org.jdlpack.abi.DLPackException;

/**
 * The TensorFlow that TensorFlow Java loaded cannot be used: TensorFlow Java or its natives are
 * missing, an entry point is missing from the library, TensorFlow Java's package-private tensor
 * handle cannot be reached (the module is not opened), or the platform's C++ ABI is not the
 * Itanium ABI (Windows). The message says which, and what to do.
 *
 * @since 0.1
 */
public final class TensorFlowUnavailableException extends DLPackException {

    private static final long serialVersionUID = 1L;

    TensorFlowUnavailableException(String message) {
        super(message);
    }

    TensorFlowUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
