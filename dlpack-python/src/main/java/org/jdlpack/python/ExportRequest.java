package org.jdlpack.python;

import java.util.Objects;

import org.jdlpack.abi.DLTensorFlag;
import org.jdlpack.abi.ManagedTensorKind;

/**
 * What a Python consumer asked for when it called {@code __dlpack__} on a Java tensor object.
 *
 * <p>The object has already checked {@code dl_device} (a device other than the tensor's is a
 * {@code BufferError}) and turned {@code max_version} into {@link #kind()}.
 *
 * @param kind   {@link ManagedTensorKind#LEGACY} when {@code max_version} was None or older than
 *               1.0, else {@link ManagedTensorKind#VERSIONED}
 * @param stream the consumer's {@code stream} argument, null for None; for CUDA its meaning is the
 *               array-API stream contract ({@code org.jdlpack.cuda.StreamContract})
 * @param copy   the consumer's {@code copy} argument: null (copy only if needed), true (always
 *               copy, and set {@link DLTensorFlag#IS_COPIED} on a versioned export) or false
 *               (never copy)
 */
public record ExportRequest(ManagedTensorKind kind, Long stream, Boolean copy) {

    /**
     * Checks the kind.
     *
     * @param kind   the struct to export
     * @param stream the stream argument, or null
     * @param copy   the copy argument, or null
     */
    public ExportRequest {
        Objects.requireNonNull(kind, "kind");
    }

    /** {@return whether the consumer demanded a copy ({@code copy=True})} */
    public boolean copyRequired() {
        return Boolean.TRUE.equals(copy);
    }
}
