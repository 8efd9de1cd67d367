package org.jdlpack.python;

import java.util.Objects;
import java.util.OptionalLong;

import org.jdlpack.abi.DLTensorFlag;
import org.jdlpack.abi.ManagedTensorKind;

/**
 * What a Python consumer asked for when it called {@code __dlpack__} on a Java tensor object.
 *
 * <p>The object has already checked {@code dl_device} (a device other than the tensor's is a
 * {@code BufferError}) and turned {@code max_version} into {@link #kind()}.
 *
 * {@snippet :
 * public ExportedTensor export(ExportRequest request) {
 *     if (request.stream().isPresent()) {                       // a host tensor takes stream=None
 *         throw new UnsupportedOperationException("stream given for a CPU tensor"); // BufferError in Python
 *     }
 *     ExportOptions options = ExportOptions.of(request.kind());
 *     return request.copy() == ExportRequest.Copy.ALWAYS ? tensor.exportCopy(options) : tensor.export(options);
 * }
 * }
 *
 * @param kind   {@link ManagedTensorKind#LEGACY} when {@code max_version} was None or older than
 *               1.0, else {@link ManagedTensorKind#VERSIONED}
 * @param stream the consumer's {@code stream} argument, empty for None; for CUDA its meaning is the
 *               array-API stream contract ({@code org.jdlpack.cuda.StreamContract})
 * @param copy   the consumer's {@code copy} argument
 *
 * @since 0.1
 */
public record ExportRequest(ManagedTensorKind kind, OptionalLong stream, Copy copy) {

    /** The {@code copy} argument of {@code __dlpack__}. */
    public enum Copy {
        /** {@code copy=None}: share the memory if possible, copy only if it cannot be shared. */
        IF_NEEDED,
        /**
         * {@code copy=True}: always copy, and set {@link DLTensorFlag#IS_COPIED} on a versioned
         * export.
         */
        ALWAYS,
        /** {@code copy=False}: never copy; refuse (a {@code BufferError}) what cannot be shared. */
        NEVER
    }

    private static final ExportRequest VERSIONED_DEFAULT = new ExportRequest(ManagedTensorKind.VERSIONED, OptionalLong.empty(),
            Copy.IF_NEEDED);

    /**
     * Checks the arguments.
     *
     * @param kind   the struct to export
     * @param stream the stream argument, empty for None
     * @param copy   the copy argument
     */
    public ExportRequest {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(stream, "stream");
        Objects.requireNonNull(copy, "copy");
    }

    /**
     * {@return a request with no stream and {@link Copy#IF_NEEDED}: what {@code np.from_dlpack(x)}
     * asks for}
     *
     * @param kind the struct to export
     */
    public static ExportRequest of(ManagedTensorKind kind) {
        return kind == ManagedTensorKind.VERSIONED ? VERSIONED_DEFAULT : new ExportRequest(kind, OptionalLong.empty(), Copy.IF_NEEDED);
    }

    /** {@return whether the consumer demanded a copy ({@code copy=True})} */
    public boolean copyRequired() {
        return copy == Copy.ALWAYS;
    }
}
