package org.jdlpack.python;

import java.util.OptionalLong;

import org.jdlpack.abi.DLDevice;
import org.jdlpack.abi.ExportedTensor;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.python.internal.bridge.CpuSource;

/**
 * A Java tensor that can be handed to Python: {@link PythonRuntime#toPython(DLPackSource)} wraps it
 * in an object whose {@code __dlpack__} calls {@link #export(ExportRequest)} once per consumer.
 *
 * {@snippet :
 * record ColumnSource(OwnedHostTensor column) implements DLPackSource {
 *     public DLDevice device() { return DLDevice.CPU; }
 *     public ExportedTensor export(ExportRequest request) {
 *         if (request.stream().isPresent() || request.copy() == ExportRequest.Copy.ALWAYS) {
 *             throw new UnsupportedOperationException("shared as it is, on the CPU"); // BufferError in Python
 *         }
 *         return column.export(ExportOptions.of(request.kind()));
 *     }
 * }
 * }
 *
 * <p>{@link #of(OwnedHostTensor)} covers host memory. Other devices implement this interface themselves;
 * a CUDA source makes the consumer's stream wait for its work in {@code export}, with
 * {@code org.jdlpack.cuda.StreamContract.prepareForConsumer(producerStream, request.stream())}
 * (this module does not depend on dlpack-cuda).
 *
 * <p>An exception from {@link #export(ExportRequest)} reaches the Python consumer as a
 * {@code BufferError} when it is an {@link IllegalArgumentException},
 * {@link UnsupportedOperationException} or {@link IllegalStateException} (a request that cannot be
 * honoured, or a tensor already released), and as a {@code RuntimeError} otherwise; it never
 * leaves the upcall.
 *
 * <p>Thread safety: {@code export} is called on the Python thread that called {@code __dlpack__},
 * without the GIL; implementations must be safe to call from any thread. It runs inside an upcall
 * from Python, so when that thread is a Java virtual thread it is pinned to its carrier until
 * {@code export} returns: an export that blocks holds the carrier meanwhile.
 *
 * @since 0.1
 */
public interface DLPackSource {

    /** {@return the device of the tensor, which {@code __dlpack_device__} reports} */
    DLDevice device();

    /**
     * Exports a fresh managed tensor for one consumer.
     *
     * @param request what the consumer asked for
     * @return a handle owning the new struct; the caller wraps it in a capsule
     * @throws UnsupportedOperationException if the request cannot be honoured (a stream for a host
     *                                       tensor, a copy that cannot be made)
     * @throws IllegalStateException         if the tensor was released
     */
    ExportedTensor export(ExportRequest request);

    /**
     * The stream a consumer of the DLPack C exchange API should launch its work on, for a device
     * with streams: what {@code current_work_stream} answers for this tensor's device right after
     * a consumer took it through {@code managed_tensor_from_py_object_no_sync} on the same thread
     * (the header passes no tensor, so jdlpack answers with the tensor that thread took last).
     * For CUDA this is a {@code cudaStream_t}; the default, empty, answers NULL (the legacy
     * default stream). Host tensors are never asked: the answer for the CPU is always NULL.
     *
     * @return the stream handle, or empty for NULL
     */
    default OptionalLong currentWorkStream() {
        return OptionalLong.empty();
    }

    /**
     * A host tensor as a source: zero-copy exports, a compact copy when {@code copy=True}
     * ({@code IS_COPIED} on a versioned copy), {@code stream} must be None.
     *
     * <p>The source does not own the tensor: closing the tensor makes later {@code __dlpack__} calls
     * raise {@code BufferError}, while tensors already handed out stay valid.
     *
     * @param tensor the tensor
     * @return the source
     */
    static DLPackSource of(OwnedHostTensor tensor) {
        return new CpuSource(tensor);
    }
}
