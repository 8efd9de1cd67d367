import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.LongAdder;
import java.util.regex.Pattern;

import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtLoggingLevel;
import ai.onnxruntime.OrtSession;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * A benchmark peer of the example inference server, written without jdlpack: the same HTTP contract
 * (see docs/serving.md, "The example server"), the same JDK {@link HttpServer} with a
 * virtual-thread-per-request executor, the same ONNX Runtime options (one intra-op and one inter-op
 * thread, at most one run per core at a time) and the same {@code GET /stats} counters, so that
 * benchmarks/server/load.sh measures heap per request the same way on both. What differs is the
 * {@link Scorer}: {@code expert} (pooled direct buffers, pinned outputs) or {@code tutorial} (arrays).
 *
 * <pre>java -cp onnxruntime.jar:CLASSES PeerServer expert|tutorial PORT MODEL</pre>
 *
 * Threads: one instance serves every request thread; the counters are {@link LongAdder}s.
 */
public final class PeerServer {

    static final int FEATURES = 16;
    static final int CLASSES = 4;
    static final int TOP = 2;
    /** The example server's limit: four times the 65,536 rows of a 4 MiB request. */
    static final int MAX_ROWS = 1 << 18;
    /** X-Shape as the example server takes it: ROWS,16 with nothing around either number. */
    private static final Pattern SHAPE = Pattern.compile("([1-9][0-9]{0,8}),16");

    /** A request the peer refuses: answered 400 with the message. */
    static final class BadRequest extends Exception {
        private static final long serialVersionUID = 1L;

        BadRequest(String message) {
            super(message);
        }
    }

    /** Reads a request's body, answers it with 200, or throws {@link BadRequest} before answering. */
    interface Scorer {
        void classify(HttpExchange exchange, int rows) throws IOException, OrtException, InterruptedException, BadRequest;
    }

    final OrtEnvironment env = OrtEnvironment.getEnvironment();
    final OrtSession session;
    private final Semaphore inferences = new Semaphore(Math.max(1, Runtime.getRuntime().availableProcessors()));
    private final LongAdder ok = new LongAdder();
    private final LongAdder badRequests = new LongAdder();
    private final LongAdder serverErrors = new LongAdder();
    private final LongAdder aborted = new LongAdder();
    private final LongAdder requestNanos = new LongAdder();
    private final LongAdder inferenceNanos = new LongAdder();

    private PeerServer(byte[] model) throws OrtException {
        OrtSession.SessionOptions options = new OrtSession.SessionOptions();
        options.setIntraOpNumThreads(1);
        options.setInterOpNumThreads(1);
        options.setSessionLogLevel(OrtLoggingLevel.ORT_LOGGING_LEVEL_FATAL);
        session = env.createSession(model, options);
    }

    /** Runs {@code run} under the per-core permit, timing it for {@code /stats}. */
    <T> T infer(Inference<T> run) throws OrtException, InterruptedException {
        inferences.acquire();
        long start = System.nanoTime();
        try {
            return run.run();
        } finally {
            inferenceNanos.add(System.nanoTime() - start);
            inferences.release();
        }
    }

    @FunctionalInterface
    interface Inference<T> {
        T run() throws OrtException;
    }

    /** The answer's headers: the same as the example server's. */
    static void sendAnswerHeaders(HttpExchange exchange, int rows) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", "application/octet-stream");
        exchange.getResponseHeaders().set("X-Shape", rows + "," + TOP);
        exchange.sendResponseHeaders(200, (long) rows * TOP * 8);
    }

    static BadRequest notFinite(int row) {
        return new BadRequest("row " + row + " holds NaN or infinity");
    }

    private void classify(HttpExchange exchange, Scorer scorer) throws IOException {
        long start = System.nanoTime();
        try (exchange) {
            if (!exchange.getRequestMethod().equals("POST")) {
                respond(exchange, 405, "POST a body of float32 rows; see GET /stats for counts");
                return;
            }
            int rows;
            try {
                rows = rows(exchange);
            } catch (BadRequest e) {
                exchange.getRequestBody().transferTo(OutputStream.nullOutputStream());
                respond(exchange, 400, e.getMessage());
                return;
            }
            try {
                scorer.classify(exchange, rows);
                ok.increment();
            } catch (BadRequest e) {
                respond(exchange, 400, e.getMessage());
            } catch (IOException e) {
                aborted.increment(); // the client went away mid-request
            } catch (OrtException | RuntimeException e) {
                respond(exchange, 500, "the server failed: " + e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                respond(exchange, 503, "the server is stopping");
            }
        } finally {
            requestNanos.add(System.nanoTime() - start);
        }
    }

    /** The example server's checks, before a byte of the body is read. */
    private static int rows(HttpExchange exchange) throws BadRequest {
        List<String> shapes = exchange.getRequestHeaders().get("X-Shape");
        if (shapes == null || shapes.isEmpty()) {
            throw new BadRequest("the X-Shape header is missing: send X-Shape: ROWS," + FEATURES);
        }
        var m = SHAPE.matcher(shapes.get(0));
        if (shapes.size() != 1 || !m.matches()) {
            throw new BadRequest("X-Shape is " + shapes + "; send X-Shape: ROWS," + FEATURES);
        }
        int rows = Integer.parseInt(m.group(1));
        if (rows > MAX_ROWS) {
            throw new BadRequest("X-Shape asks for " + rows + " rows; send 1 to " + MAX_ROWS);
        }
        String length = exchange.getRequestHeaders().getFirst("Content-Length");
        long expected = (long) rows * FEATURES * 4;
        if (length == null || !length.strip().equals(Long.toString(expected))) {
            throw new BadRequest("the body holds " + length + " bytes; X-Shape needs " + expected);
        }
        return rows;
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

    /** The example server's counters, with the same names (load.sh reads allocatedBytes and ok). */
    private String stats() {
        long allocated = ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean()).getTotalThreadAllocatedBytes();
        return String.format(Locale.ROOT, "ok=%d badRequest=%d serverError=%d aborted=%d allocatedBytes=%d requestNanos=%d "
                + "inferenceNanos=%d", ok.sum(), badRequests.sum(), serverErrors.sum(), aborted.sum(), allocated,
                requestNanos.sum(), inferenceNanos.sum());
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 3 || !List.of("expert", "tutorial").contains(args[0])) {
            System.err.println("usage: PeerServer expert|tutorial PORT MODEL");
            System.exit(2);
        }
        PeerServer server = new PeerServer(Files.readAllBytes(Path.of(args[2])));
        Scorer scorer = args[0].equals("expert") ? new ExpertScorer(server) : new TutorialScorer(server);
        ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
        HttpServer http = HttpServer.create(new InetSocketAddress("127.0.0.1", Integer.parseInt(args[1])), 1024);
        http.setExecutor(executor);
        http.createContext("/classify", exchange -> server.classify(exchange, scorer));
        http.createContext("/stats", exchange -> {
            try (exchange) {
                byte[] bytes = (server.stats() + "\n").getBytes(StandardCharsets.UTF_8);
                exchange.sendResponseHeaders(200, bytes.length);
                exchange.getResponseBody().write(bytes);
            }
        });
        http.start();
        System.out.println(args[0] + " peer server on http://127.0.0.1:" + http.getAddress().getPort() + "/classify");
    }

    /** Reads exactly {@code n} bytes of the body into {@code chunk}-sized pieces handed to {@code sink}. */
    static void readFully(InputStream in, byte[] chunk, long n, ChunkSink sink) throws IOException {
        long filled = 0;
        while (filled < n) {
            int got = in.read(chunk, 0, (int) Math.min(chunk.length, n - filled));
            if (got < 0) {
                throw new IOException("the body ended after " + filled + " bytes");
            }
            sink.take(chunk, got);
            filled += got;
        }
    }

    @FunctionalInterface
    interface ChunkSink {
        void take(byte[] chunk, int length);
    }
}
