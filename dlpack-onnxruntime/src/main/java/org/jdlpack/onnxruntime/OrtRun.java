package org.jdlpack.onnxruntime;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OnnxValue;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import ai.onnxruntime.TensorInfo;
import org.jdlpack.abi.DLDataType;
import org.jdlpack.cpu.OwnedHostTensor;

/**
 * One run of a session through the bridge, and its holds: the guarded session (if any) and every
 * input and output (open, on the right thread, an output written by this run alone), for exactly
 * the duration of {@code OrtSession.run}. Everything held is given back when the run returns or
 * throws. The memory ONNX Runtime reads and writes is held by the inputs and outputs themselves
 * (a retain of memory a tensor owns, a moved import, a copy), never by the run: memory a tensor
 * does not own never reaches ONNX Runtime in place ({@link OrtTensors}).
 *
 * <p>Stateless: {@link #run} may be called from any thread, many at once.
 */
final class OrtRun {

    private OrtRun() {
    }

    /**
     * Runs {@code session} (guarded by {@code guard}, or not: null) with the inputs and pinned
     * outputs, letting ONNX Runtime allocate {@code copiedOutputs}, which are copied out.
     */
    static CopiedOutputs run(GuardedSession guard, OrtSession session, Map<String, OrtInput> inputs, Map<String, OrtOutput> outputs,
                             Set<String> copiedOutputs) throws OrtException {
        Objects.requireNonNull(session, "session");
        Objects.requireNonNull(copiedOutputs, "copiedOutputs");
        OrtInput[] heldInputs = new OrtInput[inputs.size()];
        OrtOutput[] heldOutputs = new OrtOutput[outputs.size()];
        int inputCount = 0;
        int outputCount = 0;
        boolean sessionHeld = false;
        // Room for the finally below: a StackOverflowError in giveBack would leave the session
        // held, and its close would wait for ever. Thrown here, before anything is held.
        requireStack();
        try {
            // Everything of the caller's is read before the session is admitted: the maps' and the
            // set's methods are the caller's code, and a GuardedSession.close() from there, on this
            // thread, would wait for this very run for ever. Read first, such a close finds no run
            // in flight and closes the session, and the borrow below refuses the run.
            Map<String, OnnxTensor> in = new HashMap<>(inputs.size() * 2);
            for (Map.Entry<String, OrtInput> e : inputs.entrySet()) {
                OrtInput input = Objects.requireNonNull(e.getValue(), () -> "input " + e.getKey());
                in.put(e.getKey(), input.borrow());
                heldInputs[inputCount++] = input;
            }
            Map<String, OnnxTensor> out = new HashMap<>(outputs.size() * 2);
            for (Map.Entry<String, OrtOutput> e : outputs.entrySet()) {
                OrtOutput output = Objects.requireNonNull(e.getValue(), () -> "output " + e.getKey());
                out.put(e.getKey(), output.borrow());
                heldOutputs[outputCount++] = output;
            }
            Set<String> copied = copyOf(copiedOutputs); // ONNX Runtime iterates it during the run
            if (guard != null) {
                guard.borrow(); // from here to the end of the run, only the bridge's and ONNX Runtime's code runs
                sessionHeld = true;
            }
            return runNow(session, in, out, copied);
        } finally {
            giveBack(heldInputs, inputCount, heldOutputs, outputCount, sessionHeld ? guard : null);
        }
    }

    /** {@return the caller's names of copied outputs, read now: the empty set without allocating} */
    private static Set<String> copyOf(Set<String> names) {
        if (names.isEmpty()) {
            return Set.of();
        }
        HashSet<String> copy = new HashSet<>(names.size() * 2);
        for (String name : names) {
            copy.add(Objects.requireNonNull(name, "copiedOutputs holds a null name"));
        }
        return copy;
    }

    /**
     * Gives back everything a run held, every piece even if one's release throws (a shared input
     * closed during the run releases here): a session left held would make its close wait for ever.
     */
    private static void giveBack(OrtInput[] inputs, int inputCount, OrtOutput[] outputs, int outputCount, GuardedSession guard) {
        RuntimeException failure = null;
        for (int i = 0; i < inputCount + outputCount; i++) {
            try {
                if (i < inputCount) {
                    inputs[i].giveBack();
                } else {
                    outputs[i - inputCount].giveBack();
                }
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (guard != null) {
            guard.giveBack(); // last: a close waiting for this run closes the session only after everything else is back
        }
        if (failure != null) {
            throw failure;
        }
    }

    /**
     * Frames {@link #claimStack} takes: far more than {@link #giveBack} needs, so that a thread near
     * its stack's end gets its {@link StackOverflowError} before the run holds anything
     * (RunStackCrashTest).
     */
    private static final int STACK_FRAMES = 128;

    /** Written so that the JIT keeps the calls of {@link #claimStack}. */
    private static long claimed;

    /** Throws {@link StackOverflowError} here, unless the stack has room for {@value #STACK_FRAMES} small frames. */
    private static void requireStack() {
        claimStack(STACK_FRAMES, 1, 2, 3, 4, 5, 6, 7, 8);
    }

    /** Recurses {@code frames} deep; the longs beyond the six passed in registers take stack in every frame. */
    private static void claimStack(int frames, long a, long b, long c, long d, long e, long f, long g, long h) {
        if (frames > 0) {
            claimStack(frames - 1, b, c, d, e, f, g, h, a);
        } else {
            claimed = a ^ h;
        }
    }

    private static CopiedOutputs runNow(OrtSession session, Map<String, OnnxTensor> in, Map<String, OnnxTensor> out,
                                        Set<String> copiedOutputs) throws OrtException {
        if (copiedOutputs.isEmpty()) {
            session.run(in, out).close(); // the result holds only the pinned outputs, which it does not own
            return CopiedOutputs.NONE;
        }
        try (OrtSession.Result result = session.run(in, copiedOutputs, out)) {
            return copyOut(result, copiedOutputs);
        }
    }

    private static CopiedOutputs copyOut(OrtSession.Result result, Set<String> names) {
        LinkedHashMap<String, OwnedHostTensor> copies = new LinkedHashMap<>();
        try {
            for (Map.Entry<String, OnnxValue> entry : result) {
                if (!names.contains(entry.getKey())) {
                    continue;
                }
                if (!(entry.getValue() instanceof OnnxTensor value)) {
                    throw new IllegalArgumentException("output " + entry.getKey() + " is a " + entry.getValue().getType()
                            + ", not a tensor; read it through ONNX Runtime's own API");
                }
                TensorInfo info = value.getInfo();
                DLDataType dtype = OrtTypes.dtypeOf(info).orElseThrow(() -> new IllegalArgumentException("output "
                        + entry.getKey() + " is a tensor of " + info.onnxType + ", which has no DLPack type"));
                OwnedHostTensor copy = OwnedHostTensor.allocate(dtype, info.getShape());
                copies.put(entry.getKey(), copy);
                ByteBuffer bytes = value.getByteBuffer(); // ONNX Runtime's copy, on the heap
                MemorySegment target = copy.host().segment();
                MemorySegment.copy(MemorySegment.ofBuffer(bytes), 0, target, 0, target.byteSize());
            }
            return new CopiedOutputs(copies);
        } catch (RuntimeException | Error e) {
            copies.values().forEach(OwnedHostTensor::close);
            throw e;
        }
    }
}
