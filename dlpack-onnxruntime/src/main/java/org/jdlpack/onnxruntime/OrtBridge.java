package org.jdlpack.onnxruntime;

import java.nio.ByteBuffer;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLDevice;
import org.jdlpack.abi.ImportLifetime;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.ExportedTensor;
import org.jdlpack.abi.TensorLayout;
import org.jdlpack.abi.UnsupportedDeviceException;
import org.jdlpack.cpu.HostTensorView;
import org.jdlpack.cpu.OwnedHostTensor;

/**
 * The front door between jdlpack tensors and ONNX Runtime sessions: DLPack tensors become session
 * inputs over the same memory, outputs are written by ONNX Runtime into memory jdlpack owns, and
 * the order of releases is this module's business, not the caller's care.
 *
 * {@snippet :
 * OrtEnvironment env = OrtEnvironment.getEnvironment();
 * OrtBridge ort = OrtBridge.of(env);
 * try (GuardedSession session = GuardedSession.of(env.createSession("model.onnx")); // its close waits for runs
 *      OrtInput x = ort.input(imported);                          // zero-copy; imported is moved in, dead now
 *      OrtOutput y = ort.allocateOutput(DLDataType.FLOAT32, 2, 3)) {
 *     ort.run(session, Map.of("x", x), Map.of("y", y));           // ONNX Runtime writes into y's memory
 *     float first = y.host().getFloat(0);
 *     ExportedTensor forNumPy = y.tensor().export();              // to any DLPack consumer, no copy
 * }
 * }
 *
 * <h2 id="sessions">Sessions</h2>
 * ONNX Runtime frees a session in {@link OrtSession#close()} even while other threads are inside
 * its {@code run}, and they crash the JVM. Run a {@link GuardedSession} (the overloads of
 * {@code run} that take one): the bridge holds it for the duration of each run as it holds the
 * inputs and outputs, and its {@code close()} refuses new runs and waits for those in flight. The
 * overloads that take a bare {@link OrtSession} hold nothing of the session: close it only when no
 * run can be in flight.
 *
 * <h2>Inputs</h2>
 * A compact row-major tensor in host memory, of a type ONNX Runtime's Java API has, becomes an
 * {@link OnnxTensor} over its memory through a direct {@link ByteBuffer} in native byte order
 * (ONNX Runtime keeps the address and a reference to the buffer; nothing is copied). Who keeps the
 * memory alive depends on the source:
 * <ul>
 *   <li>{@link #input(ImportedTensor)} moves the import into the input
 *       ({@link ImportedTensor#moveTo}): your {@code ImportedTensor} is dead afterwards (its
 *       {@code close()} does nothing), and the producer's deleter runs when the input closes,
 *       after the {@code OnnxTensor}.</li>
 *   <li>{@link #input(OwnedHostTensor)} takes a reference on the tensor's memory
 *       ({@link OwnedHostTensor#retain()}): closing your tensor first is safe, the memory lives until the input
 *       closes. A tensor that wraps memory it does not own ({@link OwnedHostTensor#wrap},
 *       {@link OwnedHostTensor#ownsMemory()} false) cannot keep that memory alive, so its values
 *       are copied once and the input says so ({@link #zeroCopyOnly()} refuses instead): the
 *       caller's arena may then close at any time.</li>
 *   <li>{@link #input(HostTensorView)} borrows: a view has no owner to hold. It is read in place
 *       only when its memory is native and confined to this thread (an {@code Arena.ofConfined()},
 *       a confined import): then only this thread can free it, the input is confined to this
 *       thread too, and each run checks that the memory is still alive before ONNX Runtime reads
 *       it. Any other view is copied once, and the input says so.</li>
 * </ul>
 * A layout that is not compact row-major (strided, transposed, broadcast) is copied once into
 * compact memory, and {@link OrtInput#copyReason()} says why; {@link #zeroCopyOnly()} refuses it
 * instead. Read-only tensors are fine as inputs: ONNX Runtime does not write them.
 *
 * <h2>Outputs</h2>
 * {@link #output(OwnedHostTensor)} and {@link #allocateOutput} pin an output: ONNX Runtime writes
 * into the tensor's memory, which the output holds as an input holds its tensor's. Tensors that
 * wrap memory they do not own, read-only and non-compact tensors are refused
 * (ONNX Runtime would write into read-only memory without complaint). An output whose shape is known only after the run
 * is left to ONNX Runtime to allocate and copied once into an {@link OwnedHostTensor}:
 * {@link #run(OrtSession, Map, Map, Set)}.
 *
 * <h2>Refusals</h2>
 * Every refusal throws before anything is taken: the tensor you passed is still yours. Refused are
 * memory the CPU cannot address ({@link UnsupportedDeviceException}), element types ONNX Runtime's
 * Java API lacks (uint16/32/64, complex, float8 and smaller, opaque handles, vector lanes) and
 * tensors over {@link #MAX_TENSOR_BYTES} ({@link IllegalArgumentException} naming the type or the
 * limit).
 *
 * <h2>Threads</h2>
 * A bridge is immutable and may be used from any thread. By default its inputs and outputs are
 * confined to the thread that made them, which also runs and closes them (the usual shape of a
 * request handled on one virtual thread); closing a confined input costs nanoseconds. With
 * {@link #shared()} they may be run and closed from any thread, several runs may read one input at
 * once, and a close during a run takes effect when the run returns; closing a shared input that
 * owns an import costs a JVM-wide handshake (tens of microseconds). A pinned output is written by
 * one run at a time: a concurrent second run naming it is refused. A session may be run from many
 * threads at once; see <a href="#sessions">Sessions</a> for closing it.
 *
 * <h2>Forgotten inputs and outputs</h2>
 * An input or output that becomes unreachable unclosed is released by the safety net after garbage
 * collection (its {@code OnnxTensor}, then its hold on the memory) and reported as a leak by its
 * own name, counted in {@link org.jdlpack.abi.DLPackStats#leaksReported()}.
 *
 * @since 0.1
 */
public final class OrtBridge {

    /**
     * The most bytes one tensor may hold: ONNX Runtime's Java API takes tensors as
     * {@link ByteBuffer}s, which the JDK and ONNX Runtime limit to 2<sup>31</sup> - 9 bytes.
     */
    public static final long MAX_TENSOR_BYTES = OrtTensors.MAX_TENSOR_BYTES;

    private final OrtEnvironment environment;
    private final boolean zeroCopyOnly;
    private final boolean shared;
    private final OrtTensors tensors;

    private OrtBridge(OrtEnvironment environment, boolean zeroCopyOnly, boolean shared) {
        this.environment = environment;
        this.zeroCopyOnly = zeroCopyOnly;
        this.shared = shared;
        this.tensors = new OrtTensors(environment, zeroCopyOnly, shared);
    }

    /**
     * A bridge that makes tensors in {@code environment}, copies where a layout needs it, and
     * confines what it makes to the making thread.
     *
     * @param environment the ONNX Runtime environment of the sessions these tensors feed
     * @return the bridge
     */
    public static OrtBridge of(OrtEnvironment environment) {
        return new OrtBridge(Objects.requireNonNull(environment, "environment"), false, false);
    }

    /** {@return a bridge like this one that refuses, instead of copying, every input ONNX Runtime cannot read in place} */
    public OrtBridge zeroCopyOnly() {
        return new OrtBridge(environment, true, shared);
    }

    /**
     * {@return a bridge like this one whose inputs and outputs may be run and closed from any
     * thread, at the price of a JVM-wide handshake when an input that owns an import closes}
     */
    public OrtBridge shared() {
        return new OrtBridge(environment, zeroCopyOnly, true);
    }

    /** {@return whether this bridge refuses inputs it would have to copy} */
    public boolean isZeroCopyOnly() {
        return zeroCopyOnly;
    }

    /** {@return whether what this bridge makes may be used from any thread} */
    public boolean isShared() {
        return shared;
    }

    // ------------------------------------------------------------------ inputs

    /**
     * An input over an imported tensor's memory. On success the tensor is moved into the input
     * ({@link ImportedTensor#moveTo}): the {@code ImportedTensor} you passed is dead (its
     * {@code close()} does nothing, its segments are inaccessible), and the producer's deleter runs
     * when the input closes, after the {@code OnnxTensor}; or at once, if the values were copied.
     * A refusal leaves the tensor yours and untouched.
     *
     * <p>The move follows {@link ImportedTensor#moveTo}'s rules: call this on the importing thread
     * of a confined import; an import in a caller's arena ({@link ImportLifetime#in}) is refused.
     *
     * @param tensor an imported tensor in host-accessible memory
     * @return the input
     * @throws UnsupportedDeviceException if the CPU cannot address the tensor's memory
     * @throws IllegalArgumentException   if ONNX Runtime's Java API has no such element type, the
     *                                    tensor is over {@link #MAX_TENSOR_BYTES}, or it would need
     *                                    a copy and this bridge is {@link #zeroCopyOnly()}
     * @throws IllegalStateException      if the tensor was closed or moved, or cannot move
     * @throws WrongThreadException       if the tensor is confined to another thread
     * @throws OrtException               if ONNX Runtime refuses the tensor (the deleter has run)
     */
    public OrtInput input(ImportedTensor tensor) throws OrtException {
        return tensors.input(Objects.requireNonNull(tensor, "tensor"));
    }

    /**
     * An input over a Java-owned tensor's memory. The input holds a reference on the memory (a
     * {@link OwnedHostTensor#retain()}) until it closes, so closing the tensor first is safe.
     * A strided tensor, or one that wraps memory it does not own ({@link OwnedHostTensor#ownsMemory()}
     * false), is copied once instead (or refused by a {@link #zeroCopyOnly()} bridge).
     *
     * @param tensor the tensor, open
     * @return the input
     * @throws IllegalArgumentException as {@link #input(ImportedTensor)}
     * @throws IllegalStateException    if the tensor was closed
     * @throws OrtException             if ONNX Runtime refuses the tensor
     */
    public OrtInput input(OwnedHostTensor tensor) throws OrtException {
        return tensors.input(Objects.requireNonNull(tensor, "tensor"));
    }

    /**
     * An input over the memory a view borrows, if no one but this thread can free it; else over a
     * copy. A view has no owner this input could hold, so it is read in place only when its memory
     * is native and confined to this thread (its segment is accessible from this thread and from no
     * other), and the bridge is not {@link #shared()}: the input is then confined to this thread as
     * well, and every run checks that the memory is still alive before ONNX Runtime reads it. Any
     * other view (a shared or global arena, an automatic arena, heap memory) is copied once, and
     * {@link OrtInput#copyReason()} says why; a {@link #zeroCopyOnly()} bridge refuses it. For zero
     * copy from shared memory, pass its owner ({@link #input(OwnedHostTensor)},
     * {@link #input(ImportedTensor)}).
     *
     * @param view the view
     * @return the input
     * @throws IllegalArgumentException as {@link #input(ImportedTensor)}
     * @throws IllegalStateException    if the view's memory was freed
     * @throws OrtException             if ONNX Runtime refuses the tensor
     */
    public OrtInput input(HostTensorView view) throws OrtException {
        return tensors.input(Objects.requireNonNull(view, "view"));
    }

    // ------------------------------------------------------------------ outputs

    /**
     * Pins an output into a Java-owned tensor: ONNX Runtime writes the output into its memory. The
     * output holds a reference on the memory until it closes, so closing the tensor first is
     * safe. Its dtype and shape must be the model output's (ONNX Runtime checks at run time).
     *
     * @param tensor a writable, compact row-major tensor, open
     * @return the output
     * @throws IllegalArgumentException if the tensor is read-only (ONNX Runtime would write into it
     *                                  anyway), not compact row-major, of a type ONNX Runtime's Java
     *                                  API lacks, over {@link #MAX_TENSOR_BYTES}, or wraps memory it
     *                                  does not own ({@link OwnedHostTensor#ownsMemory()} false: no
     *                                  reference could keep the caller's arena open while ONNX Runtime writes)
     * @throws IllegalStateException    if the tensor was closed
     * @throws OrtException             if ONNX Runtime refuses the tensor
     */
    public OrtOutput output(OwnedHostTensor tensor) throws OrtException {
        return tensors.output(Objects.requireNonNull(tensor, "tensor"), false);
    }

    /**
     * Allocates a zeroed tensor and pins an output into it; {@link OrtOutput#tensor()} is that
     * tensor, closed when the output closes (its exports keep the memory alive).
     *
     * @param dtype the model output's element type
     * @param shape the model output's shape, known before the run
     * @return the output
     * @throws IllegalArgumentException as {@link #output(OwnedHostTensor)}
     * @throws OrtException             if ONNX Runtime refuses the tensor
     */
    public OrtOutput allocateOutput(DLDataType dtype, long... shape) throws OrtException {
        TensorLayout layout = TensorLayout.of(dtype, shape);
        OrtTensors.check(() -> "an output of " + layout, DLDevice.CPU, layout);
        OwnedHostTensor tensor = OwnedHostTensor.allocate(dtype, shape);
        try {
            return tensors.output(tensor, true);
        } catch (OrtException | RuntimeException | Error e) {
            tensor.close();
            throw e;
        }
    }

    // ------------------------------------------------------------------ runs

    /**
     * Runs a guarded session: ONNX Runtime reads the inputs in place and writes every output into
     * its pinned memory. The session, every input and every output are checked first (open, on the
     * right thread, an output not being written by another run) and held for the duration of the
     * run, so none can be released under ONNX Runtime: a {@link GuardedSession#close()} meanwhile
     * waits for this run to return.
     *
     * @param session the session; may be run concurrently from many threads
     * @param inputs  the model's inputs by name
     * @param outputs the outputs to write, by name: every output of the model you want
     * @throws IllegalStateException if the session, an input or an output was closed, the memory
     *                               an input or output borrows was freed, or an output is being
     *                               written by another run
     * @throws WrongThreadException  if an input or output is confined to another thread
     * @throws OrtException          if ONNX Runtime fails (wrong names, shapes or types)
     */
    public void run(GuardedSession session, Map<String, OrtInput> inputs, Map<String, OrtOutput> outputs) throws OrtException {
        run(session, inputs, outputs, Set.of());
    }

    /**
     * Runs a guarded session as {@link #run(GuardedSession, Map, Map)} does, and lets ONNX Runtime
     * allocate the outputs named in {@code copiedOutputs}, as
     * {@link #run(OrtSession, Map, Map, Set)} describes.
     *
     * @param session       the session
     * @param inputs        the model's inputs by name
     * @param outputs       the pinned outputs by name
     * @param copiedOutputs names of outputs for ONNX Runtime to allocate, distinct from the pinned ones
     * @return the copied outputs; close them
     * @throws IllegalArgumentException if a copied output is not a tensor of a DLPack type
     * @throws IllegalStateException    as {@link #run(GuardedSession, Map, Map)}
     * @throws WrongThreadException     as {@link #run(GuardedSession, Map, Map)}
     * @throws OrtException             if ONNX Runtime fails
     */
    public CopiedOutputs run(GuardedSession session, Map<String, OrtInput> inputs, Map<String, OrtOutput> outputs,
                             Set<String> copiedOutputs) throws OrtException {
        Objects.requireNonNull(session, "session");
        return OrtRun.run(session, session.session(), inputs, outputs, copiedOutputs);
    }

    /**
     * Runs a bare session as {@link #run(GuardedSession, Map, Map)} does, holding its inputs and
     * outputs but not the session: closing {@code session} while this run is in flight frees it
     * under ONNX Runtime and kills the JVM. Close it only once every run has returned, or run a
     * {@link GuardedSession}.
     *
     * @param session the session; may be run concurrently from many threads, and must outlive every run
     * @param inputs  the model's inputs by name
     * @param outputs the outputs to write, by name: every output of the model you want
     * @throws IllegalStateException if an input or output was closed, the memory an input or
     *                               output borrows was freed, or an output is being written by
     *                               another run
     * @throws WrongThreadException  if an input or output is confined to another thread
     * @throws OrtException          if ONNX Runtime fails (wrong names, shapes or types)
     */
    public void run(OrtSession session, Map<String, OrtInput> inputs, Map<String, OrtOutput> outputs) throws OrtException {
        run(session, inputs, outputs, Set.of());
    }

    /**
     * Runs a bare session as {@link #run(OrtSession, Map, Map)} does (the session must outlive the
     * run), and lets ONNX Runtime
     * allocate the outputs named in {@code copiedOutputs} (those whose shape is known only after
     * the run), each then copied into an {@link OwnedHostTensor}; see {@link CopiedOutputs} for
     * what that costs. Unsigned outputs keep their type (uint16/32/64 included).
     *
     * @param session       the session; must outlive the run
     * @param inputs        the model's inputs by name
     * @param outputs       the pinned outputs by name
     * @param copiedOutputs names of outputs for ONNX Runtime to allocate, distinct from the pinned ones
     * @return the copied outputs; close them
     * @throws IllegalArgumentException if a copied output is not a tensor of a DLPack type (strings, maps, sequences)
     * @throws IllegalStateException    as {@link #run(OrtSession, Map, Map)}
     * @throws WrongThreadException     as {@link #run(OrtSession, Map, Map)}
     * @throws OrtException             if ONNX Runtime fails
     */
    public CopiedOutputs run(OrtSession session, Map<String, OrtInput> inputs, Map<String, OrtOutput> outputs,
                             Set<String> copiedOutputs) throws OrtException {
        return OrtRun.run(null, session, inputs, outputs, copiedOutputs);
    }

    @Override
    public String toString() {
        return "OrtBridge[" + (shared ? "shared" : "confined") + (zeroCopyOnly ? ", zero-copy only" : "") + "]";
    }
}
