package org.jdlpack.onnxruntime;

import java.lang.foreign.MemorySegment;
import java.util.Optional;
import java.util.function.Supplier;

import ai.onnxruntime.OnnxTensor;
import org.jdlpack.abi.TensorLayout;

/**
 * A tensor ONNX Runtime reads as a session input: an {@link OnnxTensor} over the memory of an
 * imported, Java-owned or borrowed DLPack tensor, in native byte order, and the hold on that
 * memory that keeps it alive until this object is closed. Made by {@link OrtBridge}'s
 * {@code input} methods; passed to {@link OrtBridge#run}.
 *
 * {@snippet :
 * OrtBridge ort = OrtBridge.of(OrtEnvironment.getEnvironment());
 * try (OrtInput x = ort.input(imported);            // the import moves in: `imported` is dead now
 *      OrtInput mask = ort.input(view)) {           // a view of memory another thread may free: a copy
 *     System.out.println(mask.copyReason().orElse("read in place"));
 *     ort.run(session, Map.of("x", x, "mask", mask), Map.of("y", y));
 * }                                                 // each OnnxTensor closed first, then the memory let go
 * }
 *
 * <p>The {@code OnnxTensor} never leaves this object: ONNX Runtime reads it through a raw
 * pointer, outside the FFM runtime's checks, and does not notice when a closed {@code OnnxTensor}
 * is run, so only {@link OrtBridge#run} hands it to a session, after checking that this input is
 * open and its memory alive. {@link #close()} closes the {@code OnnxTensor} first and then lets
 * go of the memory (closes the moved {@code ImportedTensor}, drops the reference on the
 * {@code OwnedHostTensor}, frees the copy).
 *
 * <p>Threads: an input made by a confined bridge (the default) is used and closed on the thread
 * that made it, and nowhere else ({@link WrongThreadException}). One made by
 * {@link OrtBridge#shared()} may be used by many runs at once on any threads, and closed on any
 * thread; a close during a run takes effect when the last run holding the input returns.
 *
 * <p>An input forgotten unclosed is released by the safety net after garbage collection and
 * reported as a leak by its own name ({@code OrtInput[... from OwnedHostTensor[...]]}), with its
 * creation site when leak tracking is on. What a confined input holds in its thread's arenas (a
 * moved import, a copy) cannot be released from the safety net's thread: close inputs.
 *
 * @since 0.1
 */
public final class OrtInput implements AutoCloseable {

    private final OnnxTensor tensor;
    private final TensorLayout layout;
    private final long address;
    private final Optional<String> copyReason;
    /**
     * Memory this input reads but does not hold, checked before each run (null when the input
     * holds its memory): a view's, confined to this input's thread, so that only this thread can
     * free it and a check suffices.
     */
    private final MemorySegment borrowed;
    /** What the input reads, for messages: made only when one is. */
    private final Supplier<String> source;
    private final Lease lease;

    OrtInput(OnnxTensor tensor, TensorLayout layout, long address, Optional<String> copyReason, MemorySegment borrowed,
             Supplier<String> source, boolean shared, Runnable releaseMemory) {
        this.tensor = tensor;
        this.layout = layout;
        this.address = address;
        this.copyReason = copyReason;
        this.borrowed = borrowed;
        this.source = source;
        // Neither the name nor the action may reach this object: the safety net's entry keeps both.
        Supplier<String> name = () -> "OrtInput[" + layout + " from " + source.get() + (copyReason.isPresent() ? ", a copy" : ", zero-copy")
                + "]";
        this.lease = Lease.valueThenMemory(shared, this, name, tensor::close, releaseMemory);
    }

    /** {@return the layout ONNX Runtime reads: compact row-major, element type and shape of the source} */
    public TensorLayout layout() {
        return layout;
    }

    /**
     * {@return the address of element 0 as ONNX Runtime reads it: the source's own element 0 when
     * nothing was copied (the proof of zero copy), else the copy's}
     */
    public long dataAddress() {
        return address;
    }

    /** {@return why the values were copied once into compact memory; empty when ONNX Runtime reads the source's memory} */
    public Optional<String> copyReason() {
        return copyReason;
    }

    /** {@return whether ONNX Runtime reads a copy rather than the source's memory} */
    public boolean isCopy() {
        return copyReason.isPresent();
    }

    /** {@return whether this input may be used from any thread ({@link OrtBridge#shared()})} */
    public boolean isShared() {
        return lease.isShared();
    }

    /** {@return whether this input is still open} */
    public boolean isOpen() {
        return lease.isOpen();
    }

    /** Borrows the tensor for one run, after checking this input is open and its memory alive. */
    OnnxTensor borrow() {
        lease.borrow(false);
        if (borrowed != null && !borrowed.scope().isAlive()) {
            lease.giveBack();
            throw memoryFreed();
        }
        return tensor;
    }

    /** {@return the refusal of a run whose borrowed memory was freed} */
    private IllegalStateException memoryFreed() {
        return new IllegalStateException(this + ": the memory of the HostTensorView it reads was freed (its arena or tensor "
                + "was closed) before the run; close the OrtInput before the memory's owner, or pass the owner itself");
    }

    void giveBack() {
        lease.giveBack(); // keeps this input reachable until its release has run
    }

    /**
     * Closes the {@code OnnxTensor}, then releases the memory hold: now, or, for a shared input
     * that runs are still using, when the last of them returns. Closing again does nothing.
     *
     * @throws WrongThreadException if this input is confined to another thread (it stays open)
     */
    @Override
    public void close() {
        lease.close();
    }

    @Override
    public String toString() {
        return "OrtInput[" + layout + " from " + source.get() + (copyReason.isPresent() ? ", a copy" : ", zero-copy") + ", " + lease + "]";
    }
}
