package org.jdlpack.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/** The libcudart functions that allocate, free, copy and classify memory; see {@link Cudart}. */
final class CudartMemory {

    private static final MethodHandle MALLOC = Cudart.bind("cudaMalloc", ADDRESS, JAVA_LONG);
    private static final MethodHandle FREE = Cudart.bind("cudaFree", ADDRESS);
    private static final MethodHandle MALLOC_HOST = Cudart.bind("cudaMallocHost", ADDRESS, JAVA_LONG);
    private static final MethodHandle FREE_HOST = Cudart.bind("cudaFreeHost", ADDRESS);
    private static final MethodHandle MALLOC_MANAGED = Cudart.bind("cudaMallocManaged", ADDRESS, JAVA_LONG, JAVA_INT);
    private static final MethodHandle MEMCPY = Cudart.bind("cudaMemcpy", ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT);
    private static final MethodHandle MEMCPY_ASYNC = Cudart.bind("cudaMemcpyAsync", ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT, ADDRESS);
    private static final MethodHandle MEMCPY_2D_ASYNC = Cudart.bind("cudaMemcpy2DAsync",
            ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, ADDRESS);
    private static final MethodHandle POINTER_GET_ATTRIBUTES = Cudart.bind("cudaPointerGetAttributes", ADDRESS, ADDRESS);

    private CudartMemory() {
    }

    /** {@code cudaMalloc} on the current device. */
    static long malloc(long bytes) {
        return Cudart.out(ADDRESS, "cudaMalloc(" + bytes + ")", pointer -> (int) MALLOC.invokeExact(pointer, bytes));
    }

    /** {@code cudaMallocHost}: page-locked host memory. */
    static long mallocHost(long bytes) {
        return Cudart.out(ADDRESS, "cudaMallocHost(" + bytes + ")", pointer -> (int) MALLOC_HOST.invokeExact(pointer, bytes));
    }

    /** {@code cudaMallocManaged} with {@code cudaMemAttachGlobal}. */
    static long mallocManaged(long bytes) {
        return Cudart.out(ADDRESS, "cudaMallocManaged(" + bytes + ")",
                pointer -> (int) MALLOC_MANAGED.invokeExact(pointer, bytes, Cudart.MEM_ATTACH_GLOBAL));
    }

    /** {@code cudaFree}: device or managed memory. */
    static void free(long pointer) {
        Cudart.call("cudaFree", () -> (int) FREE.invokeExact(MemorySegment.ofAddress(pointer)));
    }

    /** {@code cudaFreeHost}: memory from {@link #mallocHost}. */
    static void freeHost(long pointer) {
        Cudart.call("cudaFreeHost", () -> (int) FREE_HOST.invokeExact(MemorySegment.ofAddress(pointer)));
    }

    /** Blocking {@code cudaMemcpy}, the direction inferred from the pointers ({@code cudaMemcpyDefault}). */
    static void memcpy(MemorySegment destination, MemorySegment source, long bytes) {
        Cudart.call("cudaMemcpy", () -> (int) MEMCPY.invokeExact(destination, source, bytes, Cudart.MEMCPY_DEFAULT));
    }

    /** {@code cudaMemcpyAsync} on {@code stream}, the direction inferred from the pointers. */
    static void memcpyAsync(MemorySegment destination, MemorySegment source, long bytes, MemorySegment stream) {
        Cudart.call("cudaMemcpyAsync", () -> (int) MEMCPY_ASYNC.invokeExact(destination, source, bytes, Cudart.MEMCPY_DEFAULT, stream));
    }

    /** {@code cudaMemcpy2DAsync} on {@code stream}, the direction inferred from the pointers. */
    static void memcpy2DAsync(MemorySegment destination, long destinationPitch, MemorySegment source, long sourcePitch,
                              long widthBytes, long rows, MemorySegment stream) {
        Cudart.call("cudaMemcpy2DAsync", () -> (int) MEMCPY_2D_ASYNC.invokeExact(destination, destinationPitch, source, sourcePitch,
                widthBytes, rows, Cudart.MEMCPY_DEFAULT, stream));
    }

    /** {@code cudaPointerGetAttributes} into {@code attributes}, at least {@link Cudart#POINTER_ATTRIBUTES_ROOM} bytes. */
    static void pointerGetAttributes(MemorySegment attributes, MemorySegment pointer) {
        Cudart.call("cudaPointerGetAttributes(0x" + Long.toHexString(pointer.address()) + ")",
                () -> (int) POINTER_GET_ATTRIBUTES.invokeExact(attributes, pointer));
    }
}
