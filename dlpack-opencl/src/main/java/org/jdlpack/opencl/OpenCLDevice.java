package org.jdlpack.opencl;

import java.lang.foreign.MemorySegment;

import org.jdlpack.abi.DLDevice;
import org.jdlpack.abi.DLDeviceType;

/**
 * One OpenCL device and the DLPack {@code device_id} it is known by.
 *
 * <p>OpenCL has no standard device numbering. jdlpack numbers devices in the order
 * {@code clGetPlatformIDs} lists platforms and, within a platform, the order
 * {@code clGetDeviceIDs(CL_DEVICE_TYPE_ALL)} lists devices, starting at 0; see
 * {@link OpenCLDevices}. A producer and a consumer must agree on the numbering, so an application
 * that exchanges OpenCL tensors with another library should pass the same explicit list to both
 * when their orders could differ.
 *
 * @param deviceId     the DLPack {@code device_id}
 * @param platformName the platform's {@code CL_PLATFORM_NAME}
 * @param name         the device's {@code CL_DEVICE_NAME}
 * @param version      the device's {@code CL_DEVICE_VERSION}
 * @param platform     the {@code cl_platform_id}
 * @param device       the {@code cl_device_id}
 *
 * @since 0.1
 */
public record OpenCLDevice(int deviceId, String platformName, String name, String version, MemorySegment platform,
                           MemorySegment device) {

    /** {@return the DLPack device: {@code kDLOpenCL} and this device's id} */
    public DLDevice dlDevice() {
        return DLDevice.of(DLDeviceType.OPENCL, deviceId);
    }

    @Override
    public String toString() {
        return "OpenCL device " + deviceId + ": " + name + " (" + version + ", platform " + platformName + ")";
    }
}
