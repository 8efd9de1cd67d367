/**
 * CPython embedded through FFM: Java tensors handed to Python as array-API {@code __dlpack__}
 * objects, and any Python object with {@code __dlpack__} (NumPy, PyTorch, CuPy, JAX) imported into
 * Java, zero copy both ways.
 *
 * <p>Needs native access for itself and the modules it builds on:
 * {@code --enable-native-access=org.jdlpack.abi,org.jdlpack.cpu,org.jdlpack.python} on the module
 * path ({@code ALL-UNNAMED} on the class path).
 */
module org.jdlpack.python {
    requires transitive org.jdlpack.abi;
    requires transitive org.jdlpack.cpu;

    exports org.jdlpack.python;
}
