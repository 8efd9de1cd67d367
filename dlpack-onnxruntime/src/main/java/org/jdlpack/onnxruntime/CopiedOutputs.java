package org.jdlpack.onnxruntime;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jdlpack.cpu.OwnedHostTensor;

/**
 * The outputs ONNX Runtime allocated itself in a run (those whose shape is known only after the
 * run, or that were not pinned), each copied into an {@link OwnedHostTensor} that exports to any
 * DLPack consumer. ONNX Runtime's Java API hands such outputs out only as copies on the Java
 * heap, so each costs two copies: ONNX Runtime's into a heap buffer and this one into native
 * memory. Pin an output ({@link OrtBridge#output}) whenever its shape is known before the run.
 *
 * <p>Closing closes every tensor (their exports keep their memory alive). Safe to use from any
 * thread.
 */
public final class CopiedOutputs implements AutoCloseable {

    /** Why the tensors here are copies. */
    public static final String COPY_REASON = "ONNX Runtime allocated this output itself, and its Java API returns such outputs "
            + "only as heap copies; its values were copied once more into an OwnedHostTensor. Pin the output to avoid both copies";

    /** No outputs copied. */
    static final CopiedOutputs NONE = new CopiedOutputs(new LinkedHashMap<>());

    private final Map<String, OwnedHostTensor> tensors;
    private final AtomicBoolean closed = new AtomicBoolean();

    CopiedOutputs(LinkedHashMap<String, OwnedHostTensor> tensors) {
        this.tensors = Collections.unmodifiableMap(tensors);
    }

    /** {@return the copied outputs by name, in the order ONNX Runtime returned them} */
    public Map<String, OwnedHostTensor> tensors() {
        return tensors;
    }

    /**
     * The copied output of that name.
     *
     * @param name an output name asked for in the run
     * @return its tensor
     * @throws NoSuchElementException naming the outputs there are, if there is none of that name
     */
    public OwnedHostTensor get(String name) {
        OwnedHostTensor tensor = tensors.get(name);
        if (tensor == null) {
            throw new NoSuchElementException("no copied output named " + name + "; the run copied " + tensors.keySet());
        }
        return tensor;
    }

    /**
     * Closes every tensor not closed yet; their exports keep their memory alive. Closing again
     * does nothing.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        for (OwnedHostTensor tensor : tensors.values()) {
            try {
                tensor.close();
            } catch (IllegalStateException alreadyClosed) {
                // closed by its user already: nothing more to drop
            }
        }
    }

    @Override
    public String toString() {
        return "CopiedOutputs" + tensors.keySet();
    }
}
