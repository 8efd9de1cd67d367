/**
 * DLPack struct layouts, value types, validation and the export/import ownership core.
 *
 * <p>Needs native access: {@code --enable-native-access=org.jdlpack.abi}.
 */
@SuppressWarnings("module") // the qualified export names modules that are compiled after this one
module org.jdlpack.abi {
    exports org.jdlpack.abi;
    exports org.jdlpack.abi.layout;
    // The device modules' call layers only: loading their library, binding and calling it, and
    // native-access messages that name the flag.
    exports org.jdlpack.abi.internal to org.jdlpack.cuda, org.jdlpack.opencl;
}
