package org.jdlpack.onnxruntime;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Semaphore;

import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.cpu.OwnedHostTensor;

/**
 * An ONNX Runtime session reached through ONNX Runtime's C API (through FFM, no JNI), for what
 * ONNX Runtime Java cannot do: tensors over 2 GiB, uint16/32/64 and float8 inputs and outputs,
 * outputs whose shape the model decides handed out without a copy, IOBinding, and runs that build
 * no Java maps. The session is made by the C API from a model file or its bytes; the native library
 * is the one ONNX Runtime Java loaded ({@code OrtEnvironment.getEnvironment()}), or the one named in
 * {@code -Djdlpack.onnxruntime.library}, never a second copy.
 *
 * <p>The pieces: an {@link OrtCApiTensor} is an {@code OrtValue} over a host tensor's memory, as an
 * input or as a pinned output that ONNX Runtime writes in place ({@link #tensor}); an
 * {@link OrtCApiRun} is a prepared call, names and values laid out natively once ({@link #prepare});
 * an output not pinned is allocated by ONNX Runtime and comes back in {@link AllocatedOutputs}, its
 * memory exported with no copy; an {@link OrtCApiBinding} is an IOBinding, inputs and outputs bound
 * once for any number of runs ({@link #bind}).
 *
 * {@snippet :
 * try (OrtCApiSession session = OrtCApiSession.open(Path.of("model.onnx"), 1);
 *      OwnedHostTensor x = OwnedHostTensor.allocate(DLDataType.UINT32, 1024);
 *      OwnedHostTensor y = OwnedHostTensor.allocate(DLDataType.UINT32, 1024);
 *      OrtCApiTensor xt = OrtCApiSession.tensor(x);
 *      OrtCApiTensor yt = OrtCApiSession.tensor(y);
 *      OrtCApiRun run = session.prepare(Map.of("x", xt), Map.of("y", yt))) {
 *     run.run(); // y's memory now holds the output
 * }
 * }
 *
 * <h2>Runs and virtual threads</h2>
 * A run is one native call, and a virtual thread inside a native call <b>pins its carrier</b>: the
 * scheduler cannot run another virtual thread there until the call returns, and a virtual thread
 * looping on runs never gives its carrier back. Two rules keep runs from starving the rest of the
 * application:
 * <ul>
 * <li>Each session admits at most {@link Options#concurrentRuns()} runs at once (by default the
 *     number of available processors; {@link Options#withConcurrentRuns}). A run beyond that waits
 *     its turn, first come, first served; a virtual thread waits <em>unmounted</em>.</li>
 * <li>Process-wide, runs pin at most all carriers but one: a virtual thread makes the native call
 *     itself only while fewer carriers are pinned by runs, and otherwise hands it to a platform
 *     thread of jdlpack's (daemon, made on demand, gone after a minute idle) and waits unmounted.
 *     So C-route runs leave one carrier to every other virtual thread, on any number of cores,
 *     however many sessions run at once (runs through {@code OrtBridge} and other native calls
 *     are not counted). A platform thread always makes the call itself.</li>
 * </ul>
 * The hand-off costs a virtual thread's run some microseconds (a platform thread's wake-up and
 * its own); where that matters, run from platform threads, or from no more virtual threads at
 * once than carriers less one.
 * {@snippet :
 * OrtCApiSession.Options options = OrtCApiSession.Options.defaults()
 *         .withIntraOpThreads(1)
 *         .withConcurrentRuns(8);                             // at most 8 runs of this session at once
 * try (OrtCApiSession session = OrtCApiSession.open(Path.of("model.onnx"), options);
 *      ExecutorService requests = Executors.newVirtualThreadPerTaskExecutor()) {
 *     for (Request request : incoming) {
 *         requests.submit(() -> score(session, request)); // runs never take the last carrier
 *     }
 * }
 * }
 *
 * <p>Threads: a session and its tensors may be used from any thread, by many runs at once (an
 * output by one run at a time); a close during a run takes effect when the last run holding the
 * object returns. A prepared {@link OrtCApiRun} and a binding run on any thread, one run at a
 * time. A session, tensor or binding forgotten unclosed is released by
 * the safety net after garbage collection and reported as a leak. Failures of ONNX Runtime are
 * {@link OrtStatusException}s naming the C API call.
 *
 * @since 0.1
 */
public final class OrtCApiSession implements AutoCloseable {

    private final long session;
    private final List<String> inputNames;
    private final List<String> outputNames;
    private final String name;
    /** Held by every run (and binding) of this session: a close waits for them. */
    final Lease lease;
    private final int concurrentRuns;
    /** Admits {@link #concurrentRuns} runs at once, first come, first served (fair: a looping thread queues behind the waiting). */
    private final Semaphore runSlots;

    /**
     * How a session is opened and run.
     *
     * @param intraOpThreads threads per operator (0: ONNX Runtime's default)
     * @param concurrentRuns the most runs of the session in flight at once, at least 1; more wait
     *                       their turn, first come, first served (a virtual thread waits unmounted)
     */
    public record Options(int intraOpThreads, int concurrentRuns) {

        /**
         * Checks the values.
         *
         * @param intraOpThreads threads per operator (0: ONNX Runtime's default)
         * @param concurrentRuns the most runs in flight at once, at least 1
         * @throws IllegalArgumentException naming a value out of range
         */
        public Options {
            if (intraOpThreads < 0) {
                throw new IllegalArgumentException("intraOpThreads is " + intraOpThreads + "; pass 0 (ONNX Runtime's default) or more");
            }
            if (concurrentRuns < 1) {
                throw new IllegalArgumentException("concurrentRuns is " + concurrentRuns + "; a session admits at least 1 run at once");
            }
        }

        /** {@return ONNX Runtime's default intra-op threads, and as many concurrent runs as there are available processors} */
        public static Options defaults() {
            return new Options(0, Math.max(1, Runtime.getRuntime().availableProcessors()));
        }

        /**
         * {@return these options with {@code threads} threads per operator}
         *
         * @param threads threads per operator (0: ONNX Runtime's default)
         */
        public Options withIntraOpThreads(int threads) {
            return new Options(threads, concurrentRuns);
        }

        /**
         * {@return these options admitting at most {@code runs} runs at once}
         *
         * @param runs the most runs in flight at once, at least 1
         */
        public Options withConcurrentRuns(int runs) {
            return new Options(intraOpThreads, runs);
        }
    }

    /** @param release releases the session, once ({@link Once}): {@link #open}'s cleanup holds it too */
    private OrtCApiSession(long session, List<String> inputNames, List<String> outputNames, String name, int concurrentRuns,
                           Once release) {
        this.session = session;
        this.inputNames = inputNames;
        this.outputNames = outputNames;
        this.name = name;
        this.concurrentRuns = concurrentRuns;
        this.runSlots = new Semaphore(concurrentRuns, true);
        this.lease = new Lease(true, this, new Release(this, () -> name, release));
    }

    /**
     * Opens a session over a model file, read by ONNX Runtime, with the default options but for
     * the threads per operator.
     *
     * @param model          the .onnx file
     * @param intraOpThreads threads per operator (0: ONNX Runtime's default)
     * @return the session
     * @throws OrtStatusException    if ONNX Runtime refuses the model
     * @throws IllegalStateException if the C API is unavailable (the message says why)
     */
    public static OrtCApiSession open(Path model, int intraOpThreads) {
        return open(model, Options.defaults().withIntraOpThreads(intraOpThreads));
    }

    /**
     * Opens a session over a model file, read by ONNX Runtime.
     *
     * @param model   the .onnx file
     * @param options threads per operator, runs at once
     * @return the session
     * @throws OrtStatusException    if ONNX Runtime refuses the model
     * @throws IllegalStateException if the C API is unavailable (the message says why)
     */
    public static OrtCApiSession open(Path model, Options options) {
        Objects.requireNonNull(model, "model");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment path = arena.allocateFrom(model.toString());
            return open(options, "OrtCApiSession[" + model + "]", (env, sessionOptions, out) -> OrtApi.createSession(env, path,
                    sessionOptions, out));
        }
    }

    /**
     * Opens a session over a model's bytes (ONNX Runtime copies what it needs), with the default
     * options but for the threads per operator.
     *
     * @param model          the model's bytes
     * @param intraOpThreads threads per operator (0: ONNX Runtime's default)
     * @return the session
     * @throws OrtStatusException if ONNX Runtime refuses the model
     */
    public static OrtCApiSession open(byte[] model, int intraOpThreads) {
        return open(model, Options.defaults().withIntraOpThreads(intraOpThreads));
    }

    /**
     * Opens a session over a model's bytes (ONNX Runtime copies what it needs).
     *
     * @param model   the model's bytes
     * @param options threads per operator, runs at once
     * @return the session
     * @throws OrtStatusException if ONNX Runtime refuses the model
     */
    public static OrtCApiSession open(byte[] model, Options options) {
        Objects.requireNonNull(model, "model");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment bytes = arena.allocate(Math.max(model.length, 1));
            MemorySegment.copy(model, 0, bytes, ValueLayout.JAVA_BYTE, 0, model.length);
            MemorySegment data = bytes.asSlice(0, model.length);
            return open(options, "OrtCApiSession[" + model.length + " bytes of model]",
                    (env, sessionOptions, out) -> OrtApi.createSessionFromArray(env, data, sessionOptions, out));
        }
    }

    @FunctionalInterface
    private interface Creator {
        long create(long env, long options, MemorySegment out);
    }

    private static OrtCApiSession open(Options options, String name, Creator creator) {
        Objects.requireNonNull(options, "options");
        OrtApi.require();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG);
            long sessionOptions = OrtApi.createSessionOptions(out);
            long session;
            try {
                OrtApi.setIntraOpNumThreads(sessionOptions, options.intraOpThreads());
                session = creator.create(OrtValues.env(), sessionOptions, out);
            } finally {
                OrtApi.releaseSessionOptions(sessionOptions); // the session keeps a copy of what it needs
            }
            long made = session;
            Once release = null;
            try {
                release = new Once(() -> OrtApi.releaseSession(made));
                List<String> inputs = new ArrayList<>();
                for (long i = 0, n = OrtApi.inputCount(session, out); i < n; i++) {
                    inputs.add(OrtApi.inputName(session, i, out));
                }
                List<String> outputs = new ArrayList<>();
                for (long i = 0, n = OrtApi.outputCount(session, out); i < n; i++) {
                    outputs.add(OrtApi.outputName(session, i, out));
                }
                return new OrtCApiSession(session, List.copyOf(inputs), List.copyOf(outputs), name, options.concurrentRuns(), release);
            } catch (RuntimeException | Error e) {
                if (release == null) {
                    OrtApi.releaseSession(session);
                } else {
                    release.runAfter(e); // once, even where the session's ledger entry holds it already
                }
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

    /** {@return the most runs of this session in flight at once ({@link Options#concurrentRuns()})} */
    public int concurrentRuns() {
        return concurrentRuns;
    }

    /**
     * Makes an {@code OrtValue} over {@code tensor}'s memory, for use as an input or a pinned output
     * of any session. The tensor may be closed afterwards: this value holds a reference on its memory.
     *
     * @param tensor host memory the tensor owns, compact row-major, of a type ONNX Runtime has
     * @return the value; close it
     * @throws IllegalArgumentException if the layout or type cannot be read in place (the message says why)
     * @throws IllegalStateException    if the tensor was closed
     */
    public static OrtCApiTensor tensor(OwnedHostTensor tensor) {
        return OrtCApiTensor.of(tensor);
    }

    /**
     * Makes an {@code OrtValue} over an imported DLPack tensor's memory, which the value takes over
     * ({@link ImportedTensor#moveTo}: the producer's deleter runs when the value is released); for
     * use as an input or a pinned output of any session. Memory on a device the CPU cannot read is
     * refused before ONNX Runtime sees it, and the import is then left to its owner.
     *
     * @param tensor a host-accessible import, compact row-major, of a type ONNX Runtime has
     * @return the value; close it
     * @throws org.jdlpack.abi.UnsupportedDeviceException if the memory is on a device (CUDA: the
     *                                                    message says whether this ONNX Runtime has
     *                                                    its CUDA provider, and what to do)
     * @throws IllegalArgumentException                   if the layout or type cannot be read in place
     * @throws IllegalStateException                      if the import was closed or moved
     */
    public static OrtCApiTensor tensor(ImportedTensor tensor) {
        return OrtCApiTensor.of(tensor);
    }

    /**
     * Prepares a run: the inputs and the outputs to compute, by name, each pinned in a tensor that
     * ONNX Runtime writes in place.
     *
     * @param inputs  every model input, by name
     * @param outputs the outputs to compute, by name (at least one)
     * @return the prepared run, for any thread, one run at a time; close it
     * @throws IllegalArgumentException naming a name the model lacks, or a missing input
     */
    public OrtCApiRun prepare(Map<String, OrtCApiTensor> inputs, Map<String, OrtCApiTensor> outputs) {
        return prepare(inputs, outputs, Set.of());
    }

    /**
     * Prepares a run whose outputs are pinned or allocated: the pinned ones ONNX Runtime writes in
     * place, the {@code allocated} ones (those whose shape the model decides) it allocates itself,
     * and each {@link OrtCApiRun#run()} hands them out in {@link AllocatedOutputs}, without a copy.
     *
     * @param inputs    every model input, by name
     * @param outputs   the outputs written in place, by name
     * @param allocated the outputs ONNX Runtime allocates, by name (at least one output in all)
     * @return the prepared run, for any thread, one run at a time; close it
     * @throws IllegalArgumentException naming a name the model lacks, a missing input, an output
     *                                  named twice, or a read-only pinned output
     */
    public OrtCApiRun prepare(Map<String, OrtCApiTensor> inputs, Map<String, OrtCApiTensor> outputs, Set<String> allocated) {
        return prepare(inputs, outputs, allocated, Arena.ofShared());
    }

    /** A run over arrays in {@code arena}: shared for a prepared run, confined for one made and run at once. */
    private OrtCApiRun prepare(Map<String, OrtCApiTensor> inputs, Map<String, OrtCApiTensor> outputs, Set<String> allocated,
                               Arena arena) {
        try {
            Objects.requireNonNull(allocated, "allocated");
            checkNames(inputs, outputs, allocated);
            return new OrtCApiRun(this, new LinkedHashMap<>(inputs), new LinkedHashMap<>(outputs), List.copyOf(allocated), arena);
        } catch (RuntimeException | Error e) {
            arena.close();
            throw e;
        }
    }

    /**
     * Runs once: {@link #prepare} and {@link OrtCApiRun#run()} in one step.
     *
     * @param inputs  every model input, by name
     * @param outputs the outputs to compute, by name, written into their tensors
     */
    public void run(Map<String, OrtCApiTensor> inputs, Map<String, OrtCApiTensor> outputs) {
        // A confined arena: closing a shared one costs a handshake with every thread, per run here.
        try (OrtCApiRun run = prepare(inputs, outputs, Set.of(), Arena.ofConfined())) {
            run.run();
        }
    }

    /**
     * Runs once with outputs ONNX Runtime allocates: {@link #prepare(Map, Map, Set)} and
     * {@link OrtCApiRun#run()} in one step.
     *
     * @param inputs    every model input, by name
     * @param outputs   the outputs written in place, by name
     * @param allocated the outputs ONNX Runtime allocates, by name
     * @return the allocated outputs, over ONNX Runtime's memory; close them
     */
    public AllocatedOutputs run(Map<String, OrtCApiTensor> inputs, Map<String, OrtCApiTensor> outputs, Set<String> allocated) {
        try (OrtCApiRun run = prepare(inputs, outputs, allocated, Arena.ofConfined())) {
            return run.run();
        }
    }

    /**
     * Binds inputs and outputs once (ONNX Runtime's IOBinding) for any number of
     * {@link OrtCApiBinding#run()}s: the binding holds this session and every tensor until it is
     * closed, and each run reads the inputs' memory as it is then and writes the outputs in place.
     *
     * @param inputs  every model input, by name
     * @param outputs the outputs to compute, by name (at least one), written in place
     * @return the binding; close it
     * @throws IllegalArgumentException naming a name the model lacks, a missing input, or a read-only output
     * @throws IllegalStateException    if this session or a tensor was closed, or an output is in a run or another binding
     */
    public OrtCApiBinding bind(Map<String, OrtCApiTensor> inputs, Map<String, OrtCApiTensor> outputs) {
        checkNames(inputs, outputs, Set.of());
        return OrtCApiBinding.bind(this, new LinkedHashMap<>(inputs), new LinkedHashMap<>(outputs));
    }

    private void checkNames(Map<String, OrtCApiTensor> inputs, Map<String, OrtCApiTensor> outputs, Set<String> allocated) {
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
            if (allocated.contains(output)) {
                throw new IllegalArgumentException("the output \"" + output + "\" is both pinned and allocated; name it once");
            }
            OrtCApiTensor tensor = Objects.requireNonNull(outputs.get(output), "the tensor of output " + output);
            if (tensor.layout().isReadOnly()) {
                throw new IllegalArgumentException(tensor + " is READ_ONLY and cannot be the output \"" + output + "\": ONNX Runtime "
                        + "would write into it (it does not check); pin a writable tensor");
            }
        }
        for (String output : allocated) {
            if (!outputNames.contains(output)) {
                throw new IllegalArgumentException(name + " has no output \"" + output + "\"; its outputs are " + outputNames);
            }
        }
        if (outputs.isEmpty() && allocated.isEmpty()) {
            throw new IllegalArgumentException(name + ": name at least one output to compute; its outputs are " + outputNames);
        }
    }

    long handle() {
        return session;
    }

    /** {@return what messages call this session, without its state} */
    String name() {
        return name;
    }

    /**
     * Runs {@code call}, one run's native call with its borrows: waits for a run slot (first come,
     * first served; a virtual thread waits unmounted), holds the session so that a close waits for
     * the run's end, and makes the call where it cannot starve other virtual threads
     * ({@link NativeRuns}).
     *
     * @throws IllegalStateException if the session was closed
     */
    void admit(NativeRuns.NativeCall call) {
        runSlots.acquireUninterruptibly();
        try {
            lease.borrow(false);
            Throwable failure = null;
            try {
                NativeRuns.call(call);
            } catch (RuntimeException | Error e) {
                failure = e;
            }
            Lease.rethrow(lease.giveBack(failure)); // the run's failure first: the session's release here may throw too
        } finally {
            runSlots.release();
        }
    }

    /** Releases the session now, or when the last run in flight (or binding) is done. A second close does nothing. */
    @Override
    public void close() {
        lease.close();
    }

    @Override
    public String toString() {
        return name + "(" + lease + ")";
    }
}
