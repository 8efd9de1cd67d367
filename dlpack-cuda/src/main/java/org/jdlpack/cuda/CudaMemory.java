package org.jdlpack.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.function.LongConsumer;

import org.jdlpack.abi.DLDevice;
import org.jdlpack.abi.DLDeviceType;
import org.jdlpack.abi.ExportOwner;
import org.jdlpack.abi.ExportOptions;
import org.jdlpack.abi.ExportedTensor;
import org.jdlpack.abi.TensorLayout;
import org.jdlpack.abi.TensorSpec;
import org.jdlpack.abi.plumbing.Downcalls;

/**
 * CUDA memory owned from Java: device memory ({@code kDLCUDA}), page-locked host memory
 * ({@code kDLCUDAHost}) or managed memory ({@code kDLCUDAManaged}), allocated here or wrapped.
 *
 * <p>Ownership follows {@link ExportOwner}: this object holds one reference until {@link #close()},
 * each export one more until its consumer calls the deleter; the memory is freed with the matching
 * CUDA call when the last one goes, on whichever thread that is. The deleter makes the memory's
 * device current for the free, then makes the thread's previous device current again, and never
 * throws. Pinned and managed memory are also host-accessible: {@link #hostSegment()} and
 * dlpack-cpu's {@code HostTensorView} read them directly.
 *
 * <p>Lifetime: after {@link #close()} every copy, export and host segment of this object throws
 * {@link IllegalStateException}. The check is part of each native call: a close while a copy on
 * another thread is running fails and leaves the memory open, and a copy after a close fails;
 * neither reaches freed memory.
 *
 * <p>Thread safety: every method may be called from any thread.
 *
 * @since 0.1
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

        /** {@return the DLPack device type of this kind of memory} */
        public DLDeviceType deviceType() {
            return deviceType;
        }
    }

    private final Kind kind;
    private final int device;
    private final long address;
    private final long byteSize;
    /** The Java side's lifetime: ends at {@link #close()}, while exports may keep the memory itself. */
    private final Arena lifetime;
    /** {@link #address} bound to {@link #lifetime}: every copy and export goes through it. */
    private final MemorySegment pointer;
    private final ExportOwner owner;

    private CudaMemory(Kind kind, int device, long address, long byteSize, Runnable free) {
        this.kind = kind;
        this.device = device;
        this.address = address;
        this.byteSize = byteSize;
        this.lifetime = Arena.ofShared();
        this.pointer = Downcalls.bound(address, lifetime.scope());
        this.owner = ExportOwner.of(this, free);
    }

    /**
     * Allocates CUDA memory.
     *
     * @param kind    device, pinned or managed
     * @param ordinal the CUDA device ordinal (for pinned memory, the device it is associated with)
     * @param bytes   the size, more than 0
     * @return the memory, holding the Java side's reference
     * @throws CudaException if CUDA refuses (no driver, no device, out of memory)
     */
    public static CudaMemory allocate(Kind kind, int ordinal, long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("a CUDA allocation needs at least 1 byte, not " + bytes);
        }
        long pointer = CurrentDevice.CUDART.call(ordinal, () -> switch (kind) {
            case DEVICE -> CudartMemory.malloc(bytes);
            case PINNED -> CudartMemory.mallocHost(bytes);
            case MANAGED -> CudartMemory.mallocManaged(bytes);
        });
        return allocated(kind, ordinal, pointer, bytes, CurrentDevice.CUDART,
                kind == Kind.PINNED ? CudartMemory::freeHost : CudartMemory::free);
    }

    /**
     * Memory this class allocated: {@code free} releases it with {@code device} current, and the
     * releasing thread's previous current device is made current again, since a deleter runs on a
     * thread the consumer owns.
     */
    static CudaMemory allocated(Kind kind, int device, long pointer, long bytes, CurrentDevice devices, LongConsumer free) {
        return new CudaMemory(kind, device, pointer, bytes, () -> devices.run(device, () -> free.accept(pointer)));
    }

    /**
     * Wraps CUDA memory allocated elsewhere; {@code release} runs once, from any thread, when this
     * object is closed and every export of it has been deleted.
     *
     * @param kind    what the memory is
     * @param ordinal its CUDA device ordinal
     * @param address the pointer
     * @param bytes   its size
     * @param release frees it, or does nothing when someone else does
     * @return the memory
     */
    public static CudaMemory wrap(Kind kind, int ordinal, long address, long bytes, Runnable release) {
        if (address == 0 || bytes <= 0) {
            throw new IllegalArgumentException("CUDA memory at 0x" + Long.toHexString(address) + " of " + bytes + " bytes");
        }
        return new CudaMemory(kind, ordinal, address, bytes, Objects.requireNonNull(release, "release"));
    }

    /** {@return the kind of memory: device, pinned or managed} */
    public Kind kind() {
        return kind;
    }

    /** {@return the CUDA device ordinal (the {@code device_id} of {@link #dlDevice()})} */
    public int ordinal() {
        return device;
    }

    /** {@return the pointer: the device (or host, for pinned memory) address} */
    public long address() {
        return address;
    }

    /** {@return the size in bytes} */
    public long byteSize() {
        return byteSize;
    }

    /**
     * {@return the DLPack device of this memory: {@code kDLCUDA}, {@code kDLCUDAHost} or
     * {@code kDLCUDAManaged} with the device id}
     */
    public DLDevice dlDevice() {
        return DLDevice.of(kind.deviceType(), kind == Kind.PINNED ? 0 : device);
    }

    /**
     * The memory as a host segment, for pinned and managed memory. It becomes inaccessible when this
     * object is closed, even while exports keep the memory itself alive for their consumers.
     *
     * @return the segment
     * @throws UnsupportedOperationException for device memory, which the CPU cannot address
     * @throws IllegalStateException         if this object is closed
     */
    @SuppressWarnings("restricted")
    public MemorySegment hostSegment() {
        if (kind == Kind.DEVICE) {
            throw new UnsupportedOperationException("CUDA device memory is not host-accessible; copy it with CudaTensorView");
        }
        return live().reinterpret(byteSize); // keeps the lifetime: inaccessible after close
    }

    /**
     * Copies host memory in (blocking {@code cudaMemcpy}).
     *
     * @param offset where, in bytes
     * @param source native host memory
     * @throws IllegalStateException if this object is closed
     */
    public void copyFromHost(long offset, MemorySegment source) {
        Objects.checkFromIndexSize(offset, source.byteSize(), byteSize);
        MemorySegment destination = at(offset);
        CurrentDevice.CUDART.run(device, () -> CudartMemory.memcpy(destination, source, source.byteSize()));
    }

    /**
     * Copies memory out to the host (blocking {@code cudaMemcpy}).
     *
     * @param offset      where, in bytes
     * @param destination native host memory
     * @throws IllegalStateException if this object is closed
     */
    public void copyToHost(long offset, MemorySegment destination) {
        Objects.checkFromIndexSize(offset, destination.byteSize(), byteSize);
        MemorySegment source = at(offset);
        CurrentDevice.CUDART.run(device, () -> CudartMemory.memcpy(destination, source, destination.byteSize()));
    }

    /** The address {@code offset} bytes in, bound to this object's lifetime. */
    private MemorySegment at(long offset) {
        return Downcalls.bound(address + offset, live().scope());
    }

    /** The pointer, after a check with a clear message; FFM checks again, race-free, at each call. */
    private MemorySegment live() {
        return Downcalls.requireAlive(pointer, "CudaMemory");
    }

    /**
     * Exports elements of this memory as a {@code DLManagedTensorVersioned} on its device.
     *
     * @param layout where the elements lie, {@code byte_offset} counted from {@link #address()}
     * @return the handle
     * @throws IllegalArgumentException if the elements would leave the memory
     * @throws IllegalStateException    if this object is closed
     */
    public ExportedTensor export(TensorLayout layout) {
        return export(layout, ExportOptions.VERSIONED);
    }

    /**
     * Exports elements of this memory as a DLPack tensor on its device, as {@code options} say.
     *
     * @param layout  where the elements lie, {@code byte_offset} counted from {@link #address()}
     * @param options the struct kind, how {@code byte_offset} is written, read-only
     * @return the handle
     * @throws IllegalArgumentException if the elements would leave the memory
     * @throws IllegalStateException    if this object is closed
     */
    public ExportedTensor export(TensorLayout layout, ExportOptions options) {
        MemorySegment data = kind == Kind.DEVICE ? live() : hostSegment();
        return owner.export(TensorSpec.builder(data, layout).device(dlDevice()).capacity(byteSize).build(), options);
    }

    /** {@return the reference count: 1 until closed, plus one per live export; 0 once freed} */
    public long references() {
        return owner.references();
    }

    /**
     * Drops the Java side's reference; the memory is freed now, or when the last export is
     * deleted. From here on every method but {@link #references()} and the accessors throws
     * {@link IllegalStateException}, and host segments are inaccessible.
     *
     * @throws IllegalStateException if already closed, or while a copy on another thread is using
     *                               the memory (then nothing is closed)
     */
    @Override
    public void close() {
        Downcalls.close(lifetime, "CudaMemory");
        owner.close();
    }

    @Override
    public String toString() {
        return "CudaMemory[" + kind + " 0x" + Long.toHexString(address) + ", " + byteSize + " bytes, " + dlDevice() + "]";
    }
}
