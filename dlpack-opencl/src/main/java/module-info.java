/**
 * OpenCL DLPack tensors through libOpenCL downcalls.
 *
 * <p>Needs native access: {@code --enable-native-access=org.jdlpack.opencl} (and
 * {@code org.jdlpack.abi}).
 */
module org.jdlpack.opencl {
    requires transitive org.jdlpack.abi;
    requires transitive org.jdlpack.cpu;

    exports org.jdlpack.opencl;
}
