/**
 * ONNX Runtime sessions fed and read without copies: DLPack tensors (imported, Java-owned, or
 * views) as ONNX Runtime inputs over the same memory, outputs written by ONNX Runtime straight into
 * memory jdlpack owns and exports, and lifetimes ordered so that ONNX Runtime never reads freed
 * memory.
 *
 * <p>The bridge uses ONNX Runtime's public Java API only (no restricted calls of its own); jdlpack
 * itself needs {@code --enable-native-access=org.jdlpack.abi}, and ONNX Runtime, whose jar is the
 * automatic module {@code com.microsoft.onnxruntime}, loads its JNI library as usual. The C route
 * ({@code OrtCApiSession}) binds ONNX Runtime's C API from that same library and needs
 * {@code --enable-native-access=org.jdlpack.onnxruntime} too.
 */
// ONNX Runtime's jar has no module descriptor: its types appear in this API, so users need it read too.
@SuppressWarnings({"requires-automatic", "requires-transitive-automatic"})
module org.jdlpack.onnxruntime {
    requires transitive org.jdlpack.abi;
    requires transitive org.jdlpack.cpu;
    requires transitive com.microsoft.onnxruntime;

    exports org.jdlpack.onnxruntime;
}
