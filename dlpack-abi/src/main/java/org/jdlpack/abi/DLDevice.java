package org.jdlpack.abi;

import java.util.Optional;

/**
 * Where a tensor's data lives: the {@code DLDevice} struct.
 *
 * <p>The device type is kept as its raw C value so that tensors from a producer that knows newer
 * device types can still be carried and described; {@link #type()} maps it to a
 * {@link DLDeviceType} when it is known. The meaning of {@code device_id} belongs to the device
 * type (a CUDA ordinal, an OpenCL device index as the OpenCL module defines it, 0 for the CPU).
 *
 * <p>Instances are immutable and safe to share between threads.
 *
 * @param deviceType the {@code device_type} field (a {@code DLDeviceType} value)
 * @param deviceId   the {@code device_id} field
 *
 * @since 0.1
 */
public record DLDevice(int deviceType, int deviceId) {

    /** The host CPU, device 0. */
    public static final DLDevice CPU = new DLDevice(DLDeviceType.CPU.code(), 0);

    /**
     * Creates a device of a known type.
     *
     * @param type the device type
     * @param id   the device id
     * @return the device
     */
    public static DLDevice of(DLDeviceType type, int id) {
        return new DLDevice(type.code(), id);
    }

    /** {@return the device type when the DLPack header defines it (see {@link DLDeviceType}); empty for a code this library does not know} */
    public Optional<DLDeviceType> type() {
        return DLDeviceType.of(deviceType);
    }

    /**
     * {@return whether the CPU can read this device's memory directly: {@code true} for CPU, CUDA
     * host, ROCm host, CUDA managed and TPU host memory; unknown device types are not}
     *
     * @see DLDeviceType#isHostAccessible()
     */
    public boolean isHostAccessible() {
        return DLDeviceType.isHostAccessible(deviceType); // no Optional: this runs on every import
    }

    @Override
    public String toString() {
        String name = type().map(Enum::name).orElse("unknown device type " + deviceType);
        return name + ":" + deviceId;
    }
}
