package org.jdlpack.opencl;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/** The libOpenCL functions that discover platforms and devices; see {@link CL} for the call layer. */
final class CLPlatforms {

    private static final MethodHandle GET_PLATFORM_IDS = CL.bind("clGetPlatformIDs", JAVA_INT, JAVA_INT, ADDRESS, ADDRESS);
    private static final MethodHandle GET_PLATFORM_INFO = CL.bind("clGetPlatformInfo", JAVA_INT,
            ADDRESS, JAVA_INT, JAVA_LONG, ADDRESS, ADDRESS);
    private static final MethodHandle GET_DEVICE_IDS = CL.bind("clGetDeviceIDs", JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT, ADDRESS, ADDRESS);
    private static final MethodHandle GET_DEVICE_INFO = CL.bind("clGetDeviceInfo", JAVA_INT, ADDRESS, JAVA_INT, JAVA_LONG, ADDRESS, ADDRESS);

    private CLPlatforms() {
    }

    /**
     * {@code clGetPlatformIDs}: fills {@code platforms} (NULL to only count).
     *
     * @return how many platforms there are
     * @throws OpenCLException with {@link CL#PLATFORM_NOT_FOUND_KHR} when the loader finds none
     */
    static int getPlatformIDs(int entries, MemorySegment platforms) {
        return (int) CL.out(JAVA_INT, "clGetPlatformIDs", count -> (int) GET_PLATFORM_IDS.invokeExact(entries, platforms, count));
    }

    /**
     * {@code clGetDeviceIDs}: fills {@code devices} (NULL to only count).
     *
     * @return how many devices of {@code type} the platform has
     * @throws OpenCLException with {@code CL_DEVICE_NOT_FOUND} (-1) when it has none
     */
    static int getDeviceIDs(MemorySegment platform, long type, int entries, MemorySegment devices) {
        return (int) CL.out(JAVA_INT, "clGetDeviceIDs",
                count -> (int) GET_DEVICE_IDS.invokeExact(platform, type, entries, devices, count));
    }

    /** {@code clGetPlatformInfo} into {@code value} (NULL to ask the size); returns the size. */
    static long getPlatformInfo(MemorySegment platform, int parameter, MemorySegment value) {
        return CL.info(GET_PLATFORM_INFO, platform, parameter, value, "clGetPlatformInfo");
    }

    /** {@code clGetDeviceInfo} into {@code value} (NULL to ask the size); returns the size. */
    static long getDeviceInfo(MemorySegment device, int parameter, MemorySegment value) {
        return CL.info(GET_DEVICE_INFO, device, parameter, value, "clGetDeviceInfo");
    }
}
