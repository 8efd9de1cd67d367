package org.jdlpack.abi;

import static java.lang.foreign.ValueLayout.ADDRESS;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;


/**
 * The DLPack 1.3 C exchange API tables. Internal: jdlpack neither offers nor calls the exchange
 * API yet, so only the ABI conformance test reads these offsets.
 *
 * <p>{@code DLPackExchangeAPIHeader} (16 bytes): {@code DLPackVersion version;
 * DLPackExchangeAPIHeader* prev_api;}. {@code DLPackExchangeAPI} (56 bytes) starts with that header,
 * followed by five function pointers: {@code managed_tensor_allocator},
 * {@code managed_tensor_from_py_object_no_sync}, {@code managed_tensor_to_py_object_no_sync},
 * {@code dltensor_from_py_object_no_sync} and {@code current_work_stream}.
 */
final class DLPackExchangeAPILayout {

    /** {@code DLPackExchangeAPIHeader}. */
    public static final StructLayout HEADER_LAYOUT = MemoryLayout.structLayout(
            DLPackVersionLayout.LAYOUT.withName("version"),
            ADDRESS.withName("prev_api"))
            .withName("DLPackExchangeAPIHeader");

    /** Offset of {@code DLPackExchangeAPIHeader.version}. */
    public static final long HEADER_VERSION = 0;
    /** Offset of {@code DLPackExchangeAPIHeader.prev_api}. */
    public static final long HEADER_PREV_API = 8;
    /** {@code sizeof(DLPackExchangeAPIHeader)}. */
    public static final long HEADER_SIZE = 16;

    /** {@code DLPackExchangeAPI}. */
    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            HEADER_LAYOUT.withName("header"),
            ADDRESS.withName("managed_tensor_allocator"),
            ADDRESS.withName("managed_tensor_from_py_object_no_sync"),
            ADDRESS.withName("managed_tensor_to_py_object_no_sync"),
            ADDRESS.withName("dltensor_from_py_object_no_sync"),
            ADDRESS.withName("current_work_stream"))
            .withName("DLPackExchangeAPI");

    /** Offset of {@code header}. */
    public static final long HEADER = 0;
    /** Offset of {@code managed_tensor_allocator}. */
    public static final long MANAGED_TENSOR_ALLOCATOR = 16;
    /** Offset of {@code managed_tensor_from_py_object_no_sync}. */
    public static final long MANAGED_TENSOR_FROM_PY_OBJECT_NO_SYNC = 24;
    /** Offset of {@code managed_tensor_to_py_object_no_sync}. */
    public static final long MANAGED_TENSOR_TO_PY_OBJECT_NO_SYNC = 32;
    /** Offset of {@code dltensor_from_py_object_no_sync}. */
    public static final long DLTENSOR_FROM_PY_OBJECT_NO_SYNC = 40;
    /** Offset of {@code current_work_stream}. */
    public static final long CURRENT_WORK_STREAM = 48;
    /** {@code sizeof(DLPackExchangeAPI)}. */
    public static final long SIZE = 56;

    private DLPackExchangeAPILayout() {
    }
}
