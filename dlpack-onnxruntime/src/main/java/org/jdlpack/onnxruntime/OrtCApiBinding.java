package org.jdlpack.onnxruntime;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * ONNX Runtime's IOBinding for an {@link OrtCApiSession}: inputs and outputs bound once
 * ({@link OrtCApiSession#bind}), then any number of {@link #run()}s, each one
 * {@code RunWithBinding} call with nothing to lay out. Each run reads the inputs' memory as it is
 * then (change it in place between runs) and writes the outputs in place.
 *
 * {@snippet :
 * try (OrtCApiBinding binding = session.bind(Map.of("x", xt), Map.of("y", yt))) {
 *     for (float[] request : requests) {
 *         MemorySegment.copy(request, 0, xMemory, ValueLayout.JAVA_FLOAT, 0, request.length); // the bound input, in place
 *         binding.run();                                                                      // y's memory holds the answer
 *     }
 * }
 * }
 *
 * <p>Lifetimes: ONNX Runtime's binding refers to the session and to the values, over memory the
 * tensors hold, so the binding holds them all from {@code bind} until it is released: a tensor or
 * the session closed meanwhile is released then (the session refuses new runs at once). An output
 * bound here is this binding's alone (no other run or binding may write it while it is bound).
 * Each run waits for one of the session's run slots like any run
 * ({@link OrtCApiSession.Options#concurrentRuns()}).
 *
 * <p>Threads: any thread may run, one run of a binding at a time (a second concurrent run is
 * refused: both would write the same outputs; give each thread a binding of its own). A
 * {@link #close()} during a run takes effect when that run ends. A binding forgotten unclosed is
 * released by the safety net and reported as a leak.
 *
 * @since 0.1
 */
public final class OrtCApiBinding implements AutoCloseable {

    private final OrtCApiSession session;
    private final long binding;
    private final Lease lease;
    /** {@link #callOnce}, made once. */
    private final NativeRuns.NativeCall call = this::callOnce;

    private OrtCApiBinding(OrtCApiSession session, long binding, List<Lease> held, String name) {
        this.session = session;
        this.binding = binding;
        // Neither the name nor the action may reach this object: they refer to the handle and the holds.
        this.lease = new Lease(true, this, new Release(this, () -> name, () -> release(binding, held)),
                "is in a run of its own on another thread that has not finished: a binding runs once at a time (both runs would "
                        + "write the same outputs); give each thread a binding of its own");
    }

    /**
     * Binds: takes the holds first (the session, each input shared, each output exclusive), then
     * makes the binding; a failure gives back whatever was taken.
     */
    static OrtCApiBinding bind(OrtCApiSession session, Map<String, OrtCApiTensor> inputs, Map<String, OrtCApiTensor> outputs) {
        List<Lease> held = new ArrayList<>();
        long binding = 0;
        try (Arena arena = Arena.ofConfined()) {
            hold(held, session.lease(), false);
            for (OrtCApiTensor input : inputs.values()) {
                hold(held, input.lease(), false);
            }
            for (OrtCApiTensor output : outputs.values()) {
                hold(held, output.lease(), true);
            }
            binding = OrtApi.createIoBinding(session.handle(), arena.allocate(JAVA_LONG));
            for (Map.Entry<String, OrtCApiTensor> input : inputs.entrySet()) {
                OrtApi.bindInput(binding, arena.allocateFrom(input.getKey()), input.getValue().value()); // the name is copied
            }
            for (Map.Entry<String, OrtCApiTensor> output : outputs.entrySet()) {
                OrtApi.bindOutput(binding, arena.allocateFrom(output.getKey()), output.getValue().value());
            }
            return new OrtCApiBinding(session, binding, List.copyOf(held),
                    "OrtCApiBinding[inputs " + inputs.keySet() + ", outputs " + outputs.keySet() + " of " + session.name() + "]");
        } catch (RuntimeException | Error e) {
            release(binding, held);
            throw e;
        }
    }

    private static void hold(List<Lease> held, Lease lease, boolean exclusive) {
        lease.borrow(exclusive);
        held.add(lease);
    }

    /** The binding first (it refers to the values and the session), then the holds, the session's last. */
    private static void release(long binding, List<Lease> held) {
        try {
            if (binding != 0) {
                OrtApi.releaseIoBinding(binding);
            }
        } finally {
            for (int i = held.size() - 1; i >= 0; i--) {
                held.get(i).giveBack();
            }
        }
    }

    /**
     * Runs the session once over the bound inputs and outputs.
     *
     * @throws OrtStatusException    if ONNX Runtime fails
     * @throws IllegalStateException if this binding or its session was closed, or another run of this binding is in flight
     */
    public void run() {
        session.admit(call);
    }

    /** One run: exclusive, so that a close waits for it and a second run at once is refused. */
    private void callOnce() {
        lease.borrow(true);
        try {
            OrtApi.runWithBinding(session.handle(), binding);
        } finally {
            lease.giveBack();
        }
    }

    /** Test hook: plays a run in flight (the test ends it with {@link #lease()}'s {@code giveBack}). */
    Lease lease() {
        return lease;
    }

    /** Releases the binding, then gives back its holds on the tensors and the session, now or when the run in flight ends. */
    @Override
    public void close() {
        lease.close();
    }

    @Override
    public String toString() {
        return "OrtCApiBinding(" + lease + ")";
    }
}
