package org.jdlpack.cpu.internal;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

import org.jdlpack.cpu.OwnedHostTensor;

/**
 * The memory an {@link OwnedHostTensor}'s elements reach, for the sibling bridge that hands it to
 * a library reading raw pointers (ONNX Runtime), and not for users: {@link #elements} is the memory
 * unchecked (a {@code HostTensorPool} tensor's block stays accessible after its release, when it
 * is the next taker's), so the bridge reads it only under a reference of its own on the tensor
 * (a retain), and only for a tensor that {@link OwnedHostTensor#ownsMemory() owns} its memory.
 *
 * <p>Set once by {@code OwnedHostTensor}'s class initializer, so that the accessor is not part of
 * its public API. Thread safety: any thread.
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

    private static volatile Access access;

    private HostMemory() {
    }

    /**
     * Installs the accessor; called once, by {@code OwnedHostTensor}.
     *
     * @param accessor the reading
     * @throws IllegalStateException if an accessor was installed already
     */
    public static synchronized void install(Access accessor) {
        if (access != null) {
            throw new IllegalStateException("HostMemory's accessor is installed once, by OwnedHostTensor");
        }
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
}
