package org.jdlpack.onnxruntime;

/**
 * A C API call of ONNX Runtime that returned a non-NULL {@code OrtStatus}: names the call, with
 * ONNX Runtime's {@code OrtErrorCode} and message (the status itself is released already).
 *
 * {@snippet :
 * try (OrtCApiSession session = OrtCApiSession.open(Path.of("model.onnx"), 1)) {
 *     // ...
 * } catch (OrtStatusException e) {
 *     System.err.println(e.call() + " failed: " + e.codeName());
 * }
 * }
 *
 * @since 0.1
 */
public final class OrtStatusException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** {@code OrtErrorCode}'s names, by value (onnxruntime_c_api.h). */
    private static final String[] CODES = {"ORT_OK", "ORT_FAIL", "ORT_INVALID_ARGUMENT", "ORT_NO_SUCHFILE", "ORT_NO_MODEL",
        "ORT_ENGINE_ERROR", "ORT_RUNTIME_EXCEPTION", "ORT_INVALID_PROTOBUF", "ORT_MODEL_LOADED", "ORT_NOT_IMPLEMENTED",
        "ORT_INVALID_GRAPH", "ORT_EP_FAIL"};

    /** The C API function that failed. */
    private final String call;
    /** ONNX Runtime's {@code OrtErrorCode}, as returned. */
    private final int code;

    OrtStatusException(String call, int code, String message) {
        super("ONNX Runtime's " + call + " failed (" + name(code) + "): " + message);
        this.call = call;
        this.code = code;
    }

    private static String name(int code) {
        return code >= 0 && code < CODES.length ? CODES[code] : "OrtErrorCode " + code;
    }

    /** {@return the C API function that failed, such as {@code "Run"}} */
    public String call() {
        return call;
    }

    /** {@return ONNX Runtime's {@code OrtErrorCode} value} */
    public int code() {
        return code;
    }

    /** {@return the code's name in onnxruntime_c_api.h, such as {@code "ORT_INVALID_ARGUMENT"}} */
    public String codeName() {
        return name(code);
    }
}
