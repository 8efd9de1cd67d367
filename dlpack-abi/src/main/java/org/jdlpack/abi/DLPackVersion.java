package org.jdlpack.abi;

/**
 * A DLPack ABI version, the {@code DLPackVersion} struct: two unsigned 32-bit numbers.
 *
 * <p>The major version changes when the layout of {@code DLManagedTensorVersioned} past its
 * {@code version}, {@code manager_ctx} and {@code deleter} fields changes; a consumer must not
 * interpret a struct whose major version it does not know. Minor versions only add meaning.
 *
 * <p>Values are stored as Java {@code long}s so that the full unsigned range of the C fields can be
 * represented exactly.
 *
 * <p>Instances are immutable and safe to share between threads.
 *
 * @param major the major version, 0 to 2<sup>32</sup>-1
 * @param minor the minor version, 0 to 2<sup>32</sup>-1
 *
 * @since 0.1
 */
public record DLPackVersion(long major, long minor) implements Comparable<DLPackVersion> {

    /** The version this library writes into every versioned export: DLPack 1.3. */
    public static final DLPackVersion CURRENT = new DLPackVersion(1, 3);

    /** The only major version this library reads. */
    public static final long SUPPORTED_MAJOR = 1;

    private static final long U32_MAX = 0xFFFF_FFFFL;

    /**
     * Checks both numbers fit the unsigned 32-bit C fields.
     *
     * @throws IllegalArgumentException if either number is negative or above 2<sup>32</sup>-1
     */
    public DLPackVersion {
        if (major < 0 || major > U32_MAX) {
            throw new IllegalArgumentException("DLPackVersion.major is " + major + ", outside the u32 range");
        }
        if (minor < 0 || minor > U32_MAX) {
            throw new IllegalArgumentException("DLPackVersion.minor is " + minor + ", outside the u32 range");
        }
    }

    /**
     * Creates a version from the raw 32-bit fields as read from native memory.
     *
     * @param rawMajor the {@code major} field, read as a signed int
     * @param rawMinor the {@code minor} field, read as a signed int
     * @return the version with both fields interpreted as unsigned
     */
    public static DLPackVersion ofRaw(int rawMajor, int rawMinor) {
        return new DLPackVersion(Integer.toUnsignedLong(rawMajor), Integer.toUnsignedLong(rawMinor));
    }

    /**
     * {@return whether this library can read a managed tensor stamped with this version:
     * {@code true} when the major version is {@value #SUPPORTED_MAJOR}}
     */
    public boolean isSupported() {
        return major == SUPPORTED_MAJOR;
    }

    @Override
    public int compareTo(DLPackVersion other) {
        int byMajor = Long.compare(major, other.major);
        return byMajor != 0 ? byMajor : Long.compare(minor, other.minor);
    }

    @Override
    public String toString() {
        return major + "." + minor;
    }
}
