package org.jdlpack.abi;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * A description of Java-owned memory to export as a DLPack tensor: the data, its device, and the
 * {@link TensorLayout} of the elements in it.
 *
 * <p>A spec is validated when it is made, so a spec that exists can be exported: the shape and
 * layout is valid (see {@link TensorLayout}), and on host-accessible
 * devices every byte the tensor can reach lies inside {@code data}. For other devices (CUDA,
 * OpenCL) {@code data} only carries the device address or handle; the bounds are checked against
 * {@link Builder#capacity(long)} when given.
 *
 * <p>Only native segments can be exported: a heap segment's memory can move during garbage
 * collection while a native consumer holds its address. A read-only segment is exported with
 * {@link DLTensorFlag#READ_ONLY} set.
 *
 * <p>Instances are immutable and safe to share between threads.
 *
 * @since 0.1
 */
public final class TensorSpec {

    private final MemorySegment data;
    private final DLDevice device;
    private final TensorLayout layout;

    private TensorSpec(MemorySegment data, long capacity, DLDevice device, TensorLayout layout) {
        if (!data.isNative()) {
            throw new IllegalArgumentException("data is a heap segment; only native memory can be exported, "
                    + "because the garbage collector may move heap memory while native code reads it");
        }
        if (data.isReadOnly()) {
            layout = layout.withFlags(layout.flags() | DLTensorFlag.READ_ONLY.mask());
        }
        long bound = device.isHostAccessible() ? data.byteSize() : capacity;
        if (bound >= 0 && !layout.fitsIn(bound)) {
            throw new IllegalArgumentException("the tensor reaches bytes " + layout.reachText() + " of data, which has " + bound
                    + " bytes");
        }
        this.data = data;
        this.device = device;
        this.layout = layout;
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
     * Starts a spec of elements laid out as {@code layout} in {@code data}, on the CPU unless
     * {@link Builder#device(DLDevice)} says otherwise.
     *
     * @param data   native memory holding the elements, or the device pointer or handle
     * @param layout where the elements lie relative to {@code data}
     * @return the builder
     */
    public static Builder builder(MemorySegment data, TensorLayout layout) {
        Builder builder = new Builder(data, layout.dtype(), layout.shapeArray());
        builder.strides = layout.stridesArray();
        builder.byteOffset = layout.byteOffset();
        builder.flags = layout.flags();
        return builder;
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
            return new TensorSpec(data, capacity, device, TensorLayout.of(dtype, shape, strides, byteOffset, flags));
        }
    }

    /** {@return the memory the tensor lives in (for a device the CPU cannot address, its pointer or handle)} */
    public MemorySegment data() {
        return data;
    }

    /** {@return the device} */
    public DLDevice device() {
        return device;
    }

    /** {@return where the elements lie relative to {@link #data()}; its flags are those written into versioned exports} */
    public TensorLayout layout() {
        return layout;
    }

    @Override
    public String toString() {
        return "TensorSpec[" + device + ", " + layout + "]";
    }
}
