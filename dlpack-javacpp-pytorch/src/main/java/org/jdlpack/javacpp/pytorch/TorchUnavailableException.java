package org.jdlpack.javacpp.pytorch;

import org.jdlpack.abi.DLPackException;

/**
 * The libtorch JavaCPP loaded cannot be used: JavaCPP's pytorch presets or their natives are
 * missing, a DLPack entry point is missing from the library, or the platform's C++ ABI is not the
 * Itanium ABI (Windows). The message says which, and what to do.
 *
 * @since 0.1
 */
public final class TorchUnavailableException extends DLPackException {

    private static final long serialVersionUID = 1L;

    TorchUnavailableException(String message) {
        super(message);
    }

    TorchUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
