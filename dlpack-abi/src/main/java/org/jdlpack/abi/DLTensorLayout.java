package org.jdlpack.abi;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;

/**
 * {@code DLTensor} (48 bytes): {@code void* data; DLDevice device; int32_t ndim; DLDataType dtype;
 * int64_t* shape; int64_t* strides; uint64_t byte_offset;}.
 */
final class DLTensorLayout {

    /** The struct layout. */
    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            ADDRESS.withName("data"),
            DLDeviceLayout.LAYOUT.withName("device"),
            JAVA_INT.withName("ndim"),
            DLDataTypeLayout.LAYOUT.withName("dtype"),
            ADDRESS.withName("shape"),
            ADDRESS.withName("strides"),
            JAVA_LONG.withName("byte_offset"))
            .withName("DLTensor");

    /** Offset of {@code data}: a host or device address, or a {@code cl_mem} on OpenCL. */
    public static final long DATA = 0;
    /** Offset of {@code device}, a {@code DLDevice}. */
    public static final long DEVICE = 8;
    /** Offset of {@code ndim}. */
    public static final long NDIM = 16;
    /** Offset of {@code dtype}, a {@code DLDataType}. */
    public static final long DTYPE = 20;
    /** Offset of {@code shape}, a pointer to {@code ndim} 64-bit extents. */
    public static final long SHAPE = 24;
    /** Offset of {@code strides}, a pointer to {@code ndim} 64-bit strides in elements, or NULL. */
    public static final long STRIDES = 32;
    /** Offset of {@code byte_offset}, an unsigned 64-bit number. */
    public static final long BYTE_OFFSET = 40;
    /** {@code sizeof(DLTensor)}. */
    public static final long SIZE = 48;

    private DLTensorLayout() {
    }
}
