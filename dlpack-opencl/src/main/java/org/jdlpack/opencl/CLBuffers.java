package org.jdlpack.opencl;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * The libOpenCL functions for contexts, command queues, buffers and the blocking transfers between
 * buffers and host memory; see {@link CL} for the call layer.
 */
final class CLBuffers {

    private static final MethodHandle CREATE_CONTEXT = CL.bind("clCreateContext", ADDRESS,
            ADDRESS, JAVA_INT, ADDRESS, ADDRESS, ADDRESS, ADDRESS);
    private static final MethodHandle RELEASE_CONTEXT = CL.bind("clReleaseContext", JAVA_INT, ADDRESS);
    private static final MethodHandle CREATE_COMMAND_QUEUE = CL.bind("clCreateCommandQueue", ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS);
    private static final MethodHandle RELEASE_COMMAND_QUEUE = CL.bind("clReleaseCommandQueue", JAVA_INT, ADDRESS);
    private static final MethodHandle FINISH = CL.bind("clFinish", JAVA_INT, ADDRESS);
    private static final MethodHandle CREATE_BUFFER = CL.bind("clCreateBuffer", ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG, ADDRESS, ADDRESS);
    private static final MethodHandle RETAIN_MEM_OBJECT = CL.bind("clRetainMemObject", JAVA_INT, ADDRESS);
    private static final MethodHandle RELEASE_MEM_OBJECT = CL.bind("clReleaseMemObject", JAVA_INT, ADDRESS);
    private static final MethodHandle GET_MEM_OBJECT_INFO = CL.bind("clGetMemObjectInfo", JAVA_INT,
            ADDRESS, JAVA_INT, JAVA_LONG, ADDRESS, ADDRESS);
    private static final MethodHandle ENQUEUE_READ_BUFFER = CL.bind("clEnqueueReadBuffer", JAVA_INT,
            ADDRESS, ADDRESS, JAVA_INT, JAVA_LONG, JAVA_LONG, ADDRESS, JAVA_INT, ADDRESS, ADDRESS);
    private static final MethodHandle ENQUEUE_WRITE_BUFFER = CL.bind("clEnqueueWriteBuffer", JAVA_INT,
            ADDRESS, ADDRESS, JAVA_INT, JAVA_LONG, JAVA_LONG, ADDRESS, JAVA_INT, ADDRESS, ADDRESS);
    private static final MethodHandle ENQUEUE_READ_BUFFER_RECT = CL.bind("clEnqueueReadBufferRect", JAVA_INT,
            ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS,
            JAVA_INT, ADDRESS, ADDRESS);
    private static final MethodHandle ENQUEUE_WRITE_BUFFER_RECT = CL.bind("clEnqueueWriteBufferRect", JAVA_INT,
            ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS,
            JAVA_INT, ADDRESS, ADDRESS);

    private CLBuffers() {
    }

    /** {@code clCreateContext} on one device, with default properties and no callback. */
    static MemorySegment createContext(MemorySegment device) {
        return CL.create("clCreateContext", (arena, error) -> (MemorySegment) CREATE_CONTEXT.invokeExact(MemorySegment.NULL, 1,
                arena.allocateFrom(ADDRESS, device), MemorySegment.NULL, MemorySegment.NULL, error));
    }

    /** {@code clReleaseContext}. */
    static void releaseContext(MemorySegment context) {
        CL.call("clReleaseContext", arena -> (int) RELEASE_CONTEXT.invokeExact(context));
    }

    /** {@code clCreateCommandQueue}: an in-order queue without profiling. */
    static MemorySegment createCommandQueue(MemorySegment context, MemorySegment device) {
        return CL.create("clCreateCommandQueue", (arena, error) -> (MemorySegment) CREATE_COMMAND_QUEUE.invokeExact(context, device, 0L,
                error));
    }

    /** {@code clReleaseCommandQueue}. */
    static void releaseCommandQueue(MemorySegment queue) {
        CL.call("clReleaseCommandQueue", arena -> (int) RELEASE_COMMAND_QUEUE.invokeExact(queue));
    }

    /** {@code clFinish}. */
    static void finish(MemorySegment queue) {
        CL.call("clFinish", arena -> (int) FINISH.invokeExact(queue));
    }

    /** {@code clCreateBuffer} without a host pointer. */
    static MemorySegment createBuffer(MemorySegment context, long flags, long bytes) {
        return CL.create("clCreateBuffer", (arena, error) -> (MemorySegment) CREATE_BUFFER.invokeExact(context, flags, bytes,
                MemorySegment.NULL, error));
    }

    /** {@code clRetainMemObject}. */
    static void retainMemObject(MemorySegment mem) {
        CL.call("clRetainMemObject", arena -> (int) RETAIN_MEM_OBJECT.invokeExact(mem));
    }

    /** {@code clReleaseMemObject}. */
    static void releaseMemObject(MemorySegment mem) {
        CL.call("clReleaseMemObject", arena -> (int) RELEASE_MEM_OBJECT.invokeExact(mem));
    }

    /** {@code clGetMemObjectInfo} for a {@code cl_uint} ({@code width} JAVA_INT) or a {@code size_t}/pointer (JAVA_LONG). */
    static long getMemObjectInfo(MemorySegment mem, int parameter, ValueLayout width) {
        return CL.out(width, "clGetMemObjectInfo",
                value -> (int) GET_MEM_OBJECT_INFO.invokeExact(mem, parameter, value.byteSize(), value, MemorySegment.NULL));
    }

    /** Blocking {@code clEnqueueReadBuffer} of {@code host.byteSize()} bytes at {@code offset}. */
    static void enqueueReadBuffer(MemorySegment queue, MemorySegment mem, long offset, MemorySegment host) {
        transfer(ENQUEUE_READ_BUFFER, queue, mem, offset, host, "clEnqueueReadBuffer");
    }

    /** Blocking {@code clEnqueueWriteBuffer} of {@code host.byteSize()} bytes at {@code offset}. */
    static void enqueueWriteBuffer(MemorySegment queue, MemorySegment mem, long offset, MemorySegment host) {
        transfer(ENQUEUE_WRITE_BUFFER, queue, mem, offset, host, "clEnqueueWriteBuffer");
    }

    /** A blocking {@code clEnqueue{Read,Write}Buffer} without events. */
    private static void transfer(MethodHandle function, MemorySegment queue, MemorySegment mem, long offset, MemorySegment host,
                                 String call) {
        CL.call(call, arena -> (int) function.invokeExact(queue, mem, CL.TRUE, offset, host.byteSize(), host, 0, MemorySegment.NULL,
                MemorySegment.NULL));
    }

    /** Blocking {@code clEnqueueReadBufferRect}: {@code rows} rows of {@code rowBytes}, buffer origin {@code offset}. */
    static void enqueueReadBufferRect(MemorySegment queue, MemorySegment mem, long offset, long bufferPitch, MemorySegment host,
                                      long hostPitch, long rowBytes, long rows) {
        rectangle(ENQUEUE_READ_BUFFER_RECT, queue, mem, offset, bufferPitch, host, hostPitch, rowBytes, rows,
                "clEnqueueReadBufferRect");
    }

    /** Blocking {@code clEnqueueWriteBufferRect}; see {@link #enqueueReadBufferRect}. */
    static void enqueueWriteBufferRect(MemorySegment queue, MemorySegment mem, long offset, long bufferPitch, MemorySegment host,
                                       long hostPitch, long rowBytes, long rows) {
        rectangle(ENQUEUE_WRITE_BUFFER_RECT, queue, mem, offset, bufferPitch, host, hostPitch, rowBytes, rows,
                "clEnqueueWriteBufferRect");
    }

    /** A blocking 2-D {@code clEnqueue{Read,Write}BufferRect} without events; the host origin is 0. */
    private static void rectangle(MethodHandle function, MemorySegment queue, MemorySegment mem, long offset, long bufferPitch,
                                  MemorySegment host, long hostPitch, long rowBytes, long rows, String call) {
        CL.call(call, arena -> (int) function.invokeExact(queue, mem, CL.TRUE, arena.allocateFrom(JAVA_LONG, offset, 0, 0),
                arena.allocateFrom(JAVA_LONG, 0, 0, 0), arena.allocateFrom(JAVA_LONG, rowBytes, rows, 1), bufferPitch, 0L,
                hostPitch, 0L, host, 0, MemorySegment.NULL, MemorySegment.NULL));
    }
}
