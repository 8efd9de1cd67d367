package org.jdlpack.djl;

import org.jdlpack.abi.DLTensorFlag;
import org.jdlpack.abi.ExportedTensor;
import org.jdlpack.abi.InvalidTensorException;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.UnsupportedDeviceException;
import org.jdlpack.adapters.ConsumerGate;
import org.jdlpack.libtorch.TorchInputs;

/**
 * The gate in front of libtorch 2.7.1's {@code at::fromDLPack}: reads the managed tensor exactly as
 * libtorch will and refuses, with a Java exception naming the field, every input libtorch would
 * answer with a C++ {@code throw} (which nothing catches: the process aborts) or would take
 * silently wrong; then folds {@code byte_offset} into {@code data}.
 *
 * <p>What libtorch 2.7.1 does, found by calling it ungated in a child process: it has only the
 * legacy entry ({@code DLManagedTensor}; no {@code fromDLPackVersioned}); it throws (exit 134)
 * for lanes other than 1, for type codes it has no {@code ScalarType} for (every float8 code: its
 * DLPack header predates them) and for a negative stride; it ignores {@code byte_offset} (a
 * verbatim 16 over float32 reads elements 0.. instead of 4..: silently shifted), so the offset is
 * folded into {@code data} before the call; it takes a CUDA pointer as a CUDA tensor. A versioned
 * export's {@code READ_ONLY} has no legacy field to travel in and libtorch would let torch write
 * anyway, so it is refused, named. Only CPU device 0 is accepted: DJL's CPU natives.
 */
final class DLPackInputs {

    /** What libtorch 2.7.1 takes in the {@code DLTensor}: it reads the strides array, and its offset is folded here. */
    private static final TorchInputs TAKES = new TorchInputs("libtorch 2.7.1", "DJL's pytorch-native-cpu", LibTorch.DTYPES, true,
            elementBytes -> "this adapter folds only a multiple of the element size (" + elementBytes + " bytes) into data, "
                    + "so that elements stay aligned");

    private DLPackInputs() {
    }

    /**
     * Checks an export, if still owned, against what {@code at::fromDLPack} of libtorch
     * 2.7.1 takes without throwing and reads as meant.
     *
     * @param export an owned export
     * @throws IllegalStateException        if the export is no longer owned
     * @throws InvalidTensorException       for a field libtorch refuses or would read wrongly, a
     *                                      versioned struct, or {@code READ_ONLY}
     * @throws UnsupportedDeviceException   for a device other than CPU 0
     */
    static void check(ExportedTensor export) {
        ConsumerGate gate = ConsumerGate.of(export, "torch");
        if (gate.kind() == ManagedTensorKind.VERSIONED) {
            if (DLTensorFlag.READ_ONLY.isSet(gate.versionedFlags())) {
                throw new InvalidTensorException(gate.what() + " is READ_ONLY, and libtorch 2.7.1 has no way to honour that flag (its "
                        + "at::fromDLPack takes the legacy struct, which cannot carry it): a DJL NDArray would let torch write to "
                        + "it. Copy it into writable memory first (an OwnedHostTensor), or export writable memory");
            }
            throw new InvalidTensorException(gate.what() + " is a DLManagedTensorVersioned, and libtorch 2.7.1 (DJL 0.36) has only "
                    + "at::fromDLPack(DLManagedTensor*): export it with ExportOptions.LEGACY");
        }
        TAKES.check(gate);
    }

    /**
     * Moves {@code byte_offset} into {@code data} of a struct {@link #check} accepted and the caller
     * now owns (consumed): libtorch 2.7.1 ignores {@code byte_offset}. The deleter does not read
     * either field (jdlpack's deleter finds its owner through {@code manager_ctx}).
     */
    static void foldByteOffset(ManagedTensorKind kind, long address) {
        ConsumerGate.of(kind, address, "").foldByteOffset();
    }
}
