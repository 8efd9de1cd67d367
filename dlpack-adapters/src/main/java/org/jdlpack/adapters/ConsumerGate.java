package org.jdlpack.adapters;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.function.Supplier;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLDevice;
import org.jdlpack.abi.DLDeviceType;
import org.jdlpack.abi.ExportedTensor;
import org.jdlpack.abi.InvalidTensorException;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.UnsupportedDeviceException;

/**
 * The fields of a jdlpack export read the way a consumer's C++ entry point will read them
 * ({@code at::fromDLPack}, {@code TFE_HandleFromDLPack}), with the checks every JVM-library
 * adapter makes before that call: such entry points answer what they refuse with a C++
 * {@code throw} or a {@code CHECK} that ends the process, so each field is checked here first and
 * refused with a Java exception naming it. What differs between consumers (the types, the
 * strides, {@code byte_offset}, the versioned struct) is the adapter's, using these fields.
 *
 * <p>One instance per check, on one thread; the struct is the caller's owned export. The name
 * of the tensor in messages is made only when a check refuses: an accepted hand-off builds no
 * string (it was 2.5 KB and half the cost of a torch hand-off when built up front).
 *
 * @since 0.1
 */
public final class ConsumerGate {

    /** {@code DLTensor} offsets (the ABI's, checked against the C compiler by dlpack-abi's tests). */
    private static final long DATA = 0;
    private static final long DEVICE_TYPE = 8;
    private static final long DEVICE_ID = 12;
    private static final long NDIM = 16;
    private static final long DTYPE_CODE = 20;
    private static final long DTYPE_BITS = 21;
    private static final long DTYPE_LANES = 22;
    private static final long SHAPE = 24;
    private static final long STRIDES = 32;
    private static final long BYTE_OFFSET = 40;
    private static final long DL_TENSOR_SIZE = 48;
    /** {@code DLManagedTensorVersioned}: {@code version} at 0 (major first), {@code flags} at 24. */
    private static final long VERSIONED_FLAGS = 24;

    /** A consumer's table of the types it takes. */
    @FunctionalInterface
    public interface DTypes {
        /**
         * {@return the type if the consumer takes it, else null}
         *
         * @param code  {@code DLDataType.code}, as stored
         * @param bits  {@code DLDataType.bits}
         * @param lanes {@code DLDataType.lanes}
         */
        DLDataType supported(int code, int bits, int lanes);
    }

    private final ManagedTensorKind kind;
    private final MemorySegment struct;
    private final MemorySegment tensor;
    /** The export, to name it in messages; null where {@link #name} names the tensor. */
    private final ExportedTensor export;
    private final String name;

    private ConsumerGate(ManagedTensorKind kind, MemorySegment struct, MemorySegment tensor, ExportedTensor export,
                         String name) {
        this.kind = kind;
        this.struct = struct;
        this.tensor = tensor;
        this.export = export;
        this.name = name;
    }

    /**
     * Opens an export that is to be handed to a consumer, if it is still the caller's.
     *
     * @param export   the export
     * @param consumer names the consumer, such as {@code "torch"}
     * @return the gate, naming the export in messages
     * @throws IllegalStateException if the export was already consumed, imported or closed
     */
    public static ConsumerGate of(ExportedTensor export, String consumer) {
        Objects.requireNonNull(export, "export");
        if (!export.isOwned()) {
            throw new IllegalStateException("cannot hand " + export + " to " + consumer + ": it is no longer owned");
        }
        return open(export.kind(), export.address(), export, null);
    }

    /**
     * Opens the managed tensor at {@code address} for checking.
     *
     * @param kind    which struct it is
     * @param address its address: an owned export of the caller's
     * @param what    names the tensor in messages
     * @return the gate
     */
    public static ConsumerGate of(ManagedTensorKind kind, long address, String what) {
        return open(kind, address, null, Objects.requireNonNull(what, "what"));
    }

    @SuppressWarnings("restricted") // the struct is jdlpack's export, owned by the caller: its size is the kind's
    private static ConsumerGate open(ManagedTensorKind kind, long address, ExportedTensor export, String name) {
        MemorySegment struct = MemorySegment.ofAddress(address).reinterpret(kind.structSize());
        return new ConsumerGate(kind, struct, struct.asSlice(kind.dlTensorOffset(), DL_TENSOR_SIZE), export, name);
    }

    /** {@return which struct it is} */
    public ManagedTensorKind kind() {
        return kind;
    }

    /** {@return the name of the tensor in messages; made on each call, so call it only to refuse} */
    public String what() {
        return export != null ? export.toString() : name;
    }

    /** {@return the major version of a versioned struct} */
    public int majorVersion() {
        return struct.get(JAVA_INT, 0);
    }

    /** {@return the flags of a versioned struct} */
    public long versionedFlags() {
        return struct.get(JAVA_LONG, VERSIONED_FLAGS);
    }

    /**
     * Refuses every device but CPU 0.
     *
     * @param consumer the consumer, such as {@code "libtorch"}
     * @param why      why CPU 0 only, such as {@code "its build is CPU-only"}
     * @throws UnsupportedDeviceException for another device
     */
    public void requireCpu0(String consumer, String why) {
        int deviceType = tensor.get(JAVA_INT, DEVICE_TYPE);
        int deviceId = tensor.get(JAVA_INT, DEVICE_ID);
        if (deviceType != DLDeviceType.CPU.code() || deviceId != 0) {
            DLDevice device = new DLDevice(deviceType, deviceId);
            throw new UnsupportedDeviceException(device, what() + " is on " + device + "; this adapter hands " + consumer
                    + " CPU device 0 only (" + why + "): copy it to host memory first");
        }
    }

    /**
     * The element type, if the consumer takes it.
     *
     * @param types     the consumer's table
     * @param refusal   completes "which ...", such as {@code "libtorch 2.10 has no ScalarType for"}
     * @param lanesNote said in brackets when lanes are not 1
     * @param supported the table, for the message (asked only on refusal)
     * @return the type
     * @throws InvalidTensorException for a type the consumer does not take
     */
    public DLDataType requireDType(DTypes types, String refusal, String lanesNote, Supplier<String> supported) {
        int code = Byte.toUnsignedInt(tensor.get(JAVA_BYTE, DTYPE_CODE));
        int bits = Byte.toUnsignedInt(tensor.get(JAVA_BYTE, DTYPE_BITS));
        int lanes = Short.toUnsignedInt(tensor.get(JAVA_SHORT, DTYPE_LANES));
        DLDataType dtype = types.supported(code, bits, lanes);
        if (dtype == null) {
            throw new InvalidTensorException(what() + " has dtype (code " + code + ", bits " + bits + ", lanes " + lanes
                    + "), which " + refusal + (lanes != 1 ? " (" + lanesNote + ")" : "") + "; supported: " + supported.get());
        }
        return dtype;
    }

    /**
     * The number of dimensions, if the consumer takes it.
     *
     * @param max      the most the consumer takes
     * @param consumer names it, such as {@code "TensorFlow"}
     * @return {@code ndim}
     * @throws InvalidTensorException for a negative {@code ndim} or one above {@code max}
     */
    public int requireNdim(int max, String consumer) {
        int ndim = tensor.get(JAVA_INT, NDIM);
        if (ndim < 0 || ndim > max) {
            throw new InvalidTensorException(what() + ": ndim is " + ndim + "; " + consumer + " takes 0 to " + max);
        }
        return ndim;
    }

    /** {@return whether {@code shape} is NULL} */
    public boolean shapeIsNull() {
        return tensor.get(JAVA_LONG, SHAPE) == 0;
    }

    /** {@return whether {@code strides} is NULL (compact row-major in DLPack)} */
    public boolean stridesIsNull() {
        return tensor.get(JAVA_LONG, STRIDES) == 0;
    }

    /**
     * Refuses a NULL array the consumer would read.
     *
     * @param field {@code "shape"} or {@code "strides"}
     * @param ndim  the checked {@code ndim}
     * @throws InvalidTensorException naming the field
     */
    public void refuseNull(String field, int ndim) {
        throw new InvalidTensorException(what() + ": " + field + " is NULL for ndim " + ndim);
    }

    /**
     * {@return the extents, of a non-NULL {@code shape} (or {@code ndim} 0)}
     *
     * @param ndim the number of dimensions, checked before
     */
    @SuppressWarnings("restricted") // ndim extents, checked before
    public MemorySegment shape(int ndim) {
        return MemorySegment.ofAddress(tensor.get(JAVA_LONG, SHAPE)).reinterpret(ndim * 8L);
    }

    /**
     * {@return the strides, or null when {@code strides} is NULL}
     *
     * @param ndim the number of dimensions, checked before
     */
    @SuppressWarnings("restricted") // ndim strides, checked before
    public MemorySegment strides(int ndim) {
        long address = tensor.get(JAVA_LONG, STRIDES);
        return address == 0 ? null : MemorySegment.ofAddress(address).reinterpret(ndim * 8L);
    }

    /**
     * Refuses a negative extent.
     *
     * @param d      the dimension
     * @param extent its extent
     * @throws InvalidTensorException if it is negative
     */
    public void requireExtent(int d, long extent) {
        if (extent < 0) {
            throw new InvalidTensorException(what() + ": shape[" + d + "] is " + extent);
        }
    }

    /**
     * {@return the exception for a size that overflows 64 bits at dimension {@code d}}
     *
     * @param d the dimension
     */
    public InvalidTensorException overflow(int d) {
        return new InvalidTensorException(what() + ": its size overflows 64 bits at dimension " + d);
    }

    /** {@return {@code byte_offset}, as stored (unsigned in C)} */
    public long byteOffset() {
        return tensor.get(JAVA_LONG, BYTE_OFFSET);
    }

    /**
     * Refuses a NULL {@code data} under elements.
     *
     * @param elements the element count
     * @return {@code data}
     * @throws InvalidTensorException if it is NULL and there are elements
     */
    public long requireData(long elements) {
        long data = tensor.get(JAVA_LONG, DATA);
        if (elements > 0 && data == 0) {
            throw new InvalidTensorException(what() + ": data is NULL for " + elements + " elements");
        }
        return data;
    }

    /**
     * Moves {@code byte_offset} into {@code data}, of an accepted struct the caller now owns (for a
     * consumer that ignores {@code byte_offset}); the deleter reads neither field.
     */
    public void foldByteOffset() {
        long byteOffset = byteOffset();
        if (byteOffset != 0) {
            tensor.set(JAVA_LONG, DATA, tensor.get(JAVA_LONG, DATA) + byteOffset);
            tensor.set(JAVA_LONG, BYTE_OFFSET, 0L);
        }
    }
}
