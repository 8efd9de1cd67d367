/**
 * The libtorch C shim call layer and dtype table shared by jdlpack's two libtorch adapters. It
 * holds no libtorch of its own: each adapter binds the functions from the libtorch its runtime
 * loaded and hands them in, so that two libtorch builds never meet in one class.
 *
 * <p>Needs no native access of its own: the adapter that binds the functions names the flag.
 */
@SuppressWarnings("module") // the qualified export names modules that are compiled after this one
module org.jdlpack.libtorch {
    requires transitive org.jdlpack.abi;
    requires transitive org.jdlpack.adapters; // TorchInputs takes its ConsumerGate

    // Internals of the two adapters, not an API.
    exports org.jdlpack.libtorch to org.jdlpack.javacpp.pytorch, org.jdlpack.djl;
}
