package org.jdlpack.abi.stripes;

/**
 * 64 bytes of padding before a {@link StripeLock}'s lock word, and the 4-byte gap after the object
 * header taken, so that no field of a stripe is laid out next to the previous object in memory. A
 * superclass of its own because the JVM lays out superclass fields first and sorts each class's
 * fields by size: padding declared next to the state in one class would not surround it.
 */
@SuppressWarnings("unused") // the padding fields exist only to take space
class StripePadding {
    int gap;
    long p0, p1, p2, p3, p4, p5, p6, p7;

    StripePadding() {
    }
}
