package org.jdlpack.abi;

/**
 * An operation met a tensor on a device it cannot handle, for example a request for a host memory
 * segment of a CUDA device tensor.
 *
 * @since 0.1
 */
public class UnsupportedDeviceException extends DLPackException {

    private static final long serialVersionUID = 1L;

    private final transient DLDevice device;

    /**
     * Creates the exception.
     *
     * @param device  the device of the tensor
     * @param message what was asked and why that device cannot do it
     */
    public UnsupportedDeviceException(DLDevice device, String message) {
        super(message);
        this.device = device;
    }

    /** {@return the device of the tensor} */
    public DLDevice device() {
        return device;
    }
}
