package org.jdlpack.abi;

/**
 * A versioned managed tensor carries a major version this library does not read. Its deleter has
 * been called (that part of the struct is the same in every version) and nothing else was read.
 *
 * @since 0.1
 */
public class UnsupportedVersionException extends DLPackException {

    private static final long serialVersionUID = 1L;

    private final transient DLPackVersion version;

    /**
     * Creates the exception.
     *
     * @param version the version found in the struct
     */
    public UnsupportedVersionException(DLPackVersion version) {
        super("DLManagedTensorVersioned.version.major is " + version.major() + " (version " + version
                + "); this library reads major version " + DLPackVersion.SUPPORTED_MAJOR + " only");
        this.version = version;
    }

    /** {@return the rejected version found in the struct} */
    public DLPackVersion version() {
        return version;
    }
}
