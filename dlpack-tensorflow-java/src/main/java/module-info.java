/**
 * TensorFlow Java tensors ({@code org.tensorflow.Tensor}) as DLPack tensors and back, without
 * copies, through the C API and DLPack entry point of the TensorFlow that TensorFlow Java loaded.
 *
 * <p>Needs native access for itself and for jdlpack:
 * {@code --enable-native-access=org.jdlpack.abi,org.jdlpack.tensorflow} (on the class path,
 * {@code ALL-UNNAMED}), and on the module path
 * {@code --add-opens tensorflow/org.tensorflow=org.jdlpack.tensorflow}: TensorFlow Java 1.1.0 keeps
 * a tensor's native handle package-private. TensorFlow Java is the user's dependency: this module
 * reads it.
 */
module org.jdlpack.tensorflow {
    requires transitive org.jdlpack.abi;
    requires transitive org.jdlpack.cpu;
    requires org.jdlpack.adapters; // the checks before the C++ entry points, the export with a native owner
    // Tensor appears in this API, so users need TensorFlow Java read too.
    requires transitive tensorflow;
    requires tensorflow.nativelib;
    requires org.bytedeco.javacpp;

    exports org.jdlpack.tensorflow;
}
