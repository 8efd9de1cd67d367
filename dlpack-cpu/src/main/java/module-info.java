/**
 * Host-accessible DLPack tensors: typed element access for every DLPack dtype, bulk copies, and
 * Java-owned tensors to export.
 */
module org.jdlpack.cpu {
    requires transitive org.jdlpack.abi;

    exports org.jdlpack.cpu;
}
