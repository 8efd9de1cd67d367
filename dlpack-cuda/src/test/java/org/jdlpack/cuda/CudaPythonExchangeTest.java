package org.jdlpack.cuda;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.util.stream.Stream;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.ExportOptions;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.DLDevice;
import org.jdlpack.abi.ExportedTensor;
import org.jdlpack.abi.TensorLayout;
import org.jdlpack.cpu.HostTensorView;
import org.jdlpack.python.DLPackSource;
import org.jdlpack.python.ExportRequest;
import org.jdlpack.python.PythonException;
import org.jdlpack.python.PythonObject;
import org.jdlpack.python.PythonRuntime;
import org.jdlpack.python.PythonUnavailableException;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * CUDA tensors exchanged with CuPy or PyTorch running in the embedded CPython, both directions.
 * Needs a GPU and a python3 with CuPy or PyTorch (with CUDA); skipped otherwise, reason printed.
 */
class CudaPythonExchangeTest {

    static Stream<String> frameworks() {
        return Stream.of("cupy", "torch");
    }

    private static PythonRuntime require(String framework) {
        String reason = null;
        PythonRuntime python = null;
        if (!CudaRuntime.hasDevice()) {
            reason = "no CUDA device: " + CudaRuntime.status();
        } else {
            try {
                python = PythonRuntime.get();
                python.exec("import gc\nimport " + framework);
            } catch (PythonUnavailableException | PythonException e) {
                reason = "no embeddable python3 with " + framework + ": " + e.getMessage().lines().reduce((a, b) -> b).orElse("");
            }
        }
        if (reason != null) {
            System.out.println("SKIPPED " + framework + " exchange (" + reason + ")");
            Assumptions.abort(reason);
        }
        return python;
    }

    @ParameterizedTest
    @MethodSource("frameworks")
    void aFrameworkTensorIsImportedAndReadOnTheHost(String framework) {
        PythonRuntime python = require(framework);
        String make = framework.equals("cupy")
                ? "x = cupy.arange(24, dtype=cupy.float32).reshape(4, 6)[:, ::2] * 2"
                : "x = (torch.arange(24, dtype=torch.float32, device='cuda').reshape(4, 6)[:, ::2] * 2)";
        python.exec(make);
        try (PythonObject x = python.get("x"); ImportedTensor tensor = python.importTensor(x); Arena arena = Arena.ofConfined()) {
            HostTensorView host = HostTensorView.of(arena.allocate(12 * 4, 256), DLDataType.FLOAT32, 4, 3);
            CudaTensorView.of(tensor).readTo(host);
            for (int i = 0; i < 12; i++) {
                assertThat(host.getFloat(i)).isEqualTo(((i / 3) * 6 + (i % 3) * 2) * 2f);
            }
        } finally {
            python.exec("del x");
        }
    }

    @ParameterizedTest
    @MethodSource("frameworks")
    void aJavaExportedTensorIsConsumedByTheFramework(String framework) {
        PythonRuntime python = require(framework);
        try (Arena arena = Arena.ofConfined(); CudaMemory memory = CudaMemory.allocate(CudaMemory.Kind.DEVICE, 0, 1024)) {
            float[] values = new float[256];
            for (int i = 0; i < values.length; i++) {
                values[i] = i;
            }
            memory.copyFromHost(0, arena.allocateFrom(java.lang.foreign.ValueLayout.JAVA_FLOAT, values));
            DLPackSource source = new DLPackSource() {
                @Override
                public DLDevice device() {
                    return new DLDevice(2, 0);
                }

                @Override
                public ExportedTensor export(ExportRequest request) {
                    // The array-API stream handshake: the consumer's stream waits for work queued on ours.
                    StreamContract.prepareForConsumer(CudaStream.legacyDefault(), request.stream());
                    return memory.export(TensorLayout.of(DLDataType.FLOAT32, 16, 16), ExportOptions.of(request.kind()));
                }
            };
            String from = framework.equals("cupy") ? "cupy.from_dlpack" : "torch.from_dlpack";
            try (PythonObject x = python.toPython(source)) {
                python.set("jt", x);
            }
            python.exec("y = " + from + "(jt)\ndel jt");
            assertThat(Double.parseDouble(python.evalString("float(y.sum())"))).isEqualTo(255 * 256 / 2.0);
            assertThat(memory.references()).isEqualTo(2);
            python.exec("del y\ngc.collect()");
            assertThat(memory.references()).as("the framework's deleter ran once").isEqualTo(1);
        }
    }
}
