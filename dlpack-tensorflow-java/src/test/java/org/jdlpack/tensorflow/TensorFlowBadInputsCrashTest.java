package org.jdlpack.tensorflow;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLDataTypeCode;
import org.jdlpack.abi.DLDevice;
import org.jdlpack.abi.DLDeviceType;
import org.jdlpack.abi.DLPackStats;
import org.jdlpack.abi.ExportOptions;
import org.jdlpack.abi.ExportOwner;
import org.jdlpack.abi.ExportedTensor;
import org.jdlpack.abi.TensorSpec;
import org.jdlpack.testsupport.ChildJvm;
import org.junit.jupiter.api.Test;
import org.tensorflow.Graph;
import org.tensorflow.Session;
import org.tensorflow.op.Ops;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TString;
import org.tensorflow.types.family.TType;

/**
 * Every input TensorFlow 2.18 refuses, reads wrongly or aborts on, fed to the adapter in a child
 * JVM that must survive: each is refused with a Java exception before TensorFlow sees it, the
 * refused export is still the caller's, and nothing is left behind. What TensorFlow itself does
 * with them was found by handing each to {@code TFE_HandleFromDLPack} directly: a status for
 * {@code byte_offset}, strides and float8; lanes 2, int8 and complex64 accepted (lanes read as
 * scalars); CPU device 1 accepted; data aligned to 32 but not 64 bytes accepted, and the first
 * Session run over it ended the process ({@code Check failed: IsAligned()}). The child ends with
 * such a run over an accepted tensor, so that the survivor also computes.
 */
class TensorFlowBadInputsCrashTest {

    /** Child JVM: one RESULT line per bad input, then a summary. */
    public static void main(String[] args) {
        TensorFlowDLPack dlpack = TensorFlowDLPack.get();
        List<String> lines = new ArrayList<>();
        try (Arena arena = Arena.ofShared(); ExportOwner owner = ExportOwner.of(() -> { })) {
            MemorySegment data = arena.allocate(256, 256);
            ExportOptions legacy = ExportOptions.LEGACY;
            record Bad(String name, Supplier<ExportedTensor> export) {
            }
            List<Bad> bad = List.of(
                    new Bad("lanes 2", () -> owner.export(TensorSpec.of(data, new DLDataType(DLDataTypeCode.FLOAT, 32, 2), 4), legacy)),
                    new Bad("negative stride", () -> owner.export(
                            TensorSpec.builder(data, DLDataType.FLOAT32, 4).strides(-1).byteOffset(12).build(), legacy)),
                    new Bad("transposed", () -> owner.export(TensorSpec.builder(data, DLDataType.FLOAT32, 4, 3).strides(1, 4).build(), legacy)),
                    new Bad("byte_offset 64", () -> owner.export(
                            TensorSpec.builder(data, DLDataType.FLOAT32, 4).byteOffset(64).build(), legacy.withVerbatimByteOffset(true))),
                    new Bad("float8_e4m3fn", () -> owner.export(TensorSpec.of(data, new DLDataType(DLDataTypeCode.FLOAT8_E4M3FN, 8, 1), 4), legacy)),
                    new Bad("float4_e2m1fn", () -> owner.export(TensorSpec.of(data, new DLDataType(DLDataTypeCode.FLOAT4_E2M1FN, 4, 1), 4), legacy)),
                    new Bad("int8", () -> owner.export(TensorSpec.of(data, DLDataType.INT8, 4), legacy)),
                    new Bad("complex64", () -> owner.export(TensorSpec.of(data, DLDataType.COMPLEX64, 4), legacy)),
                    new Bad("CUDA device", () -> owner.export(TensorSpec.builder(data, DLDataType.FLOAT32, 4)
                            .device(DLDevice.of(DLDeviceType.CUDA, 0)).capacity(64).build(), legacy)),
                    new Bad("CPU device 1", () -> owner.export(TensorSpec.builder(data, DLDataType.FLOAT32, 4)
                            .device(DLDevice.of(DLDeviceType.CPU, 1)).build(), legacy)),
                    new Bad("aligned to 32", () -> owner.export(TensorSpec.of(data.asSlice(32), DLDataType.FLOAT32, 4), legacy)),
                    new Bad("aligned to 4", () -> owner.export(TensorSpec.of(data.asSlice(4), DLDataType.FLOAT32, 4), legacy)),
                    new Bad("versioned", () -> owner.export(TensorSpec.of(data, DLDataType.FLOAT32, 4), ExportOptions.VERSIONED)),
                    new Bad("READ_ONLY", () -> owner.export(TensorSpec.of(data.asReadOnly(), DLDataType.FLOAT32, 4), ExportOptions.VERSIONED)));
            for (Bad b : bad) {
                ExportedTensor export = b.export().get();
                try {
                    TType t = dlpack.toTensor(export);
                    lines.add("ACCEPTED " + b.name() + " " + t.shape());
                } catch (RuntimeException e) {
                    lines.add("refused " + b.name() + " owned=" + export.isOwned() + ": " + e.getMessage());
                } finally {
                    if (export.isOwned()) {
                        export.close();
                    }
                }
            }
        }
        TFloat32 closed = TFloat32.scalarOf(1f);
        closed.close();
        try (TString strings = TString.scalarOf("x")) {
            for (var t : List.of(strings, closed)) {
                try {
                    dlpack.export(t).close();
                    lines.add("ACCEPTED tensorflow " + t.dataType());
                } catch (RuntimeException e) {
                    lines.add("refused tensorflow: " + e.getMessage());
                }
            }
        }
        // The survivor computes: a Session run over memory handed to TensorFlow.
        try (var owned = org.jdlpack.cpu.OwnedHostTensor.copyOf(new float[] {1, 2, 3}, 3);
             TFloat32 x = (TFloat32) dlpack.toTensor(owned.export(ExportOptions.LEGACY));
             Graph g = new Graph(); Session session = new Session(g)) {
            Ops tf = Ops.create(g);
            var input = tf.placeholder(TFloat32.class);
            var square = tf.math.square(input);
            try (var result = session.runner().feed(input, x).fetch(square).run()) {
                lines.add("computed " + ((TFloat32) result.get(0)).getFloat(2));
            }
        }
        lines.forEach(line -> System.out.println("RESULT " + line));
        System.out.println("RESULT survived exports=" + DLPackStats.liveExports() + " owners=" + DLPackStats.liveExportOwners());
    }

    @Test
    void everyBadInputIsRefusedAndTheJvmSurvives() {
        ChildJvm.Outcome outcome = ChildJvm.create().options("-Xmx512m").timeoutSeconds(180).run(TensorFlowBadInputsCrashTest.class);
        assertThat(outcome.exitCode()).as(outcome.output()).isZero();
        assertThat(outcome.output()).as(outcome.output())
                .doesNotContain("ACCEPTED")
                .doesNotContain("owned=false")
                .contains("RESULT computed 9.0")
                .contains("RESULT survived exports=0 owners=0")
                .contains("refused READ_ONLY owned=true")
                .contains("refused lanes 2 owned=true")
                .contains("refused negative stride owned=true")
                .contains("refused byte_offset 64 owned=true")
                .contains("refused aligned to 32 owned=true")
                .contains("refused CUDA device owned=true")
                .contains("refused CPU device 1 owned=true")
                .contains("refused tensorflow: the Tensor's type DT_STRING");
        assertThat(outcome.output().lines().filter(line -> line.startsWith("RESULT refused")).count()).isEqualTo(14 + 2);
    }
}
