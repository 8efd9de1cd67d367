package org.jdlpack.opencl;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
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
 */
public final class OpenCLDevices {

    private OpenCLDevices() {
    }

    /**
     * Every device of every platform, in the default numbering.
     *
     * @return the devices, possibly empty
     * @throws OpenCLException if no OpenCL ICD loader is installed, or a query fails
     */
    public static List<OpenCLDevice> discover() {
        CL.requireLibrary();
        List<OpenCLDevice> devices = new ArrayList<>();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment count = arena.allocate(JAVA_INT);
            int rc = (int) CL.GET_PLATFORM_IDS.invokeExact(0, MemorySegment.NULL, count);
            if (rc == CL.PLATFORM_NOT_FOUND_KHR) {
                return List.of();
            }
            CL.check(rc, "clGetPlatformIDs");
            int platformCount = count.get(JAVA_INT, 0);
            MemorySegment platforms = arena.allocate(ADDRESS, Math.max(platformCount, 1));
            CL.check((int) CL.GET_PLATFORM_IDS.invokeExact(platformCount, platforms, count), "clGetPlatformIDs");
            for (int p = 0; p < platformCount; p++) {
                MemorySegment platform = platforms.getAtIndex(ADDRESS, p);
                String platformName = info(CL.GET_PLATFORM_INFO, platform, CL.PLATFORM_NAME, "clGetPlatformInfo");
                rc = (int) CL.GET_DEVICE_IDS.invokeExact(platform, CL.DEVICE_TYPE_ALL, 0, MemorySegment.NULL, count);
                if (rc == -1) { // CL_DEVICE_NOT_FOUND: a platform without devices
                    continue;
                }
                CL.check(rc, "clGetDeviceIDs");
                int deviceCount = count.get(JAVA_INT, 0);
                MemorySegment ids = arena.allocate(ADDRESS, Math.max(deviceCount, 1));
                CL.check((int) CL.GET_DEVICE_IDS.invokeExact(platform, CL.DEVICE_TYPE_ALL, deviceCount, ids, count), "clGetDeviceIDs");
                for (int d = 0; d < deviceCount; d++) {
                    MemorySegment device = ids.getAtIndex(ADDRESS, d);
                    devices.add(new OpenCLDevice(devices.size(), platformName,
                            info(CL.GET_DEVICE_INFO, device, CL.DEVICE_NAME, "clGetDeviceInfo"),
                            info(CL.GET_DEVICE_INFO, device, CL.DEVICE_VERSION, "clGetDeviceInfo"), platform, device));
                }
            }
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
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

    private static String info(MethodHandle query, MemorySegment handle, int parameter, String call) throws Throwable {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment size = arena.allocate(java.lang.foreign.ValueLayout.JAVA_LONG);
            CL.check((int) query.invokeExact(handle, parameter, 0L, MemorySegment.NULL, size), call);
            MemorySegment text = arena.allocate(size.get(java.lang.foreign.ValueLayout.JAVA_LONG, 0) + 1);
            CL.check((int) query.invokeExact(handle, parameter, text.byteSize(), text, MemorySegment.NULL), call);
            return CL.string(text).strip();
        }
    }
}
