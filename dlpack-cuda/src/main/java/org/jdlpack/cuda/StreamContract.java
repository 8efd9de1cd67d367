package org.jdlpack.cuda;

import java.util.Optional;
import java.util.OptionalLong;

/**
 * The stream handshake of the Python array API's {@code __dlpack__(stream=...)} for CUDA, the
 * convention NumPy-like libraries (CuPy, PyTorch, JAX) follow when they exchange device tensors.
 *
 * <p>The consumer names the stream it will use the tensor on; the producer makes that stream wait
 * for the producer's pending work with an event, instead of synchronising the device. The
 * consumer's stream argument means:
 * <ul>
 *   <li>{@code None} (null here) or {@code 1}: the legacy default stream;</li>
 *   <li>{@code 2}: the per-thread default stream;</li>
 *   <li>{@code -1}: no synchronisation at all, the consumer takes care of it;</li>
 *   <li>{@code 0}: disallowed for CUDA, since it is ambiguous between the two defaults;</li>
 *   <li>any other positive value: that {@code cudaStream_t}.</li>
 * </ul>
 *
 * <p>Thread safety: stateless; safe from any thread.
 *
 * @since 0.1
 */
public final class StreamContract {

    private StreamContract() {
    }

    /**
     * The stream a consumer's {@code stream} argument designates.
     *
     * @param stream the argument, null for Python's {@code None}
     * @return the stream to synchronise with, or empty for {@code -1} (no synchronisation)
     * @throws IllegalArgumentException for 0 and for negative values other than -1
     */
    public static Optional<CudaStream> consumerStream(Long stream) {
        if (stream == null || stream == 1) {
            return Optional.of(CudaStream.legacyDefault());
        }
        if (stream == 2) {
            return Optional.of(CudaStream.perThreadDefault());
        }
        if (stream == -1) {
            return Optional.empty();
        }
        if (stream == 0) {
            throw new IllegalArgumentException("stream=0 is disallowed for CUDA by the array API standard: it is ambiguous "
                    + "between the legacy (1) and per-thread (2) default streams");
        }
        if (stream < 0) {
            throw new IllegalArgumentException("stream=" + stream + " is not a CUDA stream; -1 means no synchronisation");
        }
        return Optional.of(CudaStream.of(stream));
    }

    /**
     * The producer's side of the handshake: makes the consumer's stream wait for the work queued
     * so far on the producer's stream. Nothing is enqueued for {@code -1}, or when both are the
     * same stream.
     *
     * @param producer the stream the producer wrote the tensor on
     * @param stream   the consumer's {@code stream} argument, null for {@code None}
     * @return {@code true} when a wait was enqueued
     */
    public static boolean prepareForConsumer(CudaStream producer, Long stream) {
        return prepareForConsumer(producer, stream == null ? OptionalLong.empty() : OptionalLong.of(stream));
    }

    /**
     * The producer's side of the handshake, for the stream argument as dlpack-python's
     * {@code ExportRequest.stream()} gives it: empty for {@code None}.
     *
     * @param producer the stream the producer wrote the tensor on
     * @param stream   the consumer's {@code stream} argument, empty for {@code None}
     * @return {@code true} when a wait was enqueued
     */
    public static boolean prepareForConsumer(CudaStream producer, OptionalLong stream) {
        Long argument = stream.isPresent() ? stream.getAsLong() : null;
        Optional<CudaStream> consumer = consumerStream(argument);
        if (consumer.isEmpty() || consumer.get().handle() == producer.handle()) {
            return false;
        }
        consumer.get().waitFor(producer);
        return true;
    }
}
