package org.jdlpack.python;

import java.util.Objects;

import org.jdlpack.abi.DLDevice;
import org.jdlpack.abi.ExportOptions;
import org.jdlpack.abi.ExportedTensor;
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
    public ExportedTensor export(ExportRequest request) {
        if (request.stream().isPresent()) {
            // The array API: stream is for device tensors; host consumers pass None.
            throw new UnsupportedOperationException("stream=" + request.stream().getAsLong()
                    + " given for a CPU tensor, which takes stream=None");
        }
        ExportOptions options = ExportOptions.of(request.kind());
        return request.copyRequired() ? tensor.exportCopy(options) : tensor.export(options);
    }
}
