package org.jdlpack.arrow;

import java.util.Objects;
import java.util.Optional;

import org.apache.arrow.vector.FieldVector;

/**
 * The result of an {@link ArrowImport}: the vector, and why its values were copied if they were.
 *
 * <p>Closing it closes the vector; the producer's deleter runs when the last Arrow buffer over the
 * tensor's memory is released (at once, if no other vector shares the buffers). Like any Arrow
 * vector, it is not thread-safe.
 *
 * @param vector     a fixed-width vector (1-D tensors, and Bit for bool), or a
 *                   {@code FixedSizeListVector} per extra dimension around one
 * @param copyReason empty when the vector wraps the tensor's memory; else why it holds a copy (the
 *                   producer's deleter has then already run)
 *
 * @since 0.1
 */
public record ImportedVector(FieldVector vector, Optional<String> copyReason) implements AutoCloseable {

    /**
     * Checks the components.
     *
     * @param vector     the vector
     * @param copyReason why it is a copy, or empty
     */
    public ImportedVector {
        Objects.requireNonNull(vector, "vector");
        Objects.requireNonNull(copyReason, "copyReason");
    }

    /** {@return whether the values were copied rather than shared with the producer} */
    public boolean isCopy() {
        return copyReason.isPresent();
    }

    /** Closes the vector. */
    @Override
    public void close() {
        vector.close();
    }
}
