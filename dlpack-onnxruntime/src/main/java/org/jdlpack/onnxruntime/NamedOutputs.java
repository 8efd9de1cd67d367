package org.jdlpack.onnxruntime;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jdlpack.cpu.OwnedHostTensor;

/**
 * What {@link CopiedOutputs} and {@link AllocatedOutputs} share: one run's outputs as
 * {@link OwnedHostTensor}s by name, closed together. Any thread.
 */
abstract class NamedOutputs implements AutoCloseable {

    private final Map<String, OwnedHostTensor> tensors;
    /** What messages call these outputs ("copied", "allocated"). */
    private final String kind;
    private final AtomicBoolean closed = new AtomicBoolean();

    NamedOutputs(LinkedHashMap<String, OwnedHostTensor> tensors, String kind) {
        this.tensors = Collections.unmodifiableMap(tensors);
        this.kind = kind;
    }

    /** {@return the outputs by name, in the order the run asked for them} */
    public Map<String, OwnedHostTensor> tensors() {
        return tensors;
    }

    /**
     * The output of that name.
     *
     * @param name an output name asked for in the run
     * @return its tensor
     * @throws NoSuchElementException naming the outputs there are, if there is none of that name
     */
    public OwnedHostTensor get(String name) {
        OwnedHostTensor tensor = tensors.get(name);
        if (tensor == null) {
            throw new NoSuchElementException("no " + kind + " output named " + name + "; the run " + kind + " " + tensors.keySet());
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
}
