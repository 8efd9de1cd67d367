package org.jdlpack.cuda;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLDevice;
import org.jdlpack.abi.DLDeviceType;
import org.jdlpack.abi.ExportOptions;
import org.jdlpack.abi.ExportOwner;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.ExportedTensor;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.TensorLayout;
import org.jdlpack.abi.TensorSpec;
import org.jdlpack.testsupport.CPeer;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.cpu.HostTensorView;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Lifetimes of CUDA owners and views, the current device around deleters, and the call layer;
 * everything here runs without a GPU (the device variants are in {@link CudaDeviceTest}).
 */
@ExtendWith(NothingLeftBehind.class)
class CudaLifetimeTest {

    @Test
    void aClosedCudaMemoryRefusesCopiesHostSegmentsExportsAndASecondClose() {
        AtomicInteger released = new AtomicInteger();
        CudaMemory pinned = CudaMemory.wrap(CudaMemory.Kind.PINNED, 0, 0x7f00_0000_1000L, 64, released::incrementAndGet);
        pinned.close();
        assertThat(released).hasValue(1);
        assertThatThrownBy(pinned::hostSegment).isInstanceOf(IllegalStateException.class).hasMessage("CudaMemory is closed");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment host = arena.allocate(16);
            assertThatThrownBy(() -> pinned.copyToHost(0, host)).isInstanceOf(IllegalStateException.class)
                    .hasMessage("CudaMemory is closed");
            assertThatThrownBy(() -> pinned.copyFromHost(0, host)).isInstanceOf(IllegalStateException.class);
        }
        assertThatThrownBy(() -> pinned.export(TensorLayout.of(DLDataType.FLOAT32, 4)))
                .isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(pinned::close).isInstanceOf(IllegalStateException.class).hasMessage("CudaMemory already closed");
        assertThat(released).as("released once").hasValue(1);
    }

    @Test
    void aHostSegmentEndsWithTheJavaSideWhileAnExportKeepsTheMemoryForItsConsumer() {
        try (Arena backing = Arena.ofShared()) {
            // Host memory standing in for pinned memory: nothing here calls CUDA on it.
            MemorySegment bytes = backing.allocate(64, 256);
            AtomicInteger released = new AtomicInteger();
            CudaMemory pinned = CudaMemory.wrap(CudaMemory.Kind.PINNED, 0, bytes.address(), 64, released::incrementAndGet);
            MemorySegment host = pinned.hostSegment();
            host.set(JAVA_FLOAT, 4, 5f);
            try (ExportedTensor export = pinned.export(TensorLayout.of(DLDataType.FLOAT32, 16))) {
                pinned.close();
                assertThatThrownBy(() -> host.get(JAVA_FLOAT, 4)).isInstanceOf(IllegalStateException.class);
                try (ImportedTensor imported = export.importTensor()) {
                    assertThat(HostTensorView.of(imported).getFloat(1)).isEqualTo(5f);
                }
            }
            assertThat(released).hasValue(1);
        }
    }

    @Test
    void aViewOfAClosedTensorRefusesCopiesBeforeAnyCudaCall() {
        ExportOwner owner = ExportOwner.of(() -> { });
        try (Arena arena = Arena.ofConfined()) {
            TensorSpec empty = TensorSpec.builder(MemorySegment.ofAddress(0x7f00_0000_0000L), DLDataType.FLOAT32, 0)
                    .device(DLDevice.of(DLDeviceType.CUDA, 0)).build();
            ImportedTensor tensor = owner.export(empty).importTensor();
            CudaTensorView view = CudaTensorView.of(tensor); // no elements: no driver needed
            tensor.close();
            HostTensorView host = HostTensorView.of(arena.allocate(4), DLDataType.FLOAT32, 0);
            assertThatThrownBy(() -> view.readTo(host)).isInstanceOf(IllegalStateException.class).hasMessage("ImportedTensor is closed");
            assertThatThrownBy(() -> view.writeFrom(host)).isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(() -> CudaTensorView.of(tensor)).isInstanceOf(IllegalStateException.class);
        } finally {
            owner.close();
        }
    }

    /** Records the current-device calls; every thread starts on device 5, as a consumer's thread might. */
    private static final class RecordingDevices implements CurrentDevice.Binding {
        final List<String> calls = Collections.synchronizedList(new ArrayList<>());
        final ThreadLocal<Integer> current = ThreadLocal.withInitial(() -> 5);

        @Override
        public int get() {
            calls.add("get " + current.get());
            return current.get();
        }

        @Override
        public void set(int device) {
            calls.add("set " + device);
            current.set(device);
        }
    }

    @ParameterizedTest
    @EnumSource(ManagedTensorKind.class)
    void theDeleterFreesOnTheMemorysDeviceAndPutsTheConsumerThreadsDeviceBack(ManagedTensorKind kind) {
        RecordingDevices devices = new RecordingDevices();
        CudaMemory memory = CudaMemory.allocated(CudaMemory.Kind.DEVICE, 3, 0x7f00_0000_0000L, 4096, new CurrentDevice(devices),
                pointer -> devices.calls.add("free 0x" + Long.toHexString(pointer) + " on " + devices.current.get()));
        MemorySegment pointer = memory.export(TensorLayout.of(DLDataType.FLOAT32, 1024), ExportOptions.of(kind)).consume();
        memory.close();
        assertThat(devices.calls).as("the export keeps the memory").isEmpty();
        CPeer.get().deleteOnNewThread(pointer, kind == ManagedTensorKind.LEGACY);
        assertThat(devices.calls).containsExactly("get 5", "set 3", "free 0x7f0000000000 on 3", "set 5");
    }

    @Test
    void onTheMemorysOwnDeviceTheReleaseSetsNothing() {
        RecordingDevices devices = new RecordingDevices();
        CudaMemory memory = CudaMemory.allocated(CudaMemory.Kind.MANAGED, 5, 0x7f00_0000_0000L, 4096, new CurrentDevice(devices),
                pointer -> devices.calls.add("free"));
        memory.close();
        assertThat(devices.calls).containsExactly("get 5", "free");
    }

    @Test
    void aFailingCallStillPutsTheDeviceBack() {
        RecordingDevices devices = new RecordingDevices();
        CurrentDevice current = new CurrentDevice(devices);
        assertThatThrownBy(() -> current.run(2, () -> {
            throw new CudaException("cudaFree failed");
        })).isInstanceOf(CudaException.class).hasMessage("cudaFree failed");
        assertThat(devices.calls).containsExactly("get 5", "set 2", "set 5");
        assertThat(devices.current.get()).isEqualTo(5);
    }

    @Test
    void aFunctionTheLibraryLacksFailsWithItsNameAtTheCall() {
        Assumptions.assumeTrue(Cudart.LOAD_FAILURE == null, "libcudart is not installed");
        MethodHandle missing = Cudart.bind("cudaNoSuchFunction", JAVA_INT);
        assertThatThrownBy(() -> {
            int ignored = (int) missing.invokeExact(7);
        }).isInstanceOf(CudaException.class).hasMessageContaining("has no function cudaNoSuchFunction");
    }
}
