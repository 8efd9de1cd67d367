package org.jdlpack.cuda;

import org.jdlpack.abi.DLPackException;

/**
 * A CUDA runtime call failed, or the CUDA runtime is not available. The message carries the
 * error's name, its text and the call: {@code cudaMalloc failed: cudaErrorMemoryAllocation (2): out
 * of memory}.
 *
 * @since 0.1
 */
public class CudaException extends DLPackException {

    private static final long serialVersionUID = 1L;

    /** The {@code cudaError_t}, 0 when the failure was not a CUDA error. */
    private final int errorCode;
    /** The name from {@code cudaGetErrorName}, or null. */
    private final String errorName;
    /** The runtime function that failed, or null. */
    private final String call;

    /**
     * A CUDA error.
     *
     * @param errorCode the {@code cudaError_t}
     * @param call      the runtime function that returned it
     */
    public CudaException(int errorCode, String call) {
        this(errorCode, Cudart.getErrorName(errorCode, "cudaError_" + errorCode),
                Cudart.getErrorString(errorCode, "unknown CUDA error " + errorCode), call);
    }

    private CudaException(int errorCode, String errorName, String errorString, String call) {
        super(call + " failed: " + errorName + " (" + errorCode + "): " + errorString);
        this.errorCode = errorCode;
        this.errorName = errorName;
        this.call = call;
    }

    /**
     * A failure that is not a CUDA error code, such as a missing runtime library.
     *
     * @param message what went wrong
     */
    public CudaException(String message) {
        super(message);
        this.errorCode = 0;
        this.errorName = null;
        this.call = null;
    }

    /** {@return the CUDA error code ({@code cudaError_t}); 0 when the failure was not a CUDA error} */
    public int errorCode() {
        return errorCode;
    }

    /** {@return the error's name from {@code cudaGetErrorName}, for example {@code cudaErrorInvalidValue}, or null} */
    public String errorName() {
        return errorName;
    }

    /** {@return the name of the runtime function that failed, or null} */
    public String call() {
        return call;
    }
}
