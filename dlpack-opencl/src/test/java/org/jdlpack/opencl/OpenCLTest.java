package org.jdlpack.opencl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLDevice;
import org.jdlpack.abi.DLDeviceType;
import org.jdlpack.abi.DLPackStats;
import org.jdlpack.abi.DLTensorFlag;
import org.jdlpack.abi.ExportOptions;
import org.jdlpack.abi.ExportOwner;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.InvalidTensorException;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.TensorLayout;
import org.jdlpack.abi.TensorSpec;
import org.jdlpack.cpu.HostTensorView;
import org.jdlpack.testsupport.CPeer;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.testsupport.PeerRequirement;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** OpenCL tensors on a real OpenCL runtime: PoCL on the CPU (required in CI). */
@ExtendWith(NothingLeftBehind.class)
class OpenCLTest {

    private static OpenCLContext context;

    @BeforeAll
    static void openContext() {
        OpenCLDevice device = OpenCLPeer.firstDevice();
        OpenCLDevices.discover().forEach(discovered -> System.out.println("Discovered " + discovered));
        context = OpenCLContext.create(device);
    }

    @AfterAll
    static void closeContext() {
        if (context != null) {
            context.close();
        }
    }

    @Test
    void discoveryListsPoclsCpuDeviceWithItsDeviceId() {
        List<OpenCLDevice> devices = OpenCLDevices.discover();
        OpenCLDevice pocl = devices.stream().filter(d -> d.platformName().contains("Portable Computing Language")).findFirst()
                .orElseThrow(() -> new AssertionError("PoCL is not among " + devices));
        assertThat(pocl.name()).isNotBlank();
        assertThat(pocl.deviceId()).isEqualTo(devices.indexOf(pocl));
        assertThat(pocl.dlDevice()).isEqualTo(DLDevice.of(DLDeviceType.OPENCL, pocl.deviceId()));
        assertThat(OpenCLDevices.byId(pocl.deviceId()).name()).isEqualTo(pocl.name());
        assertThat(OpenCLDevices.renumber(List.of(pocl)).get(0).deviceId()).isZero();
        assertThatThrownBy(() -> OpenCLDevices.byId(devices.size())).isInstanceOf(OpenCLException.class)
                .hasMessageContaining("no OpenCL device " + devices.size());
    }

    @ParameterizedTest
    @EnumSource(ManagedTensorKind.class)
    void floatsRoundTripThroughAnExportWithOffsetAndStrides(ManagedTensorKind kind) {
        float[] values = new float[40];
        for (int i = 0; i < values.length; i++) {
            values[i] = i * 0.5f;
        }
        try (OpenCLBuffer buffer = context.allocate(values.length * 4L)) {
            buffer.write(0, values);
            // A 3x4 view starting at element 5, rows 10 elements apart, every other column.
            try (ImportedTensor imported = buffer.export(TensorLayout.of(DLDataType.FLOAT32, new long[] {3, 4}, new long[] {10, 2}, 20, 0),
                    ExportOptions.of(kind))
                    .importTensor()) {
                assertThat(imported.dataAddress()).as("data is the cl_mem handle").isEqualTo(buffer.handle().address());
                assertThat(imported.layout().byteOffset()).isEqualTo(20);
                OpenCLTensorView tensor = OpenCLTensorView.of(imported, context);
                float[] expected = new float[12];
                for (int r = 0; r < 3; r++) {
                    for (int c = 0; c < 4; c++) {
                        expected[r * 4 + c] = values[5 + r * 10 + c * 2];
                    }
                }
                assertThat(tensor.readFloats()).containsExactly(expected);

                tensor.writeFloats(new float[] {-1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12});
                float[] after = buffer.readFloats(0, values.length);
                assertThat(after[5]).isEqualTo(-1f);
                assertThat(after[7]).isEqualTo(-2f);
                assertThat(after[6]).as("untouched between strided columns").isEqualTo(3f);
                assertThat(after[25 + 6]).isEqualTo(-12f);
            }
        }
    }

    @Test
    void contiguousAndRectangularViewsUseTheirFastPathsAndReadExactly() {
        try (OpenCLBuffer buffer = context.allocate(64 * 4)) {
            float[] values = new float[64];
            IntStream.range(0, 64).forEach(i -> values[i] = i);
            buffer.write(0, values);
            try (ImportedTensor compact = buffer.export(TensorLayout.of(DLDataType.FLOAT32, 2, 8).withByteOffset(16))
                    .importTensor()) {
                assertThat(OpenCLTensorView.of(compact, context).readFloats()).containsExactly(
                        4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19);
            }
            try (ImportedTensor rows = buffer.export(TensorLayout.of(DLDataType.FLOAT32, new long[] {3, 2}, new long[] {8, 1}, 4, 0))
                    .importTensor(); Arena arena = Arena.ofConfined()) {
                HostTensorView host = HostTensorView.of(arena.allocate(24), DLDataType.FLOAT32, 3, 2);
                OpenCLTensorView.of(rows, context).readTo(host);
                float[] read = new float[6];
                host.copyTo(read);
                assertThat(read).containsExactly(1, 2, 9, 10, 17, 18);
            }
        }
    }

    @Test
    void aReadOnlyTensorIsReadButNeverWritten() {
        try (OpenCLBuffer buffer = context.allocate(4 * 4)) {
            buffer.write(0, new float[] {1, 2, 3, 4});
            TensorLayout readOnly = TensorLayout.of(DLDataType.FLOAT32, 4).withFlags(DLTensorFlag.READ_ONLY.mask());
            try (ImportedTensor imported = buffer.export(readOnly).importTensor()) {
                OpenCLTensorView tensor = OpenCLTensorView.of(imported, context);
                assertThat(tensor.layout().isReadOnly()).isTrue();
                assertThatThrownBy(() -> tensor.writeFloats(new float[] {9, 9, 9, 9}))
                        .isInstanceOf(UnsupportedOperationException.class).hasMessageContaining("read-only");
                assertThat(tensor.readFloats()).containsExactly(1, 2, 3, 4);
            }
        }
    }

    @Test
    void aKernelScalesAnImportedTensorInPlace() {
        String source = """
                __kernel void scale(__global float* data, long origin, long rowStride, long colStride, long cols, float factor) {
                    long i = get_global_id(0);
                    long at = origin + (i / cols) * rowStride + (i % cols) * colStride;
                    data[at] *= factor;
                }
                """;
        try (OpenCLBuffer buffer = context.allocate(32 * 4); OpenCLKernel scale = context.compile(source, "scale")) {
            float[] values = new float[32];
            IntStream.range(0, 32).forEach(i -> values[i] = i + 1);
            buffer.write(0, values);
            try (ImportedTensor imported = buffer.export(TensorLayout.of(DLDataType.FLOAT32, new long[] {2, 3},
                    new long[] {8, 2}, 12, 0)).importTensor()) {
                OpenCLTensorView tensor = OpenCLTensorView.of(imported, context);
                scale.run(6, tensor.handle(), tensor.layout().byteOffset() / 4, 8L, 2L, 3L, 10f);
                assertThat(tensor.readFloats()).containsExactly(40, 60, 80, 120, 140, 160);
            }
            assertThat(buffer.readFloats(0, 32)[4]).as("outside the view: unchanged").isEqualTo(5f);
        }
    }

    @Test
    void deletersRunOncePerExportFromEightNativeThreadsAndTheReferenceCountReturns() {
        try (OpenCLBuffer buffer = context.allocate(1024)) {
            int start = buffer.referenceCount();
            List<MemorySegment> exports = new ArrayList<>();
            for (int i = 0; i < 1000; i++) {
                exports.add(buffer.export(TensorLayout.of(DLDataType.FLOAT32, 256)).consume());
            }
            assertThat(buffer.referenceCount()).isEqualTo(start + 1000);
            CPeer.get().deleteOnThreads(exports, false, 8);
            assertThat(buffer.referenceCount()).isEqualTo(start);
            assertThat(DLPackStats.liveExports()).isZero();

            MemorySegment legacy = buffer.export(TensorLayout.of(DLDataType.INT8, 1024), ExportOptions.LEGACY).consume();
            assertThat(buffer.referenceCount()).isEqualTo(start + 1);
            CPeer.get().deleteOnNewThread(legacy, true);
            assertThat(buffer.referenceCount()).isEqualTo(start);
        }
    }

    /** An OpenCL tensor whose data is {@code handle}, made without any OpenCL check. */
    private static ImportedTensor foreign(long handle, long byteOffset, long... shape) {
        ExportOwner owner = ExportOwner.of(() -> { });
        try {
            TensorSpec spec = TensorSpec.builder(MemorySegment.ofAddress(handle), DLDataType.FLOAT32, shape)
                    .byteOffset(byteOffset).device(context.device().dlDevice()).build();
            return owner.export(spec).importTensor();
        } finally {
            owner.close();
        }
    }

    @Test
    void invalidHandlesAndOutOfBoundsTensorsAreRefusedBeforeAnyRead() {
        try (Arena arena = Arena.ofConfined(); OpenCLBuffer buffer = context.allocate(64)) {
            MemorySegment notAClMem = arena.allocate(64, 8);
            try (ImportedTensor tensor = foreign(notAClMem.address(), 0, 4)) {
                assertThatThrownBy(() -> OpenCLTensorView.of(tensor, context)).isInstanceOf(InvalidTensorException.class)
                        .hasMessageContaining("is not a cl_mem of this OpenCL platform");
            }
            try (ImportedTensor tensor = foreign(0x1000, 0, 4)) {
                assertThatThrownBy(() -> OpenCLTensorView.of(tensor, context)).isInstanceOf(InvalidTensorException.class)
                        .hasMessageContaining("not readable");
            }
            try (ImportedTensor tensor = foreign(buffer.handle().address(), 80, 1)) {
                assertThatThrownBy(() -> OpenCLTensorView.of(tensor, context)).isInstanceOf(InvalidTensorException.class)
                        .hasMessageContaining("DLTensor.byte_offset 80").hasMessageContaining("64-byte cl_mem");
            }
            try (ImportedTensor tensor = foreign(buffer.handle().address(), 8, 15)) {
                assertThatThrownBy(() -> OpenCLTensorView.of(tensor, context)).isInstanceOf(InvalidTensorException.class)
                        .hasMessageContaining("reaches bytes [8, 68)");
            }
            try (ImportedTensor tensor = foreign(buffer.handle().address(), 4, 15)) {
                assertThat(OpenCLTensorView.of(tensor, context).readFloats()).hasSize(15);
            }
            assertThatThrownBy(() -> buffer.export(TensorLayout.of(DLDataType.FLOAT32, 17)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("of data, which has 64 bytes");
        }
    }

    @Test
    void openCLErrorsCarryTheirNameAndTheCall() {
        OpenCLException e = new OpenCLException(-38, "clEnqueueReadBuffer");
        assertThat(e).hasMessage("clEnqueueReadBuffer failed: CL_INVALID_MEM_OBJECT (-38)");
        assertThatThrownBy(() -> context.compile("__kernel void broken( {", "broken")).isInstanceOf(OpenCLException.class)
                .hasMessageContaining("clBuildProgram failed: CL_BUILD_PROGRAM_FAILURE (-11)");
        assertThatThrownBy(() -> context.allocate(0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aFunctionTheLoaderLacksFailsWithItsNameAtTheCall() {
        java.lang.invoke.MethodHandle missing = CL.bind("clNoSuchFunction", java.lang.foreign.ValueLayout.JAVA_INT,
                java.lang.foreign.ValueLayout.ADDRESS);
        assertThatThrownBy(() -> {
            int ignored = (int) missing.invokeExact(MemorySegment.NULL);
        }).isInstanceOf(OpenCLException.class).hasMessage("the OpenCL ICD loader has no function clNoSuchFunction");
    }
}
