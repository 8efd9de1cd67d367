package org.jdlpack.python;

import java.util.Objects;

import org.jdlpack.abi.DLDevice;
import org.jdlpack.abi.ManagedTensorHandle;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.cpu.OwnedHostTensor;

/** {@link DLPackSource#of(OwnedHostTensor)}: a host tensor, exported without a copy unless asked for one. */
record CpuSource(OwnedHostTensor tensor) implements DLPackSource {

    CpuSource {
        Objects.requireNonNull(tensor, "tensor");
    }

    @Override
    public DLDevice device() {
        return tensor.spec().device();
    }

    @Override
    public ManagedTensorHandle export(ExportRequest request) {
        if (request.stream() != null) {
            // The array API: stream is for device tensors; host consumers pass None.
            throw new UnsupportedOperationException("stream=" + request.stream() + " given for a CPU tensor, which takes stream=None");
        }
        boolean versioned = request.kind() == ManagedTensorKind.VERSIONED;
        if (request.copyRequired()) {
            return versioned ? tensor.exportVersionedCopy() : tensor.exportLegacyCopy();
        }
        return versioned ? tensor.exportVersioned() : tensor.exportLegacy();
    }
}
