/**
 * Host-accessible DLPack tensors: typed element access for every DLPack dtype, bulk copies, and
 * Java-owned tensors to export.
 */
@SuppressWarnings("module") // the qualified export names modules that are compiled after this one
module org.jdlpack.cpu {
    requires transitive org.jdlpack.abi;

    exports org.jdlpack.cpu;
    // The transfer planner behind the device views' host copies; a host tensor's memory as ONNX
    // Runtime's bridge reads it under a hold of its own (HostMemory).
    exports org.jdlpack.cpu.internal to org.jdlpack.cuda, org.jdlpack.opencl, org.jdlpack.onnxruntime;
}
