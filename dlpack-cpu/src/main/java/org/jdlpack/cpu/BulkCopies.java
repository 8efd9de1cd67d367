package org.jdlpack.cpu;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

import org.jdlpack.abi.DLTensorFlag;
import org.jdlpack.abi.ExportOwner;
import org.jdlpack.abi.TensorLayout;

/**
 * {@link HostTensorView}'s bulk copies: to and from Java arrays of every primitive width, to
 * another tensor, to fresh compact memory. A part of {@code HostTensorView} in a file of its own
 * (sealed: the view is its only subclass); its public methods are the view's, documented there.
 */
abstract sealed class BulkCopies extends ElementAccess permits HostTensorView {

    BulkCopies(MemorySegment segment, TensorLayout layout, long origin, ExportOwner owner, Object source) {
        super(segment, layout, origin, owner, source);
    }

    // ----- bulk copies -----

    /**
     * Copies every element into an array; for 32-bit types ({@code float32}, {@code int32},
     * {@code uint32}) the bits are copied unchanged.
     * @param destination one value per element; 32-bit elements
     */
    public void copyTo(float[] destination) {
        StridedCopy.array(view(), destination, JAVA_FLOAT_UNALIGNED, 32, false);
    }

    /**
     * Copies every element into an array; see {@link #copyTo(float[])}.
     * @param destination one value per element; 64-bit elements
     */
    public void copyTo(double[] destination) {
        StridedCopy.array(view(), destination, JAVA_DOUBLE_UNALIGNED, 64, false);
    }

    /**
     * Copies every element into an array; see {@link #copyTo(float[])}.
     * @param destination one value per element; 32-bit elements
     */
    public void copyTo(int[] destination) {
        StridedCopy.array(view(), destination, JAVA_INT_UNALIGNED, 32, false);
    }

    /**
     * Copies every element into an array; see {@link #copyTo(float[])}.
     * @param destination one value per element; 64-bit elements
     */
    public void copyTo(long[] destination) {
        StridedCopy.array(view(), destination, JAVA_LONG_UNALIGNED, 64, false);
    }

    /**
     * Copies every element into an array (raw bits of float16 and bfloat16); see {@link #copyTo(float[])}.
     * @param destination one value per element; 16-bit elements
     */
    public void copyTo(short[] destination) {
        StridedCopy.array(view(), destination, JAVA_SHORT_UNALIGNED, 16, false);
    }

    /**
     * Copies every element into an array; see {@link #copyTo(float[])}.
     * @param destination one value per element; 8-bit elements
     */
    public void copyTo(byte[] destination) {
        StridedCopy.array(view(), destination, JAVA_BYTE, 8, false);
    }

    /**
     * Overwrites every element, in row-major order, from an array.
     * @param source one value per element; 32-bit elements
     * @throws UnsupportedOperationException if the tensor is read-only
     */
    public void copyFrom(float[] source) {
        StridedCopy.array(view(), source, JAVA_FLOAT_UNALIGNED, 32, true);
    }

    /**
     * Overwrites every element from an array; see {@link #copyFrom(float[])}.
     * @param source one value per element; 64-bit elements
     */
    public void copyFrom(double[] source) {
        StridedCopy.array(view(), source, JAVA_DOUBLE_UNALIGNED, 64, true);
    }

    /**
     * Overwrites every element from an array; see {@link #copyFrom(float[])}.
     * @param source one value per element; 32-bit elements
     */
    public void copyFrom(int[] source) {
        StridedCopy.array(view(), source, JAVA_INT_UNALIGNED, 32, true);
    }

    /**
     * Overwrites every element from an array; see {@link #copyFrom(float[])}.
     * @param source one value per element; 64-bit elements
     */
    public void copyFrom(long[] source) {
        StridedCopy.array(view(), source, JAVA_LONG_UNALIGNED, 64, true);
    }

    /**
     * Overwrites every element from an array; see {@link #copyFrom(float[])}.
     * @param source one value per element; 16-bit elements
     */
    public void copyFrom(short[] source) {
        StridedCopy.array(view(), source, JAVA_SHORT_UNALIGNED, 16, true);
    }

    /**
     * Overwrites every element from an array; see {@link #copyFrom(float[])}.
     * @param source one value per element; 8-bit elements
     */
    public void copyFrom(byte[] source) {
        StridedCopy.array(view(), source, JAVA_BYTE, 8, true);
    }


    /**
     * Copies the elements into fresh compact row-major memory from {@code arena}, 256-byte
     * aligned as DLPack recommends.
     * @param arena where the copy lives
     * @return a compact, writable tensor with the same dtype and shape
     */
    public HostTensorView toContiguous(Arena arena) {
        TensorLayout compactLayout = TensorLayout.of(layout.dtype(), shape, null, 0,
                layout.isSubbytePadded() ? DLTensorFlag.IS_SUBBYTE_TYPE_PADDED.mask() : 0);
        HostTensorView copy = HostTensorView.over(arena.allocate(compactLayout.extent().byteSize(), 256), compactLayout, 0);
        copyTo(copy);
        return copy;
    }

    /**
     * Copies every element into another tensor of the same dtype and shape, whatever the strides
     * of either and however wide the elements: one bulk copy when both are compact. Overlapping
     * tensors (two views of one buffer, a vector reversed onto itself) are copied as if through a
     * temporary, as NumPy does: every element of the target gets the source's value from before
     * the copy.
     * @param target the destination
     * @throws IllegalArgumentException      if the dtypes or shapes differ
     * @throws UnsupportedOperationException if the target is read-only
     */
    public void copyTo(HostTensorView target) {
        if (!Arrays.equals(shape, target.shape) || !layout.dtype().equals(target.layout.dtype())) {
            throw new IllegalArgumentException("cannot copy " + this + " into " + target + ": dtypes or shapes differ");
        }
        StridedCopy.checkWritable(target);
        StridedCopy.elements(view(), target);
    }
}
