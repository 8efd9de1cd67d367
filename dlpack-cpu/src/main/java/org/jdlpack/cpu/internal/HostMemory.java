package org.jdlpack.cpu.internal;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

import org.jdlpack.cpu.OwnedHostTensor;

/**
 * What an {@link OwnedHostTensor}'s memory is, for the sibling bridge that hands it to a library
 * reading raw pointers (ONNX Runtime), and not for users: {@link #elements} is the memory unchecked
 * (a {@code HostTensorPool} tensor's block stays accessible after its release, when it is the next
 * taker's), so the bridge reads it only under a reference of its own on the tensor; {@link #wrapped}
 * is the memory a tensor made by {@code OwnedHostTensor.wrap} does not own: a reference cannot stop
 * the caller from closing that segment's arena, so the bridge checks it itself.
 *
 * <p>Set once by {@code OwnedHostTensor}'s class initializer, so that neither accessor is part of
 * its public API. Thread safety: any thread.
 */
public final class HostMemory {

    /** The two readings, implemented by {@code OwnedHostTensor}. */
    public interface Access {
        /**
         * {@return the bytes the elements reach, element 0 first where no stride is negative, unchecked}
         *
         * @param tensor the tensor
         */
        MemorySegment elements(OwnedHostTensor tensor);

        /**
         * {@return the caller's segment of a wrapped tensor, or null}
         *
         * @param tensor the tensor
         */
        MemorySegment wrapped(OwnedHostTensor tensor);
    }

    private static volatile Access access;

    private HostMemory() {
    }

    /**
     * Installs the accessor; called once, by {@code OwnedHostTensor}.
     *
     * @param accessor the readings
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
     * tensor (an export), which keeps a pooled block from being taken again}
     *
     * @param tensor the tensor; its class is initialized, so the accessor is installed
     */
    public static MemorySegment elements(OwnedHostTensor tensor) {
        return access.elements(tensor);
    }

    /**
     * {@return the data segment of a tensor that wraps memory it does not own (its scope is the
     * caller's to close), or null when the tensor allocated the memory itself (only its last
     * reference frees it)}
     *
     * @param tensor the tensor; its class is initialized, so the accessor is installed
     */
    public static MemorySegment wrapped(OwnedHostTensor tensor) {
        return access.wrapped(tensor);
    }
}
