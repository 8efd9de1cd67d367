/**
 * DJL {@code NDArray}s of the PyTorch engine as DLPack tensors and back, without copies, through
 * the entry points of the libtorch that DJL already loaded.
 *
 * <p>Needs native access for itself and for jdlpack:
 * {@code --enable-native-access=org.jdlpack.abi,org.jdlpack.djl} (on the class path,
 * {@code ALL-UNNAMED}). DJL's API and PyTorch engine are the user's dependencies, automatic
 * modules {@code ai.djl.api} and {@code ai.djl.pytorch_engine}: this module reads them.
 */
// DJL's jars have no module descriptor; NDArray and NDManager appear in this API, so users need ai.djl.api read too.
@SuppressWarnings({"requires-automatic", "requires-transitive-automatic"})
module org.jdlpack.djl {
    requires transitive org.jdlpack.abi;
    requires transitive org.jdlpack.cpu;
    requires org.jdlpack.adapters; // the checks before the C++ entry points, the export with a native owner
    requires org.jdlpack.libtorch; // the shared shim layer: each adapter binds its own libtorch
    requires transitive ai.djl.api;
    requires ai.djl.pytorch_engine;

    exports org.jdlpack.djl;
}
