package org.jdlpack.abi;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;

/** {@code DLDataType}: {@code uint8_t code; uint8_t bits; uint16_t lanes;} (4 bytes). */
final class DLDataTypeLayout {

    /** The struct layout; all three fields are unsigned in C. */
    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            JAVA_BYTE.withName("code"),
            JAVA_BYTE.withName("bits"),
            JAVA_SHORT.withName("lanes"))
            .withName("DLDataType");

    /** Offset of {@code code}. */
    public static final long CODE = 0;
    /** Offset of {@code bits}. */
    public static final long BITS = 1;
    /** Offset of {@code lanes}. */
    public static final long LANES = 2;
    /** {@code sizeof(DLDataType)}. */
    public static final long SIZE = 4;

    private DLDataTypeLayout() {
    }
}
