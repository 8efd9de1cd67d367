package org.jdlpack.javacpp.pytorch;

import org.jdlpack.abi.DLTensorFlag;
import org.jdlpack.abi.ExportedTensor;
import org.jdlpack.abi.InvalidTensorException;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.UnsupportedDeviceException;
import org.jdlpack.adapters.ConsumerGate;
import org.jdlpack.libtorch.TorchInputs;

/**
 * The gate in front of {@code at::fromDLPack}: reads the managed tensor exactly as libtorch will and
 * refuses, with a Java exception naming the field, every input libtorch 2.10 would answer with a C++
 * {@code throw} (which nothing catches: the process aborts) or would take silently wrong.
 *
 * <p>What libtorch 2.10 does, found by feeding it each case in a child process: it throws for
 * lanes other than 1, for type codes and widths it has no {@code ScalarType} for, for a
 * {@code byte_offset} that is not a multiple of the element size, for a negative stride, and for
 * a device it has no backend for; it honours {@code byte_offset} (it becomes the storage offset);
 * it ignores {@code READ_ONLY} and would let torch write to read-only memory, so that is refused
 * here. Only CPU device 0 is accepted: the JavaCPP build is CPU-only.
 */
final class DLPackInputs {

    /** What libtorch 2.10 takes in the {@code DLTensor}: NULL strides are compact, {@code byte_offset} the storage offset. */
    private static final TorchInputs TAKES = new TorchInputs("libtorch 2.10", "JavaCPP's pytorch build is CPU-only",
            LibTorch.DTYPES, false,
            elementBytes -> "libtorch 2.10 takes only a multiple of the element size (" + elementBytes + " bytes)");

    private DLPackInputs() {
    }

    /**
     * Checks an export, if still owned, against what {@code at::fromDLPack} (legacy) or
     * {@code at::fromDLPackVersioned} takes without throwing.
     *
     * @param export an owned export
     * @throws IllegalStateException        if the export is no longer owned
     * @throws InvalidTensorException       for a field libtorch refuses or would read wrongly
     * @throws UnsupportedDeviceException   for a device other than CPU 0
     */
    static void check(ExportedTensor export) {
        ConsumerGate gate = ConsumerGate.of(export, "torch");
        if (gate.kind() == ManagedTensorKind.VERSIONED) {
            int major = gate.majorVersion();
            if (major != 1) {
                throw new InvalidTensorException(gate.what() + ": DLPack major version " + Integer.toUnsignedString(major)
                        + "; libtorch reads version 1 only");
            }
            if (DLTensorFlag.READ_ONLY.isSet(gate.versionedFlags())) {
                throw new InvalidTensorException(gate.what() + " is READ_ONLY, and libtorch 2.10 ignores that flag: the torch tensor "
                        + "would let torch write to it. Copy it into writable memory first (an OwnedHostTensor), or export "
                        + "writable memory");
            }
        }
        TAKES.check(gate);
    }
}
