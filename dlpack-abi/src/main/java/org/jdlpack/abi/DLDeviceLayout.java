package org.jdlpack.abi;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;

/** {@code DLDevice}: {@code DLDeviceType device_type; int32_t device_id;} (8 bytes). */
final class DLDeviceLayout {

    /** The struct layout; {@code device_type} is a C enum, an {@code int} on every LP64 ABI. */
    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            JAVA_INT.withName("device_type"),
            JAVA_INT.withName("device_id"))
            .withName("DLDevice");

    /** Offset of {@code device_type}. */
    public static final long DEVICE_TYPE = 0;
    /** Offset of {@code device_id}. */
    public static final long DEVICE_ID = 4;
    /** {@code sizeof(DLDevice)}. */
    public static final long SIZE = 8;

    private DLDeviceLayout() {
    }
}
