package org.jdlpack.cpu.internal;

import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.function.Function;

import org.jdlpack.cpu.OwnedHostTensor;

/**
 * The memory an {@link OwnedHostTensor} does not own: that of a tensor made by
 * {@code OwnedHostTensor.wrap}, whose arena (or whatever else frees it) belongs to the caller. A
 * reference on the tensor (an export) keeps memory the tensor allocated alive, but cannot stop the
 * caller from closing a wrapped segment's arena; a module that lets a library read the memory
 * through raw pointers (ONNX Runtime) must check and hold that segment's scope itself.
 *
 * <p>Set once by {@code OwnedHostTensor}'s class initializer, so that the accessor is not part of
 * its public API. Thread safety: any thread.
 */
public final class WrappedMemory {

    private static volatile Function<OwnedHostTensor, MemorySegment> access;

    private WrappedMemory() {
    }

    /**
     * Installs the accessor; called once, by {@code OwnedHostTensor}.
     *
     * @param accessor returns a tensor's wrapped segment, or null when the tensor allocated its memory
     * @throws IllegalStateException if an accessor was installed already
     */
    public static synchronized void install(Function<OwnedHostTensor, MemorySegment> accessor) {
        if (access != null) {
            throw new IllegalStateException("WrappedMemory's accessor is installed once, by OwnedHostTensor");
        }
        access = Objects.requireNonNull(accessor, "accessor");
    }

    /**
     * {@return the data segment of a tensor that wraps memory it does not own (its scope is the
     * caller's to close), or null when the tensor allocated the memory itself (only its last
     * reference frees it)}
     *
     * @param tensor the tensor; its class is initialized, so the accessor is installed
     */
    public static MemorySegment of(OwnedHostTensor tensor) {
        return access.apply(tensor);
    }
}
