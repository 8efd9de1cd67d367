/**
 * DLPack struct layouts, value types, validation and the export/import ownership core.
 *
 * <p>Needs native access: {@code --enable-native-access=org.jdlpack.abi}.
 */
@SuppressWarnings("module") // the qualified export names modules that are compiled after this one
module org.jdlpack.abi {
    exports org.jdlpack.abi;
    // The sibling modules' internals only: their native-call layers' plumbing (loading, binding,
    // reports that never throw, native-access messages that name the flag), the ledger, and the
    // name an owner's resource gives it in messages (dlpack-cpu's OwnedHostTensor).
    exports org.jdlpack.abi.plumbing to org.jdlpack.cpu, org.jdlpack.cuda, org.jdlpack.opencl, org.jdlpack.python, org.jdlpack.arrow,
            org.jdlpack.onnxruntime, org.jdlpack.libtorch,
            org.jdlpack.javacpp.pytorch, org.jdlpack.djl, org.jdlpack.tensorflow;
}
