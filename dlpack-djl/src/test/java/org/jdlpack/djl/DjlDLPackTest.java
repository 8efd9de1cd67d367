package org.jdlpack.djl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import ai.djl.Device;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.index.NDIndex;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLDataTypeCode;
import org.jdlpack.abi.DLPackStats;
import org.jdlpack.abi.ExportOptions;
import org.jdlpack.abi.ExportOwner;
import org.jdlpack.abi.ExportedTensor;
import org.jdlpack.abi.ImportLifetime;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.InvalidTensorException;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.TensorSpec;
import org.jdlpack.abi.testing.Collect;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.cpu.HostTensorView;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.libtorch.TorchDTypes;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Both directions against the real libtorch 2.7.1 of DJL 0.36's PyTorch engine (offline: the
 * natives come from the test-scoped jars): values, zero copies, and who frees what.
 */
@ExtendWith(NothingLeftBehind.class)
class DjlDLPackTest {

    private static final DjlDLPack DLPACK = DjlDLPack.get();
    private static final ExportOptions LEGACY = ExportOptions.LEGACY;
    private static final Duration COLLECTION = Duration.ofSeconds(30);

    private NDManager manager;

    @BeforeEach
    void newManager() {
        manager = NDManager.newBaseManager(Device.cpu(), "PyTorch");
    }

    @AfterEach
    void closeManager() {
        manager.close();
    }

    /** 0, 1, ..., n-1 of a DJL type, in the given shape. */
    private NDArray range(DataType type, int n, long... shape) {
        return manager.arange(0f, n, 1f).toType(type, false).reshape(shape);
    }

    /** {@return the array's elements as float32, read by DJL (after torch converts them)} */
    private static float[] djlFloats(NDArray array) {
        return array.toType(DataType.FLOAT32, false).toFloatArray();
    }

    @Test
    void startUpFindsTheLibtorchDjlLoaded() throws Exception {
        assertThat(DLPACK.version()).startsWith("2.7.1");
        assertThat(DLPACK.library().getFileName().toString()).isEqualTo("libtorch_cpu.so");
        String real = DLPACK.library().toRealPath().toString();
        assertThat(Files.readAllLines(Path.of("/proc/self/maps"))).as("the file DJL mapped, not a second copy")
                .anyMatch(line -> line.endsWith(real));
        assertThat(DLPACK.toString()).contains("2.7.1");
        assertThat(System.getProperty("ai.djl.offline")).as("DJL runs offline in these tests").isEqualTo("true");
    }

    @Test
    void float32NDArrayToJavaIsTheSameMemory() {
        NDArray a = range(DataType.FLOAT32, 6, 2, 3);
        try (ImportedTensor view = DLPACK.importTensor(a)) {
            assertThat(view.layout().dtype()).isEqualTo(DLDataType.FLOAT32);
            assertThat(view.layout().shape()).containsExactly(2, 3);
            HostTensorView host = HostTensorView.of(view);
            host.setFloat(5, 42f); // Java writes, DJL sees it
            assertThat(a.getFloat(1, 2)).isEqualTo(42f);
            a.set(new NDIndex(0, 0), 7f); // DJL writes, Java sees it
            assertThat(host.getFloat(0)).isEqualTo(7f);
        }
    }

    @ParameterizedTest
    // BFLOAT16 is not made here: DJL 0.36's own toType(BFLOAT16) aborts the JVM (see bfloat16KeepsItsTagThroughDjl).
    @ValueSource(strings = {"FLOAT32", "INT64", "FLOAT16", "BOOLEAN", "INT32", "UINT8", "INT8", "FLOAT64"})
    void typesNDArrayToJava(String typeName) {
        DataType type = DataType.valueOf(typeName);
        NDArray a = range(type, 4, 4);
        try (ImportedTensor view = DLPACK.importTensor(a)) {
            DLDataType expected = switch (type) {
                case FLOAT32 -> DLDataType.FLOAT32;
                case INT64 -> DLDataType.INT64;
                case FLOAT16 -> DLDataType.FLOAT16;
                case BOOLEAN -> DLDataType.BOOL;
                case INT32 -> DLDataType.INT32;
                case UINT8 -> DLDataType.UINT8;
                case INT8 -> DLDataType.INT8;
                default -> DLDataType.FLOAT64;
            };
            assertThat(view.layout().dtype()).isEqualTo(expected);
            HostTensorView host = HostTensorView.of(view);
            for (int i = 0; i < 4; i++) {
                double value = type == DataType.BOOLEAN ? (host.getBoolean(i) ? 1 : 0) : host.getDouble(i);
                assertThat(value).as("%s[%d]", type, i).isEqualTo(type == DataType.BOOLEAN ? Math.min(i, 1) : i);
            }
        }
    }

    @Test
    void zeroDimNDArrayToJava() {
        NDArray scalar = manager.create(7.5f);
        try (ImportedTensor view = DLPACK.importTensor(scalar)) {
            assertThat(view.layout().ndim()).isZero();
            assertThat(HostTensorView.of(view).getFloat(0)).isEqualTo(7.5f);
        }
    }

    @Test
    void stridedAndOffsetNDArrayToJavaKeepTorchsLayout() {
        NDArray base = range(DataType.FLOAT32, 12, 3, 4);
        NDArray transposed = base.transpose(); // a view in torch: strides (1, 4)
        NDArray rows = base.get(new NDIndex("1:")); // a view starting at element 4
        try (ImportedTensor baseView = DLPACK.importTensor(base); ImportedTensor tView = DLPACK.importTensor(transposed);
             ImportedTensor rView = DLPACK.importTensor(rows)) {
            assertThat(tView.layout().shape()).containsExactly(4, 3);
            assertThat(tView.layout().strides()).containsExactly(1, 4);
            assertThat(tView.dataAddress()).as("the same memory, not a copy").isEqualTo(baseView.dataAddress());
            assertThat(HostTensorView.of(tView).getFloatAt(3, 2)).isEqualTo(11f); // base[2][3]
            assertThat(rView.dataAddress()).as("torch's storage offset is in data").isEqualTo(baseView.dataAddress() + 4 * 4);
            assertThat(rView.layout().byteOffset()).isZero();
            assertThat(HostTensorView.of(rView).getFloat(0)).isEqualTo(4f);
        }
    }

    @Test
    void zeroSizeNDArrayToJava() {
        NDArray empty = manager.zeros(new Shape(0, 3));
        try (ImportedTensor view = DLPACK.importTensor(empty)) {
            assertThat(view.layout().shape()).containsExactly(0, 3);
            assertThat(view.layout().elementCount()).isZero();
        }
    }

    @Test
    void legacyAndReadOnlyNDArrayToJava() {
        NDArray a = range(DataType.FLOAT32, 3, 3);
        try (ImportedTensor legacy = DLPACK.export(a, LEGACY).importTensor();
             ImportedTensor readOnly = DLPACK.export(a, ExportOptions.VERSIONED.withReadOnly(true)).importTensor()) {
            assertThat(legacy.kind()).isEqualTo(ManagedTensorKind.LEGACY);
            assertThat(HostTensorView.of(legacy).getFloat(2)).isEqualTo(2f);
            assertThat(readOnly.layout().isReadOnly()).isTrue();
            assertThatThrownBy(() -> HostTensorView.of(readOnly).setFloat(0, 1f)).isInstanceOf(RuntimeException.class);
        }
    }

    @Test
    void ndArrayAndManagerClosedFirstLeaveTheImportValid() {
        NDManager own = NDManager.newBaseManager(Device.cpu(), "PyTorch");
        NDArray a = own.arange(0f, 1 << 20, 1f);
        try (ImportedTensor view = DLPACK.importTensor(a)) {
            a.close();
            own.close(); // every DJL object gone: the export's handle still holds the storage
            assertThat(HostTensorView.of(view).getFloat((1 << 20) - 1)).isEqualTo((1 << 20) - 1f);
            assertThat(DLPackStats.liveExportOwners()).isEqualTo(1);
        }
        assertThat(DLPackStats.liveExportOwners()).isZero(); // the handle was deleted with the import
    }

    @Test
    void refusedNDArraysNameTheReason() {
        NDArray closed = range(DataType.FLOAT32, 2, 2);
        closed.close();
        assertThatThrownBy(() -> DLPACK.export(closed)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("closed");
        NDArray complex = manager.create(new float[] {1, 2}).toType(DataType.COMPLEX64, false);
        try (ImportedTensor view = DLPACK.importTensor(complex)) { // carried: complex64 is (complex, 64, 1)
            assertThat(view.layout().dtype()).isEqualTo(DLDataType.COMPLEX64);
        }
        NDManager closedManager = NDManager.newBaseManager(Device.cpu(), "PyTorch");
        closedManager.close();
        try (OwnedHostTensor owned = OwnedHostTensor.allocate(DLDataType.FLOAT32, 2)) {
            ExportedTensor export = owned.export(LEGACY);
            assertThatThrownBy(() -> DLPACK.toNDArray(export, closedManager)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("is closed");
            assertThat(export.isOwned()).isTrue();
            export.close();
        }
        assertThat(DLPackStats.liveExportOwners()).isZero();
    }

    /**
     * A second engine on the class path (DJL's ONNX Runtime engine, test scope, its natives in its
     * jar): its arrays and managers are refused by name with what to do instead, the refused
     * export stays the caller's, and doing what the message says carries the values.
     */
    @Test
    void arraysAndManagersOfAnotherEngineAreRefusedNamingTheEngineAndWhatToDo() {
        try (NDManager ort = NDManager.newBaseManager(Device.cpu(), "OnnxRuntime")) {
            NDArray a = ort.create(new float[] {1, 2, 3});
            assertThat(a.getManager().getEngine().getEngineName()).isEqualTo("OnnxRuntime");
            assertThatThrownBy(() -> DLPACK.export(a)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("DJL's OnnxRuntime engine").hasMessageContaining("OrtNDArray")
                    .hasMessageContaining("not PyTorch").hasMessageContaining("from(array)");
            try (OwnedHostTensor owned = OwnedHostTensor.copyOf(new float[] {4, 5}, 2)) {
                ExportedTensor export = owned.export(LEGACY);
                assertThatThrownBy(() -> DLPACK.toNDArray(export, ort)).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("DJL's OnnxRuntime engine").hasMessageContaining("newBaseManager(Device.cpu(), \"PyTorch\")");
                assertThat(export.isOwned()).as("refused before anything was called").isTrue();
                export.close();
            }
            NDArray copy = manager.from(a); // what the message says: a PyTorch copy
            try (ImportedTensor view = DLPACK.importTensor(copy)) {
                assertThat(HostTensorView.of(view).getFloat(2)).isEqualTo(3f);
            }
            // DJL runs an ONNX Runtime array's operations on its alternative engine, PyTorch here: their results are torch tensors.
            NDArray sum = a.add(1f);
            assertThat(sum.getManager().getEngine().getEngineName()).isEqualTo("PyTorch");
            try (ImportedTensor view = DLPACK.importTensor(sum)) {
                assertThat(HostTensorView.of(view).getFloat(2)).isEqualTo(4f);
            }
        }
        assertThat(DLPackStats.liveExportOwners()).isZero();
    }

    @Test
    void float32JavaToNDArrayIsTheSameMemory() {
        try (OwnedHostTensor owned = OwnedHostTensor.copyOf(new float[] {0, 1, 2, 3, 4, 5}, 2, 3)) {
            NDArray a = DLPACK.toNDArray(owned.export(LEGACY), manager);
            assertThat(a.getDataType()).isEqualTo(DataType.FLOAT32);
            assertThat(a.getShape()).isEqualTo(new Shape(2, 3));
            assertThat(a.getFloat(1, 1)).isEqualTo(4f);
            a.addi(10f); // torch writes in place, Java sees it
            assertThat(owned.host().getFloat(4)).isEqualTo(14f);
            try (ImportedTensor back = DLPACK.importTensor(a)) {
                assertThat(back.dataAddress()).as("no copy either way").isEqualTo(owned.spec().data().address());
            }
            a.close();
        }
    }

    /**
     * Every type of the table into torch, and back out through the shim (not through DJL's type
     * mapping): the tag and the values survive the round trip, bfloat16 included.
     */
    @Test
    void typesJavaToNDArrayAndBack() {
        for (TorchDTypes.Entry entry : LibTorch.DTYPES.entries()) {
            DLDataType dtype = entry.dlpack();
            try (OwnedHostTensor owned = OwnedHostTensor.allocate(dtype, 4)) {
                MemorySegment bytes = owned.spec().data();
                for (long b = 0; b < bytes.byteSize(); b++) {
                    bytes.set(ValueLayout.JAVA_BYTE, b, (byte) (dtype.equals(DLDataType.BOOL) ? b % 2 : b + 1));
                }
                NDArray a = DLPACK.toNDArray(owned.export(LEGACY), manager);
                try (ImportedTensor back = DLPACK.importTensor(a)) {
                    assertThat(back.layout().dtype()).as(dtype.toString()).isEqualTo(dtype);
                    assertThat(back.dataAddress()).isEqualTo(bytes.address());
                    assertThat(back.hostSegment().mismatch(bytes)).as(dtype.toString()).isEqualTo(-1);
                }
                a.close();
            }
        }
    }

    @Test
    void djlReadsInt64Float16Bfloat16AndBoolFromJava() {
        try (OwnedHostTensor longs = OwnedHostTensor.copyOf(new long[] {5, -6, 7}, 3);
             OwnedHostTensor halves = OwnedHostTensor.allocate(DLDataType.FLOAT16, 3);
             OwnedHostTensor bf16 = OwnedHostTensor.allocate(DLDataType.BFLOAT16, 3);
             OwnedHostTensor bools = OwnedHostTensor.allocate(DLDataType.BOOL, 3)) {
            for (int i = 0; i < 3; i++) {
                halves.host().setDouble(i, i + 0.5);
                bf16.host().setDouble(i, i * 2.0);
                bools.host().setBoolean(i, i != 1);
            }
            NDArray l = DLPACK.toNDArray(longs.export(LEGACY), manager);
            NDArray h = DLPACK.toNDArray(halves.export(LEGACY), manager);
            NDArray b = DLPACK.toNDArray(bf16.export(LEGACY), manager);
            NDArray z = DLPACK.toNDArray(bools.export(LEGACY), manager);
            assertThat(l.getDataType()).isEqualTo(DataType.INT64);
            assertThat(l.toLongArray()).containsExactly(5, -6, 7);
            assertThat(h.getDataType()).isEqualTo(DataType.FLOAT16);
            assertThat(djlFloats(h)).containsExactly(0.5f, 1.5f, 2.5f);
            assertThat(djlFloats(b)).containsExactly(0f, 2f, 4f); // converted by torch: DJL's own bf16 reads are not used
            assertThat(z.getDataType()).isEqualTo(DataType.BOOLEAN);
            assertThat(z.toBooleanArray()).containsExactly(true, false, true);
        }
        // the four arrays close with the manager after the Java owners: the deleters run then
    }

    /**
     * A bfloat16 NDArray, made the one way DJL 0.36 survives (from DLPack: its own
     * {@code toType(BFLOAT16)} aborts the JVM), leaves tagged (bfloat, 16, 1) from torch's code,
     * although DJL itself calls its type UNKNOWN.
     */
    @Test
    void bfloat16KeepsItsTagThroughDjl() {
        try (OwnedHostTensor bf16 = OwnedHostTensor.allocate(DLDataType.BFLOAT16, 3)) {
            for (int i = 0; i < 3; i++) {
                bf16.host().setDouble(i, i - 1.5);
            }
            NDArray b = DLPACK.toNDArray(bf16.export(LEGACY), manager);
            assertThat(b.getDataType()).as("DJL 0.36 has no mapping for torch's BFloat16").isEqualTo(DataType.UNKNOWN);
            NDArray doubled = b.mul(2f); // torch computes in bfloat16
            try (ImportedTensor view = DLPACK.importTensor(doubled)) {
                assertThat(view.layout().dtype()).isEqualTo(DLDataType.BFLOAT16);
                assertThat(HostTensorView.of(view).getDouble(0)).isEqualTo(-3.0);
                assertThat(HostTensorView.of(view).getDouble(2)).isEqualTo(1.0);
            }
            doubled.close();
            b.close();
        }
    }

    @Test
    void zeroDimZeroSizeAndStridedJavaToNDArray() {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment data = arena.allocate(12 * 4L, 64);
            for (int i = 0; i < 12; i++) {
                data.setAtIndex(ValueLayout.JAVA_FLOAT, i, i);
            }
            try (ExportOwner owner = ExportOwner.of(() -> { }); NDManager local = NDManager.newBaseManager(Device.cpu(), "PyTorch")) {
                NDArray scalar = DLPACK.toNDArray(owner.export(TensorSpec.of(data.asSlice(8, 4), DLDataType.FLOAT32), LEGACY), local);
                NDArray empty = DLPACK.toNDArray(owner.export(TensorSpec.of(data, DLDataType.FLOAT32, 0, 5), LEGACY), local);
                NDArray transposed = DLPACK.toNDArray(owner.export(
                        TensorSpec.builder(data, DLDataType.FLOAT32, 4, 3).strides(1, 4).build(), LEGACY), local);
                assertThat(scalar.getShape().dimension()).isZero();
                assertThat(scalar.getFloat()).isEqualTo(2f);
                assertThat(empty.getShape()).isEqualTo(new Shape(0, 5));
                assertThat(empty.size()).isZero();
                assertThat(transposed.getShape()).isEqualTo(new Shape(4, 3));
                assertThat(transposed.getFloat(0, 1)).isEqualTo(4f); // [0][1] is element 4: strides kept
                try (ImportedTensor back = DLPACK.importTensor(transposed)) {
                    assertThat(back.layout().strides()).containsExactly(1, 4);
                }
            } // local closes before the arena: the deleters have run
        }
    }

    @Test
    void byteOffsetJavaToNDArrayFoldedAndVerbatim() {
        try (OwnedHostTensor owned = OwnedHostTensor.copyOf(new float[] {0, 1, 2, 3, 4, 5, 6, 7}, 8);
             ExportOwner owner = ExportOwner.of(() -> { })) {
            TensorSpec tail = TensorSpec.builder(owned.spec().data(), DLDataType.FLOAT32, 3).byteOffset(16).build();
            NDArray folded = DLPACK.toNDArray(owner.export(tail, LEGACY), manager);
            NDArray verbatim = DLPACK.toNDArray(owner.export(tail, LEGACY.withVerbatimByteOffset(true)), manager);
            assertThat(folded.toFloatArray()).containsExactly(4f, 5f, 6f);
            assertThat(verbatim.toFloatArray()).as("libtorch 2.7.1 ignores byte_offset: the adapter folds it")
                    .containsExactly(4f, 5f, 6f);
            folded.close();
            verbatim.close();
        }
    }

    @Test
    void versionedAndReadOnlyExportsAreRefusedAndStayTheCallers() {
        try (OwnedHostTensor owned = OwnedHostTensor.allocate(DLDataType.FLOAT32, 4)) {
            ExportedTensor readOnly = owned.export(ExportOptions.VERSIONED.withReadOnly(true));
            assertThatThrownBy(() -> DLPACK.toNDArray(readOnly, manager)).isInstanceOf(InvalidTensorException.class)
                    .hasMessageContaining("READ_ONLY");
            assertThat(readOnly.isOwned()).isTrue();
            readOnly.close();
            ExportedTensor versioned = owned.export();
            assertThatThrownBy(() -> DLPACK.toNDArray(versioned, manager)).isInstanceOf(InvalidTensorException.class)
                    .hasMessageContaining("ExportOptions.LEGACY");
            assertThat(versioned.isOwned()).isTrue();
            versioned.close();
            ExportedTensor consumed = owned.export(LEGACY);
            consumed.close();
            assertThatThrownBy(() -> DLPACK.toNDArray(consumed, manager)).isInstanceOf(IllegalStateException.class);
        }
    }

    @Test
    void deleterOnceJavaOwnerClosedFirst() {
        OwnedHostTensor owned = OwnedHostTensor.allocate(DLDataType.FLOAT32, 1024);
        NDArray a = DLPACK.toNDArray(owned.export(LEGACY), manager);
        owned.close(); // Java's reference: torch still holds the memory
        assertThat(DLPackStats.liveExports()).isEqualTo(1);
        assertThat(DLPackStats.liveExportOwners()).as("the memory is not freed while torch holds it").isEqualTo(1);
        a.addi(3f); // still valid memory
        assertThat(a.getFloat(1023)).isEqualTo(3f);
        a.close(); // torch's storage dies: the deleter runs, the memory is freed
        assertThat(DLPackStats.liveExports()).isZero();
        assertThat(DLPackStats.liveExportOwners()).isZero();
    }

    @Test
    void deleterOnceNDArrayClosedFirstWaitsForItsViews() {
        try (OwnedHostTensor owned = OwnedHostTensor.allocate(DLDataType.FLOAT32, 16)) {
            NDArray a = DLPACK.toNDArray(owned.export(LEGACY), manager);
            NDArray view = a.get(new NDIndex("2:6")); // a view shares the storage: the deleter waits for it too
            a.close();
            assertThat(DLPackStats.liveExports()).isEqualTo(1);
            assertThat(view.size()).isEqualTo(4);
            view.close();
            assertThat(DLPackStats.liveExports()).isZero();
            assertThat(owned.references()).isEqualTo(1); // only Java's own
        }
    }

    @Test
    void deleterRunsWhenTheManagerCloses() {
        try (OwnedHostTensor owned = OwnedHostTensor.allocate(DLDataType.INT64, 8)) {
            NDManager local = NDManager.newBaseManager(Device.cpu(), "PyTorch");
            DLPACK.toNDArray(owned.export(LEGACY), local); // never closed itself
            assertThat(DLPackStats.liveExports()).isEqualTo(1);
            local.close(); // DJL closes every attached array: torch calls the deleter
            assertThat(DLPackStats.liveExports()).isZero();
        }
    }

    @Test
    void deleterOnAnotherThread() throws Exception {
        try (OwnedHostTensor owned = OwnedHostTensor.allocate(DLDataType.INT64, 8)) {
            NDArray a = DLPACK.toNDArray(owned.export(LEGACY), manager);
            CompletableFuture.runAsync(a::close).get();
            assertThat(DLPackStats.liveExports()).isZero();
        }
    }

    @Test
    void forgottenImportOfAnNDArrayIsReleasedBySafetyNet() throws Exception {
        long leaks = DLPackStats.leaksReported();
        forget(range(DataType.FLOAT32, 4, 4));
        // The safety net releases first and counts the leak after: wait for both.
        assertThat(Collect.until(() -> DLPackStats.liveExportOwners() == 0 && DLPackStats.leaksReported() > leaks, COLLECTION))
                .as("released and reported: %s", DLPackStats.snapshot()).isTrue();
    }

    private static void forget(NDArray a) {
        DLPACK.importTensor(a, ImportLifetime.SHARED);
    }

    @Test
    void lanesAndUnknownTypesAreRefusedBeforeTorch() {
        try (Arena arena = Arena.ofShared(); ExportOwner owner = ExportOwner.of(() -> { })) {
            MemorySegment data = arena.allocate(64, 64);
            ExportedTensor lanes = owner.export(TensorSpec.of(data, new DLDataType(DLDataTypeCode.FLOAT, 32, 2), 4), LEGACY);
            assertThatThrownBy(() -> DLPACK.toNDArray(lanes, manager)).isInstanceOf(InvalidTensorException.class)
                    .hasMessageContaining("lanes 2");
            lanes.close();
        }
    }
}
