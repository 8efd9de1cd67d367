package org.jdlpack.abi;

import java.util.Objects;

/**
 * How {@link ExportOwner#export(TensorSpec, ExportOptions)} writes a tensor: which struct, how
 * {@code byte_offset} is written, and whether it is marked read-only.
 *
 * <p>{@code byte_offset}: by default, for memory a pointer addresses directly (CPU, CUDA device,
 * host and managed memory, ROCm, oneAPI), the export points {@code data} at element 0 and writes
 * {@code byte_offset = 0}, as NumPy and PyTorch do, because several consumers ignore
 * {@code byte_offset}. For handle-based memory (OpenCL {@code cl_mem}, Vulkan, Metal, WebGPU) and
 * device types whose {@code data} this library cannot interpret, {@code data} is the handle and
 * {@code byte_offset} is written as given. {@link #withVerbatimByteOffset(boolean)} writes it as
 * given everywhere, for consumers that want the base pointer.
 *
 * <p>Instances are immutable values, safe to share between threads; keep one in a constant on hot
 * paths.
 *
 * @param kind               the struct to build
 * @param verbatimByteOffset {@code true} to write {@code data} and {@code byte_offset} exactly as
 *                           the spec gives them, on every device
 * @param readOnly           {@code true} to set {@link DLTensorFlag#READ_ONLY} even when the spec
 *                           does not (versioned only)
 *
 * @since 0.1
 */
public record ExportOptions(ManagedTensorKind kind, boolean verbatimByteOffset, boolean readOnly) {

    /** A {@code DLManagedTensorVersioned}, {@code byte_offset} folded where possible: the default. */
    public static final ExportOptions VERSIONED = new ExportOptions(ManagedTensorKind.VERSIONED, false, false);

    /** A legacy {@code DLManagedTensor}, {@code byte_offset} folded where possible. */
    public static final ExportOptions LEGACY = new ExportOptions(ManagedTensorKind.LEGACY, false, false);

    /**
     * {@return the default options for a struct kind: {@link #VERSIONED} or {@link #LEGACY}}
     *
     * @param kind the struct to build
     */
    public static ExportOptions of(ManagedTensorKind kind) {
        return kind == ManagedTensorKind.LEGACY ? LEGACY : VERSIONED;
    }

    /**
     * Checks the fields.
     *
     * @throws NullPointerException     if {@code kind} is null
     * @throws IllegalArgumentException if a legacy export is asked to be read-only, which the
     *                                  legacy struct cannot say
     */
    public ExportOptions {
        Objects.requireNonNull(kind, "kind");
        if (readOnly && kind == ManagedTensorKind.LEGACY) {
            throw new IllegalArgumentException("a legacy DLManagedTensor cannot be marked read-only; export it versioned");
        }
    }

    /**
     * {@return these options with another struct kind}
     *
     * @param newKind the struct to build
     */
    public ExportOptions withKind(ManagedTensorKind newKind) {
        return new ExportOptions(newKind, verbatimByteOffset, readOnly);
    }

    /**
     * {@return these options with {@code byte_offset} written verbatim, or folded where possible}
     *
     * @param verbatim {@code true} to write {@code data} and {@code byte_offset} as the spec gives
     *                 them
     */
    public ExportOptions withVerbatimByteOffset(boolean verbatim) {
        return new ExportOptions(kind, verbatim, readOnly);
    }

    /**
     * {@return these options with the read-only flag forced on, or left to the spec}
     *
     * @param newReadOnly {@code true} to set {@link DLTensorFlag#READ_ONLY}
     */
    public ExportOptions withReadOnly(boolean newReadOnly) {
        return new ExportOptions(kind, verbatimByteOffset, newReadOnly);
    }
}
