package org.jdlpack.examples.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.jdlpack.abi.DLPackStats;
import org.jdlpack.python.PythonException;
import org.jdlpack.python.PythonRuntime;
import org.jdlpack.python.PythonUnavailableException;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.testsupport.PeerRequirement;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The example server on an ephemeral port, both routes: 200 requests from 8 virtual threads each,
 * answers checked against the model computed here by hand; then the bad requests and the injected
 * failures, each answered, with the server still serving and nothing left behind; slow bodies beside
 * well-behaved requests; malformed headers and chunked bodies as raw bytes. Requests sharing a
 * batch, one with NaN rows, are {@link BatcherTest}'s.
 */
@ExtendWith(NothingLeftBehind.class)
class InferenceServerTest {

    private static final int F = Classifier.FEATURES;

    /** The default route needs no Python: every answer and refusal, from Java alone, on ONNX Runtime's C API (the default). */
    @Test
    @Timeout(120)
    void theJavaRouteServesConcurrentRequestsAndAnswersBadOnesWithoutLeaking() throws Exception {
        try (InferenceServer server = InferenceServer.start(0, true)) {
            assertThat(server.stats()).startsWith("ort=c ");
            javaRoute(server);
        }
        assertThat(DLPackStats.liveExports()).as("after the server's close, its idle scoring slots are closed").isZero();
    }

    /** The same on ONNX Runtime Java's API ({@code -Dserver.ort=java}), the route before issue 44, kept to be measured against. */
    @Test
    @Timeout(120)
    void theJavaRouteOnOnnxRuntimeJavaServesTheSameAnswersAndRefusals() throws Exception {
        try (InferenceServer server = InferenceServer.start(0, true, InferenceServer.BATCH_WAIT_NANOS, Scorer.Api.JAVA)) {
            assertThat(server.stats()).startsWith("ort=java ");
            javaRoute(server);
        }
        assertThat(DLPackStats.liveExports()).as("after the server's close, its idle scoring slots are closed").isZero();
    }

    /**
     * The default route's runs are made on their requests' own virtual threads: the server admits
     * as many runs at once as may pin a carrier ({@link Scorer#pinnableCarriers()}), so that the C
     * route's guard never hands one to a platform thread and back (two wake-ups a run, 2 to 6 times
     * the run's time at 4 MiB under load; benchmarks/notes.md). 16 clients at once, 1 MiB bodies:
     * at a bound of the core count, as before, runs overlapped and some went off their carriers.
     * NativeRuns' count of such calls is package-private, so it is read by reflection.
     */
    @Test
    @Timeout(120)
    void theDefaultRoutesRunsStayOnTheirRequestsThreadsUnderConcurrentLoad() throws Exception {
        // With one carrier NativeRuns pins none (carriers less one is 0): every run goes off carrier by design.
        Assumptions.assumeTrue(Integer.getInteger("jdk.virtualThreadScheduler.parallelism",
                Runtime.getRuntime().availableProcessors()) >= 2, "needs at least two virtual-thread carriers");
        java.lang.reflect.Field counter = Class.forName("org.jdlpack.onnxruntime.NativeRuns").getDeclaredField("OFF_CARRIER_CALLS");
        counter.setAccessible(true);
        java.util.concurrent.atomic.AtomicLong offCarrier = (java.util.concurrent.atomic.AtomicLong) counter.get(null);
        int rows = 16_384;
        try (InferenceServer server = InferenceServer.start(0, false);
             HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
             ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            URI classify = URI.create("http://127.0.0.1:" + server.port() + "/classify");
            long before = offCarrier.get();
            List<Future<?>> clients = new ArrayList<>();
            for (int t = 0; t < 16; t++) {
                float[] x = rows(rows, t + 1);
                clients.add(threads.submit(() -> {
                    for (int i = 0; i < 8; i++) {
                        HttpResponse<byte[]> response = client.send(post(classify, rows + "," + F, bytes(x)),
                                HttpResponse.BodyHandlers.ofByteArray());
                        assertThat(response.statusCode()).as(new String(response.body())).isEqualTo(200);
                        checkAnswer(x, rows, response.body());
                    }
                    return null;
                }));
            }
            for (Future<?> c : clients) {
                c.get();
            }
            assertThat(offCarrier.get() - before).as("runs handed to a platform thread").isZero();
            assertThat(field(server, "ok")).isEqualTo(16 * 8);
        }
    }

    /** {@code -Dserver.ort} takes c or java, any case; another value is refused by name before any session opens. */
    @Test
    void theOrtPropertyNamesAnApiOrIsRefusedByValue() {
        assertThat(Scorer.Api.of("C")).isEqualTo(Scorer.Api.C);
        assertThat(Scorer.Api.of("java")).isEqualTo(Scorer.Api.JAVA);
        org.assertj.core.api.Assertions.assertThatIllegalArgumentException().isThrownBy(() -> Scorer.Api.of("cuda"))
                .withMessageContaining("server.ort is \"cuda\"");
    }

    /** Concurrent requests, the refusals, an injected ONNX Runtime failure and a client gone mid-body, each answered or counted. */
    private static void javaRoute(InferenceServer server) throws Exception {
        try (HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
            URI classify = URI.create("http://127.0.0.1:" + server.port() + "/classify");
            assertThat(concurrently(client, classify)).isEqualTo(200);
            refusals(client, classify);
            assertThat(answer(client, post(classify, "1," + F, bytes(new float[F]), "ort"))).startsWith("500 inference (ONNX Runtime) failed");
            assertThat(server.serverErrors()).isEqualTo(1);
            long aborted = field(server, "aborted");
            try (java.net.Socket hangUp = new java.net.Socket("127.0.0.1", server.port())) { // half a body, then gone
                byte[] two = bytes(rows(2, 3));
                OutputStream out = hangUp.getOutputStream();
                out.write(("POST /classify HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Shape: 2," + F + "\r\nContent-Length: " + two.length
                        + "\r\n\r\n").getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
                out.write(two, 0, F * 4);
                out.flush();
            }
            awaitField(server, "aborted", aborted + 1); // stillServing waits for its slot to be given back
            stillServing(client, classify, server);
        }
    }

    /** The numpy route: the same answers, batched; a refusal and a hang-up inside a batch leave the others their answers. */
    @Test
    @Timeout(120)
    void theNumPyRouteBatchesAndAnswersEachRequestFromItsOwnRows() throws Exception {
        requireNumPy();
        try (InferenceServer server = InferenceServer.start(0, true);
             HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
            URI numpy = URI.create("http://127.0.0.1:" + server.port() + "/classify?route=numpy");
            assertThat(concurrently(client, numpy)).isEqualTo(200);
            assertThat(field(server, "batchedRequests")).isEqualTo(200);
            assertThat(field(server, "batches")).isBetween(1L, 200L);
            refusals(client, numpy);
            assertThat(answer(client, post(numpy, "1," + F, bytes(new float[F]), "ort"))).startsWith("500 inference (ONNX Runtime) failed");
            assertThat(answer(client, post(numpy, "1," + F, bytes(new float[F]), "python")))
                    .startsWith("500 pre-processing (NumPy) failed: RuntimeError: a failure injected");
            assertThat(server.serverErrors()).isEqualTo(2);
            stillServing(client, numpy, server);
        }
    }

    /**
     * A body slower than a request that came after it: the slow request reads its body outside any
     * batch, so the other one is batched and answered meanwhile (a batch wait of 50 ms); the test
     * sends the rest of the slow body only after that answer, and the slow request is then answered
     * too, from a batch of its own. (Before issue 41 the slow request joined the forming batch and
     * was left out after a read grace, answered 408.)
     */
    @Test
    @Timeout(120)
    void aBodySlowerThanAnotherRequestJoinsNoBatchUntilItIsInAndIsAnswered() throws Exception {
        requireNumPy();
        try (InferenceServer server = InferenceServer.start(0, false, java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(50));
             HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
            URI numpy = URI.create("http://127.0.0.1:" + server.port() + "/classify?route=numpy");
            float[] slowRows = rows(2, 4);
            byte[] slowBody = bytes(slowRows);
            try (java.net.Socket slow = new java.net.Socket("127.0.0.1", server.port())) {
                slow.setSoTimeout(30_000);
                OutputStream out = slow.getOutputStream();
                out.write(("POST /classify?route=numpy HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nX-Shape: 2," + F
                        + "\r\nContent-Length: " + slowBody.length + "\r\n\r\n").getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
                out.write(slowBody, 0, F * 4);
                out.flush();
                awaitField(server, "readingBodies", 1);
                assertThat(field(server, "formingRows")).as("a body still coming is in no batch").isZero();
                float[] good = rows(1, 5);
                HttpResponse<byte[]> other = client.send(post(numpy, "1," + F, bytes(good)), HttpResponse.BodyHandlers.ofByteArray());
                assertThat(other.statusCode()).isEqualTo(200);
                checkAnswer(good, 1, other.body());
                assertThat(field(server, "batchedRequests")).isEqualTo(1);
                out.write(slowBody, F * 4, F * 4);
                out.flush();
                byte[] answer = slow.getInputStream().readAllBytes();
                String text = new String(answer, java.nio.charset.StandardCharsets.ISO_8859_1);
                assertThat(text).startsWith("HTTP/1.1 200");
                checkAnswer(slowRows, 2, java.util.Arrays.copyOfRange(answer, text.indexOf("\r\n\r\n") + 4, answer.length));
            }
            assertThat(field(server, "batchedRequests")).isEqualTo(2);
            assertThat(field(server, "batches")).isEqualTo(2);
            stillServing(client, numpy, server);
        }
    }

    /**
     * Slow clients beside well-behaved ones (issue 41). Slow connections, more than the run slots,
     * each send the headers and 10 of their 64 body bytes and wait. After each, and then from 8
     * threads at once, well-behaved requests are answered right while every slow body is still
     * coming; no slow body sits in a forming batch or is counted in one. Then half the slow bodies
     * complete and are answered right; the other half hang up, which aborts them and nothing else.
     * (Before issue 41's fix, run with a read grace of a minute, the first well-behaved request timed
     * out: it sealed the batch the slow member had joined, which then waited for that body.)
     */
    @Test
    @Timeout(120)
    void slowBodiesHoldNoBatchNoRunSlotAndNoOneElsesAnswer() throws Exception {
        requireNumPy();
        int slowCount = 2 * Runtime.getRuntime().availableProcessors() + 2;
        try (InferenceServer server = InferenceServer.start(0, false);
             HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
            URI numpy = URI.create("http://127.0.0.1:" + server.port() + "/classify?route=numpy");
            List<java.net.Socket> slow = new ArrayList<>();
            try {
                for (int i = 0; i < slowCount; i++) {
                    java.net.Socket socket = new java.net.Socket("127.0.0.1", server.port());
                    slow.add(socket);
                    socket.setSoTimeout(30_000);
                    OutputStream out = socket.getOutputStream();
                    out.write(("POST /classify?route=numpy HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nX-Shape: 1," + F
                            + "\r\nContent-Length: " + F * 4 + "\r\n\r\n").getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
                    out.write(bytes(rows(1, 40 + i)), 0, 10);
                    out.flush();
                    awaitField(server, "readingBodies", i + 1);
                    float[] good = rows(1, 60 + i);
                    HttpResponse<byte[]> response = client.send(post(numpy, "1," + F, bytes(good)),
                            HttpResponse.BodyHandlers.ofByteArray());
                    assertThat(response.statusCode()).as("a well-behaved request beside %d slow bodies", i + 1).isEqualTo(200);
                    checkAnswer(good, 1, response.body());
                }
                assertThat(concurrently(client, numpy)).isEqualTo(200);
                assertThat(field(server, "readingBodies")).as("every slow body is still coming").isEqualTo(slowCount);
                assertThat(field(server, "formingRows")).as("no slow body sits in a forming batch").isZero();
                assertThat(field(server, "batchedRequests")).as("batches hold the well-behaved requests only").isEqualTo(slowCount + 200);
                long aborted = field(server, "aborted");
                for (int i = 0; i < slowCount; i++) {
                    java.net.Socket socket = slow.get(i);
                    if (i % 2 == 1) {
                        socket.close(); // hangs up with 10 of its 64 bytes sent
                        continue;
                    }
                    byte[] body = bytes(rows(1, 40 + i));
                    socket.getOutputStream().write(body, 10, body.length - 10);
                    socket.getOutputStream().flush();
                    byte[] answer = socket.getInputStream().readAllBytes();
                    String text = new String(answer, java.nio.charset.StandardCharsets.ISO_8859_1);
                    assertThat(text).as("slow body %d, once complete", i).startsWith("HTTP/1.1 200");
                    int start = text.indexOf("\r\n\r\n") + 4;
                    checkAnswer(rows(1, 40 + i), 1, java.util.Arrays.copyOfRange(answer, start, answer.length));
                }
                awaitField(server, "aborted", aborted + slowCount / 2);
                awaitField(server, "readingBodies", 0);
                assertThat(field(server, "batchedRequests")).isEqualTo(slowCount + 200 + (slowCount + 1) / 2);
                assertThat(server.serverErrors()).isZero();
            } finally {
                for (java.net.Socket socket : slow) {
                    socket.close();
                }
            }
            stillServing(client, numpy, server);
        }
    }

    /** 8 virtual threads, 25 requests each of 1 to 7 rows, every answer checked; {@return the requests answered right} */
    private static int concurrently(HttpClient client, URI uri) throws Exception {
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<Integer>> checked = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                int thread = t;
                checked.add(threads.submit(() -> {
                    int done = 0;
                    for (int i = 0; i < 25; i++) {
                        int rows = 1 + (thread * 25 + i) % 7;
                        float[] x = rows(rows, (thread + 1) * (i + 1));
                        HttpResponse<byte[]> response = client.send(post(uri, rows + "," + F, bytes(x)),
                                HttpResponse.BodyHandlers.ofByteArray());
                        assertThat(response.statusCode()).as(new String(response.body())).isEqualTo(200);
                        assertThat(response.headers().firstValue("X-Shape")).hasValue(rows + ",2");
                        checkAnswer(x, rows, response.body());
                        done++;
                    }
                    return done;
                }));
            }
            int total = 0;
            for (Future<Integer> f : checked) {
                total += f.get();
            }
            return total;
        }
    }

    private static float[] rows(int rows, int seed) {
        float[] x = new float[rows * F];
        for (int k = 0; k < x.length; k++) {
            x[k] = (seed * (k + 3) % 23) / 5f - 2;
        }
        return x;
    }

    private static void refusals(HttpClient client, URI uri) throws Exception {
        byte[] one = bytes(new float[F]);
        float[] nan = new float[2 * F];
        nan[F + 3] = Float.NaN;
        float[] infinite = new float[3 * F];
        infinite[2 * F] = Float.NEGATIVE_INFINITY;
        assertThat(answer(client, post(uri, "2," + F, one))).startsWith("400 the body holds 64 bytes");
        assertThat(answer(client, post(uri, "1,8", one))).startsWith("400 X-Shape is '1,8'");
        assertThat(answer(client, post(uri, null, one))).startsWith("400 the X-Shape header is missing");
        assertThat(answer(client, post(uri, "0," + F, new byte[0]))).startsWith("400 X-Shape asks for 0 rows");
        assertThat(answer(client, post(uri, "2," + F, bytes(nan)))).isEqualTo("400 row 1 holds NaN or infinity");
        assertThat(answer(client, post(uri, "3," + F, bytes(infinite)))).isEqualTo("400 row 2 holds NaN or infinity");
        assertThat(answer(client, post(uri, "1," + F, one, "everything"))).startsWith("400 X-Inject-Failure is everything");
    }

    private static void stillServing(HttpClient client, URI uri, InferenceServer server) throws Exception {
        HttpResponse<byte[]> after = client.send(post(uri, "1," + F, bytes(new float[F])), HttpResponse.BodyHandlers.ofByteArray());
        assertThat(after.statusCode()).isEqualTo(200);
        checkAnswer(new float[F], 1, after.body());
        // What is live is the idle scoring slots' three tensors each (their ONNX Runtime input and output
        // hold them by retains, which are no exports), and nothing else, once every request's slot is
        // back (a handler gives it back after its client has the answer): no export, since no native
        // code holds anything between requests.
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
        while ((DLPackStats.liveExports() != 0 || DLPackStats.liveExportOwners() != 3 * field(server, "idleSlots"))
                && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertThat(DLPackStats.liveExports()).as(server.stats()).isZero();
        assertThat(DLPackStats.liveExportOwners()).as(server.stats()).isEqualTo(3 * field(server, "idleSlots"));
        assertThat(DLPackStats.ownedManagedTensors()).as(server.stats()).isZero();
    }

    private static long field(InferenceServer server, String name) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(^| )" + name + "=(\\d+)").matcher(server.stats());
        assertThat(m.find()).as(server.stats()).isTrue();
        return Long.parseLong(m.group(2));
    }

    /** Waits (without a deadline of its own: the test's timeout is the bound) until a stats field has a value. */
    private static void awaitField(InferenceServer server, String name, long value) throws InterruptedException {
        while (field(server, name) != value) {
            Thread.sleep(5);
        }
    }

    /**
     * Malformed X-Shape headers, a second X-Shape, an unknown route and chunked bodies, sent byte for
     * byte on a socket (the JDK's client refuses to send some of them): each is answered 400 but
     * the chunked body of the right length, which is served. Whitespace (and a NUL) around the
     * whole value is not part of it in HTTP, and the JDK's server strips it: those are served too.
     */
    @Test
    @Timeout(60)
    void refusesMalformedShapesAndRoutesAndReadsChunkedBodies() throws Exception {
        try (InferenceServer server = InferenceServer.start(0, false)) {
            String body = "x".repeat(64);
            String length = "\r\nContent-Length: 64\r\n";
            for (String shape : List.of("1,16,", "1 ,16", "1, 16", "1\t,16", "+1,16", "01,16", "1,016", "-1,16", "1,\u000016",
                    "1;16", "1,16,1", "4294967297,16", "")) {
                assertThat(raw(server, "/classify", "X-Shape: " + shape + length, body)).as(shape).startsWith("400 ");
            }
            assertThat(raw(server, "/classify", "X-Shape: 1,16\r\nX-Shape: 1,16" + length, body))
                    .startsWith("400 X-Shape is sent 2 times");
            assertThat(raw(server, "/classify?route=nope", "X-Shape: 1,16" + length, body)).startsWith("400 unknown query route=nope");
            assertThat(raw(server, "/classify?route=copy&x", "X-Shape: 1,16" + length, body)).startsWith("400 unknown query");
            for (String path : List.of("/classifyX", "/classify/", "/classify/..")) {
                assertThat(raw(server, path, "X-Shape: 1,16" + length, body)).as(path).startsWith("404 no such path");
            }
            // What HTTP defines as the value 1,16.
            for (String padded : List.of("X-Shape:  1,16 ", "X-Shape:\t1,16\t", "X-Shape: 1,16\u0000")) {
                assertThat(raw(server, "/classify", padded + length, body)).as(padded).startsWith("200 ");
            }
            // Chunked: read up to what the shape needs; refused if it ends early or holds more.
            String chunked = "X-Shape: 1,16\r\nTransfer-Encoding: chunked\r\n";
            String half = body.substring(32);
            assertThat(raw(server, "/classify", chunked, "20\r\n" + half + "\r\n20\r\n" + half + "\r\n0\r\n\r\n")).startsWith("200 ");
            assertThat(raw(server, "/classify", chunked, "20\r\n" + half + "\r\n0\r\n\r\n"))
                    .startsWith("400 the body ended after 32 bytes");
            assertThat(raw(server, "/classify", chunked, "41\r\n" + body + "y\r\n0\r\n\r\n"))
                    .startsWith("400 the chunked body holds more than the 64 bytes");
            assertThat(server.serverErrors()).isZero();
        }
    }

    /** Sends one request as raw bytes and returns the status code and body of the answer. */
    private static String raw(InferenceServer server, String path, String headers, String body) throws Exception {
        try (java.net.Socket socket = new java.net.Socket("127.0.0.1", server.port())) {
            socket.setSoTimeout(30_000);
            String request = "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" + headers + "\r\n" + body;
            socket.getOutputStream().write(request.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
            String answer = new String(socket.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.ISO_8859_1);
            int status = answer.indexOf(' ') + 1;
            return answer.substring(status, status + 3) + " " + answer.substring(answer.indexOf("\r\n\r\n") + 4).strip();
        }
    }

    private static void requireNumPy() {
        try {
            PythonRuntime.get().exec("import numpy");
        } catch (PythonUnavailableException | PythonException e) {
            throw PeerRequirement.missing("NumPy", "the server's pre- and post-processing run in NumPy: " + e.getMessage().lines()
                    .findFirst().orElse(""));
        }
    }

    private static HttpRequest post(URI uri, String shape, byte[] body) {
        return post(uri, shape, body, null);
    }

    private static HttpRequest post(URI uri, String shape, byte[] body, String failure) {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30))
                .POST(HttpRequest.BodyPublishers.ofByteArray(body));
        if (shape != null) {
            request.header("X-Shape", shape);
        }
        if (failure != null) {
            request.header("X-Inject-Failure", failure);
        }
        return request.build();
    }

    private static String answer(HttpClient client, HttpRequest request) throws Exception {
        HttpResponse<String> response = client.send(request, HttpResponse.BodyHandlers.ofString());
        return response.statusCode() + " " + response.body().strip();
    }

    private static byte[] bytes(float[] values) {
        ByteBuffer buffer = ByteBuffer.allocate(values.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        for (float v : values) {
            buffer.putFloat(v);
        }
        return buffer.array();
    }

    /** The model by hand: normalize, x @ W + b, softmax, the two most probable classes. */
    private static void checkAnswer(float[] x, int rows, byte[] body) {
        assertThat(body).hasSize(rows * 16);
        ByteBuffer in = ByteBuffer.wrap(body).order(ByteOrder.LITTLE_ENDIAN);
        for (int r = 0; r < rows; r++) {
            double[] p = new double[4];
            double max = Double.NEGATIVE_INFINITY;
            for (int j = 0; j < 4; j++) {
                float z = new float[] {0.1f, -0.2f, 0.3f, 0f}[j];
                for (int i = 0; i < F; i++) {
                    z += (x[r * F + i] - 0.5f) / 2f * (((4 * i + j) % 7 - 3) / 4f);
                }
                p[j] = z;
                max = Math.max(max, z);
            }
            double sum = 0;
            for (int j = 0; j < 4; j++) {
                p[j] = Math.exp(p[j] - max);
                sum += p[j];
            }
            int first = 0;
            for (int j = 1; j < 4; j++) {
                if (p[j] > p[first]) {
                    first = j;
                }
            }
            int second = first == 0 ? 1 : 0;
            for (int j = 0; j < 4; j++) {
                if (j != first && p[j] > p[second]) {
                    second = j;
                }
            }
            int[] classes = {in.getInt(r * 8), in.getInt(r * 8 + 4)};
            float[] probabilities = {in.getFloat(rows * 8 + r * 8), in.getFloat(rows * 8 + r * 8 + 4)};
            assertThat(probabilities[0]).as("row %d", r).isCloseTo((float) (p[classes[0]] / sum), org.assertj.core.data.Offset.offset(1e-5f));
            assertThat(probabilities[1]).as("row %d", r).isCloseTo((float) (p[classes[1]] / sum), org.assertj.core.data.Offset.offset(1e-5f));
            // Ties may order either way; the probabilities decide.
            assertThat((float) (p[classes[0]] / sum)).isCloseTo((float) (p[first] / sum), org.assertj.core.data.Offset.offset(1e-5f));
            assertThat((float) (p[classes[1]] / sum)).isCloseTo((float) (p[second] / sum), org.assertj.core.data.Offset.offset(1e-5f));
        }
    }
}
