package org.jdlpack.abi;


/**
 * Which of the two DLPack managed-tensor structs a pointer refers to.
 *
 * <p>The two structs put the same information at different offsets, and only the versioned one
 * carries a version and flags. A pointer alone does not say which struct it points to: the
 * protocol that delivered it does (the Python capsule names {@code dltensor} and
 * {@code dltensor_versioned}, a C function's signature).
 *
 * @since 0.1
 */
public enum ManagedTensorKind {
    /** {@code DLManagedTensorVersioned}, DLPack 1.0 and later. */
    VERSIONED(DLManagedTensorVersionedLayout.SIZE, DLManagedTensorVersionedLayout.DL_TENSOR,
            DLManagedTensorVersionedLayout.MANAGER_CTX, DLManagedTensorVersionedLayout.DELETER),
    /** The legacy {@code DLManagedTensor}: no version, no flags, always writable. */
    LEGACY(DLManagedTensorLayout.SIZE, DLManagedTensorLayout.DL_TENSOR,
            DLManagedTensorLayout.MANAGER_CTX, DLManagedTensorLayout.DELETER);

    private final long structSize;
    private final long dlTensorOffset;
    private final long managerCtxOffset;
    private final long deleterOffset;

    ManagedTensorKind(long structSize, long dlTensorOffset, long managerCtxOffset, long deleterOffset) {
        this.structSize = structSize;
        this.dlTensorOffset = dlTensorOffset;
        this.managerCtxOffset = managerCtxOffset;
        this.deleterOffset = deleterOffset;
    }

    /** {@return {@code sizeof} the struct, in bytes} */
    public long structSize() {
        return structSize;
    }

    /** {@return the offset of {@code dl_tensor}, the embedded {@code DLTensor}} */
    public long dlTensorOffset() {
        return dlTensorOffset;
    }

    /** {@return the offset of {@code manager_ctx}} */
    public long managerCtxOffset() {
        return managerCtxOffset;
    }

    /** {@return the offset of the {@code deleter} function pointer} */
    public long deleterOffset() {
        return deleterOffset;
    }

    /** {@return the C name of the struct, for messages: {@code DLManagedTensorVersioned} or {@code DLManagedTensor}} */
    public String structName() {
        return this == VERSIONED ? "DLManagedTensorVersioned" : "DLManagedTensor";
    }
}
