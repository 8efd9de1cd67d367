package org.jdlpack.cuda;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import org.jdlpack.abi.DLDeviceType;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.InvalidTensorException;
import org.jdlpack.abi.TensorLayout;
import org.jdlpack.abi.UnsupportedDeviceException;
import org.jdlpack.abi.plumbing.Downcalls;
import org.jdlpack.cpu.HostTensorView;
import org.jdlpack.cpu.internal.StridedTransfer;

/**
 * A CUDA tensor ({@code kDLCUDA}, {@code kDLCUDAManaged} or {@code kDLCUDAHost}) copied to and
 * from the host.
 *
 * <p>{@link #of} asks the driver what the pointer is ({@code cudaPointerGetAttributes}): device or
 * managed memory, and on which device. The DLPack {@code device_id} is the producer's ordinal and
 * can disagree with the driver's numbering (for example under {@code CUDA_VISIBLE_DEVICES}); the
 * driver's answer is what copies use, and both are reported.
 *
 * <p>Transfers: compact tensors in one {@code cudaMemcpy}; 2-D tensors with contiguous rows in one
 * {@code cudaMemcpy2D}; anything else by copying the span the tensor covers and gathering on the
 * host (reads), or element by element (writes). The stream variants enqueue on the given stream
 * and wait for it.
 *
 * <p>Lifetime: a view of an imported tensor, bound to the tensor's scope: once the tensor is closed
 * (or its arena), every copy throws {@link IllegalStateException}, and closing the tensor while a
 * copy runs on another thread fails instead of freeing memory under it.
 *
 * <p>Thread safety: methods may be called from any thread (for a tensor imported into a confined
 * arena, only from that arena's thread). Each makes the tensor's device current for its copies and
 * then makes the calling thread's previous device current again.
 *
 * @since 0.1
 */
public final class CudaTensorView {

    /** {@code data}, bound to the imported tensor's scope: every copy fails once the tensor is closed. */
    private final MemorySegment data;
    private final int driverDevice;
    private final int memoryType;
    /** Where the elements lie relative to {@link #data}. */
    private final TensorLayout layout;

    private CudaTensorView(MemorySegment data, int driverDevice, int memoryType, ImportedTensor tensor) {
        this.data = data;
        this.driverDevice = driverDevice;
        this.memoryType = memoryType;
        this.layout = tensor.layout();
    }

    /**
     * Resolves an imported CUDA tensor through the driver.
     *
     * @param tensor a {@code kDLCUDA}, {@code kDLCUDAManaged} or {@code kDLCUDAHost} tensor
     * @return the view
     * @throws UnsupportedDeviceException if the tensor is on another device type
     * @throws InvalidTensorException     if the driver does not know the pointer as CUDA memory
     * @throws CudaException              if the driver cannot be asked (no driver, no device)
     * @throws IllegalStateException      if the tensor is closed
     */
    public static CudaTensorView of(ImportedTensor tensor) {
        int type = tensor.device().deviceType();
        if (type != DLDeviceType.CUDA.code() && type != DLDeviceType.CUDA_MANAGED.code() && type != DLDeviceType.CUDA_HOST.code()) {
            throw new UnsupportedDeviceException(tensor.device(), "not a CUDA tensor: " + tensor.device());
        }
        MemorySegment data = Downcalls.requireAlive(Downcalls.bound(tensor.dataAddress(), tensor.scope()), "ImportedTensor");
        if (tensor.layout().elementCount() == 0) {
            return new CudaTensorView(data, tensor.device().deviceId(), Cudart.MEMORY_TYPE_UNREGISTERED, tensor);
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attributes = arena.allocate(Cudart.POINTER_ATTRIBUTES_ROOM, 8);
            CudartMemory.pointerGetAttributes(attributes, data);
            int memoryType = attributes.get(JAVA_INT, 0);
            int device = attributes.get(JAVA_INT, 4);
            boolean expected = switch (memoryType) {
                case Cudart.MEMORY_TYPE_DEVICE, Cudart.MEMORY_TYPE_MANAGED -> type != DLDeviceType.CUDA_HOST.code();
                case Cudart.MEMORY_TYPE_HOST -> type == DLDeviceType.CUDA_HOST.code();
                default -> false;
            };
            if (!expected) {
                throw new InvalidTensorException("DLTensor.data 0x" + Long.toHexString(tensor.dataAddress()) + " on " + tensor.device()
                        + " is cudaMemoryType " + memoryType + " to the driver, not memory of that kind");
            }
            return new CudaTensorView(data, device, memoryType, tensor);
        }
    }

    /** {@return the CUDA device ordinal the driver says the memory is on; may differ from the DLPack {@code device_id}} */
    public int driverDevice() {
        return driverDevice;
    }

    /** {@return whether the driver reports managed (unified) memory} */
    public boolean isManaged() {
        return memoryType == Cudart.MEMORY_TYPE_MANAGED;
    }

    /**
     * Copies every element to a host tensor of the same dtype and shape (blocking).
     *
     * @param destination the host tensor, in any layout
     * @throws IllegalStateException if the imported tensor is closed
     */
    public void readTo(HostTensorView destination) {
        readTo(destination, CudaStream.legacyDefault());
    }

    /**
     * Copies every element to a host tensor on a stream, and waits for that stream.
     *
     * @param destination the host tensor, in any layout
     * @param stream      the stream to copy on
     * @throws IllegalStateException if the imported tensor, or a stream created here, is closed
     */
    public void readTo(HostTensorView destination, CudaStream stream) {
        StridedTransfer.Device device = transfers(stream);
        CurrentDevice.CUDART.run(driverDevice, () -> StridedTransfer.read(device, layout, destination));
    }

    /**
     * Copies every element from a host tensor of the same dtype and shape (blocking).
     *
     * @param source the host tensor, in any layout
     * @throws IllegalStateException if the imported tensor is closed
     */
    public void writeFrom(HostTensorView source) {
        writeFrom(source, CudaStream.legacyDefault());
    }

    /**
     * Copies every element from a host tensor on a stream, and waits for that stream.
     *
     * @param source the host tensor, in any layout
     * @param stream the stream to copy on
     * @throws IllegalStateException if the imported tensor, or a stream created here, is closed
     */
    public void writeFrom(HostTensorView source, CudaStream stream) {
        StridedTransfer.Device device = transfers(stream);
        CurrentDevice.CUDART.run(driverDevice, () -> StridedTransfer.write(device, layout, source));
    }

    /** {@return the imported tensor's layout: {@code byte_offset} from its {@code data} pointer, flags as imported} */
    public TensorLayout layout() {
        return layout;
    }

    /**
     * Asynchronous copies on {@code stream}; finishing synchronises the stream. Checks first that
     * the tensor and the stream are open, with a clear message; each copy checks again, race-free.
     */
    private StridedTransfer.Device transfers(CudaStream stream) {
        MemorySegment queue = stream.segment();
        Downcalls.requireAlive(data, "ImportedTensor");
        return new StridedTransfer.Device() {
            @Override
            public void copyContiguous(boolean toHost, long deviceOffset, MemorySegment host) {
                MemorySegment device = at(deviceOffset);
                CudartMemory.memcpyAsync(toHost ? host : device, toHost ? device : host, host.byteSize(), queue);
            }

            @Override
            public void copyPitched(boolean toHost, long deviceOffset, long devicePitch, MemorySegment host, long hostPitch,
                                    long rowBytes, long rows) {
                MemorySegment device = at(deviceOffset);
                if (toHost) {
                    CudartMemory.memcpy2DAsync(host, hostPitch, device, devicePitch, rowBytes, rows, queue);
                } else {
                    CudartMemory.memcpy2DAsync(device, devicePitch, host, hostPitch, rowBytes, rows, queue);
                }
            }

            @Override
            public void finish() {
                CudartStreams.streamSynchronize(queue);
            }
        };
    }

    /** The device address {@code offset} bytes past {@code data}, bound to the tensor's scope. */
    private MemorySegment at(long offset) {
        return Downcalls.bound(data.address() + offset, data.scope());
    }

    @Override
    public String toString() {
        return "CudaTensorView[0x" + Long.toHexString(data.address()) + " on driver device " + driverDevice + ", " + layout + "]";
    }

}
