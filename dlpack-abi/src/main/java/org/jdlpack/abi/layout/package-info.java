/**
 * The DLPack 1.3 C structs as {@link java.lang.foreign.StructLayout}s, one class per struct.
 *
 * <p>Each class holds the layout and its field offsets as constants, written by hand from the
 * DLPack header for LP64 platforms (Linux and macOS on x86-64 and aarch64). The test suite
 * compiles a C program against the project's own header and compares every size, alignment and
 * offset here with the C compiler's; a mismatch fails the build.
 *
 * <p>Everything here is an immutable constant, safe to use from any thread.
 */
package org.jdlpack.abi.layout;
