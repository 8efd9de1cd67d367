/**
 * CUDA DLPack tensors for jdlpack. Not implemented yet: this module is an empty shell so that
 * the reactor and its dependency graph are in place.
 */
module org.jdlpack.cuda {
    requires transitive org.jdlpack.abi;
}
