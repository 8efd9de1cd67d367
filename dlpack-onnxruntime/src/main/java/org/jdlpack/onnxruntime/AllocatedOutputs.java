package org.jdlpack.onnxruntime;

import java.lang.foreign.MemorySegment;
import java.util.LinkedHashMap;

import org.jdlpack.cpu.OwnedHostTensor;

/**
 * The outputs ONNX Runtime allocated itself in a run of the C route ({@link OrtCApiRun}): those
 * whose shape the model decides, asked for by name and not pinned. Each is an
 * {@link OwnedHostTensor} over ONNX Runtime's own {@code OrtValue}, <b>no copy</b>, that owns it:
 * exported to any DLPack consumer ({@link OwnedHostTensor#export()}), read from Java
 * ({@link OwnedHostTensor#host()}), or given to the next run as an input
 * ({@link OrtCApiSession#tensor(OwnedHostTensor)}). The {@code OrtValue} is released exactly once,
 * when the tensor is closed and its last export and retain are gone, on whichever thread that is:
 * a consumer's deleter on a native thread, or the safety net for a tensor forgotten unclosed
 * (reported as a leak). Against ONNX Runtime Java's route ({@link CopiedOutputs}), two copies fewer.
 *
 * {@snippet :
 * try (AllocatedOutputs outputs = session.run(Map.of("x", xt), Map.of(), Set.of("indices"))) {
 *     OwnedHostTensor indices = outputs.get("indices");            // int64 [1, n], n decided by the model
 *     nativeLibrary.consume(indices.export().consume());           // ONNX Runtime's memory, no copy
 * }                                                                // the value is released once the consumer's deleter ran
 * }
 *
 * <p>Closing closes every tensor (exports keep their value alive). Safe to use from any thread.
 *
 * @since 0.1
 */
public final class AllocatedOutputs extends NamedOutputs {

    /** No outputs allocated: what a run with only pinned outputs returns (nothing to close). */
    static final AllocatedOutputs NONE = new AllocatedOutputs(new LinkedHashMap<>());

    private AllocatedOutputs(LinkedHashMap<String, OwnedHostTensor> tensors) {
        super(tensors, "allocated");
    }

    /**
     * Takes the values a run wrote into {@code slots} from index {@code first} on, one per name,
     * leaving the slots NULL for the next run, and makes each a tensor. If one cannot be (a type
     * DLPack lacks), every value taken is released and the refusal thrown.
     */
    static AllocatedOutputs take(String[] names, MemorySegment slots, int first) {
        long[] values = new long[names.length];
        for (int i = 0; i < names.length; i++) {
            values[i] = OrtApi.takeValue(slots, first + i); // all of them first: a failure below releases them all
        }
        LinkedHashMap<String, OwnedHostTensor> tensors = new LinkedHashMap<>();
        int next = 0;
        try {
            for (; next < names.length; next++) {
                String name = names[next];
                if (values[next] == 0) {
                    throw new IllegalStateException("ONNX Runtime's Run returned no value for the output \"" + name + "\"");
                }
                tensors.put(name, OrtValues.exported(values[next], () -> "the output \"" + name + "\""));
            }
            return new AllocatedOutputs(tensors);
        } catch (RuntimeException | Error e) {
            // exported released the value it refused; the ones after it are still this call's
            for (int i = next + 1; i < names.length; i++) {
                if (values[i] != 0) {
                    OrtApi.releaseValue(values[i]);
                }
            }
            tensors.values().forEach(OwnedHostTensor::close);
            throw e;
        }
    }

    /** After a failed run: releases whatever ONNX Runtime left in the slots from {@code first} on. */
    static void discard(MemorySegment slots, int first, int count) {
        for (int i = first; i < first + count; i++) {
            long value = OrtApi.takeValue(slots, i);
            if (value != 0) {
                OrtApi.releaseValue(value);
            }
        }
    }

    @Override
    public String toString() {
        return "AllocatedOutputs" + tensors().keySet();
    }
}
