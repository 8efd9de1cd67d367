/**
 * DLPack struct layouts, value types, validation and the export/import ownership core.
 *
 * <p>Needs native access: {@code --enable-native-access=org.jdlpack.abi}.
 */
@SuppressWarnings("module") // the qualified export names modules that are compiled after this one
module org.jdlpack.abi {
    exports org.jdlpack.abi;
    // The sibling modules' native-call layers only: loading a library, binding and calling it,
    // reports that never throw, and native-access messages that name the flag.
    exports org.jdlpack.abi.plumbing to org.jdlpack.cuda, org.jdlpack.opencl;
}
