package org.jdlpack.abi;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;

/** {@code DLPackVersion}: {@code uint32_t major; uint32_t minor;} (8 bytes). */
final class DLPackVersionLayout {

    /** The struct layout. */
    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            JAVA_INT.withName("major"),
            JAVA_INT.withName("minor"))
            .withName("DLPackVersion");

    /** Offset of {@code major}, an unsigned 32-bit number. */
    public static final long MAJOR = 0;
    /** Offset of {@code minor}, an unsigned 32-bit number. */
    public static final long MINOR = 4;
    /** {@code sizeof(DLPackVersion)}. */
    public static final long SIZE = 8;

    private DLPackVersionLayout() {
    }
}
