package org.jdlpack.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

/**
 * The CUDA runtime jdlpack bound to, and what it can see.
 *
 * <p>On a machine without an NVIDIA driver or GPU the library still loads (when installed) and
 * every query that needs a device reports why it cannot run: {@link #status()} says "no driver" or
 * "no CUDA device".
 *
 * <p>Thread safety: all methods may be called from any thread. The CUDA "current device" is
 * per-thread state; jdlpack methods that need a device make it current for their own calls and
 * then make the thread's previous device current again, deleters included.
 *
 * @since 0.1
 */
public final class CudaRuntime {

    private CudaRuntime() {
    }

    /**
     * {@return the path (or loader name) of the libcudart this library loaded}
     *
     * @throws CudaException if no CUDA runtime library was found, saying where it looked
     */
    public static Path library() {
        Cudart.requireLibrary();
        return Cudart.LIBRARY;
    }

    /** {@return the runtime version from {@code cudaRuntimeGetVersion}: 1000 * major + 10 * minor, for example 13000} */
    public static int runtimeVersion() {
        return CudartDevices.runtimeGetVersion();
    }

    /**
     * {@return the CUDA version the installed driver supports ({@code cudaDriverGetVersion}), or 0
     * when no driver is installed}
     */
    public static int driverVersion() {
        return CudartDevices.driverGetVersion();
    }

    /**
     * {@return the number of CUDA devices ({@code cudaGetDeviceCount})}
     *
     * @throws CudaException when there is no driver ({@code cudaErrorInsufficientDriver}) or no
     *                       device ({@code cudaErrorNoDevice}), among others
     */
    public static int deviceCount() {
        return CudartDevices.getDeviceCount();
    }

    /**
     * {@return whether at least one CUDA device is usable: {@code true} when {@link #deviceCount()}
     * succeeds with at least one device}
     */
    public static boolean hasDevice() {
        try {
            return deviceCount() > 0;
        } catch (CudaException e) {
            return false;
        }
    }

    /**
     * {@return one line on what was bound and what it sees: library, runtime and driver versions,
     * and the devices or the reason there are none}
     */
    public static String status() {
        try {
            String head = "libcudart " + library() + " (runtime " + version(runtimeVersion()) + ", driver "
                    + (driverVersion() == 0 ? "none" : version(driverVersion())) + ")";
            try {
                int count = deviceCount();
                return head + ": " + count + " CUDA device" + (count == 1 ? "" : "s");
            } catch (CudaException e) {
                String reason = switch (e.errorCode()) {
                    case Cudart.ERROR_INSUFFICIENT_DRIVER -> "no driver";
                    case Cudart.ERROR_NO_DEVICE -> "no CUDA device";
                    default -> "no usable device";
                };
                return head + ": " + reason + " (" + e.getMessage() + ")";
            }
        } catch (CudaException e) {
            return e.getMessage();
        }
    }

    /**
     * The device's name from {@code cudaGetDeviceProperties}.
     *
     * @param device a CUDA device ordinal
     * @return the name
     */
    public static String deviceName(int device) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment properties = arena.allocate(Cudart.DEVICE_PROP_ROOM, 16);
            CudartDevices.getDeviceProperties(properties, device);
            return properties.getString(0); // char name[256] is the first field
        }
    }

    private static String version(int encoded) {
        return encoded / 1000 + "." + (encoded % 1000) / 10;
    }

}
