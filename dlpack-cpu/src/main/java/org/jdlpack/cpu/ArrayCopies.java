package org.jdlpack.cpu;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED;

/**
 * A {@link HostTensorView}'s bulk copies to and from Java arrays. They move raw bits between
 * elements and array values of the same width, in row-major order: one copy when the tensor is
 * compact, else one per contiguous row or per element. Each throws
 * {@link IllegalArgumentException} when the widths or the lengths differ, and the copies into the
 * tensor throw {@link UnsupportedOperationException} when it is read-only.
 *
 * <p>Declared apart from the view so that the view's own source is about locating and converting
 * single elements; only {@link HostTensorView} implements it.
 */
public sealed interface ArrayCopies permits HostTensorView {

    /**
     * Copies every element into an array; for 32-bit types ({@code float32}, {@code int32},
     * {@code uint32}) the bits are copied unchanged.
     * @param destination one value per element; 32-bit elements
     */
    default void copyTo(float[] destination) {
        StridedCopy.array(self(), destination, JAVA_FLOAT_UNALIGNED, 32, false);
    }

    /**
     * Copies every element into an array; see {@link #copyTo(float[])}.
     * @param destination one value per element; 64-bit elements
     */
    default void copyTo(double[] destination) {
        StridedCopy.array(self(), destination, JAVA_DOUBLE_UNALIGNED, 64, false);
    }

    /**
     * Copies every element into an array; see {@link #copyTo(float[])}.
     * @param destination one value per element; 32-bit elements
     */
    default void copyTo(int[] destination) {
        StridedCopy.array(self(), destination, JAVA_INT_UNALIGNED, 32, false);
    }

    /**
     * Copies every element into an array; see {@link #copyTo(float[])}.
     * @param destination one value per element; 64-bit elements
     */
    default void copyTo(long[] destination) {
        StridedCopy.array(self(), destination, JAVA_LONG_UNALIGNED, 64, false);
    }

    /**
     * Copies every element into an array (raw bits of float16 and bfloat16); see {@link #copyTo(float[])}.
     * @param destination one value per element; 16-bit elements
     */
    default void copyTo(short[] destination) {
        StridedCopy.array(self(), destination, JAVA_SHORT_UNALIGNED, 16, false);
    }

    /**
     * Copies every element into an array; see {@link #copyTo(float[])}.
     * @param destination one value per element; 8-bit elements
     */
    default void copyTo(byte[] destination) {
        StridedCopy.array(self(), destination, JAVA_BYTE, 8, false);
    }

    /**
     * Overwrites every element, in row-major order, from an array.
     * @param source one value per element; 32-bit elements
     * @throws UnsupportedOperationException if the tensor is read-only
     */
    default void copyFrom(float[] source) {
        StridedCopy.array(self(), source, JAVA_FLOAT_UNALIGNED, 32, true);
    }

    /**
     * Overwrites every element from an array; see {@link #copyFrom(float[])}.
     * @param source one value per element; 64-bit elements
     */
    default void copyFrom(double[] source) {
        StridedCopy.array(self(), source, JAVA_DOUBLE_UNALIGNED, 64, true);
    }

    /**
     * Overwrites every element from an array; see {@link #copyFrom(float[])}.
     * @param source one value per element; 32-bit elements
     */
    default void copyFrom(int[] source) {
        StridedCopy.array(self(), source, JAVA_INT_UNALIGNED, 32, true);
    }

    /**
     * Overwrites every element from an array; see {@link #copyFrom(float[])}.
     * @param source one value per element; 64-bit elements
     */
    default void copyFrom(long[] source) {
        StridedCopy.array(self(), source, JAVA_LONG_UNALIGNED, 64, true);
    }

    /**
     * Overwrites every element from an array; see {@link #copyFrom(float[])}.
     * @param source one value per element; 16-bit elements
     */
    default void copyFrom(short[] source) {
        StridedCopy.array(self(), source, JAVA_SHORT_UNALIGNED, 16, true);
    }

    /**
     * Overwrites every element from an array; see {@link #copyFrom(float[])}.
     * @param source one value per element; 8-bit elements
     */
    default void copyFrom(byte[] source) {
        StridedCopy.array(self(), source, JAVA_BYTE, 8, true);
    }

    private HostTensorView self() {
        return (HostTensorView) this;
    }
}
