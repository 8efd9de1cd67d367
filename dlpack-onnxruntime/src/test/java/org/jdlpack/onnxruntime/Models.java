package org.jdlpack.onnxruntime;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;

/** The committed test models (src/test/models/make_models.py), as sessions with one intra-op thread. */
final class Models {

    private Models() {
    }

    static OrtSession session(OrtEnvironment env, String name) throws OrtException {
        try (InputStream in = Models.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException(name + " is not a test resource; run src/test/models/make_models.py");
            }
            OrtSession.SessionOptions options = new OrtSession.SessionOptions();
            options.setIntraOpNumThreads(1);
            return env.createSession(in.readAllBytes(), options);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** tiny.onnx by hand: y = relu(x @ W + b) for x [rows, 4]. */
    static float[] tiny(float[] x) {
        float[][] w = {{1, 0, 2}, {0.5f, -1, 0}, {0, 1, -1}, {1, 1, 1}};
        float[] b = {0.1f, 0.2f, 0.3f};
        int rows = x.length / 4;
        float[] y = new float[rows * 3];
        for (int r = 0; r < rows; r++) {
            for (int j = 0; j < 3; j++) {
                float z = b[j];
                for (int i = 0; i < 4; i++) {
                    z += x[r * 4 + i] * w[i][j];
                }
                y[r * 3 + j] = Math.max(z, 0);
            }
        }
        return y;
    }
}
