package org.jdlpack.opencl;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Optional;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLDeviceType;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.InvalidTensorException;
import org.jdlpack.abi.TensorExtent;
import org.jdlpack.abi.TensorLayout;
import org.jdlpack.abi.UnsupportedDeviceException;
import org.jdlpack.abi.plumbing.Downcalls;
import org.jdlpack.cpu.HostTensorView;
import org.jdlpack.cpu.internal.StridedTransfer;

/**
 * A {@code kDLOpenCL} tensor read and written from the host. On OpenCL, {@code DLTensor.data} is
 * a {@code cl_mem} handle and {@code byte_offset} an offset inside that buffer, never pointer
 * arithmetic.
 *
 * <p>Before anything is read, {@link #of} checks that the handle is a buffer of the given
 * context (reading the handle's first word through a pipe, so that a bogus pointer is rejected
 * rather than crashing the process) and that {@code byte_offset} and every element the shape and
 * strides reach lie inside the buffer.
 *
 * <p>Transfers: a compact tensor moves in one {@code clEnqueueRead/WriteBuffer}; a 2-D tensor
 * with contiguous rows in one {@code clEnqueueRead/WriteBufferRect}; anything else is read as
 * the one byte range it spans and gathered on the host, and written element by element.
 *
 * <p>Lifetime: this view does not own the imported tensor; it is bound to the tensor's scope. Once
 * the tensor is closed (or its arena), every transfer throws {@link IllegalStateException}, and so
 * it does once the context is closed; closing the tensor while a transfer runs on another thread
 * fails instead of releasing the buffer under it.
 *
 * <p>Thread safety: methods may be called from any thread (for a tensor imported into a confined
 * arena, only from that arena's thread).
 *
 * @since 0.1
 */
public final class OpenCLTensorView {

    private final OpenCLContext context;
    private final MemorySegment mem;
    /** Where the elements lie in the buffer: {@code byte_offset} from its start. */
    private final TensorLayout layout;

    private OpenCLTensorView(OpenCLContext context, MemorySegment mem, TensorLayout layout) {
        this.context = context;
        this.mem = mem;
        this.layout = layout;
    }

    /**
     * Resolves an imported {@code kDLOpenCL} tensor to its buffer in a context.
     *
     * @param tensor  the imported tensor
     * @param context the context of the device the tensor is on
     * @return the view
     * @throws UnsupportedDeviceException if the tensor is not on OpenCL, or on another device id
     * @throws InvalidTensorException     if the handle is not a buffer of this context, or the
     *                                    elements leave the buffer
     * @throws IllegalStateException      if the tensor or the context is closed
     */
    public static OpenCLTensorView of(ImportedTensor tensor, OpenCLContext context) {
        if (tensor.device().deviceType() != DLDeviceType.OPENCL.code()) {
            throw new UnsupportedDeviceException(tensor.device(), "not an OpenCL tensor: " + tensor.device());
        }
        if (tensor.device().deviceId() != context.device().deviceId()) {
            throw new UnsupportedDeviceException(tensor.device(), "the tensor is on " + tensor.device()
                    + " but the context is on OpenCL device " + context.device().deviceId());
        }
        MemorySegment mem = Downcalls.requireAlive(Downcalls.bound(tensor.dataAddress(), tensor.scope()), "ImportedTensor");
        TensorLayout layout = tensor.layout();
        TensorExtent extent = layout.extent();
        if (layout.elementCount() > 0) {
            checkBuffer(mem, context);
            long size = CLBuffers.getMemObjectInfo(mem, CL.MEM_SIZE, JAVA_LONG);
            if (!layout.fitsIn(size)) {
                long byteOffset = layout.byteOffset();
                throw new InvalidTensorException("DLTensor.byte_offset " + byteOffset + " with shape "
                        + Arrays.toString(layout.shape()) + " and strides " + Arrays.toString(layout.strides()) + " reaches bytes ["
                        + (byteOffset + extent.startByte()) + ", " + (byteOffset + extent.endByte()) + ") of a " + size + "-byte cl_mem");
            }
        }
        return new OpenCLTensorView(context, mem, layout);
    }

    /** Rejects anything but a buffer created in {@code context}, without dereferencing blindly. */
    private static void checkBuffer(MemorySegment mem, OpenCLContext context) {
        String handle = "DLTensor.data 0x" + Long.toHexString(mem.address());
        if (mem.address() % 8 != 0) {
            throw new InvalidTensorException(handle + " is not a cl_mem: misaligned");
        }
        // Every ICD object starts with its platform's dispatch table pointer.
        Optional<Long> dispatch = AddressProbe.peekWord(mem.address());
        Optional<Long> expected = AddressProbe.peekWord(context.context().address());
        if (dispatch.isEmpty()) {
            throw new InvalidTensorException(handle + " is not a cl_mem: the address is not readable");
        }
        if (!dispatch.equals(expected)) {
            throw new InvalidTensorException(handle + " is not a cl_mem of this OpenCL platform");
        }
        int type;
        long owner;
        try {
            type = (int) CLBuffers.getMemObjectInfo(mem, CL.MEM_TYPE, JAVA_INT);
            owner = CLBuffers.getMemObjectInfo(mem, CL.MEM_CONTEXT, JAVA_LONG);
        } catch (OpenCLException e) {
            throw new InvalidTensorException(handle + " is not a valid cl_mem: " + e.getMessage(), e);
        }
        if (type != CL.MEM_OBJECT_BUFFER) {
            throw new InvalidTensorException(handle + " is a cl_mem of type 0x" + Integer.toHexString(type) + ", not a buffer");
        }
        if (owner != context.context().address()) {
            throw new InvalidTensorException(handle + " belongs to another OpenCL context");
        }
    }

    /**
     * {@return the {@code cl_mem} buffer handle, for passing to kernels; bound to the imported
     * tensor's scope, so that jdlpack refuses it once the tensor is closed}
     */
    public MemorySegment handle() {
        return mem;
    }

    /** {@return the element type, shape, strides, and {@code byte_offset} inside the buffer} */
    public TensorLayout layout() {
        return layout;
    }

    /**
     * Reads every element into a host tensor of the same dtype and shape.
     *
     * @param destination where the elements go, in any layout
     * @throws IllegalStateException if the tensor or the context is closed
     */
    public void readTo(HostTensorView destination) {
        StridedTransfer.read(transfers(), layout, destination);
    }

    /**
     * Reads a float32 tensor into an array, in row-major order.
     *
     * @return the elements
     * @throws IllegalStateException if the tensor or the context is closed
     */
    public float[] readFloats() {
        try (Arena arena = Arena.ofConfined()) {
            HostTensorView host = float32Host(arena, "readFloats");
            readTo(host);
            float[] values = new float[(int) layout.elementCount()];
            host.copyTo(values);
            return values;
        }
    }

    /**
     * Writes every element from a host tensor of the same dtype and shape.
     *
     * @param source the elements, in any layout
     * @throws IllegalStateException if the tensor or the context is closed
     */
    public void writeFrom(HostTensorView source) {
        StridedTransfer.write(transfers(), layout, source);
    }

    /**
     * Writes float32 values from an array, in row-major order.
     *
     * @param values exactly as many values as the tensor has elements
     * @throws IllegalStateException if the tensor or the context is closed
     */
    public void writeFloats(float[] values) {
        try (Arena arena = Arena.ofConfined()) {
            HostTensorView host = float32Host(arena, "writeFloats");
            host.copyFrom(values);
            writeFrom(host);
        }
    }

    /** Compact host memory for this float32 tensor's elements. */
    private HostTensorView float32Host(Arena arena, String operation) {
        if (!layout.dtype().equals(DLDataType.FLOAT32)) {
            throw new IllegalArgumentException(operation + " needs float32, the tensor is " + layout.dtype());
        }
        return HostTensorView.of(arena.allocate(layout.elementCount() * 4, 256), DLDataType.FLOAT32, layout.shape());
    }

    /**
     * Blocking buffer and rectangle transfers on the context's queue. Checks first that the tensor
     * and the context are open, with a clear message; each OpenCL call checks again, race-free.
     */
    private StridedTransfer.Device transfers() {
        MemorySegment queue = context.queue();
        MemorySegment buffer = Downcalls.requireAlive(mem, "ImportedTensor");
        return new StridedTransfer.Device() {
            @Override
            public void copyContiguous(boolean toHost, long deviceOffset, MemorySegment host) {
                if (toHost) {
                    CLBuffers.enqueueReadBuffer(queue, buffer, deviceOffset, host);
                } else {
                    CLBuffers.enqueueWriteBuffer(queue, buffer, deviceOffset, host);
                }
            }

            @Override
            public void copyPitched(boolean toHost, long deviceOffset, long devicePitch, MemorySegment host, long hostPitch,
                                    long rowBytes, long rows) {
                if (toHost) {
                    CLBuffers.enqueueReadBufferRect(queue, buffer, deviceOffset, devicePitch, host, hostPitch, rowBytes, rows);
                } else {
                    CLBuffers.enqueueWriteBufferRect(queue, buffer, deviceOffset, devicePitch, host, hostPitch, rowBytes, rows);
                }
            }

            @Override
            public void finish() {
                // every transfer above is blocking
            }
        };
    }

    @Override
    public String toString() {
        return "OpenCLTensorView[cl_mem 0x" + Long.toHexString(mem.address()) + ", " + layout + "]";
    }
}
