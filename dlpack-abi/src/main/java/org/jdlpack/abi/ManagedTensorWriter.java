package org.jdlpack.abi;

/**
 * Writes an export header: the managed-tensor struct followed by its shape and strides, in one
 * block of native memory that the export registry's slot keeps (see {@link ExportRegistry}).
 */
final class ManagedTensorWriter {

    private ManagedTensorWriter() {
    }

    static long headerBytes(ManagedTensorKind kind, int ndim) {
        return kind.structSize() + 16L * ndim;
    }

    /** Fills the header at {@code address}, which has room for {@link #headerBytes} of the spec's dimensions. */
    static void write(ManagedTensorKind kind, TensorSpec spec, ExportOptions options, long managerCtx, long address) {
        TensorLayout layout = spec.layout();
        int ndim = layout.ndim();
        long shapeAt = kind.structSize();
        long stridesAt = shapeAt + 8L * ndim;

        if (kind == ManagedTensorKind.VERSIONED) {
            NativeMemory.writeInt(address + DLManagedTensorVersionedLayout.VERSION + DLPackVersionLayout.MAJOR, (int) DLPackVersion.CURRENT.major());
            NativeMemory.writeInt(address + DLManagedTensorVersionedLayout.VERSION + DLPackVersionLayout.MINOR, (int) DLPackVersion.CURRENT.minor());
            long flags = options.readOnly() ? layout.flags() | DLTensorFlag.READ_ONLY.mask() : layout.flags();
            NativeMemory.writeLong(address + DLManagedTensorVersionedLayout.FLAGS, flags);
        }
        NativeMemory.writeLong(address + kind.managerCtxOffset(), managerCtx);
        NativeMemory.writeLong(address + kind.deleterOffset(), ExportDeleterUpcalls.stubAddress(kind));

        // Fold byte_offset into data where data is a pointer: consumers that ignore byte_offset
        // (PyTorch up to 2.9, cuVS-java, cuda.core) then read the right elements.
        long data = spec.data().address();
        long byteOffset = layout.byteOffset();
        if (!options.verbatimByteOffset() && DLDeviceType.dataIsPointer(spec.device().deviceType())) {
            data += byteOffset;
            byteOffset = 0;
        }
        long t = kind.dlTensorOffset();
        NativeMemory.writeLong(address + t + DLTensorLayout.DATA, data);
        NativeMemory.writeInt(address + t + DLTensorLayout.DEVICE + DLDeviceLayout.DEVICE_TYPE, spec.device().deviceType());
        NativeMemory.writeInt(address + t + DLTensorLayout.DEVICE + DLDeviceLayout.DEVICE_ID, spec.device().deviceId());
        NativeMemory.writeInt(address + t + DLTensorLayout.NDIM, ndim);
        NativeMemory.writeByte(address + t + DLTensorLayout.DTYPE + DLDataTypeLayout.CODE, (byte) layout.dtype().code().code());
        NativeMemory.writeByte(address + t + DLTensorLayout.DTYPE + DLDataTypeLayout.BITS, (byte) layout.dtype().bits());
        NativeMemory.writeShort(address + t + DLTensorLayout.DTYPE + DLDataTypeLayout.LANES, (short) layout.dtype().lanes());
        // Always non-NULL, even for ndim 0: consumers that dereference without checking ndim stay safe.
        NativeMemory.writeLong(address + t + DLTensorLayout.SHAPE, address + shapeAt);
        NativeMemory.writeLong(address + t + DLTensorLayout.STRIDES, address + stridesAt);
        NativeMemory.writeLong(address + t + DLTensorLayout.BYTE_OFFSET, byteOffset);

        // One store per value: a MemorySegment.copy from the arrays calls the JDK's
        // copy stub twice, 3 to 5% of an export round trip's samples for a 2-d tensor.
        long[] shape = layout.shapeArray();
        long[] strides = layout.stridesArray();
        for (int d = 0; d < ndim; d++) {
            NativeMemory.writeLong(address + shapeAt + 8L * d, shape[d]);
            NativeMemory.writeLong(address + stridesAt + 8L * d, strides[d]);
        }
    }
}
