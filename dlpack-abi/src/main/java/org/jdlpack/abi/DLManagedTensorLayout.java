package org.jdlpack.abi;

import static java.lang.foreign.ValueLayout.ADDRESS;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;

/**
 * The legacy {@code DLManagedTensor} (64 bytes): {@code DLTensor dl_tensor; void* manager_ctx;
 * void (*deleter)(struct DLManagedTensor*);}. It has no version and no flags.
 */
final class DLManagedTensorLayout {

    /** The struct layout. */
    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            DLTensorLayout.LAYOUT.withName("dl_tensor"),
            ADDRESS.withName("manager_ctx"),
            ADDRESS.withName("deleter"))
            .withName("DLManagedTensor");

    /** Offset of {@code dl_tensor}. */
    public static final long DL_TENSOR = 0;
    /** Offset of {@code manager_ctx}. */
    public static final long MANAGER_CTX = 48;
    /** Offset of {@code deleter}. */
    public static final long DELETER = 56;
    /** {@code sizeof(DLManagedTensor)}. */
    public static final long SIZE = 64;

    private DLManagedTensorLayout() {
    }
}
