package org.jdlpack.abi;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemoryLayout.PathElement;
import java.util.LinkedHashMap;
import java.util.Map;

import org.jdlpack.abi.testing.LayoutFacts;
import org.jdlpack.testsupport.CPeer;
import org.junit.jupiter.api.Test;

/**
 * Every size, alignment, offset and enum value on the Java side against what the C compiler says
 * about the project's own dlpack.h.
 */
class AbiConformanceTest {

    private final LayoutFacts javaSide = new LayoutFacts();

    @Test
    void everyLayoutSizeOffsetAndEnumValueMatchesTheCCompiler() {
        javaSide.struct("DLPackVersion", DLPackVersionLayout.LAYOUT, DLPackVersionLayout.SIZE);
        javaSide.field("DLPackVersion", DLPackVersionLayout.LAYOUT, "major", DLPackVersionLayout.MAJOR);
        javaSide.field("DLPackVersion", DLPackVersionLayout.LAYOUT, "minor", DLPackVersionLayout.MINOR);

        javaSide.struct("DLDevice", DLDeviceLayout.LAYOUT, DLDeviceLayout.SIZE);
        javaSide.field("DLDevice", DLDeviceLayout.LAYOUT, "device_type", DLDeviceLayout.DEVICE_TYPE);
        javaSide.field("DLDevice", DLDeviceLayout.LAYOUT, "device_id", DLDeviceLayout.DEVICE_ID);
        javaSide.put("sizeof.DLDeviceType", DLDeviceLayout.LAYOUT.select(PathElement.groupElement("device_type")).byteSize());

        javaSide.struct("DLDataType", DLDataTypeLayout.LAYOUT, DLDataTypeLayout.SIZE);
        javaSide.field("DLDataType", DLDataTypeLayout.LAYOUT, "code", DLDataTypeLayout.CODE);
        javaSide.field("DLDataType", DLDataTypeLayout.LAYOUT, "bits", DLDataTypeLayout.BITS);
        javaSide.field("DLDataType", DLDataTypeLayout.LAYOUT, "lanes", DLDataTypeLayout.LANES);

        javaSide.struct("DLTensor", DLTensorLayout.LAYOUT, DLTensorLayout.SIZE);
        javaSide.field("DLTensor", DLTensorLayout.LAYOUT, "data", DLTensorLayout.DATA);
        javaSide.field("DLTensor", DLTensorLayout.LAYOUT, "device", DLTensorLayout.DEVICE);
        javaSide.field("DLTensor", DLTensorLayout.LAYOUT, "ndim", DLTensorLayout.NDIM);
        javaSide.field("DLTensor", DLTensorLayout.LAYOUT, "dtype", DLTensorLayout.DTYPE);
        javaSide.field("DLTensor", DLTensorLayout.LAYOUT, "shape", DLTensorLayout.SHAPE);
        javaSide.field("DLTensor", DLTensorLayout.LAYOUT, "strides", DLTensorLayout.STRIDES);
        javaSide.field("DLTensor", DLTensorLayout.LAYOUT, "byte_offset", DLTensorLayout.BYTE_OFFSET);

        javaSide.struct("DLManagedTensor", DLManagedTensorLayout.LAYOUT, DLManagedTensorLayout.SIZE);
        javaSide.field("DLManagedTensor", DLManagedTensorLayout.LAYOUT, "dl_tensor", DLManagedTensorLayout.DL_TENSOR);
        javaSide.field("DLManagedTensor", DLManagedTensorLayout.LAYOUT, "manager_ctx", DLManagedTensorLayout.MANAGER_CTX);
        javaSide.field("DLManagedTensor", DLManagedTensorLayout.LAYOUT, "deleter", DLManagedTensorLayout.DELETER);

        javaSide.struct("DLManagedTensorVersioned", DLManagedTensorVersionedLayout.LAYOUT, DLManagedTensorVersionedLayout.SIZE);
        javaSide.field("DLManagedTensorVersioned", DLManagedTensorVersionedLayout.LAYOUT, "version", DLManagedTensorVersionedLayout.VERSION);
        javaSide.field("DLManagedTensorVersioned", DLManagedTensorVersionedLayout.LAYOUT, "manager_ctx", DLManagedTensorVersionedLayout.MANAGER_CTX);
        javaSide.field("DLManagedTensorVersioned", DLManagedTensorVersionedLayout.LAYOUT, "deleter", DLManagedTensorVersionedLayout.DELETER);
        javaSide.field("DLManagedTensorVersioned", DLManagedTensorVersionedLayout.LAYOUT, "flags", DLManagedTensorVersionedLayout.FLAGS);
        javaSide.field("DLManagedTensorVersioned", DLManagedTensorVersionedLayout.LAYOUT, "dl_tensor", DLManagedTensorVersionedLayout.DL_TENSOR);

        javaSide.put("enum.DLPACK_MAJOR_VERSION", DLPackVersion.CURRENT.major());
        javaSide.put("enum.DLPACK_MINOR_VERSION", DLPackVersion.CURRENT.minor());
        javaSide.put("enum.DLPACK_FLAG_BITMASK_READ_ONLY", DLTensorFlag.READ_ONLY.mask());
        javaSide.put("enum.DLPACK_FLAG_BITMASK_IS_COPIED", DLTensorFlag.IS_COPIED.mask());
        javaSide.put("enum.DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED", DLTensorFlag.IS_SUBBYTE_TYPE_PADDED.mask());
        for (DLDeviceType type : DLDeviceType.values()) {
            javaSide.put("enum." + cDeviceName(type), (long) type.code());
        }
        for (DLDataTypeCode code : DLDataTypeCode.values()) {
            javaSide.put("enum." + cTypeCodeName(code), (long) code.code());
        }

        Map<String, Long> c = new LinkedHashMap<>(CPeer.probeAbi());
        // The exchange API tables are dlpack-python's: its ExchangeApiLayoutTest checks them.
        c.keySet().removeIf(name -> name.contains("DLPackExchangeAPI"));

        int compared = javaSide.assertSameAs(c);
        assertThat(compared).as("compared values").isGreaterThanOrEqualTo(35);
        System.out.println("ABI conformance: " + compared + " sizes, alignments, offsets and enum values match the C compiler");
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
            case TPU -> "kDLTPU";
            case TPU_HOST -> "kDLTPUHost";
            case ASCEND -> "kDLAscend";
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
            case BCOMPLEX -> "kDLBcomplex";
        };
    }
}
