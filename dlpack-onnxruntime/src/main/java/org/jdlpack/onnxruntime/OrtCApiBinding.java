package org.jdlpack.onnxruntime;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
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
    /** Also the test's hook to play a run in flight ({@code borrow(true)}, ended by {@code giveBack}). */
    final Lease lease;
    /** {@link #callOnce}, made once. */
    private final NativeRuns.NativeCall call = this::callOnce;

    /** @param release releases the binding and gives back its holds, once ({@link Once}): the factory's cleanup holds it too */
    private OrtCApiBinding(OrtCApiSession session, long binding, Once release, String name) {
        this.session = session;
        this.binding = binding;
        // Neither the name nor the action may reach this object: they refer to the handle and the holds.
        this.lease = new Lease(true, this, new Release(this, () -> name, release),
                "is in a run of its own on another thread that has not finished: a binding runs once at a time (both runs would "
                        + "write the same outputs); give each thread a binding of its own");
    }

    /**
     * Binds: takes the holds first (the session, each input shared, each output exclusive), then
     * makes the binding; a failure gives back whatever was taken and releases the binding if it
     * was made, once, however far the binding's own making got.
     */
    static OrtCApiBinding bind(OrtCApiSession session, Map<String, OrtCApiTensor> inputs, Map<String, OrtCApiTensor> outputs) {
        Lease[] held = new Lease[1 + inputs.size() + outputs.size()];
        int shared = 1 + inputs.size(); // the session and the inputs; the outputs after them are exclusive
        int i = 0;
        held[i++] = session.lease;
        for (OrtCApiTensor input : inputs.values()) {
            held[i++] = input.lease;
        }
        for (OrtCApiTensor output : outputs.values()) {
            held[i++] = output.lease;
        }
        int count = 0;
        long binding = 0;
        Once release = null;
        try (Arena arena = Arena.ofConfined()) {
            for (; count < held.length; count++) {
                held[count].borrow(count >= shared);
            }
            binding = OrtApi.createIoBinding(session.handle(), arena.allocate(JAVA_LONG));
            long made = binding;
            release = new Once(() -> release(made, held, held.length, null));
            for (Map.Entry<String, OrtCApiTensor> input : inputs.entrySet()) {
                OrtApi.bindInput(binding, arena.allocateFrom(input.getKey()), input.getValue().value()); // the name is copied
            }
            for (Map.Entry<String, OrtCApiTensor> output : outputs.entrySet()) {
                OrtApi.bindOutput(binding, arena.allocateFrom(output.getKey()), output.getValue().value());
            }
            return new OrtCApiBinding(session, binding, release,
                    "OrtCApiBinding[inputs " + inputs.keySet() + ", outputs " + outputs.keySet() + " of " + session.name() + "]");
        } catch (RuntimeException | Error e) {
            if (release == null) {
                release(binding, held, count, e); // throws e
            }
            release.runAfter(e); // the binding's own release: once, even where its ledger entry holds it already
            throw e;
        }
    }

    /**
     * Releases the binding first (it refers to the values and the session), then gives back the
     * first {@code count} holds, the session's last, each even if one before it throws; throws
     * {@code failure}, or else the first failure here, the later ones suppressed.
     */
    static void release(long binding, Lease[] held, int count, Throwable failure) {
        try {
            if (binding != 0) {
                OrtApi.releaseIoBinding(binding);
            }
        } catch (RuntimeException | Error e) {
            failure = Lease.firstOf(failure, e);
        }
        Lease.giveBack(held, count, failure);
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
        Throwable failure = null;
        try {
            OrtApi.runWithBinding(session.handle(), binding);
        } catch (RuntimeException | Error e) {
            failure = e;
        }
        Lease.rethrow(lease.giveBack(failure)); // the run's failure first: a release at this give-back may throw too
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
