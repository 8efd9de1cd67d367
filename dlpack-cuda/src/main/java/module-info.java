/**
 * CUDA DLPack tensors through libcudart downcalls.
 *
 * <p>Needs native access: {@code --enable-native-access=org.jdlpack.cuda} (and
 * {@code org.jdlpack.abi}).
 */
module org.jdlpack.cuda {
    requires transitive org.jdlpack.abi;
    requires transitive org.jdlpack.cpu;

    exports org.jdlpack.cuda;
}
