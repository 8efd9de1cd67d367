package org.jdlpack.abi;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.StructLayout;
import java.util.LinkedHashMap;
import java.util.Map;

import org.jdlpack.testsupport.CPeer;
import org.junit.jupiter.api.Test;

/**
 * Every size, alignment, offset and enum value on the Java side against what the C compiler says
 * about the project's own dlpack.h.
 */
class AbiConformanceTest {

    private final Map<String, Long> java = new LinkedHashMap<>();

    private void struct(String name, StructLayout layout, long sizeConstant) {
        // The hand-written constant, the layout and the C compiler must all agree.
        assertThat(layout.byteSize()).as("layout size of " + name).isEqualTo(sizeConstant);
        java.put("sizeof." + name, sizeConstant);
        java.put("alignof." + name, layout.byteAlignment());
    }

    private void field(String struct, StructLayout layout, String field, long offsetConstant) {
        assertThat(layout.byteOffset(PathElement.groupElement(field))).as("layout offset of " + struct + "." + field)
                .isEqualTo(offsetConstant);
        java.put("offsetof." + struct + "." + field, offsetConstant);
    }

    @Test
    void everyLayoutSizeOffsetAndEnumValueMatchesTheCCompiler() {
        struct("DLPackVersion", DLPackVersionLayout.LAYOUT, DLPackVersionLayout.SIZE);
        field("DLPackVersion", DLPackVersionLayout.LAYOUT, "major", DLPackVersionLayout.MAJOR);
        field("DLPackVersion", DLPackVersionLayout.LAYOUT, "minor", DLPackVersionLayout.MINOR);

        struct("DLDevice", DLDeviceLayout.LAYOUT, DLDeviceLayout.SIZE);
        field("DLDevice", DLDeviceLayout.LAYOUT, "device_type", DLDeviceLayout.DEVICE_TYPE);
        field("DLDevice", DLDeviceLayout.LAYOUT, "device_id", DLDeviceLayout.DEVICE_ID);
        java.put("sizeof.DLDeviceType", DLDeviceLayout.LAYOUT.select(PathElement.groupElement("device_type")).byteSize());

        struct("DLDataType", DLDataTypeLayout.LAYOUT, DLDataTypeLayout.SIZE);
        field("DLDataType", DLDataTypeLayout.LAYOUT, "code", DLDataTypeLayout.CODE);
        field("DLDataType", DLDataTypeLayout.LAYOUT, "bits", DLDataTypeLayout.BITS);
        field("DLDataType", DLDataTypeLayout.LAYOUT, "lanes", DLDataTypeLayout.LANES);

        struct("DLTensor", DLTensorLayout.LAYOUT, DLTensorLayout.SIZE);
        field("DLTensor", DLTensorLayout.LAYOUT, "data", DLTensorLayout.DATA);
        field("DLTensor", DLTensorLayout.LAYOUT, "device", DLTensorLayout.DEVICE);
        field("DLTensor", DLTensorLayout.LAYOUT, "ndim", DLTensorLayout.NDIM);
        field("DLTensor", DLTensorLayout.LAYOUT, "dtype", DLTensorLayout.DTYPE);
        field("DLTensor", DLTensorLayout.LAYOUT, "shape", DLTensorLayout.SHAPE);
        field("DLTensor", DLTensorLayout.LAYOUT, "strides", DLTensorLayout.STRIDES);
        field("DLTensor", DLTensorLayout.LAYOUT, "byte_offset", DLTensorLayout.BYTE_OFFSET);

        struct("DLManagedTensor", DLManagedTensorLayout.LAYOUT, DLManagedTensorLayout.SIZE);
        field("DLManagedTensor", DLManagedTensorLayout.LAYOUT, "dl_tensor", DLManagedTensorLayout.DL_TENSOR);
        field("DLManagedTensor", DLManagedTensorLayout.LAYOUT, "manager_ctx", DLManagedTensorLayout.MANAGER_CTX);
        field("DLManagedTensor", DLManagedTensorLayout.LAYOUT, "deleter", DLManagedTensorLayout.DELETER);

        struct("DLManagedTensorVersioned", DLManagedTensorVersionedLayout.LAYOUT, DLManagedTensorVersionedLayout.SIZE);
        field("DLManagedTensorVersioned", DLManagedTensorVersionedLayout.LAYOUT, "version", DLManagedTensorVersionedLayout.VERSION);
        field("DLManagedTensorVersioned", DLManagedTensorVersionedLayout.LAYOUT, "manager_ctx", DLManagedTensorVersionedLayout.MANAGER_CTX);
        field("DLManagedTensorVersioned", DLManagedTensorVersionedLayout.LAYOUT, "deleter", DLManagedTensorVersionedLayout.DELETER);
        field("DLManagedTensorVersioned", DLManagedTensorVersionedLayout.LAYOUT, "flags", DLManagedTensorVersionedLayout.FLAGS);
        field("DLManagedTensorVersioned", DLManagedTensorVersionedLayout.LAYOUT, "dl_tensor", DLManagedTensorVersionedLayout.DL_TENSOR);

        java.put("enum.DLPACK_MAJOR_VERSION", DLPackVersion.CURRENT.major());
        java.put("enum.DLPACK_MINOR_VERSION", DLPackVersion.CURRENT.minor());
        java.put("enum.DLPACK_FLAG_BITMASK_READ_ONLY", DLTensorFlag.READ_ONLY.mask());
        java.put("enum.DLPACK_FLAG_BITMASK_IS_COPIED", DLTensorFlag.IS_COPIED.mask());
        java.put("enum.DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED", DLTensorFlag.IS_SUBBYTE_TYPE_PADDED.mask());
        for (DLDeviceType type : DLDeviceType.values()) {
            java.put("enum." + cDeviceName(type), (long) type.code());
        }
        for (DLDataTypeCode code : DLDataTypeCode.values()) {
            java.put("enum." + cTypeCodeName(code), (long) code.code());
        }

        Map<String, Long> c = new LinkedHashMap<>(CPeer.probeAbi());
        // The exchange API tables are dlpack-python's: its ExchangeApiLayoutTest checks them.
        c.keySet().removeIf(name -> name.contains("DLPackExchangeAPI"));

        assertThat(java.keySet()).as("names the C probe printed").containsExactlyInAnyOrderElementsOf(c.keySet());
        for (var entry : java.entrySet()) {
            assertThat(entry.getValue()).as(entry.getKey()).isEqualTo(c.get(entry.getKey()));
        }
        assertThat(java).as("compared values").hasSizeGreaterThanOrEqualTo(35);
        System.out.println("ABI conformance: " + java.size() + " sizes, alignments, offsets and enum values match the C compiler");
    }

    private static String cDeviceName(DLDeviceType type) {
        return switch (type) {
            case CPU -> "kDLCPU";
            case CUDA -> "kDLCUDA";
            case CUDA_HOST -> "kDLCUDAHost";
            case OPENCL -> "kDLOpenCL";
            case VULKAN -> "kDLVulkan";
            case METAL -> "kDLMetal";
            case VPI -> "kDLVPI";
            case ROCM -> "kDLROCM";
            case ROCM_HOST -> "kDLROCMHost";
            case EXT_DEV -> "kDLExtDev";
            case CUDA_MANAGED -> "kDLCUDAManaged";
            case ONE_API -> "kDLOneAPI";
            case WEBGPU -> "kDLWebGPU";
            case HEXAGON -> "kDLHexagon";
            case MAIA -> "kDLMAIA";
            case TRN -> "kDLTrn";
        };
    }

    private static String cTypeCodeName(DLDataTypeCode code) {
        return switch (code) {
            case INT -> "kDLInt";
            case UINT -> "kDLUInt";
            case FLOAT -> "kDLFloat";
            case OPAQUE_HANDLE -> "kDLOpaqueHandle";
            case BFLOAT -> "kDLBfloat";
            case COMPLEX -> "kDLComplex";
            case BOOL -> "kDLBool";
            case FLOAT8_E3M4 -> "kDLFloat8_e3m4";
            case FLOAT8_E4M3 -> "kDLFloat8_e4m3";
            case FLOAT8_E4M3B11FNUZ -> "kDLFloat8_e4m3b11fnuz";
            case FLOAT8_E4M3FN -> "kDLFloat8_e4m3fn";
            case FLOAT8_E4M3FNUZ -> "kDLFloat8_e4m3fnuz";
            case FLOAT8_E5M2 -> "kDLFloat8_e5m2";
            case FLOAT8_E5M2FNUZ -> "kDLFloat8_e5m2fnuz";
            case FLOAT8_E8M0FNU -> "kDLFloat8_e8m0fnu";
            case FLOAT6_E2M3FN -> "kDLFloat6_e2m3fn";
            case FLOAT6_E3M2FN -> "kDLFloat6_e3m2fn";
            case FLOAT4_E2M1FN -> "kDLFloat4_e2m1fn";
        };
    }
}
