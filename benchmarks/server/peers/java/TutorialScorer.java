import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.util.Map;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import com.sun.net.httpserver.HttpExchange;

/**
 * ONNX Runtime Java the way its getting-started material shows it: the body as a {@code byte[]},
 * the features as a {@code float[]}, the input tensor from {@link FloatBuffer#wrap} (ONNX Runtime
 * copies it into native memory), the output read back as {@code float[][]}, the answer built in a
 * heap {@link ByteBuffer}. The arithmetic is {@link ExpertScorer}'s
 * (the same float32 steps in the same order), so both peers answer the same.
 *
 * Threads: stateless; any number of request threads.
 */
final class TutorialScorer implements PeerServer.Scorer {

    private final PeerServer server;

    TutorialScorer(PeerServer server) {
        this.server = server;
    }

    @Override
    public void classify(HttpExchange exchange, int rows) throws IOException, OrtException, InterruptedException,
            PeerServer.BadRequest {
        int n = rows * PeerServer.FEATURES;
        byte[] body = exchange.getRequestBody().readNBytes(n * 4);
        if (body.length != n * 4) {
            throw new IOException("the body ended after " + body.length + " bytes");
        }
        float[] x = new float[n];
        ByteBuffer.wrap(body).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(x);
        for (int i = 0; i < n; i++) {
            if (!Float.isFinite(x[i])) {
                throw PeerServer.notFinite(i / PeerServer.FEATURES);
            }
        }
        for (int i = 0; i < n; i++) {
            x[i] = (x[i] - 0.5f) / 2.0f;
        }
        float[][] logits = server.infer(() -> {
            try (OnnxTensor input = OnnxTensor.createTensor(server.env, FloatBuffer.wrap(x), new long[] {rows, PeerServer.FEATURES});
                 OrtSession.Result result = server.session.run(Map.of("x", input))) {
                return (float[][]) result.get(0).getValue();
            }
        });
        int[] classes = new int[rows * PeerServer.TOP];
        float[] probabilities = new float[rows * PeerServer.TOP];
        for (int r = 0; r < rows; r++) {
            float[] z = logits[r];
            float max = Math.max(Math.max(z[0], z[1]), Math.max(z[2], z[3]));
            float[] p = new float[PeerServer.CLASSES];
            float sum = 0;
            for (int c = 0; c < PeerServer.CLASSES; c++) {
                p[c] = (float) Math.exp(z[c] - max);
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
            classes[r * 2] = first;
            classes[r * 2 + 1] = second;
            probabilities[r * 2] = p[first];
            probabilities[r * 2 + 1] = p[second];
        }
        ByteBuffer answer = ByteBuffer.allocate(rows * PeerServer.TOP * 8).order(ByteOrder.LITTLE_ENDIAN);
        answer.asIntBuffer().put(classes);
        answer.position(classes.length * 4).slice().order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().put(probabilities);
        PeerServer.sendAnswerHeaders(exchange, rows);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(answer.array());
        }
    }
}
