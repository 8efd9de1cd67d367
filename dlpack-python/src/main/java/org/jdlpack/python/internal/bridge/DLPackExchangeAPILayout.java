package org.jdlpack.python.internal.bridge;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;

/**
 * The DLPack 1.3 C exchange API tables, as dlpack-python offers them on the Java tensor type
 * ({@link ExchangeApi}) and reads them on other types ({@link ExchangeImports}); checked field by
 * field against the C compiler by {@code ExchangeApiLayoutTest}.
 *
 * <p>{@code DLPackExchangeAPIHeader} (16 bytes): {@code DLPackVersion version;
 * DLPackExchangeAPIHeader* prev_api;}. {@code DLPackExchangeAPI} (56 bytes) starts with that header,
 * followed by five function pointers: {@code managed_tensor_allocator},
 * {@code managed_tensor_from_py_object_no_sync}, {@code managed_tensor_to_py_object_no_sync},
 * {@code dltensor_from_py_object_no_sync} and {@code current_work_stream}.
 */
public final class DLPackExchangeAPILayout {

    /** The capsule's name, and the attribute on the type that holds it. */
    public static final String CAPSULE_NAME = "dlpack_exchange_api";
    public static final String ATTRIBUTE = "__dlpack_c_exchange_api__";

    /** {@code DLPackVersion}: major, minor. */
    public static final StructLayout VERSION_LAYOUT = MemoryLayout.structLayout(JAVA_INT.withName("major"), JAVA_INT.withName("minor"))
            .withName("DLPackVersion");

    /** {@code DLPackExchangeAPIHeader}. */
    public static final StructLayout HEADER_LAYOUT = MemoryLayout.structLayout(
            VERSION_LAYOUT.withName("version"),
            ADDRESS.withName("prev_api"))
            .withName("DLPackExchangeAPIHeader");

    /** Offset of {@code DLPackExchangeAPIHeader.version}. */
    public static final long HEADER_VERSION = 0;
    /** Offset of {@code DLPackExchangeAPIHeader.version.major}; the minor follows it. */
    public static final long HEADER_VERSION_MAJOR = 0;
    public static final long HEADER_VERSION_MINOR = 4;
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
