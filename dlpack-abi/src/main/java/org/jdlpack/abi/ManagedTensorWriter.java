package org.jdlpack.abi;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.MemorySegment;


/**
 * Writes an export header: the managed-tensor struct followed by its shape and strides, in one
 * malloc'ed block that the deleter frees with one free(), from any thread.
 */
final class ManagedTensorWriter {

    private ManagedTensorWriter() {
    }

    static long headerBytes(ManagedTensorKind kind, int ndim) {
        return kind.structSize() + 16L * ndim;
    }

    /** Allocates and fills the header; the caller owns the returned address. */
    static long write(ManagedTensorKind kind, TensorSpec spec, ExportOptions options, long managerCtx) {
        TensorLayout layout = spec.layout();
        int ndim = layout.ndim();
        long size = headerBytes(kind, ndim);
        long address = NativeMemory.malloc(size);
        MemorySegment header = NativeMemory.at(address, size);
        long shapeAt = kind.structSize();
        long stridesAt = shapeAt + 8L * ndim;

        if (kind == ManagedTensorKind.VERSIONED) {
            header.set(JAVA_INT, DLManagedTensorVersionedLayout.VERSION + DLPackVersionLayout.MAJOR, (int) DLPackVersion.CURRENT.major());
            header.set(JAVA_INT, DLManagedTensorVersionedLayout.VERSION + DLPackVersionLayout.MINOR, (int) DLPackVersion.CURRENT.minor());
            long flags = options.readOnly() ? layout.flags() | DLTensorFlag.READ_ONLY.mask() : layout.flags();
            header.set(JAVA_LONG, DLManagedTensorVersionedLayout.FLAGS, flags);
        }
        header.set(JAVA_LONG, kind.managerCtxOffset(), managerCtx);
        header.set(JAVA_LONG, kind.deleterOffset(), ExportDeleterUpcalls.stubAddress(kind));

        // Fold byte_offset into data where data is a pointer: consumers that ignore byte_offset
        // (PyTorch up to 2.9, cuVS-java, cuda.core) then read the right elements.
        long data = spec.data().address();
        long byteOffset = layout.byteOffset();
        if (!options.verbatimByteOffset() && DLDeviceType.dataIsPointer(spec.device().deviceType())) {
            data += byteOffset;
            byteOffset = 0;
        }
        long t = kind.dlTensorOffset();
        header.set(JAVA_LONG, t + DLTensorLayout.DATA, data);
        header.set(JAVA_INT, t + DLTensorLayout.DEVICE + DLDeviceLayout.DEVICE_TYPE, spec.device().deviceType());
        header.set(JAVA_INT, t + DLTensorLayout.DEVICE + DLDeviceLayout.DEVICE_ID, spec.device().deviceId());
        header.set(JAVA_INT, t + DLTensorLayout.NDIM, ndim);
        header.set(JAVA_BYTE, t + DLTensorLayout.DTYPE + DLDataTypeLayout.CODE, (byte) layout.dtype().code().code());
        header.set(JAVA_BYTE, t + DLTensorLayout.DTYPE + DLDataTypeLayout.BITS, (byte) layout.dtype().bits());
        header.set(JAVA_SHORT, t + DLTensorLayout.DTYPE + DLDataTypeLayout.LANES, (short) layout.dtype().lanes());
        // Always non-NULL, even for ndim 0: consumers that dereference without checking ndim stay safe.
        header.set(JAVA_LONG, t + DLTensorLayout.SHAPE, address + shapeAt);
        header.set(JAVA_LONG, t + DLTensorLayout.STRIDES, address + stridesAt);
        header.set(JAVA_LONG, t + DLTensorLayout.BYTE_OFFSET, byteOffset);

        MemorySegment.copy(layout.shapeArray(), 0, header, JAVA_LONG, shapeAt, ndim);
        MemorySegment.copy(layout.stridesArray(), 0, header, JAVA_LONG, stridesAt, ndim);
        return address;
    }
}
