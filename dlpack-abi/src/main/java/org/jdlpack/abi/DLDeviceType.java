package org.jdlpack.abi;

import java.util.Optional;

/**
 * The device types of the DLPack header ({@code DLDeviceType}), with their C enum values: those
 * of DLPack 1.3, and {@code kDLTPU}, {@code kDLTPUHost} and {@code kDLAscend}, which dlpack's main
 * added after v1.3 without raising the minor version.
 *
 * <p>A {@link DLDevice} keeps the raw code, so a device type added by a newer DLPack is carried
 * through unchanged rather than rejected; {@link #of(int)} tells whether a code is one of these.
 *
 * @since 0.1
 */
public enum DLDeviceType {
    /** {@code kDLCPU}: ordinary host memory. */
    CPU(1, true, true),
    /** {@code kDLCUDA}: CUDA device memory. */
    CUDA(2, false, true),
    /** {@code kDLCUDAHost}: page-locked host memory allocated with cudaMallocHost. */
    CUDA_HOST(3, true, true),
    /** {@code kDLOpenCL}: an OpenCL buffer; {@code data} is a {@code cl_mem} handle. */
    OPENCL(4, false, false),
    /** {@code kDLVulkan}: Vulkan buffer. */
    VULKAN(7, false, false),
    /** {@code kDLMetal}: Metal buffer. */
    METAL(8, false, false),
    /** {@code kDLVPI}: Verilog simulator buffer. */
    VPI(9, false, false),
    /** {@code kDLROCM}: ROCm GPU memory. */
    ROCM(10, false, true),
    /** {@code kDLROCMHost}: page-locked host memory allocated by ROCm. */
    ROCM_HOST(11, true, true),
    /** {@code kDLExtDev}: a device defined by an extension, not by DLPack. */
    EXT_DEV(12, false, false),
    /** {@code kDLCUDAManaged}: CUDA managed (unified) memory, addressable by host and device. */
    CUDA_MANAGED(13, true, true),
    /** {@code kDLOneAPI}: oneAPI unified shared memory. */
    ONE_API(14, false, true),
    /** {@code kDLWebGPU}: WebGPU buffer. */
    WEBGPU(15, false, false),
    /** {@code kDLHexagon}: Qualcomm Hexagon DSP memory. */
    HEXAGON(16, false, false),
    /** {@code kDLMAIA}: Microsoft MAIA device memory. */
    MAIA(17, false, false),
    /** {@code kDLTrn}: AWS Trainium device memory. */
    TRN(18, false, false),
    /** {@code kDLTPU}: Google TPU device memory. Added on dlpack's main after v1.3. */
    TPU(19, false, false),
    /**
     * {@code kDLTPUHost}: pinned host memory of the TPU runtime, as {@link #CUDA_HOST} is of CUDA's.
     * Added on dlpack's main after v1.3.
     */
    TPU_HOST(20, true, true),
    /** {@code kDLAscend}: Huawei Ascend NPU device memory. Added on dlpack's main after v1.3. */
    ASCEND(21, false, false);

    private static final DLDeviceType[] BY_CODE = byCode();

    private static DLDeviceType[] byCode() {
        DLDeviceType[] values = values();
        DLDeviceType[] byCode = new DLDeviceType[values[values.length - 1].code + 1]; // the constants are in code order
        for (DLDeviceType type : values) {
            byCode[type.code] = type;
        }
        return byCode;
    }

    private final int code;
    private final boolean hostAccessible;
    /** Whether {@code data} is an address that {@code byte_offset} can be added to (not a handle such as a cl_mem). */
    private final boolean dataIsPointer;

    DLDeviceType(int code, boolean hostAccessible, boolean dataIsPointer) {
        this.code = code;
        this.hostAccessible = hostAccessible;
        this.dataIsPointer = dataIsPointer;
    }

    /** {@return the C enum value of this constant in {@code DLDeviceType}} */
    public int code() {
        return code;
    }

    /**
     * {@return whether the CPU can dereference {@code data + byte_offset} of a tensor on this
     * device type directly: {@code true} for CPU, CUDA host, ROCm host, CUDA managed and TPU host
     * memory} For all other device types the data pointer is an address or handle the CPU must not
     * read.
     */
    public boolean isHostAccessible() {
        return hostAccessible;
    }

    /** {@link #isHostAccessible()} of the device type with this C value; false for an unknown one. */
    static boolean isHostAccessible(int code) {
        return code >= 0 && code < BY_CODE.length && BY_CODE[code] != null && BY_CODE[code].hostAccessible;
    }

    /**
     * Whether {@code data} on the device type with this C value is a pointer that {@code byte_offset} can be folded
     * into: device and host addresses (CPU, CUDA and its host and managed memory, ROCm and its host
     * memory, oneAPI unified shared memory, TPU host memory), not handles (an OpenCL {@code cl_mem},
     * Vulkan, Metal, WebGPU buffers) nor memory whose {@code data} this library cannot interpret
     * (Hexagon, MAIA, Trainium, TPU and Ascend device memory: their {@code byte_offset} is kept).
     */
    static boolean dataIsPointer(int code) {
        // The array, not of(code): this runs on every export and must allocate nothing.
        return code >= 0 && code < BY_CODE.length && BY_CODE[code] != null && BY_CODE[code].dataIsPointer;
    }

    /**
     * Looks up the constant for a C enum value.
     *
     * @param code a {@code DLDeviceType} value
     * @return the constant, or empty when the header these constants follow defines no device type
     *         with that value (a {@link DLDevice} carries such a code through unchanged)
     */
    public static Optional<DLDeviceType> of(int code) {
        return code >= 0 && code < BY_CODE.length ? Optional.ofNullable(BY_CODE[code]) : Optional.empty();
    }
}
