package org.jdlpack.abi;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;

/**
 * {@code DLManagedTensorVersioned} (80 bytes): {@code DLPackVersion version; void* manager_ctx;
 * void (*deleter)(struct DLManagedTensorVersioned*); uint64_t flags; DLTensor dl_tensor;}.
 *
 * <p>{@code version}, {@code manager_ctx} and {@code deleter} keep their offsets in every major
 * version, which is what lets a consumer release a tensor whose major version it does not know.
 */
final class DLManagedTensorVersionedLayout {

    /** The struct layout. */
    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            DLPackVersionLayout.LAYOUT.withName("version"),
            ADDRESS.withName("manager_ctx"),
            ADDRESS.withName("deleter"),
            JAVA_LONG.withName("flags"),
            DLTensorLayout.LAYOUT.withName("dl_tensor"))
            .withName("DLManagedTensorVersioned");

    /** Offset of {@code version}. */
    public static final long VERSION = 0;
    /** Offset of {@code manager_ctx}. */
    public static final long MANAGER_CTX = 8;
    /** Offset of {@code deleter}. */
    public static final long DELETER = 16;
    /** Offset of {@code flags}, an unsigned 64-bit bit set. */
    public static final long FLAGS = 24;
    /** Offset of {@code dl_tensor}. */
    public static final long DL_TENSOR = 32;
    /** {@code sizeof(DLManagedTensorVersioned)}. */
    public static final long SIZE = 80;

    private DLManagedTensorVersionedLayout() {
    }
}
