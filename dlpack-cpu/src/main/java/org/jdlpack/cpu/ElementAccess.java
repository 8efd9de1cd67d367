package org.jdlpack.cpu;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLTensorFlag;
import org.jdlpack.abi.ExportOwner;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.TensorLayout;

/**
 * {@link HostTensorView}'s element access: the view's fields, row-major positions, and the typed
 * reads and writes of one element. A part of {@code HostTensorView} in a file of its own (sealed:
 * the view is its only subclass); its public methods are the view's, documented there.
 */
abstract sealed class ElementAccess permits BulkCopies {

    /**
     * The elements' memory, unchecked: this package's accessors and copies read it after
     * {@link #checkLive()}; what the view hands out is {@link HostTensorView#segment()}.
     */
    final MemorySegment segment;
    /**
     * The owner of an {@link OwnedHostTensor}'s memory, whose release every access checks first
     * (a pooled block outlives it, mapped, for the next taker), or null: an import's or a caller's
     * segment, whose own scope ends with the memory.
     */
    final ExportOwner owner;
    /** What the memory belongs to, for messages (an {@link ImportedTensor}, an {@link OwnedHostTensor}), or null. */
    final Object source;
    /** The tensor's layout as its owner gave it: byte_offset relative to the owner's data. */
    final TensorLayout layout;
    // Copies of the layout's fields that every element access reads.
    final long[] shape;
    final long[] strides;
    final long origin;
    final long count;
    final boolean compact;
    final ElementCodec codec;

    /** {@code segment} holds exactly the bytes the elements reach, element 0 at {@code origin}. */
    ElementAccess(MemorySegment segment, TensorLayout layout, long origin, ExportOwner owner, Object source) {
        if (segment.isReadOnly() && !layout.isReadOnly()) {
            layout = layout.withFlags(layout.flags() | DLTensorFlag.READ_ONLY.mask());
        }
        this.segment = segment;
        this.owner = owner;
        this.source = source;
        this.layout = layout;
        this.shape = layout.shape();
        this.strides = layout.strides();
        this.origin = origin;
        this.count = layout.elementCount();
        this.compact = layout.isCompactRowMajor();
        this.codec = new ElementCodec(layout.dtype(), layout.isSubbytePadded());
    }

    /** {@return this, as the view it is} */
    final HostTensorView view() {
        return (HostTensorView) this;
    }

    /**
     * The row-major position of a multi-dimensional index.
     * @param indices one index per dimension
     * @return the position, for the element accessors
     * @throws IndexOutOfBoundsException if the count or any index is out of range
     */
    public long index(long... indices) {
        if (indices.length != shape.length) {
            throw new IndexOutOfBoundsException(indices.length + " indices for a " + shape.length + "-d tensor");
        }
        long position = 0;
        for (int d = 0; d < shape.length; d++) {
            Objects.checkIndex(indices[d], shape[d]);
            position = position * shape[d] + indices[d];
        }
        return position;
    }

    /** Offset in elements from element 0 of the element at a row-major position. */
    private long elementOffset(long position) {
        Objects.checkIndex(position, count);
        if (compact) {
            return position;
        }
        long offset = 0;
        for (int d = shape.length - 1; d >= 0; d--) {
            offset += (position % shape[d]) * strides[d];
            position /= shape[d];
        }
        return offset;
    }

    private long read(long position, int lane, int part) {
        long offset = elementOffset(position);
        checkLive();
        try {
            return codec.read(segment, origin, offset, lane, part);
        } catch (IllegalStateException | WrongThreadException e) {
            throw inaccessible(e);
        }
    }

    private void write(long position, int lane, int part, long bits) {
        StridedCopy.checkWritable(view());
        long offset = elementOffset(position);
        checkLive();
        try {
            codec.write(segment, origin, offset, lane, part, bits);
        } catch (IllegalStateException | WrongThreadException e) {
            throw inaccessible(e);
        }
    }

    /**
     * Refuses an access once an {@link OwnedHostTensor}'s memory is released. Its segment cannot
     * say so: a pooled block stays mapped, in the pool's arena, and is the next taker's (a scope
     * per take would make every release a JVM-wide handshake; benchmarks/notes.md, "Views of
     * released pooled tensors"). One volatile read of the owner's reference count: an access
     * sequenced after the release throws; one that races the release on another thread may still
     * complete, as a read racing any write does.
     *
     * @throws IllegalStateException naming the tensor, if its memory was released
     */
    final void checkLive() {
        if (owner != null && owner.isReleased()) {
            throw released(null);
        }
    }

    /** {@return what this view is of, for messages: the tensor, or the view and its layout} */
    final String name() {
        return source != null ? "this HostTensorView of " + source : "this HostTensorView (" + layout + ")";
    }

    private IllegalStateException released(RuntimeException refusal) {
        return new IllegalStateException(name() + " was released: the view reads nothing after its tensor is closed (with "
                + "every export deleted), moved, or its memory freed; use a view only while its tensor is open, and an export "
                + "to keep the memory for a consumer", refusal);
    }

    /**
     * The FFM runtime's refusal of an access to {@link #segment}, said in this library's terms:
     * its own text ("Already closed", "Attempted access outside owning thread") names neither the
     * tensor nor what to do. Callers catch the JDK's exceptions around the access, which costs
     * nothing until one is thrown.
     */
    RuntimeException inaccessible(RuntimeException refusal) {
        if (refusal instanceof WrongThreadException) {
            String what = source instanceof ImportedTensor
                    ? "an ImportedTensor with the default lifetime belongs to the thread that imported it; read it there, or "
                      + "import it with ImportLifetime.SHARED (or move it there with ImportedTensor.moveTo) to read it from any "
                      + "thread"
                    : "its segment's arena is confined to the thread that made it; use the view there, or allocate the memory "
                      + "in a shared arena (an ImportedTensor: import it with ImportLifetime.SHARED)";
            return new WrongThreadException(name() + " reads memory confined to another thread: " + what, refusal);
        }
        if ((owner != null && owner.isReleased()) || !segment.scope().isAlive()) {
            return released(refusal);
        }
        return refusal;
    }

    // ----- typed access -----
    // Every accessor throws IndexOutOfBoundsException for a position or lane out of range, and
    // UnsupportedOperationException for values wider than 64 bits.

    /**
     * Lane 0 of an element as a double; see {@link #getDouble(long, int)}.
     * @param position the row-major position
     * @return the value
     */
    public double getDouble(long position) {
        return getDouble(position, 0);
    }

    /**
     * One lane of an element as a double: exact for every type except 64-bit integers beyond
     * 2<sup>53</sup>; the real part of a complex lane; 0 or 1 for bool; unsigned types as unsigned.
     * @param position the row-major position
     * @param lane     0 to {@code layout().dtype().lanes() - 1}
     * @return the value
     * @throws UnsupportedOperationException for opaque handles
     */
    public double getDouble(long position, int lane) {
        return codec.decode(read(position, lane, 0));
    }

    /**
     * The imaginary part of one lane of a complex element.
     * @param position the row-major position
     * @param lane     0 to {@code layout().dtype().lanes() - 1}
     * @return the imaginary part
     * @throws UnsupportedOperationException if the type is not complex
     */
    public double getImaginary(long position, int lane) {
        return codec.decode(read(position, lane, 1));
    }

    /**
     * Lane 0 of an element as a float; for float32 this is exact and fast.
     * @param position the row-major position
     * @return the value, rounded to float
     */
    public float getFloat(long position) {
        if (layout.dtype().equals(DLDataType.FLOAT32)) {
            long offset = origin + elementOffset(position) * 4;
            checkLive();
            try {
                return segment.get(JAVA_FLOAT_UNALIGNED, offset);
            } catch (IllegalStateException | WrongThreadException e) {
                throw inaccessible(e);
            }
        }
        return (float) getDouble(position, 0);
    }

    /**
     * Lane 0 of an integer, bool or handle element; see {@link #getLong(long, int)}.
     * @param position the row-major position
     * @return the value
     */
    public long getLong(long position) {
        return getLong(position, 0);
    }

    /**
     * One lane of an integer, bool or opaque-handle element, exactly: signed types sign-extended,
     * unsigned types zero-extended (a uint64 comes back as its bit pattern; read it with
     * {@link Long#toUnsignedString(long)}).
     * @param position the row-major position
     * @param lane     0 to {@code layout().dtype().lanes() - 1}
     * @return the value
     * @throws UnsupportedOperationException for floating-point and complex types, and handles wider than 64 bits
     */
    public long getLong(long position, int lane) {
        return codec.toLong(read(position, lane, 0));
    }

    /**
     * Lane 0 of an element as a boolean: non-zero is true.
     * @param position the row-major position
     * @return the value
     */
    public boolean getBoolean(long position) {
        return read(position, 0, 0) != 0;
    }

    /**
     * Lane 0 of the element at a multi-dimensional index, as a float; {@code getFloatAt(i, j)} is
     * {@code getFloat(index(i, j))}. (A two-argument {@code getFloat} would be taken for the
     * lane accessors' {@code (position, lane)}, hence the name.)
     * @param indices one index per dimension
     * @return the value, rounded to float
     * @throws IndexOutOfBoundsException if the count or any index is out of range
     */
    public float getFloatAt(long... indices) {
        return getFloat(index(indices));
    }

    /**
     * Lane 0 of the element at a multi-dimensional index, as a double; see {@link #getFloatAt}.
     * @param indices one index per dimension
     * @return the value
     * @throws IndexOutOfBoundsException if the count or any index is out of range
     */
    public double getDoubleAt(long... indices) {
        return getDouble(index(indices));
    }

    /**
     * Lane 0 of the integer, bool or handle element at a multi-dimensional index; see {@link #getFloatAt}.
     * @param indices one index per dimension
     * @return the value
     * @throws IndexOutOfBoundsException if the count or any index is out of range
     */
    public long getLongAt(long... indices) {
        return getLong(index(indices));
    }

    /**
     * Writes lane 0 of the element at a multi-dimensional index; see {@link #getFloatAt}.
     * @param value   the value
     * @param indices one index per dimension
     * @throws IndexOutOfBoundsException if the count or any index is out of range
     */
    public void setFloatAt(float value, long... indices) {
        setFloat(index(indices), value);
    }

    /**
     * Writes lane 0 of the element at a multi-dimensional index; see {@link #getFloatAt}.
     * @param value   the value
     * @param indices one index per dimension
     * @throws IndexOutOfBoundsException if the count or any index is out of range
     */
    public void setDoubleAt(double value, long... indices) {
        setDouble(index(indices), value);
    }

    /**
     * Writes lane 0 of the integer, bool or handle element at a multi-dimensional index; see {@link #getFloatAt}.
     * @param value   the value
     * @param indices one index per dimension
     * @throws IndexOutOfBoundsException if the count or any index is out of range
     */
    public void setLongAt(long value, long... indices) {
        setLong(index(indices), value);
    }

    /**
     * Writes lane 0 of an element; see {@link #setDouble(long, int, double)}.
     * @param position the row-major position
     * @param value    the value
     */
    public void setDouble(long position, double value) {
        setDouble(position, 0, value);
    }

    /**
     * Writes one lane of an element (the real part for complex types), converting as a C cast
     * would for integers (truncation towards zero) and rounding to nearest for narrower floats.
     * @param position the row-major position
     * @param lane     0 to {@code layout().dtype().lanes() - 1}
     * @param value    the value
     * @throws UnsupportedOperationException if the tensor is read-only, or for opaque handles
     */
    public void setDouble(long position, int lane, double value) {
        write(position, lane, 0, codec.encode(value));
    }

    /**
     * Writes the imaginary part of one lane of a complex element.
     * @param position the row-major position
     * @param lane     0 to {@code layout().dtype().lanes() - 1}
     * @param value    the imaginary part
     * @throws UnsupportedOperationException if read-only or not complex
     */
    public void setImaginary(long position, int lane, double value) {
        write(position, lane, 1, codec.encode(value));
    }

    /**
     * Writes lane 0 of an element as a float.
     * @param position the row-major position
     * @param value    the value
     */
    public void setFloat(long position, float value) {
        setDouble(position, 0, value);
    }

    /**
     * Writes lane 0 of an integer, bool or handle element; see {@link #setLong(long, int, long)}.
     * @param position the row-major position
     * @param value    the value, truncated to the type's width
     */
    public void setLong(long position, long value) {
        setLong(position, 0, value);
    }

    /**
     * Writes one lane of an integer, bool or handle element, keeping the low {@code bits} bits
     * (bool stores 1 for any non-zero value).
     * @param position the row-major position
     * @param lane     0 to {@code layout().dtype().lanes() - 1}
     * @param value    the value
     * @throws UnsupportedOperationException if read-only, for floating-point and complex types, and
     *                                       for handles wider than 64 bits
     */
    public void setLong(long position, int lane, long value) {
        write(position, lane, 0, codec.fromLong(value));
    }

    /**
     * Writes lane 0 of an element as a boolean.
     * @param position the row-major position
     * @param value    the value
     */
    public void setBoolean(long position, boolean value) {
        write(position, 0, 0, value ? 1 : 0);
    }
}
