package org.jdlpack.abi;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Objects;

/**
 * A description of Java-owned memory to export as a DLPack tensor: the data, its device, element
 * type, shape, strides (in elements), {@code byte_offset} and flags.
 *
 * <p>A spec is validated when it is made, so a spec that exists can be exported: the shape and
 * strides are within {@link TensorGeometry#MAX_NDIM}, no size overflows, and on host-accessible
 * devices every byte the tensor can reach lies inside {@code data}. For other devices (CUDA,
 * OpenCL) {@code data} only carries the device address or handle; the bounds are checked against
 * {@link Builder#capacity(long)} when given.
 *
 * <p>Only native segments can be exported: a heap segment's memory can move during garbage
 * collection while a native consumer holds its address. A read-only segment is exported with
 * {@link DLTensorFlag#READ_ONLY} set.
 *
 * <p>Instances are immutable and safe to share between threads.
 */
public final class TensorSpec {

    private final MemorySegment data;
    private final DLDevice device;
    private final DLDataType dtype;
    private final long[] shape;
    private final long[] strides;
    private final long byteOffset;
    private final long flags;
    private final TensorExtent extent;

    private TensorSpec(MemorySegment data, long capacity, DLDevice device, DLDataType dtype, long[] shape, long[] strides,
                       long byteOffset, long flags) {
        if (!data.isNative()) {
            throw new IllegalArgumentException("data is a heap segment; only native memory can be exported, "
                    + "because the garbage collector may move heap memory while native code reads it");
        }
        if (byteOffset < 0) {
            throw new IllegalArgumentException("byte_offset is " + byteOffset + ", must not be negative");
        }
        if (data.isReadOnly()) {
            flags |= DLTensorFlag.READ_ONLY.mask();
        }
        try {
            TensorGeometry.checkShape(shape, strides);
            this.extent = TensorGeometry.extent(shape, strides, dtype, DLTensorFlag.IS_SUBBYTE_TYPE_PADDED.isSet(flags));
        } catch (InvalidTensorException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
        long bound = device.isHostAccessible() ? data.byteSize() : capacity;
        if (bound >= 0 && extent.byteSize() > 0) {
            long first = byteOffset + extent.startByte();
            if (first < 0 || byteOffset > bound - extent.endByte()) {
                throw new IllegalArgumentException("the tensor reaches bytes [" + first + ", " + (byteOffset + extent.endByte())
                        + ") of data, which has " + bound + " bytes");
            }
        }
        this.data = data;
        this.device = device;
        this.dtype = dtype;
        this.shape = shape;
        this.strides = strides;
        this.byteOffset = byteOffset;
        this.flags = flags;
    }

    /**
     * A compact row-major CPU tensor over {@code data}, starting at its first byte.
     *
     * @param data  native memory holding the elements
     * @param dtype the element type
     * @param shape the extents
     * @return the spec
     * @throws IllegalArgumentException if the data is on the heap, a dimension is negative, or the
     *                                  elements do not fit in {@code data}
     */
    public static TensorSpec of(MemorySegment data, DLDataType dtype, long... shape) {
        return builder(data, dtype, shape).build();
    }

    /**
     * Starts a spec with the defaults of {@link #of}: CPU device, compact row-major strides,
     * {@code byte_offset} 0, no flags. Nothing is validated until {@link Builder#build()}, so the
     * fields may be set in any order.
     *
     * @param data  native memory holding the elements (for a device the CPU cannot address, its
     *              address is the device pointer or handle)
     * @param dtype the element type
     * @param shape the extents
     * @return the builder
     */
    public static Builder builder(MemorySegment data, DLDataType dtype, long... shape) {
        return new Builder(data, dtype, shape.clone());
    }

    /**
     * Collects the fields of a {@link TensorSpec}. Not thread-safe; use it on one thread.
     */
    public static final class Builder {

        private final MemorySegment data;
        private final DLDataType dtype;
        private final long[] shape;
        private long[] strides;
        private DLDevice device = DLDevice.CPU;
        private long byteOffset;
        private long flags;
        private long capacity = -1;

        private Builder(MemorySegment data, DLDataType dtype, long[] shape) {
            this.data = Objects.requireNonNull(data, "data");
            this.dtype = Objects.requireNonNull(dtype, "dtype");
            this.shape = shape;
        }

        /**
         * Sets the strides, in elements, one per dimension, any sign; by default compact row-major.
         *
         * @param newStrides the strides
         * @return this builder
         */
        public Builder strides(long... newStrides) {
            this.strides = newStrides.clone();
            return this;
        }

        /**
         * Sets the offset of element 0 from the start of {@code data}, in bytes; it need not be
         * aligned. Where {@code data} is a pointer (CPU, CUDA, ROCm, ...), exports write it folded
         * into {@code data}, with {@code byte_offset} 0, unless
         * {@link ExportOptions#withVerbatimByteOffset(boolean)} says otherwise.
         *
         * @param newByteOffset the offset, not negative
         * @return this builder
         */
        public Builder byteOffset(long newByteOffset) {
            this.byteOffset = newByteOffset;
            return this;
        }

        /**
         * Sets the device. For a device the CPU cannot address, {@code data}'s address is the
         * device pointer or handle and its size is not checked.
         *
         * @param newDevice the device
         * @return this builder
         */
        public Builder device(DLDevice newDevice) {
            this.device = Objects.requireNonNull(newDevice, "device");
            return this;
        }

        /**
         * Sets the size of the device buffer {@code data} designates, for devices the CPU cannot
         * address, so that the elements are checked to lie inside it as they are for host memory.
         * Without it, the device module that made the buffer vouches for the bounds.
         *
         * @param bytes the buffer's size
         * @return this builder
         */
        public Builder capacity(long bytes) {
            this.capacity = bytes;
            return this;
        }

        /**
         * Sets the flags word written into versioned exports. {@link DLTensorFlag#READ_ONLY} is set
         * regardless when the data segment is read-only.
         *
         * @param newFlags the raw flags
         * @return this builder
         */
        public Builder flags(long newFlags) {
            this.flags = newFlags;
            return this;
        }

        /**
         * Validates the fields and makes the spec.
         *
         * @return the spec
         * @throws IllegalArgumentException naming the field: heap data, a negative dimension or
         *                                  offset, a wrong number of strides, a size overflow, or
         *                                  elements outside {@code data}
         */
        public TensorSpec build() {
            long[] finalStrides;
            try {
                finalStrides = strides != null ? strides.clone() : TensorGeometry.compactStrides(shape);
            } catch (InvalidTensorException e) {
                throw new IllegalArgumentException(e.getMessage(), e);
            }
            return new TensorSpec(data, capacity, device, dtype, shape.clone(), finalStrides, byteOffset, flags);
        }
    }

    /**
     * The memory the tensor lives in.
     *
     * @return the data segment
     */
    public MemorySegment data() {
        return data;
    }

    /**
     * The device.
     *
     * @return the device
     */
    public DLDevice device() {
        return device;
    }

    /**
     * The element type.
     *
     * @return the dtype
     */
    public DLDataType dtype() {
        return dtype;
    }

    /**
     * The number of dimensions.
     *
     * @return ndim
     */
    public int ndim() {
        return shape.length;
    }

    /**
     * The extents.
     *
     * @return a copy of the shape
     */
    public long[] shape() {
        return shape.clone();
    }

    /**
     * The strides in elements.
     *
     * @return a copy of the strides
     */
    public long[] strides() {
        return strides.clone();
    }

    /**
     * The offset of element 0 from the start of {@code data}.
     *
     * @return byte_offset
     */
    public long byteOffset() {
        return byteOffset;
    }

    /**
     * The flags word written into versioned exports.
     *
     * @return the raw flags
     */
    public long flags() {
        return flags;
    }

    /**
     * The bytes the elements reach, relative to {@code data + byte_offset}.
     *
     * @return the extent
     */
    public TensorExtent extent() {
        return extent;
    }

    // Shared with the writer without copying.
    long[] shapeArray() {
        return shape;
    }

    long[] stridesArray() {
        return strides;
    }

    @Override
    public String toString() {
        return "TensorSpec[" + device + ", " + dtype + ", shape=" + Arrays.toString(shape) + ", strides="
                + Arrays.toString(strides) + ", byte_offset=" + byteOffset + ", flags=0x" + Long.toHexString(flags) + "]";
    }
}
