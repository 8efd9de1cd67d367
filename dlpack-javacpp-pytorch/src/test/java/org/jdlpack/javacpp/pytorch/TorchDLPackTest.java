package org.jdlpack.javacpp.pytorch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import org.bytedeco.pytorch.Scalar;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;
import org.bytedeco.pytorch.global.torch.ScalarType;
import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLPackStats;
import org.jdlpack.abi.ExportOptions;
import org.jdlpack.abi.ExportOwner;
import org.jdlpack.abi.ExportedTensor;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.TensorSpec;
import org.jdlpack.abi.testing.Collect;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.cpu.HostTensorView;
import org.jdlpack.cpu.OwnedHostTensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Both directions against the real libtorch of JavaCPP's pytorch presets: values, zero copies, and who frees what. */
@ExtendWith(NothingLeftBehind.class)
class TorchDLPackTest {

    private static final TorchDLPack DLPACK = TorchDLPack.get();
    private static final Duration COLLECTION = Duration.ofSeconds(30);

    /** 0, 1, ..., n-1 as a float32 torch tensor of the given shape. */
    private static Tensor range(ScalarType type, long n, long... shape) {
        try (Tensor flat = torch.arange(new Scalar(n))) {
            return flat.to(type).reshape(shape);
        }
    }

    /** Element {@code i} of {@code t} in logical row-major order, read by torch. */
    private static double torchValue(Tensor t, long i) {
        try (Tensor flat = t.flatten(); Tensor element = flat.select(0, i)) {
            return element.item_double();
        }
    }

    /** {@return the torch ScalarType's name: JavaCPP's scalar_type() is an object per call, named like "Float (...)"} */
    private static String typeName(Tensor t) {
        return t.scalar_type().toString().split(" ")[0];
    }

    @Test
    void startUpSaysWhichLibtorch() {
        assertThat(DLPACK.version()).startsWith("2.10.0");
        assertThat(DLPACK.library().getFileName().toString()).startsWith("libtorch_cpu");
        assertThat(DLPACK.toString()).contains("2.10.0");
    }

    @Test
    void float32TorchToJavaIsTheSameMemory() {
        try (Tensor t = range(ScalarType.Float, 6, 2, 3); ImportedTensor view = DLPACK.importTensor(t)) {
            assertThat(view.layout().dtype()).isEqualTo(DLDataType.FLOAT32);
            assertThat(view.layout().shape()).containsExactly(2, 3);
            assertThat(view.dataAddress()).isEqualTo(t.data_ptr().address());
            HostTensorView host = HostTensorView.of(view);
            host.setFloat(5, 42f); // Java writes, torch sees it
            assertThat(torchValue(t, 5)).isEqualTo(42.0);
            assertThat(host.getFloat(4)).isEqualTo(4f);
        }
    }

    @ParameterizedTest
    @EnumSource(value = ScalarType.class, names = {"Long", "Half", "BFloat16", "Bool", "Int", "Byte", "Double"})
    void typesTorchToJava(ScalarType type) {
        try (Tensor t = range(type, 4, 4); ImportedTensor view = DLPACK.importTensor(t)) {
            HostTensorView host = HostTensorView.of(view);
            for (int i = 0; i < 4; i++) {
                double expected = torchValue(t, i);
                double actual = switch (type) {
                    case Long, Int, Byte -> host.getLong(i);
                    case Bool -> host.getBoolean(i) ? 1 : 0;
                    default -> host.getDouble(i);
                };
                assertThat(actual).as("%s[%d]", type, i).isEqualTo(expected);
            }
            assertThat(view.layout().dtype().bits()).isEqualTo((int) t.element_size() * 8);
        }
    }

    @Test
    void zeroDimTorchToJava() {
        try (Tensor t = torch.scalar_tensor(new Scalar(7.5)); ImportedTensor view = DLPACK.importTensor(t)) {
            assertThat(view.layout().ndim()).isZero();
            assertThat(HostTensorView.of(view).getDouble(0)).isEqualTo(7.5);
        }
    }

    @Test
    void stridedAndOffsetTorchToJava() {
        try (Tensor base = range(ScalarType.Float, 12, 3, 4); Tensor transposed = base.t();
             Tensor sliced = base.narrow(0, 1, 2); ImportedTensor tView = DLPACK.importTensor(transposed);
             ImportedTensor sView = DLPACK.importTensor(sliced)) {
            assertThat(tView.layout().strides()).containsExactly(1, 4);
            assertThat(HostTensorView.of(tView).getFloatAt(3, 2)).isEqualTo(11f); // base[2][3]
            assertThat(sView.dataAddress()).isEqualTo(base.data_ptr().address() + 4 * 4); // the storage offset is in data
            assertThat(HostTensorView.of(sView).getFloat(0)).isEqualTo(4f);
        }
    }

    @Test
    void zeroSizeTorchToJava() {
        try (Tensor t = torch.empty(0, 3); ImportedTensor view = DLPACK.importTensor(t)) {
            assertThat(view.layout().shape()).containsExactly(0, 3);
            assertThat(view.layout().elementCount()).isZero();
        }
    }

    @Test
    void legacyAndReadOnlyTorchToJava() {
        try (Tensor t = range(ScalarType.Float, 3, 3);
             ImportedTensor legacy = DLPACK.export(t, ExportOptions.LEGACY).importTensor();
             ImportedTensor readOnly = DLPACK.export(t, ExportOptions.VERSIONED.withReadOnly(true)).importTensor()) {
            assertThat(legacy.kind()).isEqualTo(ManagedTensorKind.LEGACY);
            assertThat(HostTensorView.of(legacy).getFloat(2)).isEqualTo(2f);
            assertThat(readOnly.layout().isReadOnly()).isTrue();
            assertThatThrownBy(() -> HostTensorView.of(readOnly).setFloat(0, 1f)).isInstanceOf(RuntimeException.class);
        }
    }

    @Test
    void torchTensorClosedFirstLeavesTheImportValid() {
        Tensor t = range(ScalarType.Float, 1 << 20, 1 << 20);
        try (ImportedTensor view = DLPACK.importTensor(t)) {
            t.close(); // the export's handle still holds the storage
            assertThat(HostTensorView.of(view).getFloat((1 << 20) - 1)).isEqualTo((1 << 20) - 1f);
            assertThat(DLPackStats.liveExportOwners()).isEqualTo(1);
        }
        assertThat(DLPackStats.liveExportOwners()).isZero(); // the handle was deleted with the import
    }

    @Test
    void torchTensorCollectedWhileItsExportLives() throws Exception {
        ExportOfAForgottenTensor forgotten = exportOfAForgottenTensor();
        // Once the Tensor is unreachable, JavaCPP's deallocator frees its at::Tensor: the export's handle keeps the storage.
        assertThat(Collect.until(() -> forgotten.tensor().get() == null, COLLECTION)).as("the JavaCPP tensor collected").isTrue();
        try (ImportedTensor view = forgotten.export().importTensor()) {
            assertThat(HostTensorView.of(view).getFloat(3)).isEqualTo(3f);
        }
        assertThat(DLPackStats.liveExportOwners()).isZero();
    }

    private record ExportOfAForgottenTensor(ExportedTensor export, WeakReference<Tensor> tensor) {
    }

    private static ExportOfAForgottenTensor exportOfAForgottenTensor() {
        Tensor t = range(ScalarType.Float, 4, 4); // never closed
        return new ExportOfAForgottenTensor(DLPACK.export(t), new WeakReference<>(t));
    }

    @Test
    void refusedTorchTensorsNameTheReason() {
        try (Tensor undefined = new Tensor(); Tensor complex = torch.randn(2).to(ScalarType.ComplexFloat);
             Tensor conj = complex.conj()) {
            assertThatThrownBy(() -> DLPACK.export(undefined)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("undefined");
            assertThatThrownBy(() -> DLPACK.export(conj)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("conjugate");
            Tensor closed = range(ScalarType.Float, 2, 2);
            closed.close();
            assertThatThrownBy(() -> DLPACK.export(closed)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("null pointer");
        }
        assertThat(DLPackStats.liveExportOwners()).isZero();
    }

    @Test
    void float32JavaToTorchIsTheSameMemory() {
        try (OwnedHostTensor owned = OwnedHostTensor.copyOf(new float[] {0, 1, 2, 3, 4, 5}, 2, 3)) {
            try (Tensor t = DLPACK.toTensor(owned.export())) {
                assertThat(typeName(t)).isEqualTo("Float");
                assertThat(t.data_ptr().address()).isEqualTo(owned.spec().data().address());
                assertThat(torchValue(t, 4)).isEqualTo(4.0);
                t.add_(new Scalar(10)).close(); // torch writes, Java sees it
                assertThat(owned.host().getFloat(4)).isEqualTo(14f);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(value = ManagedTensorKind.class)
    void typesJavaToTorch(ManagedTensorKind kind) {
        record Case(DLDataType dtype, ScalarType torchType) {
        }
        for (Case c : new Case[] {new Case(DLDataType.INT64, ScalarType.Long), new Case(DLDataType.FLOAT16, ScalarType.Half),
                new Case(DLDataType.BFLOAT16, ScalarType.BFloat16), new Case(DLDataType.BOOL, ScalarType.Bool),
                new Case(DLDataType.UINT8, ScalarType.Byte), new Case(DLDataType.FLOAT64, ScalarType.Double)}) {
            try (OwnedHostTensor owned = OwnedHostTensor.allocate(c.dtype(), 4)) {
                HostTensorView host = owned.host();
                for (int i = 0; i < 4; i++) {
                    if (c.dtype().equals(DLDataType.BOOL)) {
                        host.setBoolean(i, i % 2 == 1);
                    } else if (c.dtype().code() == org.jdlpack.abi.DLDataTypeCode.INT || c.dtype().code() == org.jdlpack.abi.DLDataTypeCode.UINT) {
                        host.setLong(i, i);
                    } else {
                        host.setDouble(i, i);
                    }
                }
                try (Tensor t = DLPACK.toTensor(owned.export(ExportOptions.of(kind)))) {
                    assertThat(typeName(t)).as(c.toString()).isEqualTo(c.torchType().name());
                    for (int i = 0; i < 4; i++) {
                        assertThat(torchValue(t, i)).as("%s[%d]", c, i).isEqualTo(c.dtype().equals(DLDataType.BOOL) ? i % 2 : i);
                    }
                }
            }
        }
    }

    @Test
    void zeroDimZeroSizeAndStridedJavaToTorch() {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment data = arena.allocate(12 * 4L, 64);
            for (int i = 0; i < 12; i++) {
                data.setAtIndex(ValueLayout.JAVA_FLOAT, i, i);
            }
            try (ExportOwner owner = ExportOwner.of(() -> { })) {
                try (Tensor scalar = DLPACK.toTensor(owner.export(TensorSpec.of(data.asSlice(8, 4), DLDataType.FLOAT32)));
                     Tensor empty = DLPACK.toTensor(owner.export(TensorSpec.of(data, DLDataType.FLOAT32, 0, 5)));
                     Tensor transposed = DLPACK.toTensor(owner.export(
                             TensorSpec.builder(data, DLDataType.FLOAT32, 4, 3).strides(1, 4).build()))) {
                    assertThat(scalar.dim()).isZero();
                    assertThat(scalar.item_float()).isEqualTo(2f);
                    assertThat(empty.numel()).isZero();
                    assertThat(empty.sizes().vec().get()).containsExactly(0, 5);
                    assertThat(transposed.is_contiguous()).isFalse();
                    assertThat(torchValue(transposed, 1)).isEqualTo(4.0); // [0][1] is element 4
                }
            }
        }
    }

    @Test
    void byteOffsetJavaToTorchFoldedAndVerbatim() {
        try (OwnedHostTensor owned = OwnedHostTensor.copyOf(new float[] {0, 1, 2, 3, 4, 5, 6, 7}, 8);
             ExportOwner owner = ExportOwner.of(() -> { })) {
            TensorSpec tail = TensorSpec.builder(owned.spec().data(), DLDataType.FLOAT32, 3).byteOffset(16).build();
            try (Tensor folded = DLPACK.toTensor(owner.export(tail));
                 Tensor verbatim = DLPACK.toTensor(owner.export(tail, ExportOptions.VERSIONED.withVerbatimByteOffset(true)))) {
                assertThat(torchValue(folded, 0)).isEqualTo(4.0);
                assertThat(torchValue(verbatim, 0)).isEqualTo(4.0); // libtorch 2.10 honours byte_offset
                assertThat(verbatim.storage_offset()).isEqualTo(4);
                assertThat(folded.data_ptr().address()).isEqualTo(verbatim.data_ptr().address());
            }
        }
    }

    @Test
    void deleterOnceOwnerClosedFirst() {
        OwnedHostTensor owned = OwnedHostTensor.allocate(DLDataType.FLOAT32, 1024);
        Tensor t = DLPACK.toTensor(owned.export());
        owned.close(); // Java's reference: torch still holds the memory
        assertThat(DLPackStats.liveExports()).isEqualTo(1);
        assertThat(DLPackStats.liveExportOwners()).as("the memory is not freed while torch holds it").isEqualTo(1);
        t.fill_(new Scalar(3)).close(); // still valid memory
        t.close(); // torch's storage dies: the deleter runs, the memory is freed
        assertThat(DLPackStats.liveExports()).isZero();
        assertThat(DLPackStats.liveExportOwners()).isZero();
    }

    @Test
    void deleterOnceTorchClosedFirst() {
        try (OwnedHostTensor owned = OwnedHostTensor.allocate(DLDataType.FLOAT32, 16)) {
            Tensor t = DLPACK.toTensor(owned.export());
            try (Tensor view = t.narrow(0, 2, 4)) { // a view shares the storage: the deleter waits for it too
                t.close();
                assertThat(DLPackStats.liveExports()).isEqualTo(1);
                assertThat(view.numel()).isEqualTo(4);
            }
            assertThat(DLPackStats.liveExports()).isZero();
            assertThat(owned.references()).isEqualTo(1); // only Java's own
        }
    }

    @Test
    void deleterOnAnotherThread() throws Exception {
        try (OwnedHostTensor owned = OwnedHostTensor.allocate(DLDataType.INT64, 8)) {
            Tensor t = DLPACK.toTensor(owned.export());
            CompletableFuture.runAsync(t::close).get();
            assertThat(DLPackStats.liveExports()).isZero();
        }
    }

    @Test
    void deleterRunsWhenTorchsTensorIsCollected() throws Exception {
        try (OwnedHostTensor owned = OwnedHostTensor.allocate(DLDataType.FLOAT32, 64)) {
            collectable(owned);
            assertThat(Collect.until(() -> DLPackStats.liveExports() == 0, COLLECTION))
                    .as("JavaCPP's deallocator freed the at::Tensor, torch called the deleter").isTrue();
        }
    }

    private static void collectable(OwnedHostTensor owned) {
        DLPACK.toTensor(owned.export()); // never closed: JavaCPP frees it after collection
    }

    @Test
    void forgottenImportOfATorchTensorIsReleasedBySafetyNet() throws Exception {
        long leaks = DLPackStats.leaksReported();
        try (Tensor t = range(ScalarType.Float, 4, 4)) {
            forget(t);
            // The safety net releases first and counts the leak after: wait for both.
            assertThat(Collect.until(() -> DLPackStats.liveExportOwners() == 0 && DLPackStats.leaksReported() > leaks, COLLECTION))
                    .as("released and reported: %s", DLPackStats.snapshot()).isTrue();
        }
    }

    private static void forget(Tensor t) {
        DLPACK.importTensor(t, org.jdlpack.abi.ImportLifetime.SHARED);
    }

    @Test
    void refusedExportStaysTheCallers() {
        try (OwnedHostTensor owned = OwnedHostTensor.allocate(DLDataType.FLOAT32, 4)) {
            ExportedTensor readOnly = owned.export(ExportOptions.VERSIONED.withReadOnly(true));
            assertThatThrownBy(() -> DLPACK.toTensor(readOnly)).hasMessageContaining("READ_ONLY");
            assertThat(readOnly.isOwned()).isTrue();
            readOnly.close();
            ExportedTensor consumed = owned.export();
            consumed.close();
            assertThatThrownBy(() -> DLPACK.toTensor(consumed)).isInstanceOf(IllegalStateException.class);
        }
    }
}
