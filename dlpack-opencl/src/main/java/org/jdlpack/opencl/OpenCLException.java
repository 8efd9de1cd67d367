package org.jdlpack.opencl;

import org.jdlpack.abi.DLPackException;

/**
 * An OpenCL call failed, or OpenCL is not available. The message names the call and the error
 * ({@code clEnqueueReadBuffer failed: CL_INVALID_MEM_OBJECT (-38)}).
 *
 * @since 0.1
 */
public class OpenCLException extends DLPackException {

    private static final long serialVersionUID = 1L;

    /** The {@code cl_int} error code, 0 when the failure was not an OpenCL error. */
    private final int errorCode;
    /** The OpenCL function that failed, or null. */
    private final String call;

    /**
     * An OpenCL error.
     *
     * @param errorCode the {@code cl_int} error code
     * @param call      the OpenCL function that returned it
     */
    public OpenCLException(int errorCode, String call) {
        super(call + " failed: " + errorName(errorCode) + " (" + errorCode + ")");
        this.errorCode = errorCode;
        this.call = call;
    }

    /**
     * A failure that is not an OpenCL error code: OpenCL missing, an argument rejected before
     * any call.
     *
     * @param message what went wrong
     */
    public OpenCLException(String message) {
        super(message);
        this.errorCode = 0;
        this.call = null;
    }

    /**
     * The name of an OpenCL error code.
     *
     * @param errorCode a {@code cl_int} error code
     * @return for example {@code CL_INVALID_MEM_OBJECT}, or {@code CL_UNKNOWN_ERROR_<code>}
     */
    public static String errorName(int errorCode) {
        return CL.ERROR_NAMES.getOrDefault(errorCode, "CL_UNKNOWN_ERROR_" + errorCode);
    }

    /** {@return the OpenCL error code, or 0 when the failure was not an OpenCL error} */
    public int errorCode() {
        return errorCode;
    }

    /** {@return the name of the OpenCL function that failed, or null when the failure was not an OpenCL error} */
    public String call() {
        return call;
    }
}
