package org.jdlpack.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.stream.Stream;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLDataTypeCode;
import org.jdlpack.abi.ExportOptions;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.ExportedTensor;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.TensorLayout;
import org.jdlpack.cpu.HostTensorView;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Tests that need a CUDA device. Without one (CI, this project's development machines) each is
 * skipped with the reason printed; the GPU check (dlpack-cuda/gpu-check) runs them on a GPU.
 */
@ExtendWith(NothingLeftBehind.class)
class CudaDeviceTest {

    @BeforeAll
    static void requireDevice() {
        if (!CudaRuntime.hasDevice()) {
            String reason = "no CUDA device: " + CudaRuntime.status();
            System.out.println("SKIPPED CudaDeviceTest (" + reason + ")");
            Assumptions.abort(reason);
        }
        System.out.println("CUDA device 0: " + CudaRuntime.deviceName(0));
    }

    static Stream<DLDataType> dtypes() {
        return Stream.of(DLDataType.INT8, DLDataType.INT16, DLDataType.INT32, DLDataType.INT64, DLDataType.UINT8, DLDataType.UINT16,
                DLDataType.UINT32, DLDataType.UINT64, DLDataType.FLOAT16, DLDataType.BFLOAT16, DLDataType.FLOAT32, DLDataType.FLOAT64,
                DLDataType.COMPLEX64, DLDataType.COMPLEX128, DLDataType.BOOL,
                new DLDataType(DLDataTypeCode.FLOAT8_E4M3FN, 8, 1), new DLDataType(DLDataTypeCode.FLOAT8_E5M2, 8, 1));
    }

    private static double sample(DLDataType dtype, long i) {
        return switch (dtype.code()) {
            case BOOL -> i % 2;
            case UINT -> i % 200;
            case INT -> (i % 100) - 50;
            default -> ((i % 16) - 8) * 0.5;
        };
    }

    @ParameterizedTest
    @MethodSource("dtypes")
    void everyDtypeRoundTripsThroughDeviceMemoryWithOffsetAndStrides(DLDataType dtype) {
        long elementBytes = dtype.byteSize(false);
        try (Arena arena = Arena.ofConfined(); CudaMemory memory = CudaMemory.allocate(CudaMemory.Kind.DEVICE, 0, 64 * 64 * elementBytes)) {
            // A 5x7 view: rows 16 elements apart, every other column, starting at element 9.
            long[] shape = {5, 7};
            HostTensorView source = HostTensorView.of(arena.allocate(35 * elementBytes, 256), dtype, shape);
            for (long i = 0; i < 35; i++) {
                source.setDouble(i, sample(dtype, i));
                if (dtype.code() == DLDataTypeCode.COMPLEX) {
                    source.setImaginary(i, 0, -sample(dtype, i));
                }
            }
            for (ManagedTensorKind kind : ManagedTensorKind.values()) {
                try (ImportedTensor imported = memory.export(TensorLayout.of(dtype, shape, new long[] {16, 2}, 9 * elementBytes, 0),
                        ExportOptions.of(kind)).importTensor()) {
                    CudaTensorView tensor = CudaTensorView.of(imported);
                    assertThat(tensor.driverDevice()).isZero();
                    tensor.writeFrom(source);
                    HostTensorView back = HostTensorView.of(arena.allocate(35 * elementBytes, 256), dtype, shape);
                    tensor.readTo(back);
                    for (long i = 0; i < 35; i++) {
                        assertThat(back.getDouble(i)).as("%s %s element %d", kind, dtype, i).isEqualTo(source.getDouble(i));
                    }
                }
            }
        }
    }

    @Test
    void compactAndRectangularCopiesUseOneTransferAndAreExact() {
        try (Arena arena = Arena.ofConfined(); CudaMemory memory = CudaMemory.allocate(CudaMemory.Kind.DEVICE, 0, 1 << 20)) {
            float[] values = new float[256 * 256];
            for (int i = 0; i < values.length; i++) {
                values[i] = i;
            }
            memory.copyFromHost(0, arena.allocateFrom(java.lang.foreign.ValueLayout.JAVA_FLOAT, values));
            try (ImportedTensor rows = memory.export(TensorLayout.of(DLDataType.FLOAT32, new long[] {100, 30},
                    new long[] {256, 1}, 4 * 3, 0)).importTensor()) {
                HostTensorView host = HostTensorView.of(arena.allocate(100 * 30 * 4, 256), DLDataType.FLOAT32, 100, 30);
                CudaTensorView.of(rows).readTo(host);
                assertThat(host.getFloat(host.index(99, 29))).isEqualTo(99 * 256 + 3 + 29);
            }
        }
    }

    @Test
    void pinnedAndManagedExportsAreReadableOnTheHost() {
        for (CudaMemory.Kind kind : new CudaMemory.Kind[] {CudaMemory.Kind.PINNED, CudaMemory.Kind.MANAGED}) {
            try (CudaMemory memory = CudaMemory.allocate(kind, 0, 4096)) {
                MemorySegment host = memory.hostSegment();
                host.set(java.lang.foreign.ValueLayout.JAVA_FLOAT, 8, 42f);
                try (ImportedTensor imported = memory.export(TensorLayout.of(DLDataType.FLOAT32, 16))
                        .importTensor()) {
                    assertThat(imported.device().isHostAccessible()).isTrue();
                    assertThat(HostTensorView.of(imported).getFloat(2)).isEqualTo(42f);
                }
            }
        }
    }

    @Test
    void theDeleterFreesDeviceMemoryFromAnyThreadExactlyOnce() throws Exception {
        CudaMemory memory = CudaMemory.allocate(CudaMemory.Kind.DEVICE, 0, 4096);
        MemorySegment pointer = memory.export(TensorLayout.of(DLDataType.FLOAT32, 1024)).consume();
        memory.close();
        assertThat(memory.references()).isEqualTo(1);
        org.jdlpack.testsupport.CPeer.get().deleteOnNewThread(pointer, false);
        assertThat(memory.references()).isZero();
    }

    @Test
    void aConsumerStreamWaitsForTheProducerStream() {
        try (CudaStream producer = CudaStream.create(0); CudaStream consumer = CudaStream.create(0)) {
            assertThat(StreamContract.prepareForConsumer(producer, consumer.handle())).isTrue();
            consumer.synchronize();
            assertThat(StreamContract.prepareForConsumer(producer, 2L)).isTrue();
            CudaStream.perThreadDefault().synchronize();
        }
    }

    @Test
    void closedMemoryStreamsAndViewsRefuseEveryCall() {
        try (Arena arena = Arena.ofConfined()) {
            CudaMemory memory = CudaMemory.allocate(CudaMemory.Kind.DEVICE, 0, 4096);
            ImportedTensor imported = memory.export(TensorLayout.of(DLDataType.FLOAT32, 16)).importTensor();
            CudaTensorView view = CudaTensorView.of(imported);
            HostTensorView host = HostTensorView.of(arena.allocate(64, 256), DLDataType.FLOAT32, 16);
            view.readTo(host);
            imported.close();
            assertThatThrownBy(() -> view.readTo(host)).isInstanceOf(IllegalStateException.class);
            memory.close();
            assertThatThrownBy(() -> memory.copyToHost(0, arena.allocate(64))).isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(memory::close).isInstanceOf(IllegalStateException.class);

            CudaStream stream = CudaStream.create(0);
            stream.synchronize();
            stream.close();
            assertThatThrownBy(stream::synchronize).isInstanceOf(IllegalStateException.class).hasMessage("CudaStream is closed");
            assertThatThrownBy(() -> CudaStream.legacyDefault().waitFor(stream)).isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(stream::close).isInstanceOf(IllegalStateException.class).hasMessage("CudaStream already closed");
        }
    }

    @Test
    void theDeleterPutsBackTheCurrentDeviceOfTheThreadThatCallsIt() throws Exception {
        int memoryDevice = CudaRuntime.deviceCount() - 1;
        int consumerDevice = 0;
        if (memoryDevice == consumerDevice) {
            System.out.println("one CUDA device: the deleter is checked to leave device 0 current; "
                    + "restoring across devices is checked with a recording binding in CudaLifetimeTest");
        }
        CudaMemory memory = CudaMemory.allocate(CudaMemory.Kind.DEVICE, memoryDevice, 4096);
        ExportedTensor export = memory.export(TensorLayout.of(DLDataType.FLOAT32, 1024));
        memory.close();
        int[] after = new int[1];
        Thread consumer = Thread.ofPlatform().start(() -> {
            CudartDevices.setDevice(consumerDevice);
            export.importTensor().close(); // the deleter runs here, on the consumer's thread
            after[0] = CudartDevices.getDevice();
        });
        consumer.join();
        assertThat(memory.references()).isZero();
        assertThat(after[0]).as("the consumer thread's current device").isEqualTo(consumerDevice);
    }
}
