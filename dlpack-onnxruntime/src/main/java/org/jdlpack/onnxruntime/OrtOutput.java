package org.jdlpack.onnxruntime;

import java.util.function.Supplier;

import ai.onnxruntime.OnnxTensor;
import org.jdlpack.abi.TensorLayout;
import org.jdlpack.cpu.HostTensorView;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.cpu.internal.HostMemory;

/**
 * A pinned output: ONNX Runtime writes a session output straight into the memory of an
 * {@link OwnedHostTensor}, which then exports to any DLPack consumer (NumPy through dlpack-python,
 * C, Arrow) without a copy. Made by {@link OrtBridge#output} or {@link OrtBridge#allocateOutput};
 * passed to {@link OrtBridge#run}.
 *
 * {@snippet :
 * try (OwnedHostTensor logits = pool.take(DLDataType.FLOAT32, rows, 4);   // a HostTensorPool's block
 *      OrtOutput out = ort.output(logits)) {                               // ONNX Runtime writes there
 *     ort.run(session, Map.of("x", x), Map.of("logits", out));
 *     float first = logits.host().getFloatAt(0, 0);                       // read in place
 *     nativeLibrary.consume(logits.export().consume());                   // to any DLPack consumer, no copy
 * }
 * }
 *
 * <p>The output holds a reference on the tensor's memory ({@link OwnedHostTensor#retain()}), so the
 * memory outlives an early {@code close()} of the tensor until this output is closed: ONNX
 * Runtime never writes into freed memory. The {@code OnnxTensor} ONNX Runtime writes through
 * never leaves this object.
 *
 * <p>Threads: as {@link OrtInput}; in addition one output is written by one run at a time: a
 * second run that names it while the first has not returned is refused with
 * {@link IllegalStateException}, as both would write into the same memory.
 *
 * <p>An output forgotten unclosed is released by the safety net after garbage collection and
 * reported as a leak by its own name ({@code OrtOutput[... in OwnedHostTensor[...]]}).
 *
 * @since 0.1
 */
public final class OrtOutput implements AutoCloseable {

    private final OnnxTensor tensor;
    private final OwnedHostTensor memory;
    private final TensorLayout layout;
    private final Lease lease;

    OrtOutput(OnnxTensor tensor, OwnedHostTensor memory, boolean shared, Runnable releaseMemory) {
        this.tensor = tensor;
        this.memory = memory;
        this.layout = memory.layout();
        // Neither the name nor the action may reach this object: the safety net's entry keeps both.
        TensorLayout layout = this.layout;
        Supplier<String> name = () -> "OrtOutput[" + layout + " in " + memory + "]";
        this.lease = Lease.valueThenMemory(shared, this, name, tensor::close, releaseMemory);
    }

    /**
     * {@return the tensor ONNX Runtime writes into: yours if you passed it to
     * {@link OrtBridge#output}, this output's if it allocated it (closed with this output, while
     * its exports live on)}
     */
    public OwnedHostTensor tensor() {
        return memory;
    }

    /** {@return a view of the values, valid while this output (or the tensor) holds the memory} */
    public HostTensorView host() {
        return memory.host();
    }

    /** {@return the output's layout: compact row-major} */
    public TensorLayout layout() {
        return layout;
    }

    /** {@return the address of element 0, where ONNX Runtime writes} */
    public long dataAddress() {
        return HostMemory.elements(memory).address(); // the output holds the memory: no scope of its own needed
    }

    /** {@return whether this output may be used from any thread ({@link OrtBridge#shared()})} */
    public boolean isShared() {
        return lease.isShared();
    }

    /** {@return whether this output is still open} */
    public boolean isOpen() {
        return lease.isOpen();
    }

    OnnxTensor borrow() {
        lease.borrow(true); // the output's retain holds memory its tensor owns (a wrapped tensor is refused as an output)
        return tensor;
    }

    void giveBack() {
        lease.giveBack(); // keeps this output reachable until its release has run
    }

    /**
     * Closes the {@code OnnxTensor}, then drops this output's reference on the memory (and closes
     * the tensor if this output allocated it); for a shared output a run still writes, when that
     * run returns. Exports of the tensor keep the memory alive. Closing again does nothing.
     *
     * @throws WrongThreadException if this output is confined to another thread (it stays open)
     */
    @Override
    public void close() {
        lease.close();
    }

    @Override
    public String toString() {
        return "OrtOutput[" + layout + " in " + memory + ", " + lease + "]";
    }
}
