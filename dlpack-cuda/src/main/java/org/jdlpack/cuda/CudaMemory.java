package org.jdlpack.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Objects;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLDevice;
import org.jdlpack.abi.DLDeviceType;
import org.jdlpack.abi.ExportOwner;
import org.jdlpack.abi.ExportOptions;
import org.jdlpack.abi.ManagedTensorHandle;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.TensorSpec;

/**
 * CUDA memory owned from Java: device memory ({@code kDLCUDA}), page-locked host memory
 * ({@code kDLCUDAHost}) or managed memory ({@code kDLCUDAManaged}), allocated here or wrapped.
 *
 * <p>Ownership follows {@link ExportOwner}: this object holds one reference until {@link #close()},
 * each export one more until its consumer calls the deleter; the memory is freed with the matching
 * CUDA call when the last one goes, on whichever thread that is. The deleter sets the device it
 * needs first and never throws. Pinned and managed memory are also host-accessible:
 * {@link #hostSegment()} and dlpack-cpu's {@code HostTensor} read them directly.
 *
 * <p>Thread safety: every method may be called from any thread.
 */
public final class CudaMemory implements AutoCloseable {

    /** Where the memory lives, and the DLPack device type that says so. */
    public enum Kind {
        /** {@code cudaMalloc}: device memory, {@code kDLCUDA}. */
        DEVICE(DLDeviceType.CUDA),
        /** {@code cudaMallocHost}: page-locked host memory, {@code kDLCUDAHost}. */
        PINNED(DLDeviceType.CUDA_HOST),
        /** {@code cudaMallocManaged}: unified memory, {@code kDLCUDAManaged}. */
        MANAGED(DLDeviceType.CUDA_MANAGED);

        private final DLDeviceType deviceType;

        Kind(DLDeviceType deviceType) {
            this.deviceType = deviceType;
        }

        /**
         * The DLPack device type of this kind of memory.
         *
         * @return the device type
         */
        public DLDeviceType deviceType() {
            return deviceType;
        }
    }

    private final Kind kind;
    private final int device;
    private final long address;
    private final long byteSize;
    private final Arena hostScope;
    private final ExportOwner owner;

    private CudaMemory(Kind kind, int device, long address, long byteSize, Runnable free) {
        this.kind = kind;
        this.device = device;
        this.address = address;
        this.byteSize = byteSize;
        // Host views of pinned and managed memory die before the memory is freed.
        this.hostScope = Arena.ofShared();
        this.owner = ExportOwner.of(this, () -> {
            hostScope.close();
            free.run();
        });
    }

    /**
     * Allocates CUDA memory.
     *
     * @param kind   device, pinned or managed
     * @param device the CUDA device ordinal (for pinned memory, the device it is associated with)
     * @param bytes  the size, more than 0
     * @return the memory, holding the Java side's reference
     * @throws CudaException if CUDA refuses (no driver, no device, out of memory)
     */
    public static CudaMemory allocate(Kind kind, int device, long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("a CUDA allocation needs at least 1 byte, not " + bytes);
        }
        Cudart.requireLibrary();
        CudaRuntime.setDevice(device);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            int rc = switch (kind) {
                case DEVICE -> (int) Cudart.MALLOC.invokeExact(out, bytes);
                case PINNED -> (int) Cudart.MALLOC_HOST.invokeExact(out, bytes);
                case MANAGED -> (int) Cudart.MALLOC_MANAGED.invokeExact(out, bytes, Cudart.MEM_ATTACH_GLOBAL);
            };
            Cudart.check(rc, switch (kind) {
                case DEVICE -> "cudaMalloc";
                case PINNED -> "cudaMallocHost";
                case MANAGED -> "cudaMallocManaged";
            });
            long pointer = out.get(ADDRESS, 0).address();
            return new CudaMemory(kind, device, pointer, bytes, () -> free(kind, device, pointer));
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /**
     * Wraps CUDA memory allocated elsewhere; {@code release} runs once, from any thread, when this
     * object is closed and every export of it has been deleted.
     *
     * @param kind    what the memory is
     * @param device  its CUDA device ordinal
     * @param address the pointer
     * @param bytes   its size
     * @param release frees it, or does nothing when someone else does
     * @return the memory
     */
    public static CudaMemory wrap(Kind kind, int device, long address, long bytes, Runnable release) {
        if (address == 0 || bytes <= 0) {
            throw new IllegalArgumentException("CUDA memory at 0x" + Long.toHexString(address) + " of " + bytes + " bytes");
        }
        return new CudaMemory(kind, device, address, bytes, Objects.requireNonNull(release, "release"));
    }

    private static void free(Kind kind, int device, long pointer) {
        CudaRuntime.setDevice(device); // the deleter may run on a thread with another current device
        try {
            MemorySegment segment = MemorySegment.ofAddress(pointer);
            if (kind == Kind.PINNED) {
                Cudart.check((int) Cudart.FREE_HOST.invokeExact(segment), "cudaFreeHost");
            } else {
                Cudart.check((int) Cudart.FREE.invokeExact(segment), "cudaFree");
            }
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /**
     * The kind of memory.
     *
     * @return device, pinned or managed
     */
    public Kind kind() {
        return kind;
    }

    /**
     * The CUDA device ordinal.
     *
     * @return the device
     */
    public int device() {
        return device;
    }

    /**
     * The pointer.
     *
     * @return the device (or host, for pinned memory) address
     */
    public long address() {
        return address;
    }

    /**
     * The size.
     *
     * @return bytes
     */
    public long byteSize() {
        return byteSize;
    }

    /**
     * The DLPack device of this memory.
     *
     * @return {@code kDLCUDA}, {@code kDLCUDAHost} or {@code kDLCUDAManaged} with the device id
     */
    public DLDevice dlDevice() {
        return DLDevice.of(kind.deviceType(), kind == Kind.PINNED ? 0 : device);
    }

    /**
     * The memory as a host segment, for pinned and managed memory; it becomes inaccessible when
     * the memory is freed.
     *
     * @return the segment
     * @throws UnsupportedOperationException for device memory, which the CPU cannot address
     */
    @SuppressWarnings("restricted")
    public MemorySegment hostSegment() {
        if (kind == Kind.DEVICE) {
            throw new UnsupportedOperationException("CUDA device memory is not host-accessible; copy it with CudaTensor");
        }
        return MemorySegment.ofAddress(address).reinterpret(byteSize, hostScope, null);
    }

    /**
     * Copies host memory in (blocking {@code cudaMemcpy}).
     *
     * @param offset where, in bytes
     * @param source native host memory
     */
    public void copyFromHost(long offset, MemorySegment source) {
        Objects.checkFromIndexSize(offset, source.byteSize(), byteSize);
        CudaTensor.memcpy(MemorySegment.ofAddress(address + offset), source, source.byteSize(), device);
    }

    /**
     * Copies memory out to the host (blocking {@code cudaMemcpy}).
     *
     * @param offset      where, in bytes
     * @param destination native host memory
     */
    public void copyToHost(long offset, MemorySegment destination) {
        Objects.checkFromIndexSize(offset, destination.byteSize(), byteSize);
        CudaTensor.memcpy(destination, MemorySegment.ofAddress(address + offset), destination.byteSize(), device);
    }

    /**
     * Exports part of the memory as a DLPack tensor on this memory's device.
     *
     * @param structKind which struct to build
     * @param dtype      the element type
     * @param shape      the extents
     * @param strides    strides in elements, or null for compact row-major
     * @param byteOffset where element 0 is, in bytes from {@link #address()}
     * @return the handle
     * @throws IllegalArgumentException if the elements would leave the memory
     */
    public ManagedTensorHandle export(ManagedTensorKind structKind, DLDataType dtype, long[] shape, long[] strides, long byteOffset) {
        MemorySegment data = kind == Kind.DEVICE ? MemorySegment.ofAddress(address) : hostSegment();
        TensorSpec.Builder builder = TensorSpec.builder(data, dtype, shape).byteOffset(byteOffset).device(dlDevice()).capacity(byteSize);
        if (strides != null) {
            builder.strides(strides);
        }
        return owner.export(builder.build(), ExportOptions.of(structKind));
    }

    /**
     * The reference count: 1 until closed, plus one per live export.
     *
     * @return the count; 0 once freed
     */
    public long references() {
        return owner.references();
    }

    /**
     * Drops the Java side's reference; the memory is freed now, or when the last export is
     * deleted.
     *
     * @throws IllegalStateException if already closed
     */
    @Override
    public void close() {
        owner.close();
    }

    @Override
    public String toString() {
        return "CudaMemory[" + kind + " 0x" + Long.toHexString(address) + ", " + byteSize + " bytes, " + dlDevice() + "]";
    }
}
