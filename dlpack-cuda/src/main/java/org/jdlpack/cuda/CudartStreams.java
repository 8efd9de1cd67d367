package org.jdlpack.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/** The libcudart functions for streams and the events that order work between them; see {@link Cudart}. */
final class CudartStreams {

    private static final MethodHandle STREAM_CREATE = Cudart.bind("cudaStreamCreate", ADDRESS);
    private static final MethodHandle STREAM_DESTROY = Cudart.bind("cudaStreamDestroy", ADDRESS);
    private static final MethodHandle STREAM_SYNCHRONIZE = Cudart.bind("cudaStreamSynchronize", ADDRESS);
    private static final MethodHandle STREAM_WAIT_EVENT = Cudart.bind("cudaStreamWaitEvent", ADDRESS, ADDRESS, JAVA_INT);
    private static final MethodHandle EVENT_CREATE_WITH_FLAGS = Cudart.bind("cudaEventCreateWithFlags", ADDRESS, JAVA_INT);
    private static final MethodHandle EVENT_RECORD = Cudart.bind("cudaEventRecord", ADDRESS, ADDRESS);
    private static final MethodHandle EVENT_DESTROY = Cudart.bind("cudaEventDestroy", ADDRESS);

    private CudartStreams() {
    }

    /** {@code cudaStreamCreate} on the current device. */
    static long streamCreate() {
        return Cudart.out(ADDRESS, "cudaStreamCreate", stream -> (int) STREAM_CREATE.invokeExact(stream));
    }

    /** {@code cudaStreamDestroy}. */
    static void streamDestroy(MemorySegment stream) {
        Cudart.call("cudaStreamDestroy", () -> (int) STREAM_DESTROY.invokeExact(stream));
    }

    /** {@code cudaStreamSynchronize}. */
    static void streamSynchronize(MemorySegment stream) {
        Cudart.call("cudaStreamSynchronize", () -> (int) STREAM_SYNCHRONIZE.invokeExact(stream));
    }

    /** {@code cudaStreamWaitEvent} with no flags. */
    static void streamWaitEvent(MemorySegment stream, MemorySegment event) {
        Cudart.call("cudaStreamWaitEvent", () -> (int) STREAM_WAIT_EVENT.invokeExact(stream, event, 0));
    }

    /** {@code cudaEventCreateWithFlags}. */
    static MemorySegment eventCreateWithFlags(int flags) {
        return MemorySegment.ofAddress(Cudart.out(ADDRESS, "cudaEventCreateWithFlags",
                event -> (int) EVENT_CREATE_WITH_FLAGS.invokeExact(event, flags)));
    }

    /** {@code cudaEventRecord}. */
    static void eventRecord(MemorySegment event, MemorySegment stream) {
        Cudart.call("cudaEventRecord", () -> (int) EVENT_RECORD.invokeExact(event, stream));
    }

    /** {@code cudaEventDestroy}. */
    static void eventDestroy(MemorySegment event) {
        Cudart.call("cudaEventDestroy", () -> (int) EVENT_DESTROY.invokeExact(event));
    }
}
