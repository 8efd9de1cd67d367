package org.jdlpack.examples.server;

import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.LongAdder;

import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtLoggingLevel;
import ai.onnxruntime.OrtSession;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.onnxruntime.OrtBridge;
import org.jdlpack.onnxruntime.OrtCApiRun;
import org.jdlpack.onnxruntime.OrtCApiSession;
import org.jdlpack.onnxruntime.OrtCApiTensor;
import org.jdlpack.onnxruntime.OrtInput;
import org.jdlpack.onnxruntime.OrtOutput;
import org.jdlpack.onnxruntime.OrtStatusException;

/**
 * The model, run in place: ONNX Runtime reads the rows where they lie and writes the logits into a
 * pinned tensor, nothing copied either way. Two ways to reach ONNX Runtime ({@link Api}): its C API
 * through FFM ({@link OrtCApiSession}, the default), or ONNX Runtime Java's {@code OrtSession}
 * through {@link OrtBridge}, kept so that both can be measured in the same server.
 *
 * <p>Thread safety: one instance serves every request thread. At most {@code permits} runs happen
 * at once: a virtual thread stays on its carrier during the native run, so more would only queue
 * carriers. {@link #score(OwnedHostTensor, OwnedHostTensor)} makes each run's input and output,
 * runs and closes them on the calling thread; {@link #score(Bound)} runs the ones a slot keeps,
 * made once by {@link #bind}, from any thread.
 */
final class Scorer implements AutoCloseable {

    /** Which ONNX Runtime API the runs go through; the server's {@code -Dserver.ort} picks one. */
    enum Api {
        /** ONNX Runtime's C API through FFM ({@link OrtCApiSession}): no Java maps or JNI per run. */
        C,
        /** ONNX Runtime Java's {@code OrtSession} through {@link OrtBridge}: the route before issue 44. */
        JAVA;

        /**
         * {@return the API named {@code c} or {@code java}, any case}
         *
         * @param name the value of {@code -Dserver.ort}
         * @throws IllegalArgumentException naming the value if it is neither
         */
        static Api of(String name) {
            return switch (name.toLowerCase(Locale.ROOT)) {
                case "c" -> C;
                case "java" -> JAVA;
                default -> throw new IllegalArgumentException("server.ort is \"" + name + "\"; pass c (ONNX Runtime's C API, "
                        + "the default) or java (ONNX Runtime Java's OrtSession)");
            };
        }
    }

    /** A slot's input and output over its tensors, made once and run from any thread; close it once no run uses it. */
    interface Bound extends AutoCloseable {
        @Override
        void close();
    }

    private final Engine engine;
    private final Semaphore runs;
    private final LongAdder nanos = new LongAdder();

    /** A scorer on the C API. */
    Scorer(byte[] model, int permits) throws OrtException {
        this(model, permits, Api.C);
    }

    Scorer(byte[] model, int permits, Api api) throws OrtException {
        this.engine = api == Api.C ? new CEngine(model, permits) : new JavaEngine(model);
        this.runs = new Semaphore(permits);
    }

    /**
     * {@return the runs a C-route scorer admits at once: the virtual-thread scheduler's carriers
     * less one, at least 1} A C-route run from a virtual thread beyond that many is handed to a
     * platform thread and back (OrtCApiRun's guard, so that runs never take every carrier): two
     * wake-ups per such run, which a bound at this count never pays.
     */
    static int pinnableCarriers() {
        Integer configured = Integer.getInteger("jdk.virtualThreadScheduler.parallelism");
        return Math.max(1, (configured != null ? configured : Runtime.getRuntime().availableProcessors()) - 1);
    }

    /** {@return the API the runs go through} */
    Api api() {
        return engine instanceof CEngine ? Api.C : Api.JAVA;
    }

    /**
     * {@return the input and output over {@code x} and {@code logits}, for runs from any thread}
     *
     * @throws OrtException          if ONNX Runtime Java refuses a tensor
     * @throws OrtStatusException    if ONNX Runtime's C API refuses one
     */
    Bound bind(OwnedHostTensor x, OwnedHostTensor logits) throws OrtException {
        return engine.bind(x, logits);
    }

    /**
     * Scores {@code x} ([rows, 16] float32) into {@code logits} ([rows, 4] float32).
     *
     * @throws Classifier.StepFailedException if ONNX Runtime refuses or fails (a logits tensor of
     *                                        another shape, as the failure injection sends)
     * @throws InterruptedException           if interrupted while waiting for a run permit
     */
    void score(OwnedHostTensor x, OwnedHostTensor logits) throws InterruptedException {
        underPermit(() -> engine.score(x, logits));
    }

    /**
     * Scores a slot's {@code x} into its {@code logits}, through the input and output it keeps.
     *
     * @throws Classifier.StepFailedException if ONNX Runtime fails
     * @throws InterruptedException           if interrupted while waiting for a run permit
     */
    void score(Bound bound) throws InterruptedException {
        underPermit(() -> engine.score(bound));
    }

    /** A run of ONNX Runtime, as {@link #underPermit} takes it. */
    @FunctionalInterface
    private interface Run {
        void run() throws OrtException;
    }

    /** Runs {@code run} under a run permit, timed, with ONNX Runtime's failure as a step failure. */
    private void underPermit(Run run) throws InterruptedException {
        runs.acquire();
        long start = System.nanoTime();
        try {
            run.run();
        } catch (OrtException | OrtStatusException e) {
            throw new Classifier.StepFailedException("inference (ONNX Runtime)", e);
        } finally {
            nanos.add(System.nanoTime() - start);
            runs.release();
        }
    }

    /** {@return the nanoseconds spent in ONNX Runtime runs so far, all threads together} */
    long inferenceNanos() {
        return nanos.sum();
    }

    @Override
    public void close() throws OrtException {
        engine.close();
    }

    /** One API's session and runs. */
    private interface Engine extends AutoCloseable {
        Bound bind(OwnedHostTensor x, OwnedHostTensor logits) throws OrtException;

        void score(OwnedHostTensor x, OwnedHostTensor logits) throws OrtException;

        void score(Bound bound) throws OrtException;

        @Override
        void close() throws OrtException;
    }

    /**
     * The C API: a value per tensor, each holding its tensor's memory, and a slot's run prepared
     * once ({@link OrtCApiRun}: any thread may run it, one call at a time, as a slot is used by
     * one request at a time on that request's virtual thread). A one-off score prepares and runs
     * in one step ({@link OrtCApiSession#run(Map, Map)}).
     */
    private static final class CEngine implements Engine {
        private final OrtCApiSession session;

        CEngine(byte[] model, int permits) {
            this.session = OrtCApiSession.open(model, new OrtCApiSession.Options(1, permits));
        }

        @Override
        public Bound bind(OwnedHostTensor x, OwnedHostTensor logits) {
            OrtCApiTensor in = OrtCApiSession.tensor(x);
            OrtCApiTensor out = null;
            try {
                out = OrtCApiSession.tensor(logits);
                Map<String, OrtCApiTensor> inputs = Map.of("x", in);
                Map<String, OrtCApiTensor> outputs = Map.of("logits", out);
                return new CBound(inputs, outputs, session.prepare(inputs, outputs));
            } catch (RuntimeException | Error e) {
                in.close();
                if (out != null) {
                    out.close();
                }
                throw e;
            }
        }

        @Override
        public void score(OwnedHostTensor x, OwnedHostTensor logits) {
            try (OrtCApiTensor in = OrtCApiSession.tensor(x); OrtCApiTensor out = OrtCApiSession.tensor(logits)) {
                session.run(Map.of("x", in), Map.of("logits", out));
            }
        }

        @Override
        public void score(Bound bound) {
            ((CBound) bound).run.run();
        }

        @Override
        public void close() {
            session.close();
        }
    }

    private record CBound(Map<String, OrtCApiTensor> inputs, Map<String, OrtCApiTensor> outputs, OrtCApiRun run) implements Bound {
        @Override
        public void close() {
            try {
                run.close();
            } finally {
                try {
                    inputs.values().forEach(OrtCApiTensor::close);
                } finally {
                    outputs.values().forEach(OrtCApiTensor::close);
                }
            }
        }
    }

    /**
     * ONNX Runtime Java: an {@code OnnxTensor} over each tensor's memory through the bridge, zero-copy
     * only; a slot's through the {@link OrtBridge#shared() shared} bridge, since a slot made on one
     * request's virtual thread is run on another's.
     */
    private static final class JavaEngine implements Engine {
        private final OrtEnvironment env = OrtEnvironment.getEnvironment();
        private final OrtSession session;
        private final OrtBridge ort = OrtBridge.of(env).zeroCopyOnly();
        private final OrtBridge shared = ort.shared();

        JavaEngine(byte[] model) throws OrtException {
            try (OrtSession.SessionOptions options = new OrtSession.SessionOptions()) {
                options.setIntraOpNumThreads(1);
                options.setInterOpNumThreads(1);
                options.setSessionLogLevel(OrtLoggingLevel.ORT_LOGGING_LEVEL_FATAL);
                this.session = env.createSession(model, options);
            }
        }

        @Override
        public Bound bind(OwnedHostTensor x, OwnedHostTensor logits) throws OrtException {
            OrtInput in = shared.input(x);
            try {
                return new JavaBound(Map.of("x", in), Map.of("logits", shared.output(logits)));
            } catch (OrtException | RuntimeException | Error e) {
                in.close();
                throw e;
            }
        }

        @Override
        public void score(OwnedHostTensor x, OwnedHostTensor logits) throws OrtException {
            try (OrtInput in = ort.input(x);
                 OrtOutput out = ort.output(logits)) {
                ort.run(session, Map.of("x", in), Map.of("logits", out));
            }
        }

        @Override
        public void score(Bound bound) throws OrtException {
            JavaBound j = (JavaBound) bound;
            shared.run(session, j.inputs, j.outputs);
        }

        @Override
        public void close() throws OrtException {
            session.close();
        }
    }

    private record JavaBound(Map<String, OrtInput> inputs, Map<String, OrtOutput> outputs) implements Bound {
        @Override
        public void close() {
            try {
                inputs.values().forEach(OrtInput::close);
            } finally {
                outputs.values().forEach(OrtOutput::close);
            }
        }
    }
}
