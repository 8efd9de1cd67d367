package org.jdlpack.cpu.internal;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.cpu.OwnedHostTensor;

/**
 * The memory an {@link OwnedHostTensor}'s elements reach, for the sibling bridge that hands it to
 * a library reading raw pointers (ONNX Runtime), and not for users: {@link #elements} is the memory
 * unchecked (a {@code HostTensorPool} tensor's block stays accessible after its release, when it
 * is the next taker's), so the bridge reads it only under a reference of its own on the tensor
 * (a retain), and only for a tensor that {@link OwnedHostTensor#ownsMemory() owns} its memory.
 * Back the other way, {@link #owning} makes a tensor over memory that library allocated and frees
 * only when the tensor's release says so (an ONNX Runtime output), which the tensor then owns.
 *
 * <p>Set once by {@code OwnedHostTensor}'s class initializer, so that neither is part of its
 * public API. Thread safety: any thread.
 */
public final class HostMemory {

    /** The reading, implemented by {@code OwnedHostTensor}. */
    @FunctionalInterface
    public interface Access {
        /**
         * {@return the bytes the elements reach, element 0 first where no stride is negative, unchecked}
         *
         * @param tensor the tensor
         */
        MemorySegment elements(OwnedHostTensor tensor);
    }

    /** The making, implemented by {@code OwnedHostTensor}. */
    @FunctionalInterface
    public interface Owning {
        /**
         * {@return a compact row-major tensor over {@code data} that owns it: {@code release} frees it}
         *
         * @param data    the elements, from the first byte; nothing else frees them before {@code release} runs
         * @param dtype   the element type
         * @param shape   the extents
         * @param release frees the memory; runs once, on any thread, and must not refer to the tensor
         */
        OwnedHostTensor over(MemorySegment data, DLDataType dtype, long[] shape, Runnable release);
    }

    private static volatile Access access;
    private static volatile Owning owning;

    private HostMemory() {
    }

    /**
     * Installs the accessor and the maker; called once, by {@code OwnedHostTensor}.
     *
     * @param accessor the reading
     * @param maker    the making
     * @throws IllegalStateException if an accessor was installed already
     */
    public static synchronized void install(Access accessor, Owning maker) {
        if (access != null) {
            throw new IllegalStateException("HostMemory's accessor is installed once, by OwnedHostTensor");
        }
        owning = Objects.requireNonNull(maker, "maker");
        access = Objects.requireNonNull(accessor, "accessor");
    }

    /**
     * {@return the bytes the tensor's elements reach (as {@code tensor.host().segment()}), with no
     * release check and no scope of their own: read them only while holding a reference on the
     * tensor (a retain), which keeps a pooled block from being taken again}
     *
     * @param tensor the tensor; its class is initialized, so the accessor is installed
     */
    public static MemorySegment elements(OwnedHostTensor tensor) {
        return access.elements(tensor);
    }

    /**
     * {@return a compact row-major tensor over memory another library allocated, which the tensor
     * owns ({@link OwnedHostTensor#ownsMemory()} is true, as for a {@code HostTensorPool} block):
     * nothing frees it but {@code release}, which runs once, on whichever thread drops the last
     * reference (the close, an export's deleter, a retain's close, or the safety net)} No copy.
     * The raw segments its views and spec hand out are scoped to end at the release, before the
     * memory is freed; where one is still held by a call in progress then, {@code release} does
     * not run (the memory is kept rather than freed under that call) and the failure is reported.
     *
     * @param data    the elements, from the first byte (a {@code NULL} segment for no elements)
     * @param dtype   the element type
     * @param shape   the extents; the layout's bytes are {@code data}'s size
     * @param release frees the memory; must not refer to the tensor
     */
    public static OwnedHostTensor owning(MemorySegment data, DLDataType dtype, long[] shape, Runnable release) {
        if (owning == null) { // no OwnedHostTensor made yet: its class initializer installs the maker
            try {
                Class.forName(OwnedHostTensor.class.getName(), true, OwnedHostTensor.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                throw new IllegalStateException(e);
            }
        }
        return owning.over(data, dtype, shape, release);
    }
}
