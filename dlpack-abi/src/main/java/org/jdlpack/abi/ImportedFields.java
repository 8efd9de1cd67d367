package org.jdlpack.abi;

import java.util.Arrays;

/**
 * The validated copy of a foreign managed tensor's metadata that an {@link ImportedTensor} keeps:
 * the version's minor (the major is {@link DLPackVersion#SUPPORTED_MAJOR}, or a legacy struct has
 * none: the owner's kind says which), flags, data, device, dtype, shape and strides,
 * {@code byte_offset} and extent. The element count is not kept: {@link #layout()} counts again.
 *
 * <p>Why fields and not arrays: an import that the JIT inlines into its caller can have its objects
 * replaced by registers (escape analysis), but only objects whose fields are all reached at known
 * offsets; an array whose length comes from native memory never is. So the shape and strides of up
 * to {@value #INLINE_NDIM} dimensions are eight long fields, and only a tensor with more
 * dimensions gets an array ({@link #dims}). The reader that makes this object is called, not
 * inlined (its reads use up C2's node budget: benchmarks/notes.md), so this is one heap object
 * per import, and every field here is paid for by every import.
 *
 * <p>Written only by {@link ManagedTensorReader}, before the tensor that keeps it exists; the
 * tensor's final field then publishes it to every thread, and nothing writes it again.
 */
final class ImportedFields {

    /** Dimensions kept in fields rather than an array. */
    static final int INLINE_NDIM = 4;

    /** {@code version.minor} of a {@code DLManagedTensorVersioned}, raw (unsigned); 0 for a legacy struct. */
    int versionMinor;
    long flags;
    long data;
    int deviceType;
    int deviceId;
    DLDataType dtype;
    int ndim;
    long shape0;
    long shape1;
    long shape2;
    long shape3;
    long stride0;
    long stride1;
    long stride2;
    long stride3;
    /** Shape then strides ({@code dims[i]} is {@code shape[i]}, {@code dims[ndim + i]} is {@code strides[i]}) when {@code ndim > INLINE_NDIM}; else null. */
    long[] dims;
    boolean stridesWereNull;
    long byteOffset;
    long extentStart;
    long extentSize;

    /** {@return {@code shape[i]}, for {@code 0 <= i < ndim}} */
    long shape(int i) {
        if (dims != null) {
            return dims[i];
        }
        return switch (i) {
            case 0 -> shape0;
            case 1 -> shape1;
            case 2 -> shape2;
            case 3 -> shape3;
            default -> throw new IndexOutOfBoundsException(i);
        };
    }

    /** {@return {@code strides[i]} in elements, for {@code 0 <= i < ndim}} */
    long stride(int i) {
        if (dims != null) {
            return dims[ndim + i];
        }
        return switch (i) {
            case 0 -> stride0;
            case 1 -> stride1;
            case 2 -> stride2;
            case 3 -> stride3;
            default -> throw new IndexOutOfBoundsException(i);
        };
    }

    void setShape(int i, long value) {
        if (dims != null) {
            dims[i] = value;
            return;
        }
        switch (i) {
            case 0 -> shape0 = value;
            case 1 -> shape1 = value;
            case 2 -> shape2 = value;
            case 3 -> shape3 = value;
            default -> throw new IndexOutOfBoundsException(i);
        }
    }

    void setStride(int i, long value) {
        if (dims != null) {
            dims[ndim + i] = value;
            return;
        }
        switch (i) {
            case 0 -> stride0 = value;
            case 1 -> stride1 = value;
            case 2 -> stride2 = value;
            case 3 -> stride3 = value;
            default -> throw new IndexOutOfBoundsException(i);
        }
    }

    /** {@return a new array of the shape} */
    long[] shape() {
        long[] shape = new long[ndim];
        for (int i = 0; i < ndim; i++) {
            shape[i] = shape(i);
        }
        return shape;
    }

    /** {@return a new array of the strides} */
    long[] strides() {
        long[] strides = new long[ndim];
        for (int i = 0; i < ndim; i++) {
            strides[i] = stride(i);
        }
        return strides;
    }

    DLDevice device() {
        return new DLDevice(deviceType, deviceId);
    }

    TensorExtent extent() {
        return extentSize == 0 ? TensorExtent.EMPTY : new TensorExtent(extentStart, extentSize);
    }

    /** The validated fields as a layout, with arrays of its own. */
    TensorLayout layout() {
        long[] shape = shape();
        // Validated at import: the count cannot overflow here.
        return new TensorLayout(dtype, shape, strides(), byteOffset, flags, extent(), TensorGeometry.elementCount(shape, ndim));
    }

    /** {@return the version of a {@code DLManagedTensorVersioned}: this struct's kind is the caller's to know} */
    DLPackVersion dlpackVersion() {
        return DLPackVersion.ofRaw((int) DLPackVersion.SUPPORTED_MAJOR, versionMinor);
    }

    /** For leak reports and toString: what was imported, without the pointer. */
    @Override
    public String toString() {
        return device() + ", " + dtype + ", shape " + Arrays.toString(shape());
    }
}
