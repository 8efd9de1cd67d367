package org.jdlpack.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLDevice;
import org.jdlpack.abi.DLDeviceType;
import org.jdlpack.abi.ExportOptions;
import org.jdlpack.abi.ExportOwner;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.TensorLayout;
import org.jdlpack.abi.TensorSpec;
import org.jdlpack.abi.UnsupportedDeviceException;
import org.jdlpack.testsupport.CPeer;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Everything of the CUDA module that needs no GPU: loading, versions, error mapping, metadata of
 * exports, validation, and the stream contract. Runs with or without a device.
 */
@ExtendWith(NothingLeftBehind.class)
class CudaWithoutDeviceTest {

    @BeforeAll
    static void describe() {
        System.out.println("CUDA: " + CudaRuntime.status());
    }

    @Test
    void theRuntimeLoadsAndSaysWhatItSees() {
        try {
            CudaRuntime.library();
        } catch (CudaException e) {
            Assumptions.abort("libcudart is not installed: " + e.getMessage());
        }
        assertThat(CudaRuntime.library().toString()).contains("libcudart");
        assertThat(CudaRuntime.runtimeVersion()).isGreaterThanOrEqualTo(11000);
        assertThat(CudaRuntime.status()).startsWith("libcudart ").contains("runtime ");
        if (!CudaRuntime.hasDevice()) {
            assertThat(CudaRuntime.status()).containsAnyOf("no driver", "no CUDA device", "no usable device");
            CudaException e = org.junit.jupiter.api.Assertions.assertThrows(CudaException.class, CudaRuntime::deviceCount);
            assertThat(e.getMessage()).startsWith("cudaGetDeviceCount failed: cuda");
            assertThat(e.errorName()).startsWith("cudaError");
        }
    }

    @Test
    void errorsCarryTheirNameTextAndCall() {
        Assumptions.assumeTrue(Cudart.LOAD_FAILURE == null, "libcudart is not installed");
        CudaException e = new CudaException(Cudart.ERROR_INVALID_VALUE, "cudaMemcpy");
        assertThat(e.errorName()).isEqualTo("cudaErrorInvalidValue");
        assertThat(e.getMessage()).isEqualTo("cudaMemcpy failed: cudaErrorInvalidValue (1): invalid argument");
        assertThat(new CudaException(Cudart.ERROR_NO_DEVICE, "x").errorName()).isEqualTo("cudaErrorNoDevice");
        assertThat(new CudaException(Cudart.ERROR_INSUFFICIENT_DRIVER, "x").errorName()).isEqualTo("cudaErrorInsufficientDriver");
    }

    @ParameterizedTest
    @EnumSource(ManagedTensorKind.class)
    void exportedDeviceMemoryCarriesItsDeviceAndIsReleasedOnceFromANativeThread(ManagedTensorKind kind) {
        AtomicInteger released = new AtomicInteger();
        // A device pointer we never dereference: export writes metadata only.
        CudaMemory memory = CudaMemory.wrap(CudaMemory.Kind.DEVICE, 3, 0x7f00_0000_0000L, 4096, released::incrementAndGet);
        MemorySegment pointer = memory.export(TensorLayout.of(DLDataType.FLOAT16, new long[] {8, 16}, new long[] {32, 1}, 256, 0),
                ExportOptions.of(kind)).consume();
        memory.close();
        CPeer peer = CPeer.get();
        boolean legacy = kind == ManagedTensorKind.LEGACY;
        assertThat(peer.field(pointer, legacy, 4)).as("device_type").isEqualTo(DLDeviceType.CUDA.code());
        assertThat(peer.field(pointer, legacy, 5)).as("device_id").isEqualTo(3);
        // Device pointers are pointers: byte_offset is folded into data, as PyTorch and CuPy write it.
        assertThat(peer.field(pointer, legacy, 10)).as("data").isEqualTo(0x7f00_0000_0000L + 256);
        assertThat(peer.field(pointer, legacy, 9)).as("byte_offset").isZero();
        assertThat(released).hasValue(0);
        peer.deleteOnNewThread(pointer, legacy);
        assertThat(released).hasValue(1);
        try (CudaMemory small = CudaMemory.wrap(CudaMemory.Kind.DEVICE, 0, 0x1000, 64, () -> { })) {
            assertThatThrownBy(() -> small.export(TensorLayout.of(DLDataType.FLOAT32, 17)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("reaches bytes [0, 68) of data, which has 64 bytes");
        }
    }

    @Test
    void pinnedAndManagedMemoryAreMarkedForTheirDeviceTypes() {
        CudaMemory pinned = CudaMemory.wrap(CudaMemory.Kind.PINNED, 1, 0x7f00_0000_1000L, 64, () -> { });
        CudaMemory managed = CudaMemory.wrap(CudaMemory.Kind.MANAGED, 1, 0x7f00_0000_2000L, 64, () -> { });
        assertThat(pinned.dlDevice()).isEqualTo(DLDevice.of(DLDeviceType.CUDA_HOST, 0));
        assertThat(managed.dlDevice()).isEqualTo(DLDevice.of(DLDeviceType.CUDA_MANAGED, 1));
        assertThat(managed.dlDevice().isHostAccessible()).isTrue();
        pinned.close();
        managed.close();
    }

    @Test
    void importValidationNamesTheProblemBeforeAnyCopy() {
        ExportOwner owner = ExportOwner.of(() -> { });
        try (var arena = java.lang.foreign.Arena.ofShared()) {
            try (ImportedTensor cpu = owner.export(TensorSpec.of(arena.allocate(16), DLDataType.FLOAT32, 4)).importTensor()) {
                assertThatThrownBy(() -> CudaTensorView.of(cpu)).isInstanceOf(UnsupportedDeviceException.class)
                        .hasMessageContaining("not a CUDA tensor: CPU:0");
            }
            TensorSpec onGpu = TensorSpec.builder(MemorySegment.ofAddress(0x7f00_0000_0000L), DLDataType.FLOAT32, 4)
                    .device(DLDevice.of(DLDeviceType.CUDA, 0)).build();
            try (ImportedTensor gpu = owner.export(onGpu).importTensor()) {
                if (CudaRuntime.hasDevice()) {
                    assertThatThrownBy(() -> CudaTensorView.of(gpu)).isInstanceOf(RuntimeException.class);
                } else {
                    // No driver: the check itself cannot run, and says why.
                    assertThatThrownBy(() -> CudaTensorView.of(gpu)).isInstanceOf(CudaException.class)
                            .hasMessageContaining("cudaPointerGetAttributes(0x7f0000000000) failed");
                }
            }
        } finally {
            owner.close();
        }
    }

    @Test
    void theStreamContractMapsTheArrayApiStreamArgument() {
        assertThat(StreamContract.consumerStream(null)).contains(CudaStream.legacyDefault());
        assertThat(StreamContract.consumerStream(1L)).contains(CudaStream.legacyDefault());
        assertThat(StreamContract.consumerStream(2L)).contains(CudaStream.perThreadDefault());
        assertThat(StreamContract.consumerStream(-1L)).isEmpty();
        assertThat(StreamContract.consumerStream(0x5555_0000L).orElseThrow().handle()).isEqualTo(0x5555_0000L);
        assertThatThrownBy(() -> StreamContract.consumerStream(0L)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ambiguous");
        assertThatThrownBy(() -> StreamContract.consumerStream(-7L)).isInstanceOf(IllegalArgumentException.class);
        // No synchronisation is enqueued for -1 or for the producer's own stream: no CUDA call is made.
        assertThat(StreamContract.prepareForConsumer(CudaStream.legacyDefault(), -1L)).isFalse();
        assertThat(StreamContract.prepareForConsumer(CudaStream.legacyDefault(), 1L)).isFalse();
        assertThat(StreamContract.prepareForConsumer(CudaStream.perThreadDefault(), 2L)).isFalse();
        assertThat(CudaStream.legacyDefault()).hasToString("cudaStreamLegacy");
    }
}
