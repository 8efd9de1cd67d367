package org.jdlpack.onnxruntime;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

import ai.onnxruntime.OnnxJavaType;
import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OnnxValue;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import ai.onnxruntime.TensorInfo;
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
 * try (OrtSession session = env.createSession("model.onnx");
 *      OrtInput x = ort.input(imported);                          // zero-copy; imported is moved in, dead now
 *      OrtOutput y = ort.allocateOutput(DLDataType.FLOAT32, 2, 3)) {
 *     ort.run(session, Map.of("x", x), Map.of("y", y));           // ONNX Runtime writes into y's memory
 *     float first = y.host().getFloat(0);
 *     ExportedTensor forNumPy = y.tensor().export();         // to any DLPack consumer, no copy
 * }
 * }
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
 *   <li>{@link #input(OwnedHostTensor)} takes a reference on the tensor's memory (an export kept
 *       unconsumed): closing your tensor first is safe, the memory lives until the input
 *       closes.</li>
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
 * into the tensor's memory. Read-only and non-compact tensors are refused (ONNX Runtime would write
 * into read-only memory without complaint). An output whose shape is known only after the run
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
 * one run at a time: a concurrent second run naming it is refused. {@code OrtSession.run} itself
 * may be called from many threads at once.
 */
public final class OrtBridge {

    /**
     * The most bytes one tensor may hold: ONNX Runtime's Java API takes tensors as
     * {@link ByteBuffer}s, which the JDK and ONNX Runtime limit to 2<sup>31</sup> - 9 bytes.
     */
    public static final long MAX_TENSOR_BYTES = Integer.MAX_VALUE - 8;

    private static final long COPY_ALIGNMENT = 64;

    private final OrtEnvironment environment;
    private final boolean zeroCopyOnly;
    private final boolean shared;

    private OrtBridge(OrtEnvironment environment, boolean zeroCopyOnly, boolean shared) {
        this.environment = environment;
        this.zeroCopyOnly = zeroCopyOnly;
        this.shared = shared;
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
        Objects.requireNonNull(tensor, "tensor");
        TensorLayout layout = tensor.layout();
        long address = tensor.managedTensorAddress();
        String struct = tensor.kind().structName();
        Supplier<String> source = () -> "the ImportedTensor of the " + struct + " at 0x" + Long.toHexString(address);
        OnnxJavaType type = check(source, tensor.device(), layout);
        String copyReason = copyReasonOrRefuse(source, layout, null);
        ImportedTensor mine = tensor.moveTo(shared ? ImportLifetime.SHARED : ImportLifetime.CONFINED);
        if (copyReason != null) {
            try {
                return copied(HostTensorView.of(mine), type, source, copyReason);
            } finally {
                mine.close(); // the copy is ONNX Runtime's now: the producer may free its memory
            }
        }
        try {
            MemorySegment data = mine.hostSegment();
            return new OrtInput(tensorOver(data, layout.shape(), type), compact(layout), data.address(), Optional.empty(), null,
                    source, shared, mine::close);
        } catch (OrtException | RuntimeException | Error e) {
            mine.close();
            throw e;
        }
    }

    /**
     * An input over a Java-owned tensor's memory. The input holds a reference on the memory (an
     * export it keeps and never consumes) until it closes, so closing the tensor first is safe.
     * A strided tensor is copied once instead (or refused by a {@link #zeroCopyOnly()} bridge).
     *
     * @param tensor the tensor, open
     * @return the input
     * @throws IllegalArgumentException as {@link #input(ImportedTensor)}
     * @throws IllegalStateException    if the tensor was closed
     * @throws OrtException             if ONNX Runtime refuses the tensor
     */
    public OrtInput input(OwnedHostTensor tensor) throws OrtException {
        Objects.requireNonNull(tensor, "tensor");
        Supplier<String> source = tensor::toString;
        TensorLayout layout = tensor.spec().layout();
        OnnxJavaType type = check(source, tensor.spec().device(), layout);
        String copyReason = copyReasonOrRefuse(source, layout, null);
        if (copyReason != null) {
            return copied(tensor.host(), type, source, copyReason);
        }
        ExportedTensor hold = tensor.export(); // the memory's reference for as long as ONNX Runtime may read it
        try {
            MemorySegment data = tensor.host().segment();
            return new OrtInput(tensorOver(data, layout.shape(), type), compact(layout), data.address(), Optional.empty(), null,
                    source, shared, hold::close);
        } catch (OrtException | RuntimeException | Error e) {
            hold.close();
            throw e;
        }
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
        Objects.requireNonNull(view, "view");
        TensorLayout layout = view.layout();
        Supplier<String> source = () -> "a HostTensorView[" + layout + "]";
        OnnxJavaType type = check(source, DLDevice.CPU, layout);
        MemorySegment data = view.segment();
        if (!data.scope().isAlive()) {
            throw new IllegalStateException(source.get() + ": its memory was freed (its arena or tensor was closed)");
        }
        String copyReason = copyReasonOrRefuse(source, layout, borrowedCopyReason(data));
        if (copyReason != null) {
            return copied(view, type, source, copyReason);
        }
        return new OrtInput(tensorOver(data, layout.shape(), type), compact(layout), data.address(), Optional.empty(), data.scope(),
                source, false, () -> { });
    }

    /** Why a compact view's memory cannot be read in place, or null if it can. */
    private String borrowedCopyReason(MemorySegment data) {
        if (!data.isNative()) {
            return "the view is over heap memory, which ONNX Runtime's Java API does not read in place";
        }
        if (shared) {
            return "a shared bridge's inputs may run on any thread, and a view has no owner the input could hold";
        }
        if (!data.isAccessibleBy(Thread.currentThread()) || data.isAccessibleBy(OtherThread.INSTANCE)) {
            return "the view borrows memory that another thread (or its owner) could free while ONNX Runtime reads it; "
                    + "pass its owner (OwnedHostTensor, ImportedTensor) for zero copy";
        }
        return null;
    }

    /** A thread that owns no arena, to tell a confined segment from a shared one. Made when first needed. */
    private static final class OtherThread {
        static final Thread INSTANCE = Thread.ofVirtual().unstarted(() -> { });
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
     *                                  API lacks, or over {@link #MAX_TENSOR_BYTES}
     * @throws IllegalStateException    if the tensor was closed
     * @throws OrtException             if ONNX Runtime refuses the tensor
     */
    public OrtOutput output(OwnedHostTensor tensor) throws OrtException {
        return output(tensor, false);
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
        check(() -> "an output of " + layout, DLDevice.CPU, layout);
        OwnedHostTensor tensor = OwnedHostTensor.allocate(dtype, shape);
        try {
            return output(tensor, true);
        } catch (OrtException | RuntimeException | Error e) {
            tensor.close();
            throw e;
        }
    }

    private OrtOutput output(OwnedHostTensor tensor, boolean owns) throws OrtException {
        Objects.requireNonNull(tensor, "tensor");
        TensorLayout layout = tensor.spec().layout();
        Supplier<String> source = tensor::toString;
        if (layout.isReadOnly() || tensor.host().segment().isReadOnly()) {
            throw new IllegalArgumentException(source.get() + " is READ_ONLY and cannot be an output: ONNX Runtime would write into it "
                    + "(it does not check); pin a writable tensor");
        }
        if (!layout.isCompactRowMajor()) {
            throw new IllegalArgumentException(source.get() + " is not compact row-major (strides " + Arrays.toString(layout.strides())
                    + "), and ONNX Runtime writes outputs compact; pin a compact tensor (OrtBridge.allocateOutput)");
        }
        OnnxJavaType type = check(source, tensor.spec().device(), layout);
        ExportedTensor hold = tensor.export(); // the memory's reference for as long as ONNX Runtime may write it
        try {
            OnnxTensor onnx = tensorOver(tensor.host().segment(), layout.shape(), type);
            return new OrtOutput(onnx, tensor, shared, owns ? () -> {
                try {
                    hold.close();
                } finally {
                    tensor.close();
                }
            } : hold::close);
        } catch (OrtException | RuntimeException | Error e) {
            hold.close();
            throw e;
        }
    }

    // ------------------------------------------------------------------ runs

    /**
     * Runs {@code session}: ONNX Runtime reads the inputs in place and writes every output into
     * its pinned memory. Every input and output is checked first (open, on the right thread, an
     * output not being written by another run) and held for the duration of the run, so none can
     * be released under ONNX Runtime.
     *
     * @param session the session; may be run concurrently from many threads
     * @param inputs  the model's inputs by name
     * @param outputs the outputs to write, by name: every output of the model you want
     * @throws IllegalStateException if an input or output was closed, an input's borrowed memory
     *                               was freed, or an output is being written by another run
     * @throws WrongThreadException  if an input or output is confined to another thread
     * @throws OrtException          if ONNX Runtime fails (wrong names, shapes or types)
     */
    public void run(OrtSession session, Map<String, OrtInput> inputs, Map<String, OrtOutput> outputs) throws OrtException {
        run(session, inputs, outputs, Set.of());
    }

    /**
     * Runs {@code session} as {@link #run(OrtSession, Map, Map)} does, and lets ONNX Runtime
     * allocate the outputs named in {@code copiedOutputs} (those whose shape is known only after
     * the run), each then copied into an {@link OwnedHostTensor}; see {@link CopiedOutputs} for
     * what that costs. Unsigned outputs keep their type (uint16/32/64 included).
     *
     * @param session       the session
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
        Objects.requireNonNull(session, "session");
        OrtInput[] heldInputs = new OrtInput[inputs.size()];
        OrtOutput[] heldOutputs = new OrtOutput[outputs.size()];
        int inputCount = 0;
        int outputCount = 0;
        try {
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
            if (copiedOutputs.isEmpty()) {
                session.run(in, out).close(); // the result holds only the pinned outputs, which it does not own
                return CopiedOutputs.NONE;
            }
            try (OrtSession.Result result = session.run(in, copiedOutputs, out)) {
                return copyOut(result, copiedOutputs);
            }
        } finally {
            for (int i = 0; i < inputCount; i++) {
                heldInputs[i].giveBack();
            }
            for (int i = 0; i < outputCount; i++) {
                heldOutputs[i].giveBack();
            }
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

    // ------------------------------------------------------------------ shared steps

    /** Checks device, type and size; returns ONNX Runtime's type. Throws naming {@code source}. */
    private static OnnxJavaType check(Supplier<String> source, DLDevice device, TensorLayout layout) {
        if (!device.isHostAccessible()) {
            throw new UnsupportedDeviceException(device, source.get() + " is on " + device + ", which ONNX Runtime's CPU sessions "
                    + "cannot read; copy it to host memory first");
        }
        OnnxJavaType type = OrtTypes.javaType(layout.dtype()).orElseThrow(() -> OrtTypes.refusal(layout.dtype(), source.get()));
        long bytes = Math.multiplyExact(layout.elementCount(), (long) (layout.dtype().bits() / 8));
        if (bytes > MAX_TENSOR_BYTES) {
            throw new IllegalArgumentException(source.get() + " holds " + bytes + " bytes; ONNX Runtime's Java API takes at most "
                    + MAX_TENSOR_BYTES + " bytes (2 GiB - 9) per tensor, the limit of a java.nio.ByteBuffer; split it (a "
                    + "smaller batch)");
        }
        return type;
    }

    /** Why the values must be copied (null: they need not), or a refusal if this bridge never copies. */
    private String copyReasonOrRefuse(Supplier<String> source, TensorLayout layout, String memoryReason) {
        String reason = !layout.isCompactRowMajor()
                ? "the tensor is not compact row-major (shape " + Arrays.toString(layout.shape()) + ", strides "
                        + Arrays.toString(layout.strides()) + "), and ONNX Runtime reads compact tensors"
                : memoryReason;
        if (reason != null && zeroCopyOnly) {
            throw new IllegalArgumentException("zero-copy input refused for " + source.get() + ": " + reason);
        }
        return reason;
    }

    /** Copies {@code source}'s values once into compact memory this input owns. */
    private OrtInput copied(HostTensorView source, OnnxJavaType type, Supplier<String> description, String reason)
            throws OrtException {
        TensorLayout layout = source.layout();
        TensorLayout target = compact(layout);
        Arena arena = shared ? Arena.ofShared() : Arena.ofConfined();
        try {
            MemorySegment copy = arena.allocate(target.extent().byteSize(), COPY_ALIGNMENT);
            source.copyTo(HostTensorView.of(copy, target));
            return new OrtInput(tensorOver(copy, layout.shape(), type), target, copy.address(),
                    Optional.of(reason + "; its values were copied once into compact memory"), null, description, shared,
                    arena::close);
        } catch (OrtException | RuntimeException | Error e) {
            arena.close();
            throw e;
        }
    }

    /** The layout ONNX Runtime reads: the source's own when it is compact from element 0, else a compact one. */
    private static TensorLayout compact(TensorLayout layout) {
        return layout.isCompactRowMajor() && layout.byteOffset() == 0 ? layout : TensorLayout.of(layout.dtype(), layout.shape());
    }

    /** An OnnxTensor over {@code data} (element 0 first, compact), through a native-order direct buffer: no copy. */
    private OnnxTensor tensorOver(MemorySegment data, long[] shape, OnnxJavaType type) throws OrtException {
        // An empty tensor may have no address at all (NULL data); ONNX Runtime gets an empty buffer of its own.
        ByteBuffer buffer = data.byteSize() == 0 ? ByteBuffer.allocateDirect(0) : data.asByteBuffer();
        return OnnxTensor.createTensor(environment, buffer.order(ByteOrder.nativeOrder()), shape, type);
    }

    @Override
    public String toString() {
        return "OrtBridge[" + (shared ? "shared" : "confined") + (zeroCopyOnly ? ", zero-copy only" : "") + "]";
    }
}
