/**
 * What jdlpack's JVM-library adapters share: the checks of an export's struct before it reaches a
 * library's C++ entry point, and a foreign tensor exported with a native handle as its owner. It
 * sits above dlpack-abi (it uses the ABI's values and exports), so it is not abi's plumbing.
 *
 * <p>Needs no native access of its own beyond reading the caller's export: the adapters name the flag.
 */
@SuppressWarnings("module") // the qualified export names modules that are compiled after this one
module org.jdlpack.adapters {
    requires transitive org.jdlpack.abi;

    // Internals of the adapters, not an API.
    exports org.jdlpack.adapters to org.jdlpack.libtorch, org.jdlpack.javacpp.pytorch, org.jdlpack.djl, org.jdlpack.tensorflow;
}
