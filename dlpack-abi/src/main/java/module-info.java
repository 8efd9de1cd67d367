/**
 * DLPack struct layouts, value types, validation and the export/import ownership core.
 *
 * <p>Needs native access: {@code --enable-native-access=org.jdlpack.abi}.
 */
module org.jdlpack.abi {
    exports org.jdlpack.abi;
    exports org.jdlpack.abi.layout;
    exports org.jdlpack.abi.internal to org.jdlpack.cpu, org.jdlpack.cuda, org.jdlpack.opencl;
}
