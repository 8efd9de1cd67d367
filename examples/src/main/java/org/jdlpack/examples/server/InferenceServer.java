package org.jdlpack.examples.server;

import java.io.EOFException;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

import ai.onnxruntime.OrtException;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLPackStats;
import org.jdlpack.cpu.HostTensorPool;
import org.jdlpack.cpu.HostTensorView;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.cpu.TensorStreams;
import org.jdlpack.onnxruntime.OrtStatusException;

/**
 * A small inference service on virtual threads: the JDK's {@link HttpServer} with a
 * virtual-thread-per-request executor, serving {@code scorer.onnx} ({@link Classifier}) two ways.
 * Both reach ONNX Runtime through its C API ({@link org.jdlpack.onnxruntime.OrtCApiSession}), or,
 * with {@code -Dserver.ort=java}, through ONNX Runtime Java's {@code OrtSession} and
 * {@link org.jdlpack.onnxruntime.OrtBridge} ({@link Scorer.Api}).
 *
 * <pre>
 * POST /classify                    X-Shape: ROWS,16    body: ROWS*16 float32, little-endian
 *   the default route, all Java ({@link JavaClassifier}): the body read into a pooled native
 *   tensor of a scoring slot ({@link ScoringSlots}: tensors and ONNX Runtime values kept for
 *   the next request), normalized and checked there, ONNX Runtime reading it in place, softmax and
 *   top-2 in Java
 * POST /classify?route=numpy        the same request and answer; NumPy's pre- and post-processing,
 *   requests batched ({@link Batcher}, {@link NumPyClassifier}) once their body is in: one ONNX
 *   Runtime run and two Python calls per batch
 *   200  X-Shape: ROWS,2   body: ROWS*2 int32 classes, then ROWS*2 float32 probabilities (top 2 per row)
 *   400  a wrong, repeated or missing X-Shape, a body of another length, NaN or infinity, another query
 *   404  another path under /classify (/classifyX, /classify/x)
 *   500  ONNX Runtime or the Python step failed (the message names the step)
 *   503  (numpy route) no Python with NumPy here, or the server is stopping
 * GET /stats                        the ONNX Runtime API (ort=c or ort=java), request counts, heap
 *                                   allocated so far, time in requests and in ONNX Runtime, idle scoring
 *                                   slots, bodies still coming, batches, jdlpack's DLPackStats, one line
 * </pre>
 *
 * Run it: {@code mvn -q -Pserver -DskipTests -pl examples -am verify} (port 8080, or
 * {@code -Dserver.port=N}; {@code -Dserver.ort=java} for ONNX Runtime Java's API), then
 * {@code curl -s -H 'X-Shape: 1,16' --data-binary @row.bin localhost:8080/classify -o answer.bin} (see
 * docs/serving.md for making {@code row.bin} and reading the answer).
 *
 * <p>Thread safety: one instance; each request on its own virtual thread.
 */
public final class InferenceServer implements AutoCloseable {

    /** The most rows one request may carry: 4 MiB of float32 rows is 65,536; this allows four times that. */
    static final int MAX_ROWS = 1 << 18;
    /** A batch's input: 8,192 rows (512 KiB), 128 requests of 64 rows; a request of as many or more is a batch of its own. */
    static final int MAX_BATCH_ROWS = 8192;
    static final long BATCH_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    private final long batchWaitNanos;

    private final HttpServer http;
    private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
    private final HostTensorPool pool = HostTensorPool.create(256L << 20);
    private final Chunks chunks = new Chunks();
    private final Scorer scorer;
    private final JavaClassifier javaRoute;
    private final ScoringSlots slots;
    private final boolean failureInjection;
    private final int cores = Math.max(1, Runtime.getRuntime().availableProcessors());
    private volatile Batcher batcher; // made on the first numpy request: the default route needs no Python
    private NumPyClassifier numpy; // guarded by this
    private String numpyMissing; // guarded by this
    private final LongAdder ok = new LongAdder();
    private final LongAdder badRequests = new LongAdder();
    private final LongAdder serverErrors = new LongAdder();
    private final LongAdder aborted = new LongAdder();
    private final LongAdder requestNanos = new LongAdder();
    private final LongAdder readingBodies = new LongAdder(); // requests whose body is still coming, both routes

    private InferenceServer(int port, byte[] model, boolean failureInjection, long batchWaitNanos, Scorer.Api api)
            throws IOException, OrtException {
        this.batchWaitNanos = batchWaitNanos;
        this.scorer = new Scorer(model, api == Scorer.Api.C ? Scorer.pinnableCarriers() : cores, api);
        this.javaRoute = new JavaClassifier(pool, scorer);
        this.slots = new ScoringSlots(pool, scorer, chunks, 128L << 20);
        this.failureInjection = failureInjection;
        this.http = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 1024);
        http.setExecutor(executor);
        http.createContext("/classify", this::classify);
        http.createContext("/stats", this::stats);
        http.start();
    }

    /**
     * Starts a server on {@code port} (0: any free port) with the model shipped in this module, on
     * ONNX Runtime's C API.
     *
     * @param port             the port
     * @param failureInjection whether a request may ask, with {@code X-Inject-Failure: ort} or
     *                         {@code python}, for that step to fail (tests of the error paths; on the
     *                         numpy route the whole batch fails)
     * @return the running server
     * @throws IOException  if the port cannot be bound
     * @throws OrtException if ONNX Runtime cannot load the model
     */
    public static InferenceServer start(int port, boolean failureInjection) throws IOException, OrtException {
        return start(port, failureInjection, BATCH_WAIT_NANOS, Scorer.Api.C);
    }

    /** {@link #start(int, boolean)} with another batch wait (how long a batch takes members while another runs). */
    static InferenceServer start(int port, boolean failureInjection, long batchWaitNanos) throws IOException, OrtException {
        return start(port, failureInjection, batchWaitNanos, Scorer.Api.C);
    }

    /** {@link #start(int, boolean)} with another batch wait and the ONNX Runtime API to run on. */
    static InferenceServer start(int port, boolean failureInjection, long batchWaitNanos, Scorer.Api api)
            throws IOException, OrtException {
        try (InputStream model = InferenceServer.class.getResourceAsStream("scorer.onnx")) {
            if (model == null) {
                throw new IllegalStateException("scorer.onnx is missing from the examples jar");
            }
            return new InferenceServer(port, model.readAllBytes(), failureInjection, batchWaitNanos, api);
        }
    }

    /** {@return the port the server listens on} */
    public int port() {
        return http.getAddress().getPort();
    }

    /** {@return the request counts and DLPackStats in one line} */
    public String stats() {
        // Heap allocated by every thread since the JVM started (virtual threads allocate on their carriers).
        long allocated = ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean()).getTotalThreadAllocatedBytes();
        Batcher b = batcher;
        return String.format(Locale.ROOT, "ort=%s ok=%d badRequest=%d serverError=%d aborted=%d allocatedBytes=%d requestNanos=%d "
                + "inferenceNanos=%d pooledBytes=%d idleSlots=%d readingBodies=%d %s %s", scorer.api().name().toLowerCase(Locale.ROOT),
                ok.sum(), badRequests.sum(), serverErrors.sum(),
                aborted.sum(), allocated, requestNanos.sum(), scorer.inferenceNanos(), pool.pooledBytes(), slots.idleSlots(),
                readingBodies.sum(),
                b == null ? "batches=0 batchedRequests=0 ownBatches=0 formingRows=0" : b.stats(),
                DLPackStats.snapshot());
    }

    /** {@return the count of 5xx answers} */
    public long serverErrors() {
        return serverErrors.sum();
    }

    private void classify(HttpExchange exchange) throws IOException {
        long start = System.nanoTime();
        try (exchange) {
            if (!exchange.getRequestURI().getRawPath().equals("/classify")) {
                // The JDK server matches contexts by prefix: /classifyX and /classify/.. reach here too.
                exchange.getRequestBody().transferTo(OutputStream.nullOutputStream());
                respond(exchange, 404, "no such path " + exchange.getRequestURI().getRawPath() + ": POST /classify");
                return;
            }
            if (!exchange.getRequestMethod().equals("POST")) {
                respond(exchange, 405, "POST a body of float32 rows; see GET /stats for counts");
                return;
            }
            RequestShape shape;
            boolean numpyRoute;
            Classifier.Failure failure;
            try {
                shape = RequestShape.of(exchange.getRequestHeaders());
                numpyRoute = isNumPyRoute(exchange.getRequestURI().getRawQuery());
                failure = failure(exchange.getRequestHeaders().getFirst("X-Inject-Failure"));
            } catch (Classifier.BadRequestException e) {
                exchange.getRequestBody().transferTo(OutputStream.nullOutputStream());
                respond(exchange, 400, e.getMessage());
                return;
            }
            if (numpyRoute) {
                numpy(exchange, shape, failure);
            } else {
                java(exchange, shape, failure);
            }
        } catch (RuntimeException e) {
            serverErrors.increment();
            throw e;
        } finally {
            requestNanos.add(System.nanoTime() - start);
        }
    }

    /** The default route: one request, one slot of pooled tensors (kept with their ONNX Runtime values), all in Java. */
    private void java(HttpExchange exchange, RequestShape shape, Classifier.Failure failure) throws IOException {
        ScoringSlots.Slot slot;
        try {
            slot = slots.take(shape.rows());
        } catch (OrtException | OrtStatusException e) {
            exchange.getRequestBody().transferTo(OutputStream.nullOutputStream());
            respond(exchange, 500, "ONNX Runtime refused the request's tensors: " + e.getMessage());
            return;
        }
        try {
            read(exchange, slot.x.host(), shape, slot.chunk);
            javaRoute.classify(slot, failure);
            sendAnswer(exchange, shape.rows(), slot.chunk, slot.answer.host());
        } catch (Classifier.BadRequestException e) {
            respond(exchange, 400, e.getMessage());
        } catch (Classifier.StepFailedException e) {
            respond(exchange, 500, e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            respond(exchange, 503, "the server is stopping");
        } catch (IOException e) {
            aborted.increment(); // the client went away mid-body (EOFException) or mid-answer: nobody to answer
        } finally {
            slots.giveBack(slot); // its bytes are overwritten by the next request's body
        }
    }

    /**
     * The numpy route: the body read whole into a pooled tensor of its own, then into a batch; the
     * answer from its rows of the batch's outputs. Read before joining: a body still coming holds its
     * own tensor and thread, never a batch, another request's answer or a run slot (issue 41).
     */
    private void numpy(HttpExchange exchange, RequestShape shape, Classifier.Failure failure) throws IOException {
        Batcher batches = batcher();
        if (batches == null) {
            exchange.getRequestBody().transferTo(OutputStream.nullOutputStream());
            respond(exchange, 503, numpyMissing());
            return;
        }
        byte[] chunk = chunks.take();
        try {
            OwnedHostTensor body = pool.take(DLDataType.FLOAT32, shape.rows(), Classifier.FEATURES);
            boolean read = false;
            try {
                read(exchange, body.host(), shape, chunk);
                read = true;
            } catch (Classifier.BadRequestException e) {
                respond(exchange, 400, e.getMessage());
                return;
            } catch (IOException e) {
                aborted.increment(); // the client went away mid-body: nobody to answer, and no batch ever held it
                return;
            } finally {
                if (!read) {
                    body.close();
                }
            }
            Batcher.Member member = batches.join(body, failure); // takes the body: copied into the batch, or its input
            try {
                answer(exchange, member, chunk);
            } finally {
                member.leave();
            }
        } finally {
            chunks.giveBack(chunk);
        }
    }

    /** Waits for the member's batch and writes its answer from the member's rows of the outputs. */
    private void answer(HttpExchange exchange, Batcher.Member member, byte[] chunk) throws IOException {
        try {
            member.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            respond(exchange, 503, "the server is stopping");
            return;
        }
        Batcher.Batch batch = member.batch;
        if (batch.error instanceof Classifier.StepFailedException e) {
            respond(exchange, 500, e.getMessage());
        } else if (batch.error != null || batch.probabilities == null) {
            respond(exchange, 500, "the server failed: " + batch.error);
        } else {
            for (int r = 0; r < member.rows; r++) {
                if (batch.finite.host().getLong(member.offset + r) == 0) {
                    respond(exchange, 400, "row " + r + " holds NaN or infinity");
                    return;
                }
            }
            int to = member.offset + member.rows;
            sendAnswer(exchange, member.rows, chunk, batch.top.host().rows(member.offset, to),
                    batch.probabilities.host().rows(member.offset, to));
        }
    }

    /** Reads the body into {@code target}, through {@code chunk} (the socket stream's one copy); counted in readingBodies meanwhile. */
    private void read(HttpExchange exchange, HostTensorView target, RequestShape shape, byte[] chunk) throws IOException {
        readingBodies.increment();
        try {
            readBody(exchange, target, shape, chunk);
        } finally {
            readingBodies.decrement();
        }
    }

    private static void readBody(HttpExchange exchange, HostTensorView target, RequestShape shape, byte[] chunk) throws IOException {
        InputStream in = exchange.getRequestBody();
        Counted counted = shape.chunked() ? new Counted(in) : null;
        try {
            TensorStreams.readFully(counted != null ? counted : in, target, chunk);
            if (counted != null && in.read() >= 0) {
                throw new Classifier.BadRequestException("the chunked body holds more than the " + shape.bodyBytes()
                        + " bytes X-Shape " + shape.rows() + "," + Classifier.FEATURES + " needs");
            }
        } catch (EOFException e) {
            if (counted != null) { // a chunked body ends where its sender says: a short one is a bad request
                throw new Classifier.BadRequestException("the body ended after " + counted.count + " bytes; X-Shape " + shape.rows()
                        + "," + Classifier.FEATURES + " needs " + shape.bodyBytes() + " (little-endian float32)");
            }
            throw e; // one of a declared length ended because the client went away
        }
    }

    /** Counts a chunked body's bytes, for the message when it is short. */
    private static final class Counted extends FilterInputStream {
        long count;

        Counted(InputStream in) {
            super(in);
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n = super.read(b, off, len);
            count += Math.max(n, 0);
            return n;
        }
    }

    /** 200 and the answer's bytes, written from native memory through {@code chunk}. */
    private void sendAnswer(HttpExchange exchange, int rows, byte[] chunk, HostTensorView... parts) {
        try {
            exchange.getResponseHeaders().set("Content-Type", "application/octet-stream");
            exchange.getResponseHeaders().set("X-Shape", rows + "," + Classifier.TOP);
            exchange.sendResponseHeaders(200, (long) rows * Classifier.TOP * 8);
            try (OutputStream out = exchange.getResponseBody()) {
                for (HostTensorView part : parts) {
                    TensorStreams.write(part, out, chunk);
                }
            }
            ok.increment();
        } catch (IOException e) {
            aborted.increment(); // the client went away before its answer
        }
    }

    /** {@return whether the query asks for the numpy route} No query is the default route; any other is refused. */
    private static boolean isNumPyRoute(String query) {
        if (query == null || query.isEmpty()) {
            return false;
        }
        if (query.equals("route=numpy")) {
            return true;
        }
        throw new Classifier.BadRequestException("unknown query " + query + ": send none (the default route, all Java) or "
                + "route=numpy");
    }

    private Classifier.Failure failure(String inject) {
        if (!failureInjection || inject == null) {
            return Classifier.Failure.NONE;
        }
        try {
            return Classifier.Failure.valueOf(inject.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new Classifier.BadRequestException("X-Inject-Failure is " + inject + "; send ort or python");
        }
    }

    /** {@return the batcher, made on first use; null if there is no Python with NumPy (see {@link #numpyMissing()})} */
    private Batcher batcher() {
        Batcher b = batcher;
        if (b != null) {
            return b;
        }
        synchronized (this) {
            if (batcher == null && numpyMissing == null) {
                try {
                    numpy = new NumPyClassifier(pool, scorer);
                    batcher = new Batcher(pool, numpy, MAX_BATCH_ROWS, batchWaitNanos, cores);
                } catch (RuntimeException e) { // no Python, or no NumPy in it
                    numpyMissing = "the numpy route needs Python 3 with NumPy (apt-get install python3-numpy): "
                            + String.valueOf(e.getMessage()).lines().findFirst().orElse("");
                }
            }
            return batcher;
        }
    }

    private synchronized String numpyMissing() {
        return numpyMissing;
    }

    private void respond(HttpExchange exchange, int status, String message) throws IOException {
        (status >= 500 ? serverErrors : badRequests).increment();
        byte[] bytes = (message + "\n").getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    private void stats(HttpExchange exchange) throws IOException {
        try (exchange) {
            byte[] bytes = (stats() + "\n").getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, bytes.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        }
    }

    /** Stops accepting, lets running requests finish (up to a second), and frees the model, Python's functions and the pool. */
    @Override
    public void close() throws OrtException {
        http.stop(1);
        executor.close();
        synchronized (this) {
            if (numpy != null) {
                numpy.close();
            }
        }
        slots.close();
        scorer.close();
        pool.close();
    }

    /**
     * Runs the server until the process is stopped.
     *
     * @param args ignored; {@code -Dserver.port} sets the port (default 8080), {@code -Dserver.ort}
     *             the ONNX Runtime API: {@code c} (its C API through FFM, the default) or {@code java}
     *             (ONNX Runtime Java's {@code OrtSession})
     * @throws Exception if it cannot start
     */
    public static void main(String[] args) throws Exception {
        Scorer.Api api = Scorer.Api.of(System.getProperty("server.ort", "c"));
        InferenceServer server = start(Integer.getInteger("server.port", 8080), Boolean.getBoolean("server.failureInjection"),
                BATCH_WAIT_NANOS, api);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> System.out.println("stopping: " + server.stats())));
        System.out.println("jdlpack inference server on http://127.0.0.1:" + server.port() + "/classify (POST, X-Shape: ROWS,"
                + Classifier.FEATURES + "; ?route=numpy for NumPy, batched); GET /stats; ONNX Runtime through "
                + (api == Scorer.Api.C ? "its C API (-Dserver.ort=java: ONNX Runtime Java's OrtSession)" : "ONNX Runtime Java's OrtSession"
                        + " (-Dserver.ort=c: its C API, the default)"));
    }
}
