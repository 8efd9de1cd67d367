package org.jdlpack.djl;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

import ai.djl.Device;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLDataTypeCode;
import org.jdlpack.abi.DLDevice;
import org.jdlpack.abi.DLDeviceType;
import org.jdlpack.abi.DLPackStats;
import org.jdlpack.abi.ExportOptions;
import org.jdlpack.abi.ExportOwner;
import org.jdlpack.abi.ExportedTensor;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.TensorSpec;
import org.jdlpack.testsupport.ChildJvm;
import org.junit.jupiter.api.Test;

/**
 * Every input libtorch 2.7.1 would answer with a C++ {@code throw} (or take silently wrong), fed
 * to the adapter in a child JVM that must survive: each is refused with a Java exception before
 * any C++ runs, the refused export is still the caller's, and nothing is left behind. Both struct
 * kinds (every versioned one is refused: libtorch 2.7.1 has no versioned entry), and the NDArrays
 * DJL makes that the export refuses.
 */
class DjlBadInputsCrashTest {

    /** Child JVM: one RESULT line per bad input, then a summary. */
    public static void main(String[] args) {
        DjlDLPack dlpack = DjlDLPack.get();
        List<String> lines = new ArrayList<>();
        try (Arena arena = Arena.ofShared(); ExportOwner owner = ExportOwner.of(() -> { });
             NDManager manager = NDManager.newBaseManager(Device.cpu(), "PyTorch")) {
            MemorySegment data = arena.allocate(64, 64);
            for (ManagedTensorKind kind : ManagedTensorKind.values()) {
                ExportOptions options = ExportOptions.of(kind);
                record Bad(String name, Supplier<ExportedTensor> export) {
                }
                List<Bad> bad = new ArrayList<>(List.of(
                        new Bad("lanes 2", () -> owner.export(TensorSpec.of(data, new DLDataType(DLDataTypeCode.FLOAT, 32, 2), 4), options)),
                        new Bad("negative stride", () -> owner.export(
                                TensorSpec.builder(data, DLDataType.FLOAT32, 4).strides(-1).byteOffset(12).build(), options)),
                        new Bad("byte_offset 2 of float32", () -> owner.export(
                                TensorSpec.builder(data, DLDataType.FLOAT32, 4).byteOffset(2).build(), options.withVerbatimByteOffset(true))),
                        new Bad("float8_e4m3fn", () -> owner.export(TensorSpec.of(data, new DLDataType(DLDataTypeCode.FLOAT8_E4M3FN, 8, 1), 4), options)),
                        new Bad("float8_e3m4", () -> owner.export(TensorSpec.of(data, new DLDataType(DLDataTypeCode.FLOAT8_E3M4, 8, 1), 4), options)),
                        new Bad("float4_e2m1fn", () -> owner.export(TensorSpec.of(data, new DLDataType(DLDataTypeCode.FLOAT4_E2M1FN, 4, 1), 4), options)),
                        new Bad("float8_e4m3", () -> owner.export(TensorSpec.of(data, new DLDataType(DLDataTypeCode.FLOAT8_E4M3, 8, 1), 4), options)),
                        new Bad("float8_e5m2", () -> owner.export(TensorSpec.of(data, new DLDataType(DLDataTypeCode.FLOAT8_E5M2, 8, 1), 4), options)),
                        new Bad("CUDA device", () -> owner.export(TensorSpec.builder(data, DLDataType.FLOAT32, 4)
                                .device(DLDevice.of(DLDeviceType.CUDA, 0)).capacity(64).build(), options))));
                if (kind == ManagedTensorKind.VERSIONED) {
                    bad.add(new Bad("READ_ONLY", () -> owner.export(TensorSpec.of(data.asReadOnly(), DLDataType.FLOAT32, 4), options)));
                    bad.add(new Bad("a good float32", () -> owner.export(TensorSpec.of(data, DLDataType.FLOAT32, 4), options)));
                }
                for (Bad b : bad) {
                    ExportedTensor export = b.export().get();
                    try {
                        NDArray a = dlpack.toNDArray(export, manager);
                        lines.add("ACCEPTED " + kind + " " + b.name() + " " + a.getShape());
                    } catch (RuntimeException e) {
                        lines.add("refused " + kind + " " + b.name() + " owned=" + export.isOwned() + ": " + e.getMessage());
                    } finally {
                        if (export.isOwned()) {
                            export.close();
                        }
                    }
                }
            }
            NDArray closed = manager.zeros(new Shape(2));
            closed.close();
            NDArray sparse = manager.createCoo(FloatBuffer.wrap(new float[] {1, 2}), new long[][] {{0, 1}, {1, 0}}, new Shape(2, 2));
            for (NDArray a : List.of(closed, sparse)) {
                try {
                    dlpack.export(a).close();
                    lines.add("ACCEPTED djl " + a.getSparseFormat());
                } catch (RuntimeException e) {
                    lines.add("refused djl: " + e.getMessage());
                }
            }
        }
        lines.forEach(line -> System.out.println("RESULT " + line));
        System.out.println("RESULT survived exports=" + DLPackStats.liveExports() + " owners=" + DLPackStats.liveExportOwners());
    }

    @Test
    void everyBadInputIsRefusedAndTheJvmSurvives() {
        ChildJvm.Outcome outcome = ChildJvm.create().options("-Xmx512m", "-Dai.djl.offline=true",
                        "-DENGINE_CACHE_DIR=" + System.getProperty("ENGINE_CACHE_DIR"), "-DOPT_OUT_TRACKING=true")
                .timeoutSeconds(180).run(DjlBadInputsCrashTest.class);
        assertThat(outcome.exitCode()).as(outcome.output()).isZero();
        assertThat(outcome.output()).as(outcome.output())
                .doesNotContain("ACCEPTED")
                .doesNotContain("owned=false")
                .contains("RESULT survived exports=0 owners=0")
                .contains("refused VERSIONED READ_ONLY owned=true")
                .contains("refused VERSIONED a good float32 owned=true")
                .contains("refused LEGACY lanes 2 owned=true")
                .contains("refused LEGACY negative stride owned=true")
                .contains("refused LEGACY byte_offset 2 of float32 owned=true")
                .contains("refused LEGACY float8_e4m3fn owned=true")
                .contains("refused LEGACY CUDA device owned=true")
                .contains("refused djl: the NDArray is closed")
                .contains("not dense");
        assertThat(outcome.output().lines().filter(line -> line.startsWith("RESULT refused")).count()).isEqualTo(2 * 9 + 2 + 2);
    }
}
