package org.jdlpack.abi;

/**
 * The bits of {@code DLManagedTensorVersioned.flags} that DLPack 1.3 defines.
 *
 * <p>Flags travel as a raw {@code long}; bits this library does not know are carried, not
 * rejected. The legacy {@code DLManagedTensor} has no flags field at all.
 *
 * @since 0.1
 */
public enum DLTensorFlag {
    /** {@code DLPACK_FLAG_BITMASK_READ_ONLY}: the consumer must not write to the data. */
    READ_ONLY(1L),
    /**
     * {@code DLPACK_FLAG_BITMASK_IS_COPIED}: the producer made a copy for this export, so the
     * consumer is the only one that sees the data.
     */
    IS_COPIED(1L << 1),
    /**
     * {@code DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED}: sub-byte values each occupy whole bytes
     * instead of being packed.
     */
    IS_SUBBYTE_TYPE_PADDED(1L << 2);

    private final long mask;

    DLTensorFlag(long mask) {
        this.mask = mask;
    }

    /** {@return the bit of this flag, as a mask with a single set bit} */
    public long mask() {
        return mask;
    }

    /**
     * Whether this flag is set in a flags word.
     *
     * @param flags a raw {@code flags} value
     * @return {@code true} when this flag's bit is set
     */
    public boolean isSet(long flags) {
        return (flags & mask) != 0;
    }
}
