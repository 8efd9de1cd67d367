/**
 * CPython embedded through FFM: Java tensors handed to Python as array-API {@code __dlpack__}
 * objects, and any Python object with {@code __dlpack__} (NumPy, PyTorch, CuPy, JAX) imported into
 * Java, zero copy both ways.
 *
 * <p>Needs native access: {@code --enable-native-access=org.jdlpack.python} (and
 * {@code org.jdlpack.abi}).
 */
module org.jdlpack.python {
    requires transitive org.jdlpack.abi;
    requires transitive org.jdlpack.cpu;

    exports org.jdlpack.python;
}
