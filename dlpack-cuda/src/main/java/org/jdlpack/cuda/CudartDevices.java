package org.jdlpack.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/** The libcudart functions that report versions and devices and pick the current one; see {@link Cudart}. */
final class CudartDevices {

    private static final MethodHandle RUNTIME_GET_VERSION = Cudart.bind("cudaRuntimeGetVersion", ADDRESS);
    private static final MethodHandle DRIVER_GET_VERSION = Cudart.bind("cudaDriverGetVersion", ADDRESS);
    private static final MethodHandle GET_DEVICE_COUNT = Cudart.bind("cudaGetDeviceCount", ADDRESS);
    private static final MethodHandle GET_DEVICE_PROPERTIES = Cudart.bind("cudaGetDeviceProperties", ADDRESS, JAVA_INT);
    private static final MethodHandle SET_DEVICE = Cudart.bind("cudaSetDevice", JAVA_INT);
    private static final MethodHandle GET_DEVICE = Cudart.bind("cudaGetDevice", ADDRESS);

    private CudartDevices() {
    }

    /** {@code cudaRuntimeGetVersion}. */
    static int runtimeGetVersion() {
        return queryInt(RUNTIME_GET_VERSION, "cudaRuntimeGetVersion");
    }

    /** {@code cudaDriverGetVersion}: 0 when no driver is installed. */
    static int driverGetVersion() {
        return queryInt(DRIVER_GET_VERSION, "cudaDriverGetVersion");
    }

    /** {@code cudaGetDeviceCount}. */
    static int getDeviceCount() {
        return queryInt(GET_DEVICE_COUNT, "cudaGetDeviceCount");
    }

    /** {@code cudaGetDevice}: the device current on the calling thread. */
    static int getDevice() {
        return queryInt(GET_DEVICE, "cudaGetDevice");
    }

    /** A {@code cudaError_t f(int*)} query. */
    private static int queryInt(MethodHandle function, String call) {
        return (int) Cudart.out(JAVA_INT, call, value -> (int) function.invokeExact(value));
    }

    /** {@code cudaSetDevice}: makes {@code device} current on the calling thread. */
    static void setDevice(int device) {
        Cudart.call("cudaSetDevice(" + device + ")", () -> (int) SET_DEVICE.invokeExact(device));
    }

    /** {@code cudaGetDeviceProperties} into {@code properties}, at least {@link Cudart#DEVICE_PROP_ROOM} bytes. */
    static void getDeviceProperties(MemorySegment properties, int device) {
        Cudart.call("cudaGetDeviceProperties(" + device + ")", () -> (int) GET_DEVICE_PROPERTIES.invokeExact(properties, device));
    }
}
