package org.jdlpack.opencl;

import static java.lang.foreign.ValueLayout.ADDRESS;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * Discovers OpenCL devices and gives each its DLPack {@code device_id}.
 *
 * <p>The default numbering: platforms in {@code clGetPlatformIDs} order, devices of each platform
 * in {@code clGetDeviceIDs(CL_DEVICE_TYPE_ALL)} order, numbered from 0. {@link #renumber(List)}
 * applies an explicit order instead.
 *
 * <p>Thread safety: all methods may be called from any thread.
 *
 * @since 0.1
 */
public final class OpenCLDevices {

    /** {@code CL_DEVICE_NOT_FOUND}: what {@code clGetDeviceIDs} says for a platform without devices. */
    private static final int DEVICE_NOT_FOUND = -1;

    private OpenCLDevices() {
    }

    /**
     * Every device of every platform, in the default numbering.
     *
     * @return the devices, possibly empty
     * @throws OpenCLException if no OpenCL ICD loader is installed, or a query fails
     */
    public static List<OpenCLDevice> discover() {
        int platformCount;
        try {
            platformCount = CLPlatforms.getPlatformIDs(0, MemorySegment.NULL);
        } catch (OpenCLException e) {
            if (e.errorCode() == CL.PLATFORM_NOT_FOUND_KHR) {
                return List.of(); // an ICD loader without any platform
            }
            throw e;
        }
        List<OpenCLDevice> devices = new ArrayList<>();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment platforms = arena.allocate(ADDRESS, Math.max(platformCount, 1));
            CLPlatforms.getPlatformIDs(platformCount, platforms);
            for (int p = 0; p < platformCount; p++) {
                MemorySegment platform = platforms.getAtIndex(ADDRESS, p);
                String platformName = info(CLPlatforms::getPlatformInfo, platform, CL.PLATFORM_NAME);
                int deviceCount;
                try {
                    deviceCount = CLPlatforms.getDeviceIDs(platform, CL.DEVICE_TYPE_ALL, 0, MemorySegment.NULL);
                } catch (OpenCLException e) {
                    if (e.errorCode() == DEVICE_NOT_FOUND) {
                        continue; // a platform without devices
                    }
                    throw e;
                }
                MemorySegment ids = arena.allocate(ADDRESS, Math.max(deviceCount, 1));
                CLPlatforms.getDeviceIDs(platform, CL.DEVICE_TYPE_ALL, deviceCount, ids);
                for (int d = 0; d < deviceCount; d++) {
                    MemorySegment device = ids.getAtIndex(ADDRESS, d);
                    devices.add(new OpenCLDevice(devices.size(), platformName, info(CLPlatforms::getDeviceInfo, device, CL.DEVICE_NAME),
                            info(CLPlatforms::getDeviceInfo, device, CL.DEVICE_VERSION), platform, device));
                }
            }
        }
        return List.copyOf(devices);
    }

    /**
     * Numbers devices in the caller's order instead of the default one: element {@code i} gets
     * {@code device_id} {@code i}.
     *
     * @param order the devices, typically chosen from {@link #discover()}
     * @return the same devices with their ids replaced
     */
    public static List<OpenCLDevice> renumber(List<OpenCLDevice> order) {
        List<OpenCLDevice> renumbered = new ArrayList<>();
        for (OpenCLDevice device : order) {
            renumbered.add(new OpenCLDevice(renumbered.size(), device.platformName(), device.name(), device.version(),
                    device.platform(), device.device()));
        }
        return List.copyOf(renumbered);
    }

    /**
     * The device with a DLPack {@code device_id} in the default numbering.
     *
     * @param deviceId the id
     * @return the device
     * @throws OpenCLException if there is no such device, saying which exist
     */
    public static OpenCLDevice byId(int deviceId) {
        List<OpenCLDevice> devices = discover();
        if (deviceId < 0 || deviceId >= devices.size()) {
            throw new OpenCLException("no OpenCL device " + deviceId + "; found " + devices.size()
                    + (devices.isEmpty() ? " (no OpenCL platform is installed; for a CPU one install pocl-opencl-icd)" : ": " + devices));
        }
        return devices.get(deviceId);
    }

    /** A {@code clGet*Info} call of the call layer: writes into {@code value} (NULL for the size), returns the size. */
    private interface InfoQuery {
        long get(MemorySegment handle, int parameter, MemorySegment value);
    }

    /** A string property of a platform or device. */
    private static String info(InfoQuery query, MemorySegment handle, int parameter) {
        long size = query.get(handle, parameter, MemorySegment.NULL);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment text = arena.allocate(size + 1);
            query.get(handle, parameter, text);
            return text.getString(0).strip();
        }
    }
}
