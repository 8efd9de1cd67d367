package org.jdlpack.djl;

import org.jdlpack.abi.DLPackException;

/**
 * The libtorch DJL loaded cannot be used: DJL or its PyTorch engine is missing or failed to load,
 * libtorch was not found among the libraries mapped into this process, an entry point is missing
 * from it, or the platform's C++ ABI is not the Itanium ABI (Windows). The message says which,
 * and what to do.
 *
 * @since 0.1
 */
public final class DjlUnavailableException extends DLPackException {

    private static final long serialVersionUID = 1L;

    DjlUnavailableException(String message) {
        super(message);
    }
}
