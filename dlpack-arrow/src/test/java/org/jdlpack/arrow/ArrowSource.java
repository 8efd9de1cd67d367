package org.jdlpack.arrow;

import java.util.Objects;

import org.jdlpack.abi.DLDevice;
import org.jdlpack.abi.ExportOptions;
import org.jdlpack.abi.ExportedTensor;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.python.DLPackSource;
import org.jdlpack.python.ExportRequest;

/**
 * An Arrow export as a dlpack-python source: each {@code __dlpack__} call a Python consumer makes
 * on {@code PythonRuntime.toPython(new ArrowSource(...))} exports the vector afresh, versioned or
 * legacy as the consumer asked. Lives in the tests (and, as a copy, in the examples' recipe)
 * because dlpack-arrow does not depend on dlpack-python.
 *
 * @param export the vector's export settings
 */
record ArrowSource(ArrowExport export) implements DLPackSource {

    ArrowSource {
        Objects.requireNonNull(export, "export");
    }

    @Override
    public DLDevice device() {
        return DLDevice.CPU;
    }

    @Override
    public ExportedTensor export(ExportRequest request) {
        if (request.stream().isPresent()) {
            throw new UnsupportedOperationException("stream=" + request.stream().getAsLong() + " given for an Arrow vector, which lives on the CPU");
        }
        if (request.copyRequired()) {
            throw new UnsupportedOperationException("copy=True: an Arrow export shares the vector's memory");
        }
        return request.kind() == ManagedTensorKind.LEGACY ? export.export(ExportOptions.LEGACY) : export.export();
    }
}
