package org.jdlpack.onnxruntime;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.ExportOwner;
import org.jdlpack.abi.TensorLayout;
import org.jdlpack.abi.UnsupportedDeviceException;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.cpu.internal.HostMemory;

/**
 * An ONNX Runtime session reached through ONNX Runtime's C API (through FFM, no JNI), for what
 * ONNX Runtime Java cannot do: tensors over 2 GiB, uint16/32/64 and float8 inputs and outputs, and
 * runs that build no Java maps. The session is made by the C API from a model file or its bytes;
 * the native library is the one ONNX Runtime Java loaded ({@code OrtEnvironment.getEnvironment()}),
 * or the one named in {@code -Djdlpack.onnxruntime.library}, never a second copy.
 *
 * <p>A {@link Tensor} is an {@code OrtValue} over an {@link OwnedHostTensor}'s memory, holding a
 * reference on that memory until the tensor is closed and no run uses it; the same tensor serves as
 * an input or as a pinned output, which ONNX Runtime writes in place (its shape must be the one the
 * model produces). A {@link Run} is a prepared call: names and values laid out natively once, so
 * that each {@link Run#run()} is one {@code Run} of the C API.
 *
 * {@snippet :
 * try (OrtCApiSession session = OrtCApiSession.open(Path.of("model.onnx"), 1);
 *      OwnedHostTensor x = OwnedHostTensor.allocate(DLDataType.UINT32, 1024);
 *      OwnedHostTensor y = OwnedHostTensor.allocate(DLDataType.UINT32, 1024);
 *      OrtCApiSession.Tensor xt = OrtCApiSession.tensor(x);
 *      OrtCApiSession.Tensor yt = OrtCApiSession.tensor(y);
 *      OrtCApiSession.Run run = session.prepare(Map.of("x", xt), Map.of("y", yt))) {
 *     run.run(); // y's memory now holds the output
 * }
 * }
 *
 * <p>Threads: a session and its tensors may be used from any thread, by many runs at once (an
 * output by one run at a time); a close during a run takes effect when the last run holding the
 * object returns. A {@link Run} belongs to the thread that prepared it. A session or tensor
 * forgotten unclosed is released by the safety net after garbage collection and reported as a leak.
 * Failures of ONNX Runtime are {@link OrtStatusException}s naming the C API call.
 */
public final class OrtCApiSession implements AutoCloseable {

    private final long session;
    private final List<String> inputNames;
    private final List<String> outputNames;
    private final String name;
    private final Lease lease;

    private OrtCApiSession(long session, List<String> inputNames, List<String> outputNames, String name) {
        this.session = session;
        this.inputNames = inputNames;
        this.outputNames = outputNames;
        this.name = name;
        this.lease = new Lease(true, this, new Release(this, () -> name, () -> OrtApi.releaseSession(session)));
    }

    /**
     * Opens a session over a model file, read by ONNX Runtime.
     *
     * @param model          the .onnx file
     * @param intraOpThreads threads per operator (0: ONNX Runtime's default)
     * @return the session
     * @throws OrtStatusException    if ONNX Runtime refuses the model
     * @throws IllegalStateException if the C API is unavailable (the message says why)
     */
    public static OrtCApiSession open(Path model, int intraOpThreads) {
        Objects.requireNonNull(model, "model");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment path = arena.allocateFrom(model.toString());
            return open(intraOpThreads, "OrtCApiSession[" + model + "]",
                    (env, options, out) -> OrtApi.createSession(env, path, options, out));
        }
    }

    /**
     * Opens a session over a model's bytes (ONNX Runtime copies what it needs).
     *
     * @param model          the model's bytes
     * @param intraOpThreads threads per operator (0: ONNX Runtime's default)
     * @return the session
     * @throws OrtStatusException if ONNX Runtime refuses the model
     */
    public static OrtCApiSession open(byte[] model, int intraOpThreads) {
        Objects.requireNonNull(model, "model");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment bytes = arena.allocate(Math.max(model.length, 1));
            MemorySegment.copy(model, 0, bytes, ValueLayout.JAVA_BYTE, 0, model.length);
            MemorySegment data = bytes.asSlice(0, model.length);
            return open(intraOpThreads, "OrtCApiSession[" + model.length + " bytes of model]",
                    (env, options, out) -> OrtApi.createSessionFromArray(env, data, options, out));
        }
    }

    @FunctionalInterface
    private interface Creator {
        long create(long env, long options, MemorySegment out);
    }

    private static OrtCApiSession open(int intraOpThreads, String name, Creator creator) {
        if (intraOpThreads < 0) {
            throw new IllegalArgumentException("intraOpThreads is " + intraOpThreads + "; pass 0 (ONNX Runtime's default) or more");
        }
        OrtApi.require();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG);
            long options = OrtApi.createSessionOptions(out);
            long session;
            try {
                OrtApi.setIntraOpNumThreads(options, intraOpThreads);
                session = creator.create(Env.ENV, options, out);
            } finally {
                OrtApi.releaseSessionOptions(options); // the session keeps a copy of what it needs
            }
            try {
                List<String> inputs = new ArrayList<>();
                for (long i = 0, n = OrtApi.inputCount(session, out); i < n; i++) {
                    inputs.add(OrtApi.inputName(session, i, out));
                }
                List<String> outputs = new ArrayList<>();
                for (long i = 0, n = OrtApi.outputCount(session, out); i < n; i++) {
                    outputs.add(OrtApi.outputName(session, i, out));
                }
                return new OrtCApiSession(session, List.copyOf(inputs), List.copyOf(outputs), name);
            } catch (RuntimeException | Error e) {
                OrtApi.releaseSession(session);
                throw e;
            }
        }
    }

    /** {@return the model's input names, in the model's order} */
    public List<String> inputNames() {
        return inputNames;
    }

    /** {@return the model's output names, in the model's order} */
    public List<String> outputNames() {
        return outputNames;
    }

    /**
     * Makes an {@code OrtValue} over {@code tensor}'s memory, for use as an input or a pinned output
     * of any session. The tensor may be closed afterwards: this value holds a reference on its memory.
     *
     * @param tensor host memory, compact row-major, of a type ONNX Runtime has
     * @return the value; close it
     * @throws IllegalArgumentException if the layout or type cannot be read in place (the message says why)
     */
    public static Tensor tensor(OwnedHostTensor tensor) {
        return Tensor.of(tensor);
    }

    /**
     * Prepares a run: the inputs and the outputs to compute, by name, each pinned in a tensor that
     * ONNX Runtime writes in place.
     *
     * @param inputs  every model input, by name
     * @param outputs the outputs to compute, by name (at least one)
     * @return the prepared run, for this thread; close it
     * @throws IllegalArgumentException naming a name the model lacks, or a missing input
     */
    public Run prepare(Map<String, Tensor> inputs, Map<String, Tensor> outputs) {
        Objects.requireNonNull(inputs, "inputs");
        Objects.requireNonNull(outputs, "outputs");
        for (String input : inputs.keySet()) {
            if (!inputNames.contains(input)) {
                throw new IllegalArgumentException(name + " has no input \"" + input + "\"; its inputs are " + inputNames);
            }
        }
        if (!inputs.keySet().containsAll(inputNames)) {
            throw new IllegalArgumentException(name + " needs the inputs " + inputNames + "; given " + inputs.keySet());
        }
        for (String output : outputs.keySet()) {
            if (!outputNames.contains(output)) {
                throw new IllegalArgumentException(name + " has no output \"" + output + "\"; its outputs are " + outputNames);
            }
        }
        if (outputs.isEmpty()) {
            throw new IllegalArgumentException(name + ": name at least one output to compute; its outputs are " + outputNames);
        }
        return new Run(this, new LinkedHashMap<>(inputs), new LinkedHashMap<>(outputs));
    }

    /**
     * Runs once: {@link #prepare} and {@link Run#run()} in one step.
     *
     * @param inputs  every model input, by name
     * @param outputs the outputs to compute, by name, written into their tensors
     */
    public void run(Map<String, Tensor> inputs, Map<String, Tensor> outputs) {
        try (Run run = prepare(inputs, outputs)) {
            run.run();
        }
    }

    /** Releases the session now, or when the last run in flight returns. A second close does nothing. */
    @Override
    public void close() {
        lease.close();
    }

    @Override
    public String toString() {
        return name + "(" + lease + ")";
    }

    /** The process's one {@code OrtEnv}, made (or shared with ONNX Runtime Java) when the first session opens; never released. */
    private static final class Env {
        static final long ENV;

        static {
            try (Arena arena = Arena.ofConfined()) {
                ENV = OrtApi.createEnv(arena.allocateFrom("jdlpack"), arena.allocate(JAVA_LONG));
            }
        }
    }

    /** One CPU {@code OrtMemoryInfo} for every value (each copies it): made once, never released. */
    private static final class CpuMemory {
        static final long INFO;

        static {
            try (Arena arena = Arena.ofConfined()) {
                INFO = OrtApi.createCpuMemoryInfo(arena.allocate(JAVA_LONG));
            }
        }
    }

    /**
     * Each thread's native scratch for making a value: the out slot and the dims, so that making
     * one opens no arena. Used only between two statements of one thread, never across a call out.
     */
    private static final class Scratch {
        static final int RANKS = 31;
        static final ThreadLocal<MemorySegment> SEGMENT = ThreadLocal.withInitial(
                () -> Arena.ofAuto().allocate(JAVA_LONG, RANKS + 1));
    }

    /**
     * An {@code OrtValue} over an {@link OwnedHostTensor}'s memory, with a reference on that memory
     * (an export whose pointer never leaves this object) until the value is released: at
     * {@link #close()}, or at the end of the last run holding it. The value is released first, the
     * memory second.
     *
     * {@snippet :
     * try (OwnedHostTensor x = OwnedHostTensor.allocate(DLDataType.UINT64, 4, 4);
     *      OrtCApiSession.Tensor xt = OrtCApiSession.tensor(x)) {
     *     session.run(Map.of("x", xt), Map.of("y", yt));
     * }
     * }
     */
    public static final class Tensor implements AutoCloseable {

        private final long value;
        private final TensorLayout layout;
        private final Lease lease;

        private Tensor(long value, TensorLayout layout, Supplier<String> source, ExportOwner.Retained hold) {
            this.value = value;
            this.layout = layout;
            // Made only when a report needs it; neither the name nor the action may reach this object.
            Supplier<String> name = () -> "OrtCApiSession.Tensor[" + layout + " from " + source.get() + "]";
            this.lease = Lease.valueThenMemory(true, this, name, () -> OrtApi.releaseValue(value), hold::close);
        }

        static Tensor of(OwnedHostTensor tensor) {
            Objects.requireNonNull(tensor, "tensor");
            OrtApi.require();
            TensorLayout layout = tensor.layout();
            Supplier<String> source = tensor::toString;
            if (!tensor.device().isHostAccessible()) {
                throw new UnsupportedDeviceException(tensor.device(), source.get() + " is on " + tensor.device()
                        + ", which ONNX Runtime's CPU sessions cannot read; copy it to host memory first");
            }
            DLDataType dtype = layout.dtype();
            int type = OnnxElementTypes.of(dtype);
            if (type == OnnxElementTypes.UNDEFINED) {
                throw OnnxElementTypes.refusal(dtype, source.get());
            }
            if (!layout.isCompactRowMajor()) {
                throw new IllegalArgumentException(source.get() + " is not compact row-major (strides " + Arrays.toString(layout.strides())
                        + "), and ONNX Runtime reads and writes compact tensors; copy it into a compact one");
            }
            if (!tensor.ownsMemory() && layout.elementCount() != 0) {
                throw new IllegalArgumentException(source.get() + " wraps memory it does not own (OwnedHostTensor.wrap), whose arena "
                        + "could close while ONNX Runtime reads it; the C route takes tensors that own their memory "
                        + "(OwnedHostTensor.allocate, copyOf or a HostTensorPool take), or use OrtBridge, which copies it");
            }
            long[] shape = layout.shape();
            ExportOwner.Retained hold = tensor.retain(); // the memory's reference, for as long as ORT may use it
            try {
                MemorySegment data = HostMemory.elements(tensor); // under the hold
                long value;
                if (shape.length < Scratch.RANKS) {
                    MemorySegment scratch = Scratch.SEGMENT.get(); // [0]: the out slot, [1..]: the dims
                    MemorySegment.copy(shape, 0, scratch, JAVA_LONG, 8, shape.length);
                    value = OrtApi.createTensorWithData(CpuMemory.INFO, data.address(), data.byteSize(), scratch.asSlice(8),
                            shape.length, type, scratch);
                } else {
                    try (Arena arena = Arena.ofConfined()) {
                        MemorySegment dims = arena.allocate(JAVA_LONG, shape.length);
                        MemorySegment.copy(shape, 0, dims, JAVA_LONG, 0, shape.length);
                        value = OrtApi.createTensorWithData(CpuMemory.INFO, data.address(), data.byteSize(), dims, shape.length,
                                type, arena.allocate(JAVA_LONG));
                    }
                }
                return new Tensor(value, layout, source, hold);
            } catch (RuntimeException | Error e) {
                hold.close();
                throw e;
            }
        }

        /** {@return the layout ONNX Runtime reads or writes} */
        public TensorLayout layout() {
            return layout;
        }

        long value() {
            return value;
        }

        Lease lease() {
            return lease;
        }

        /** Releases the value and the hold on the memory now, or when the last run in flight returns. */
        @Override
        public void close() {
            lease.close();
        }

        @Override
        public String toString() {
            return "OrtCApiSession.Tensor[" + layout + ", " + lease + "]";
        }
    }

    /**
     * A run prepared once and run many times: the names and values in native arrays, for the
     * thread that prepared it. Each {@link #run()} holds the session and every tensor for the
     * duration of the call (a tensor closed meanwhile is released at its end), and refuses a
     * closed one.
     *
     * {@snippet :
     * try (OrtCApiSession.Run run = session.prepare(Map.of("x", xt), Map.of("y", yt))) {
     *     for (int i = 0; i < 1000; i++) {
     *         run.run();
     *     }
     * }
     * }
     */
    public static final class Run implements AutoCloseable {

        private final OrtCApiSession session;
        private final Tensor[] inputs;
        private final Tensor[] outputs;
        private final Arena arena = Arena.ofConfined();
        private final Thread thread = Thread.currentThread();
        private final long inputNames;
        private final long inputValues;
        private final long outputNames;
        private final long outputValues;

        private Run(OrtCApiSession session, Map<String, Tensor> inputs, Map<String, Tensor> outputs) {
            this.session = session;
            this.inputs = inputs.values().toArray(Tensor[]::new);
            this.outputs = outputs.values().toArray(Tensor[]::new);
            try {
                this.inputNames = names(inputs.keySet());
                this.inputValues = values(this.inputs);
                this.outputNames = names(outputs.keySet());
                this.outputValues = values(this.outputs);
            } catch (RuntimeException | Error e) {
                arena.close();
                throw e;
            }
        }

        private long names(Iterable<String> names) {
            List<MemorySegment> strings = new ArrayList<>();
            names.forEach(n -> strings.add(arena.allocateFrom(n)));
            MemorySegment array = arena.allocate(JAVA_LONG, Math.max(strings.size(), 1));
            for (int i = 0; i < strings.size(); i++) {
                array.setAtIndex(JAVA_LONG, i, strings.get(i).address());
            }
            return array.address();
        }

        private long values(Tensor[] tensors) {
            MemorySegment array = arena.allocate(JAVA_LONG, Math.max(tensors.length, 1));
            for (int i = 0; i < tensors.length; i++) {
                array.setAtIndex(JAVA_LONG, i, Objects.requireNonNull(tensors[i], "a tensor in the run's maps").value());
            }
            return array.address();
        }

        /**
         * Runs the session once: ONNX Runtime reads the inputs and writes the outputs in place.
         *
         * @throws OrtStatusException    if ONNX Runtime fails (a wrong element type or shape, an output of another shape)
         * @throws IllegalStateException if this run, its session or a tensor was closed, or an output is in another run
         * @throws WrongThreadException  on a thread other than the one that prepared this run
         */
        public void run() {
            if (!arena.scope().isAlive()) {
                throw new IllegalStateException("this OrtCApiSession.Run was closed; prepare a new one");
            }
            if (Thread.currentThread() != thread) {
                throw new WrongThreadException("an OrtCApiSession.Run belongs to " + thread + ", which prepared it; prepare one on "
                        + Thread.currentThread() + " (runs of one session may go on on many threads at once)");
            }
            session.lease.borrow(false);
            int in = 0;
            int out = 0;
            try {
                for (; in < inputs.length; in++) {
                    inputs[in].lease().borrow(false);
                }
                for (; out < outputs.length; out++) {
                    outputs[out].lease().borrow(true);
                }
                OrtApi.run(session.session, inputNames, inputValues, inputs.length, outputNames, outputs.length, outputValues);
            } finally {
                while (out > 0) {
                    outputs[--out].lease().giveBack();
                }
                while (in > 0) {
                    inputs[--in].lease().giveBack();
                }
                session.lease.giveBack();
            }
        }

        /** Frees the native arrays; the tensors and the session stay open. */
        @Override
        public void close() {
            if (arena.scope().isAlive()) {
                arena.close();
            }
        }
    }
}
