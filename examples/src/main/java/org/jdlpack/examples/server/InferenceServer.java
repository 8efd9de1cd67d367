package org.jdlpack.examples.server;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.LongAdder;

import ai.onnxruntime.OrtException;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLPackStats;
import org.jdlpack.cpu.OwnedHostTensor;

/**
 * A small inference service on virtual threads: the JDK's {@link HttpServer} with a
 * virtual-thread-per-request executor, serving {@code scorer.onnx} through {@link Classifier}.
 *
 * <pre>
 * POST /classify[?route=copy]      X-Shape: ROWS,16    body: ROWS*16 float32, little-endian
 *   200  X-Shape: ROWS,2   body: ROWS*2 int32 classes, then ROWS*2 float32 probabilities (top 2 per row)
 *   400  wrong or missing X-Shape, a body of another length, empty, NaN or infinity
 *   500  ONNX Runtime or the Python step failed (the message names the step)
 * GET /stats                        request counts, heap allocated so far, time in requests and in ONNX
 *                                  Runtime, jdlpack's DLPackStats, one line
 * </pre>
 *
 * Run it: {@code mvn -q -Pserver -DskipTests -pl examples -am verify} (port 8080, or
 * {@code -Dserver.port=N}), then
 * {@code curl -s -H 'X-Shape: 1,16' --data-binary @row.bin localhost:8080/classify -o answer.bin} (see
 * docs/onnxruntime.md for making {@code row.bin} and reading the answer).
 */
public final class InferenceServer implements AutoCloseable {

    /** The most rows one request may carry: 4 MiB of float32 rows is 65,536; this allows four times that. */
    static final int MAX_ROWS = 1 << 18;

    private final HttpServer http;
    private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
    private final BufferPool pool;
    private final Classifier classifier;
    private final boolean failureInjection;
    private final LongAdder ok = new LongAdder();
    private final LongAdder badRequests = new LongAdder();
    private final LongAdder serverErrors = new LongAdder();
    private final LongAdder aborted = new LongAdder();
    private final LongAdder requestNanos = new LongAdder();

    private InferenceServer(int port, byte[] model, boolean failureInjection) throws IOException, OrtException {
        this.pool = new BufferPool(256L << 20);
        this.classifier = new Classifier(model, Math.max(1, Runtime.getRuntime().availableProcessors()), pool);
        this.failureInjection = failureInjection;
        this.http = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 1024);
        http.setExecutor(executor);
        http.createContext("/classify", this::classify);
        http.createContext("/stats", this::stats);
        http.start();
    }

    /**
     * Starts a server on {@code port} (0: any free port) with the model shipped in this module.
     *
     * @param port             the port
     * @param failureInjection whether a request may ask, with {@code X-Inject-Failure: ort} or
     *                         {@code python}, for that step to fail (tests of the error paths)
     * @return the running server
     * @throws IOException  if the port cannot be bound
     * @throws OrtException if ONNX Runtime cannot load the model
     */
    public static InferenceServer start(int port, boolean failureInjection) throws IOException, OrtException {
        try (InputStream model = InferenceServer.class.getResourceAsStream("scorer.onnx")) {
            if (model == null) {
                throw new IllegalStateException("scorer.onnx is missing from the examples jar");
            }
            return new InferenceServer(port, model.readAllBytes(), failureInjection);
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
        return String.format(Locale.ROOT, "ok=%d badRequest=%d serverError=%d aborted=%d allocatedBytes=%d requestNanos=%d "
                + "inferenceNanos=%d pooledBytes=%d %s", ok.sum(), badRequests.sum(), serverErrors.sum(), aborted.sum(), allocated,
                requestNanos.sum(), classifier.inferenceNanos(), pool.pooledBytes(), DLPackStats.snapshot());
    }

    /** {@return the count of 5xx answers} */
    public long serverErrors() {
        return serverErrors.sum();
    }

    private void classify(HttpExchange exchange) throws IOException {
        long start = System.nanoTime();
        try (exchange) {
            if (!exchange.getRequestMethod().equals("POST")) {
                respond(exchange, 405, "POST a body of float32 rows; see GET /stats for counts");
                return;
            }
            RequestShape shape;
            boolean copying;
            try {
                shape = RequestShape.of(exchange.getRequestHeaders());
                copying = route(exchange.getRequestURI().getRawQuery());
            } catch (Classifier.BadRequestException e) {
                drain(exchange.getRequestBody());
                respond(exchange, 400, e.getMessage());
                return;
            }
            int rows = shape.rows();
            Classifier.Failure failure = Classifier.Failure.NONE;
            String inject = exchange.getRequestHeaders().getFirst("X-Inject-Failure");
            if (failureInjection && inject != null) {
                failure = Classifier.Failure.valueOf(inject.toUpperCase(Locale.ROOT));
            }
            Classifier.Answer answer;
            try {
                answer = copying ? classifier.copying(readBytes(exchange.getRequestBody(), shape), rows, failure)
                        : classifier.zeroCopy(readBody(exchange.getRequestBody(), shape), failure);
            } catch (Classifier.BadRequestException e) {
                respond(exchange, 400, e.getMessage());
                return;
            } catch (Classifier.StepFailedException e) {
                respond(exchange, 500, e.getMessage());
                return;
            } catch (IOException e) {
                aborted.increment(); // the client went away mid-request: nobody to answer
                return;
            } catch (OrtException | RuntimeException e) {
                respond(exchange, 500, "the server failed: " + e);
                return;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                respond(exchange, 503, "the server is stopping");
                return;
            }
            try (answer) {
                exchange.getResponseHeaders().set("Content-Type", "application/octet-stream");
                exchange.getResponseHeaders().set("X-Shape", rows + "," + Classifier.TOP);
                exchange.sendResponseHeaders(200, (long) rows * Classifier.TOP * 8);
                byte[] chunk = pool.chunk();
                try (OutputStream out = exchange.getResponseBody()) {
                    answer.writeTo(out, chunk);
                } finally {
                    pool.giveBack(chunk);
                }
                ok.increment();
            } catch (IOException e) {
                aborted.increment();
            }
        } catch (RuntimeException e) {
            serverErrors.increment();
            throw e;
        } finally {
            requestNanos.add(System.nanoTime() - start);
        }
    }

    /** {@return whether the query asks for the copying route} Any query but none, {@code route=zero-copy} and {@code route=copy} is refused. */
    private static boolean route(String query) {
        if (query == null || query.isEmpty() || query.equals("route=zero-copy")) {
            return false;
        }
        if (query.equals("route=copy")) {
            return true;
        }
        throw new Classifier.BadRequestException("unknown query " + query + ": send none (the zero-copy route) or route=copy");
    }

    /** Reads the body into a pooled native tensor, through a reused heap chunk (the socket stream's one copy). */
    private OwnedHostTensor readBody(InputStream in, RequestShape shape) throws IOException {
        OwnedHostTensor body = pool.tensor(DLDataType.FLOAT32, shape.rows(), Classifier.FEATURES);
        byte[] chunk = pool.chunk();
        try {
            MemorySegment target = body.host().segment();
            long filled = 0;
            while (filled < target.byteSize()) {
                int n = in.read(chunk, 0, (int) Math.min(chunk.length, target.byteSize() - filled));
                if (n < 0) {
                    throw shortBody(shape, filled);
                }
                MemorySegment.copy(chunk, 0, target, ValueLayout.JAVA_BYTE, filled, n);
                filled += n;
            }
            refuseMore(in, shape);
            return body;
        } catch (IOException | RuntimeException e) {
            body.close();
            throw e;
        } finally {
            pool.giveBack(chunk);
        }
    }

    /** The copying route's read: the body as a new byte array, as code without native memory would read it. */
    private static byte[] readBytes(InputStream in, RequestShape shape) throws IOException {
        int expected = (int) shape.bodyBytes();
        byte[] body = in.readNBytes(expected);
        if (body.length != expected) {
            throw shortBody(shape, body.length);
        }
        refuseMore(in, shape);
        return body;
    }

    /**
     * A body that ended early: a chunked one ended where its sender said, and is answered 400; one
     * of a declared length ended because the client went away (an IOException: nobody to answer).
     */
    private static IOException shortBody(RequestShape shape, long filled) {
        String message = "the body ended after " + filled + " bytes; X-Shape " + shape.rows() + "," + Classifier.FEATURES + " needs "
                + shape.bodyBytes() + " (little-endian float32)";
        if (shape.chunked()) {
            throw new Classifier.BadRequestException(message);
        }
        return new IOException(message);
    }

    /** A chunked body must end where the shape says; a longer one is refused (and not read on: the connection closes). */
    private static void refuseMore(InputStream in, RequestShape shape) throws IOException {
        if (shape.chunked() && in.read() >= 0) {
            throw new Classifier.BadRequestException("the chunked body holds more than the " + shape.bodyBytes() + " bytes X-Shape "
                    + shape.rows() + "," + Classifier.FEATURES + " needs");
        }
    }

    private static void drain(InputStream in) throws IOException {
        in.transferTo(OutputStream.nullOutputStream());
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

    /** Stops accepting, lets running requests finish (up to a second), and frees the model and the pool. */
    @Override
    public void close() throws OrtException {
        http.stop(1);
        executor.close();
        classifier.close();
        pool.close();
    }

    /**
     * Runs the server until the process is stopped.
     *
     * @param args ignored; {@code -Dserver.port} sets the port (default 8080)
     * @throws Exception if it cannot start
     */
    public static void main(String[] args) throws Exception {
        InferenceServer server = start(Integer.getInteger("server.port", 8080), Boolean.getBoolean("server.failureInjection"));
        Runtime.getRuntime().addShutdownHook(new Thread(() -> System.out.println("stopping: " + server.stats())));
        System.out.println("jdlpack inference server on http://127.0.0.1:" + server.port() + "/classify (POST, X-Shape: ROWS,"
                + Classifier.FEATURES + "); GET /stats");
    }
}
