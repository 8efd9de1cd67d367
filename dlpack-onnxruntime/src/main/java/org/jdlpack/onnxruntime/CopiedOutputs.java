package org.jdlpack.onnxruntime;

import java.util.LinkedHashMap;

import org.jdlpack.cpu.OwnedHostTensor;

/**
 * The outputs ONNX Runtime allocated itself in a run (those whose shape is known only after the
 * run, or that were not pinned), each copied into an {@link OwnedHostTensor} that exports to any
 * DLPack consumer. ONNX Runtime's Java API hands such outputs out only as copies on the Java
 * heap, so each costs two copies: ONNX Runtime's into a heap buffer and this one into native
 * memory. Pin an output ({@link OrtBridge#output}) whenever its shape is known before the run.
 *
 * <p>Closing closes every tensor (their exports keep their memory alive). Safe to use from any
 * thread. The C route ({@link OrtCApiSession}) hands such outputs out without either copy
 * ({@link AllocatedOutputs}).
 *
 * @since 0.1
 */
public final class CopiedOutputs extends NamedOutputs {

    /** Why the tensors here are copies. */
    public static final String COPY_REASON = "ONNX Runtime allocated this output itself, and its Java API returns such outputs "
            + "only as heap copies; its values were copied once more into an OwnedHostTensor. Pin the output to avoid both copies";

    /** No outputs copied. */
    static final CopiedOutputs NONE = new CopiedOutputs(new LinkedHashMap<>());

    CopiedOutputs(LinkedHashMap<String, OwnedHostTensor> tensors) {
        super(tensors, "copied");
    }

    @Override
    public String toString() {
        return "CopiedOutputs" + tensors().keySet();
    }
}
