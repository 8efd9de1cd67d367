/**
 * JavaCPP PyTorch tensors ({@code org.bytedeco.pytorch.Tensor}) as DLPack tensors and back, without
 * copies, through the DLPack entry points of the libtorch that JavaCPP already loaded.
 *
 * <p>Needs native access for itself and for jdlpack:
 * {@code --enable-native-access=org.jdlpack.abi,org.jdlpack.javacpp.pytorch} (on the class path,
 * {@code ALL-UNNAMED}). JavaCPP's pytorch presets are the user's dependency: this module reads them.
 */
module org.jdlpack.javacpp.pytorch {
    requires transitive org.jdlpack.abi;
    requires transitive org.jdlpack.cpu;
    requires org.jdlpack.adapters; // the checks before the C++ entry points, the export with a native owner
    requires org.jdlpack.libtorch; // the shared shim layer: each adapter binds its own libtorch
    // Tensor appears in this API, so users need the presets read too.
    requires transitive org.bytedeco.pytorch;
    requires org.bytedeco.javacpp;

    exports org.jdlpack.javacpp.pytorch;
}
