package org.jdlpack.python.internal.bridge;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

import org.jdlpack.abi.DLDevice;
import org.jdlpack.abi.ExportOptions;
import org.jdlpack.abi.ExportedTensor;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.python.DLPackSource;
import org.jdlpack.python.ExportRequest;

/** {@link DLPackSource#of(OwnedHostTensor)}: a host tensor, exported without a copy unless asked for one. */
public record CpuSource(OwnedHostTensor tensor) implements DLPackSource {

    public CpuSource {
        Objects.requireNonNull(tensor, "tensor");
    }

    @Override
    public DLDevice device() {
        return tensor.device();
    }

    @Override
    public ExportedTensor export(ExportRequest request) {
        checkStream(request);
        ExportOptions options = ExportOptions.of(request.kind());
        return request.copyRequired() ? tensor.exportCopy(options) : tensor.export(options);
    }

    /**
     * {@link #export} without the handle, for the bridge's hot path: the pointer of
     * {@code request.kind()}, which the caller hands on at once.
     */
    MemorySegment exportPointer(ExportRequest request) {
        checkStream(request);
        ExportOptions options = ExportOptions.of(request.kind());
        return request.copyRequired() ? tensor.exportCopy(options).consume() : tensor.exportPointer(options);
    }

    private static void checkStream(ExportRequest request) {
        if (request.stream().isPresent()) {
            // The array API: stream is for device tensors; host consumers pass None.
            throw new UnsupportedOperationException("stream=" + request.stream().getAsLong()
                    + " given for a CPU tensor, which takes stream=None");
        }
    }
}
