package org.jdlpack.tensorflow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import org.jdlpack.abi.DLDataType;
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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.tensorflow.Graph;
import org.tensorflow.RawTensor;
import org.tensorflow.Session;
import org.tensorflow.Tensor;
import org.tensorflow.op.Ops;
import org.tensorflow.ndarray.Shape;
import org.tensorflow.ndarray.buffer.DataBuffers;
import org.tensorflow.types.TBfloat16;
import org.tensorflow.types.TBool;
import org.tensorflow.types.TFloat16;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TFloat64;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.TInt64;
import org.tensorflow.types.TString;
import org.tensorflow.types.TUint16;
import org.tensorflow.types.TUint8;
import org.tensorflow.types.family.TType;

/** Both directions against the real TensorFlow of TensorFlow Java 1.1.0: values, zero copies, and who frees what. */
@ExtendWith(NothingLeftBehind.class)
class TensorFlowDLPackTest {

    private static final TensorFlowDLPack DLPACK = TensorFlowDLPack.get();
    private static final ExportOptions LEGACY = ExportOptions.LEGACY;
    private static final Duration COLLECTION = Duration.ofSeconds(30);

    /** {@return the address of a TensorFlow Java tensor's data, through TensorFlow Java's public buffer visitor} */
    private static long dataAddress(Tensor t) {
        return t.asRawTensor().data().accept(new org.tensorflow.ndarray.buffer.DataStorageVisitor<Long>() {
            @Override
            public Long visit(long address, long length, long scale) {
                return address;
            }

            @Override
            public Long fallback() {
                throw new AssertionError("not a raw buffer");
            }
        });
    }

    @Test
    void startUpSaysWhichTensorFlow() {
        assertThat(DLPACK.version()).isEqualTo("1.1.0");
        assertThat(DLPACK.tensorFlowVersion()).startsWith("2.18");
        assertThat(DLPACK.library().getFileName().toString()).startsWith("libtensorflow_cc");
        assertThat(DLPACK.toString()).contains("2.18");
    }

    @Test
    void float32TensorFlowToJavaIsTheSameMemory() {
        try (TFloat32 t = TFloat32.tensorOf(Shape.of(2, 3), DataBuffers.of(0f, 1f, 2f, 3f, 4f, 5f));
             ImportedTensor view = DLPACK.importTensor(t)) {
            assertThat(view.layout().dtype()).isEqualTo(DLDataType.FLOAT32);
            assertThat(view.layout().shape()).containsExactly(2, 3);
            assertThat(view.dataAddress()).isEqualTo(dataAddress(t));
            HostTensorView host = HostTensorView.of(view);
            assertThat(host.getFloatAt(1, 1)).isEqualTo(4f);
            host.setFloat(5, 42f); // Java writes, TensorFlow Java reads it
            assertThat(t.getFloat(1, 2)).isEqualTo(42f);
        }
    }

    @Test
    void typesTensorFlowToJava() {
        try (TInt64 longs = TInt64.vectorOf(-1, 1L << 40, 3);
             TFloat16 halves = TFloat16.vectorOf(0.5f, -2f);
             TBfloat16 bhalves = TBfloat16.vectorOf(1.5f, 256f);
             TBool bools = TBool.vectorOf(true, false, true);
             TUint8 bytes = TUint8.vectorOf((byte) 200, (byte) 1);
             ImportedTensor l = DLPACK.importTensor(longs); ImportedTensor h = DLPACK.importTensor(halves);
             ImportedTensor b = DLPACK.importTensor(bhalves); ImportedTensor z = DLPACK.importTensor(bools);
             ImportedTensor u = DLPACK.importTensor(bytes)) {
            assertThat(l.layout().dtype()).isEqualTo(DLDataType.INT64);
            assertThat(HostTensorView.of(l).getLong(1)).isEqualTo(1L << 40);
            assertThat(h.layout().dtype()).isEqualTo(DLDataType.FLOAT16);
            assertThat(HostTensorView.of(h).getFloat(1)).isEqualTo(-2f);
            assertThat(b.layout().dtype()).isEqualTo(DLDataType.BFLOAT16);
            assertThat(HostTensorView.of(b).getFloat(1)).isEqualTo(256f);
            assertThat(z.layout().dtype()).isEqualTo(DLDataType.BOOL);
            assertThat(HostTensorView.of(z).getBoolean(0)).isTrue();
            assertThat(HostTensorView.of(z).getBoolean(1)).isFalse();
            assertThat(u.layout().dtype()).isEqualTo(DLDataType.UINT8);
            assertThat(HostTensorView.of(u).getLong(0)).isEqualTo(200);
        }
    }

    @Test
    void zeroDimAndZeroSizeTensorFlowToJava() {
        try (TFloat32 scalar = TFloat32.scalarOf(7.5f); TFloat32 empty = TFloat32.tensorOf(Shape.of(0, 3));
             ImportedTensor s = DLPACK.importTensor(scalar); ImportedTensor e = DLPACK.importTensor(empty)) {
            assertThat(s.layout().ndim()).isZero();
            assertThat(HostTensorView.of(s).getFloat(0)).isEqualTo(7.5f);
            assertThat(e.layout().shape()).containsExactly(0, 3);
            assertThat(e.layout().elementCount()).isZero();
        }
    }

    @Test
    void legacyAndReadOnlyTensorFlowToJava() {
        try (TFloat32 t = TFloat32.vectorOf(0f, 1f, 2f);
             ImportedTensor legacy = DLPACK.export(t, LEGACY).importTensor();
             ImportedTensor readOnly = DLPACK.export(t, ExportOptions.VERSIONED.withReadOnly(true)).importTensor()) {
            assertThat(legacy.kind()).isEqualTo(ManagedTensorKind.LEGACY);
            assertThat(HostTensorView.of(legacy).getFloat(2)).isEqualTo(2f);
            assertThat(readOnly.layout().isReadOnly()).isTrue();
            assertThatThrownBy(() -> HostTensorView.of(readOnly).setFloat(0, 1f)).isInstanceOf(RuntimeException.class);
        }
    }

    @Test
    void tensorFlowTensorClosedFirstLeavesTheImportValid() {
        TFloat32 t = TFloat32.tensorOf(Shape.of(1 << 20), data -> data.setFloat(9f, (1 << 20) - 1));
        try (ImportedTensor view = DLPACK.importTensor(t)) {
            t.close(); // the export's handle still holds the buffer
            assertThat(HostTensorView.of(view).getFloat((1 << 20) - 1)).isEqualTo(9f);
            assertThat(DLPackStats.liveExportOwners()).isEqualTo(1);
        }
        assertThat(DLPackStats.liveExportOwners()).isZero(); // the handle was deleted with the import
    }

    @Test
    void refusedTensorFlowTensorsNameTheReason() {
        try (TString strings = TString.vectorOf("a", "b")) {
            assertThatThrownBy(() -> DLPACK.export(strings)).isInstanceOf(InvalidTensorException.class)
                    .hasMessageContaining("DT_STRING");
        }
        TFloat32 closed = TFloat32.scalarOf(1f);
        closed.close();
        assertThatThrownBy(() -> DLPACK.export(closed)).isInstanceOf(IllegalStateException.class);
        assertThat(DLPackStats.liveExportOwners()).isZero();
    }

    @Test
    void float32JavaToTensorFlowIsTheSameMemory() {
        try (OwnedHostTensor owned = OwnedHostTensor.copyOf(new float[] {0, 1, 2, 3, 4, 5}, 2, 3)) {
            try (TType t = DLPACK.toTensor(owned.export(LEGACY))) {
                assertThat(t).isInstanceOf(TFloat32.class);
                assertThat(t.shape()).isEqualTo(Shape.of(2, 3));
                assertThat(dataAddress(t)).isEqualTo(owned.spec().data().address());
                TFloat32 floats = (TFloat32) t;
                assertThat(floats.getFloat(1, 1)).isEqualTo(4f);
                floats.setFloat(40f, 1, 1); // TensorFlow Java writes, Java sees it
                assertThat(owned.host().getFloat(4)).isEqualTo(40f);
            }
        }
    }

    @Test
    void typesJavaToTensorFlow() {
        try (OwnedHostTensor longs = OwnedHostTensor.copyOf(new long[] {-1, 1L << 40}, 2);
             OwnedHostTensor halves = OwnedHostTensor.allocate(DLDataType.FLOAT16, 2);
             OwnedHostTensor bhalves = OwnedHostTensor.allocate(DLDataType.BFLOAT16, 2);
             OwnedHostTensor bools = OwnedHostTensor.allocate(DLDataType.BOOL, 3)) {
            halves.host().setFloat(0, 0.5f);
            halves.host().setFloat(1, -2f);
            bhalves.host().setFloat(1, 256f);
            bools.host().setBoolean(1, true);
            try (TInt64 l = (TInt64) DLPACK.toTensor(longs.export(LEGACY));
                 TFloat16 h = (TFloat16) DLPACK.toTensor(halves.export(LEGACY));
                 TBfloat16 b = (TBfloat16) DLPACK.toTensor(bhalves.export(LEGACY));
                 TBool z = (TBool) DLPACK.toTensor(bools.export(LEGACY))) {
                assertThat(l.getLong(1)).isEqualTo(1L << 40);
                assertThat(h.getFloat(1)).isEqualTo(-2f);
                assertThat(b.getFloat(1)).isEqualTo(256f);
                assertThat(z.getBoolean(0)).isFalse();
                assertThat(z.getBoolean(1)).isTrue();
            }
        }
    }

    @Test
    void zeroDimAndZeroSizeJavaToTensorFlow() {
        try (OwnedHostTensor scalar = OwnedHostTensor.copyOf(new float[] {2.5f});
             OwnedHostTensor empty = OwnedHostTensor.allocate(DLDataType.FLOAT32, 0, 5);
             TFloat32 s = (TFloat32) DLPACK.toTensor(scalar.export(LEGACY));
             TFloat32 e = (TFloat32) DLPACK.toTensor(empty.export(LEGACY))) {
            assertThat(s.rank()).isZero();
            assertThat(s.getFloat()).isEqualTo(2.5f);
            assertThat(e.shape()).isEqualTo(Shape.of(0, 5));
            assertThat(e.size()).isZero();
        }
    }

    @Test
    void stridedOffsetAndMisalignedJavaToTensorFlowAreRefusedNamingTheCopy() {
        try (Arena arena = Arena.ofShared(); ExportOwner owner = ExportOwner.of(() -> { })) {
            MemorySegment data = arena.allocate(12 * 4L, 64);
            ExportedTensor transposed = owner.export(TensorSpec.builder(data, DLDataType.FLOAT32, 4, 3).strides(1, 4).build(), LEGACY);
            ExportedTensor offset = owner.export(TensorSpec.builder(data, DLDataType.FLOAT32, 3).byteOffset(16).build(),
                    LEGACY.withVerbatimByteOffset(true));
            ExportedTensor misaligned = owner.export(TensorSpec.builder(data, DLDataType.FLOAT32, 3).byteOffset(16).build(), LEGACY);
            assertThatThrownBy(() -> DLPACK.toTensor(transposed)).hasMessageContaining("strides[1] is 4").hasMessageContaining("copyOf");
            assertThatThrownBy(() -> DLPACK.toTensor(offset)).hasMessageContaining("byte_offset is 16");
            assertThatThrownBy(() -> DLPACK.toTensor(misaligned)).hasMessageContaining("not aligned to 64").hasMessageContaining("copyOf");
            for (ExportedTensor refused : new ExportedTensor[] {transposed, offset, misaligned}) {
                assertThat(refused.isOwned()).isTrue();
                refused.close();
            }
        }
    }

    @Test
    void aStridedTensorCopiedAsTheMessageSaysReachesTensorFlow() {
        try (Arena arena = Arena.ofShared(); ExportOwner owner = ExportOwner.of(() -> { })) {
            MemorySegment data = arena.allocate(12 * 4L, 64);
            for (int i = 0; i < 12; i++) {
                data.setAtIndex(ValueLayout.JAVA_FLOAT, i, i);
            }
            try (ImportedTensor transposed = owner.export(TensorSpec.builder(data, DLDataType.FLOAT32, 4, 3).strides(1, 4).build())
                    .importTensor();
                 OwnedHostTensor compact = OwnedHostTensor.copyOf(HostTensorView.of(transposed));
                 TFloat32 t = (TFloat32) DLPACK.toTensor(compact.export(LEGACY))) {
                assertThat(t.getFloat(0, 1)).isEqualTo(4f); // [0][1] of the transpose is element 4
                assertThat(t.getFloat(3, 2)).isEqualTo(11f);
            }
        }
    }

    @Test
    void deleterOnceOwnerClosedFirst() {
        OwnedHostTensor owned = OwnedHostTensor.allocate(DLDataType.FLOAT32, 1024);
        TFloat32 t = (TFloat32) DLPACK.toTensor(owned.export(LEGACY));
        owned.close(); // Java's reference: TensorFlow still holds the memory
        assertThat(DLPackStats.liveExports()).isEqualTo(1);
        assertThat(DLPackStats.liveExportOwners()).as("the memory is not freed while TensorFlow holds it").isEqualTo(1);
        t.setFloat(3f, 1023); // still valid memory
        t.close(); // TensorFlow's buffer dies: the deleter runs, the memory is freed
        assertThat(DLPackStats.liveExports()).isZero();
        assertThat(DLPackStats.liveExportOwners()).isZero();
    }

    @Test
    void deleterOnceTensorFlowClosedFirst() {
        try (OwnedHostTensor owned = OwnedHostTensor.allocate(DLDataType.FLOAT32, 16)) {
            TFloat32 t = (TFloat32) DLPACK.toTensor(owned.export(LEGACY));
            try (ImportedTensor back = DLPACK.importTensor(t)) { // TensorFlow's buffer exported again: one more hold
                t.close();
                // Java's export to TensorFlow lives on (TensorFlow's buffer is held by the second
                // export's handle), and so does the second export, imported here.
                assertThat(DLPackStats.liveExports()).isEqualTo(2);
                assertThat(back.dataAddress()).isEqualTo(owned.spec().data().address());
            }
            assertThat(DLPackStats.liveExports()).isZero();
            assertThat(owned.references()).isEqualTo(1); // only Java's own
        }
    }

    @Test
    void deleterOnAnotherThread() throws Exception {
        try (OwnedHostTensor owned = OwnedHostTensor.allocate(DLDataType.INT64, 8)) {
            TType t = DLPACK.toTensor(owned.export(LEGACY));
            CompletableFuture.runAsync(t::close).get();
            assertThat(DLPackStats.liveExports()).isZero();
        }
    }

    @Test
    void deleterRunsWhenTensorFlowsTensorIsCollected() throws Exception {
        try (OwnedHostTensor owned = OwnedHostTensor.allocate(DLDataType.FLOAT32, 64)) {
            collectable(owned);
            assertThat(Collect.until(() -> DLPackStats.liveExports() == 0, COLLECTION))
                    .as("JavaCPP's deallocator deleted the TF_Tensor, TensorFlow called the deleter").isTrue();
        }
    }

    private static void collectable(OwnedHostTensor owned) {
        DLPACK.toTensor(owned.export(LEGACY)); // never closed: JavaCPP deletes it after collection
    }

    @Test
    void forgottenImportOfATensorFlowTensorIsReleasedBySafetyNet() throws Exception {
        long leaks = DLPackStats.leaksReported();
        try (TFloat32 t = TFloat32.vectorOf(1f, 2f)) {
            forget(t);
            // The safety net releases first and counts the leak after: wait for both.
            assertThat(Collect.until(() -> DLPackStats.liveExportOwners() == 0 && DLPackStats.leaksReported() > leaks, COLLECTION))
                    .as("released and reported: %s", DLPackStats.snapshot()).isTrue();
        }
    }

    private static void forget(Tensor t) {
        DLPACK.importTensor(t, ImportLifetime.SHARED);
    }

    @Test
    void refusedExportStaysTheCallers() {
        try (OwnedHostTensor owned = OwnedHostTensor.allocate(DLDataType.FLOAT32, 4)) {
            ExportedTensor readOnly = owned.export(ExportOptions.VERSIONED.withReadOnly(true));
            assertThatThrownBy(() -> DLPACK.toTensor(readOnly)).hasMessageContaining("READ_ONLY");
            assertThat(readOnly.isOwned()).isTrue();
            readOnly.close();
            ExportedTensor versioned = owned.export();
            assertThatThrownBy(() -> DLPACK.toTensor(versioned)).hasMessageContaining("ExportOptions.LEGACY");
            versioned.close();
            ExportedTensor consumed = owned.export(LEGACY);
            consumed.close();
            assertThatThrownBy(() -> DLPACK.toTensor(consumed)).isInstanceOf(IllegalStateException.class);
        }
    }

    @Test
    void float64Int32AndUint16BothWays() {
        try (TFloat64 doubles = TFloat64.vectorOf(0.25, -1e300); TInt32 ints = TInt32.vectorOf(-7, 1 << 30);
             TUint16 shorts = TUint16.vectorOf((short) 65535, (short) 2);
             ImportedTensor d = DLPACK.importTensor(doubles); ImportedTensor i = DLPACK.importTensor(ints);
             ImportedTensor u = DLPACK.importTensor(shorts);
             OwnedHostTensor dCopy = OwnedHostTensor.copyOf(HostTensorView.of(d));
             OwnedHostTensor iCopy = OwnedHostTensor.copyOf(HostTensorView.of(i));
             OwnedHostTensor uCopy = OwnedHostTensor.copyOf(HostTensorView.of(u));
             TFloat64 dBack = (TFloat64) DLPACK.toTensor(dCopy.export(LEGACY));
             TInt32 iBack = (TInt32) DLPACK.toTensor(iCopy.export(LEGACY));
             TUint16 uBack = (TUint16) DLPACK.toTensor(uCopy.export(LEGACY))) {
            assertThat(d.layout().dtype()).isEqualTo(DLDataType.FLOAT64);
            assertThat(i.layout().dtype()).isEqualTo(DLDataType.INT32);
            assertThat(u.layout().dtype()).isEqualTo(DLDataType.UINT16);
            assertThat(HostTensorView.of(u).getLong(0)).isEqualTo(65535);
            assertThat(dBack.getDouble(1)).isEqualTo(-1e300);
            assertThat(iBack.getInt(0)).isEqualTo(-7);
            assertThat(uBack.getShort(0)).isEqualTo((short) 65535);
        }
    }

    @Test
    void aSessionComputesOverJavaMemoryAndJavaReadsItsResult() {
        try (OwnedHostTensor owned = OwnedHostTensor.copyOf(new float[] {1, 2, 3, 4}, 2, 2);
             TFloat32 x = (TFloat32) DLPACK.toTensor(owned.export(LEGACY));
             Graph g = new Graph(); Session session = new Session(g)) {
            Ops tf = Ops.create(g);
            var input = tf.placeholder(TFloat32.class);
            var product = tf.linalg.matMul(input, input);
            try (var result = session.runner().feed(input, x).fetch(product).run();
                 ImportedTensor view = DLPACK.importTensor(result.get(0))) {
                assertThat(view.layout().shape()).containsExactly(2, 2);
                assertThat(HostTensorView.of(view).getFloatAt(1, 1)).isEqualTo(22f); // 3*2 + 4*4
            }
        }
    }

    @Test
    void tensorFlowTensorCollectedWhileItsExportLives() throws Exception {
        ExportOfAForgottenTensor forgotten = exportOfAForgottenTensor();
        // Once the RawTensor is unreachable, JavaCPP's deallocator deletes its TF_Tensor: the export's handle keeps the buffer.
        assertThat(Collect.until(() -> forgotten.tensor().get() == null, COLLECTION)).as("the TensorFlow Java tensor collected").isTrue();
        try (ImportedTensor view = forgotten.export().importTensor()) {
            assertThat(HostTensorView.of(view).getLong(2)).isEqualTo(3L);
        }
        assertThat(DLPackStats.liveExportOwners()).isZero();
    }

    private record ExportOfAForgottenTensor(ExportedTensor export, WeakReference<RawTensor> tensor) {
    }

    private static ExportOfAForgottenTensor exportOfAForgottenTensor() {
        TInt64 t = TInt64.vectorOf(1, 2, 3); // never closed
        return new ExportOfAForgottenTensor(DLPACK.export(t), new WeakReference<>(t.asRawTensor()));
    }

    @Test
    void importClosedOnAnotherThreadDeletesTheHandleThere() throws Exception {
        try (TFloat32 t = TFloat32.vectorOf(5f, 6f)) {
            ImportedTensor view = DLPACK.importTensor(t, ImportLifetime.SHARED);
            float read = CompletableFuture.supplyAsync(() -> {
                try (view) {
                    return HostTensorView.of(view).getFloat(1);
                }
            }).get();
            assertThat(read).isEqualTo(6f);
            assertThat(DLPackStats.liveExportOwners()).isZero();
        }
    }
}
