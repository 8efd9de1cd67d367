import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicLong;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import com.sun.net.httpserver.HttpExchange;

/**
 * ONNX Runtime Java as an engineer who knows it writes a service: the body is read into a pooled
 * direct {@link ByteBuffer} (in native order, so {@link OnnxTensor#createTensor} wraps it without a
 * copy), the logits go into a pinned output over another pooled direct buffer, and normalization,
 * the NaN check, softmax and top-2 are Java loops over those buffers. A {@link Slot} (the buffers and
 * the two tensors over them) is pooled per row count, so a steady load allocates no native memory
 * and creates no ONNX Runtime value per request.
 *
 * Threads: any number of request threads; a slot belongs to one request between take and give back.
 */
final class ExpertScorer implements PeerServer.Scorer {

    /** The most native memory kept in idle slots, as the example server's pool keeps (256 MiB). */
    private static final long POOL_BYTES = 256L << 20;

    private final PeerServer server;
    private final Map<Integer, ConcurrentLinkedDeque<Slot>> idle = new ConcurrentHashMap<>();
    private final AtomicLong pooledBytes = new AtomicLong();

    ExpertScorer(PeerServer server) {
        this.server = server;
    }

    /** The request's buffers and the ONNX Runtime tensors over them, for one row count. */
    private final class Slot implements AutoCloseable {
        final int rows;
        final ByteBuffer input;
        final FloatBuffer x;
        final FloatBuffer logits;
        final ByteBuffer answer;
        final IntBuffer classes;
        final FloatBuffer probabilities;
        final OnnxTensor xTensor;
        final OnnxTensor logitsTensor;
        /** The socket's chunks pass through this (a thread-local would be new per request: virtual threads are not reused). */
        final byte[] chunk = new byte[64 << 10];

        Slot(int rows) throws OrtException {
            this.rows = rows;
            input = ByteBuffer.allocateDirect(rows * PeerServer.FEATURES * 4).order(ByteOrder.nativeOrder());
            x = input.asFloatBuffer();
            ByteBuffer out = ByteBuffer.allocateDirect(rows * PeerServer.CLASSES * 4).order(ByteOrder.nativeOrder());
            logits = out.asFloatBuffer();
            answer = ByteBuffer.allocateDirect(rows * PeerServer.TOP * 8).order(ByteOrder.LITTLE_ENDIAN);
            classes = answer.slice(0, rows * PeerServer.TOP * 4).order(ByteOrder.LITTLE_ENDIAN).asIntBuffer();
            probabilities = answer.slice(rows * PeerServer.TOP * 4, rows * PeerServer.TOP * 4)
                    .order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer();
            xTensor = OnnxTensor.createTensor(server.env, x, new long[] {rows, PeerServer.FEATURES});
            logitsTensor = OnnxTensor.createTensor(server.env, logits, new long[] {rows, PeerServer.CLASSES});
        }

        long bytes() {
            return (long) rows * (PeerServer.FEATURES + PeerServer.CLASSES + PeerServer.TOP * 2) * 4 + chunk.length;
        }

        @Override
        public void close() {
            xTensor.close();
            logitsTensor.close();
        }
    }

    private Slot take(int rows) throws OrtException {
        ConcurrentLinkedDeque<Slot> slots = idle.get(rows);
        Slot slot = slots == null ? null : slots.pollFirst();
        if (slot == null) {
            return new Slot(rows);
        }
        pooledBytes.addAndGet(-slot.bytes());
        return slot;
    }

    private void giveBack(Slot slot) {
        if (pooledBytes.addAndGet(slot.bytes()) > POOL_BYTES) {
            pooledBytes.addAndGet(-slot.bytes());
            slot.close(); // the direct buffers go with the garbage collector
            return;
        }
        idle.computeIfAbsent(slot.rows, r -> new ConcurrentLinkedDeque<>()).addFirst(slot);
    }

    @Override
    public void classify(HttpExchange exchange, int rows) throws IOException, OrtException, InterruptedException,
            PeerServer.BadRequest {
        Slot slot = take(rows);
        try {
            byte[] chunk = slot.chunk;
            ByteBuffer input = slot.input;
            input.clear();
            PeerServer.readFully(exchange.getRequestBody(), chunk, input.capacity(), (c, n) -> input.put(c, 0, n));
            normalize(slot.x, rows);
            server.infer(() -> {
                try (OrtSession.Result ignored = server.session.run(Map.of("x", slot.xTensor), Map.of("logits", slot.logitsTensor))) {
                    return null; // the pinned output is not the result's to close
                }
            });
            softmaxTop(slot.logits, slot.classes, slot.probabilities, rows);
            PeerServer.sendAnswerHeaders(exchange, rows);
            try (OutputStream out = exchange.getResponseBody()) {
                ByteBuffer answer = slot.answer;
                for (int at = 0; at < answer.capacity(); at += chunk.length) {
                    int n = Math.min(chunk.length, answer.capacity() - at);
                    answer.get(at, chunk, 0, n);
                    out.write(chunk, 0, n);
                }
            }
        } finally {
            giveBack(slot);
        }
    }

    /** Refuses NaN and infinity (first bad row), then (x - 0.5) / 2 in place, in float32 as NumPy does. */
    static void normalize(FloatBuffer x, int rows) throws PeerServer.BadRequest {
        int n = rows * PeerServer.FEATURES;
        for (int i = 0; i < n; i++) {
            if (!Float.isFinite(x.get(i))) {
                throw PeerServer.notFinite(i / PeerServer.FEATURES);
            }
        }
        for (int i = 0; i < n; i++) {
            x.put(i, (x.get(i) - 0.5f) / 2.0f);
        }
    }

    /** Softmax per row, then the two most probable classes (the lower class first on a tie). */
    static void softmaxTop(FloatBuffer logits, IntBuffer classes, FloatBuffer probabilities, int rows) {
        float[] p = new float[PeerServer.CLASSES]; // scalar-replaced by the JIT: no allocation per request
        for (int r = 0; r < rows; r++) {
            int base = r * PeerServer.CLASSES;
            float max = logits.get(base);
            for (int c = 1; c < PeerServer.CLASSES; c++) {
                max = Math.max(max, logits.get(base + c));
            }
            float sum = 0;
            for (int c = 0; c < PeerServer.CLASSES; c++) {
                p[c] = (float) Math.exp(logits.get(base + c) - max);
                sum += p[c];
            }
            int first = 0;
            for (int c = 0; c < PeerServer.CLASSES; c++) {
                p[c] /= sum;
                if (p[c] > p[first]) {
                    first = c;
                }
            }
            int second = first == 0 ? 1 : 0;
            for (int c = 0; c < PeerServer.CLASSES; c++) {
                if (c != first && p[c] > p[second]) {
                    second = c;
                }
            }
            classes.put(r * 2, first).put(r * 2 + 1, second);
            probabilities.put(r * 2, p[first]).put(r * 2 + 1, p[second]);
        }
    }
}
