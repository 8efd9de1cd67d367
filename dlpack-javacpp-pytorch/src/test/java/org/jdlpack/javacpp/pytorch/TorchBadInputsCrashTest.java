package org.jdlpack.javacpp.pytorch;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;
import org.bytedeco.pytorch.global.torch.ScalarType;
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
 * Every input libtorch 2.10 answers with a C++ {@code throw} (found by feeding each to
 * {@code at::fromDLPack} in a child process: {@code terminate called after throwing}, exit 134), fed
 * to the adapter in a child JVM that must survive: each is refused with a Java exception before any
 * C++ runs, the refused export is still the caller's, and nothing is left behind. Both struct kinds.
 */
class TorchBadInputsCrashTest {

    /** Child JVM: one RESULT line per bad input, then a summary. */
    public static void main(String[] args) {
        TorchDLPack dlpack = TorchDLPack.get();
        List<String> lines = new ArrayList<>();
        try (Arena arena = Arena.ofShared(); ExportOwner owner = ExportOwner.of(() -> { })) {
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
                        new Bad("float8_e3m4", () -> owner.export(TensorSpec.of(data, new DLDataType(DLDataTypeCode.FLOAT8_E3M4, 8, 1), 4), options)),
                        new Bad("float4_e2m1fn", () -> owner.export(TensorSpec.of(data, new DLDataType(DLDataTypeCode.FLOAT4_E2M1FN, 4, 1), 4), options)),
                        new Bad("float 8 bits", () -> owner.export(TensorSpec.of(data, new DLDataType(DLDataTypeCode.FLOAT8_E4M3, 8, 1), 4), options)),
                        new Bad("CUDA device", () -> owner.export(TensorSpec.builder(data, DLDataType.FLOAT32, 4)
                                .device(DLDevice.of(DLDeviceType.CUDA, 0)).capacity(64).build(), options))));
                if (kind == ManagedTensorKind.VERSIONED) {
                    bad.add(new Bad("READ_ONLY", () -> owner.export(TensorSpec.of(data.asReadOnly(), DLDataType.FLOAT32, 4), options)));
                }
                for (Bad b : bad) {
                    ExportedTensor export = b.export().get();
                    try {
                        Tensor t = dlpack.toTensor(export);
                        lines.add("ACCEPTED " + kind + " " + b.name() + " " + t.sizes());
                    } catch (RuntimeException e) {
                        lines.add("refused " + kind + " " + b.name() + " owned=" + export.isOwned() + ": " + e.getMessage());
                    } finally {
                        if (export.isOwned()) {
                            export.close();
                        }
                    }
                }
            }
            try (Tensor undefined = new Tensor(); Tensor sparse = torch.eye(3).to_sparse();
                 Tensor quantized = torch.quantize_per_tensor(torch.ones(3), 0.1, 10, ScalarType.QInt8)) {
                for (Tensor t : List.of(undefined, sparse, quantized)) {
                    try {
                        dlpack.export(t).close();
                        lines.add("ACCEPTED torch " + t);
                    } catch (RuntimeException e) {
                        lines.add("refused torch: " + e.getMessage());
                    }
                }
            }
        }
        lines.forEach(line -> System.out.println("RESULT " + line));
        System.out.println("RESULT survived exports=" + DLPackStats.liveExports() + " owners=" + DLPackStats.liveExportOwners());
    }

    @Test
    void everyBadInputIsRefusedAndTheJvmSurvives() {
        ChildJvm.Outcome outcome = ChildJvm.create().options("-Xmx512m").timeoutSeconds(180).run(TorchBadInputsCrashTest.class);
        assertThat(outcome.exitCode()).as(outcome.output()).isZero();
        assertThat(outcome.output()).as(outcome.output())
                .doesNotContain("ACCEPTED")
                .doesNotContain("owned=false")
                .contains("RESULT survived exports=0 owners=0")
                .contains("refused VERSIONED READ_ONLY owned=true")
                .contains("refused LEGACY lanes 2 owned=true")
                .contains("refused LEGACY negative stride owned=true")
                .contains("refused VERSIONED byte_offset 2 of float32 owned=true")
                .contains("refused VERSIONED CUDA device owned=true")
                .contains("refused torch: the Tensor is undefined")
                .contains("not strided");
        assertThat(outcome.output().lines().filter(line -> line.startsWith("RESULT refused")).count()).isEqualTo(2 * 7 + 1 + 3);
    }
}
