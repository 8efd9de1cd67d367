package org.jdlpack.abi;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodType;
import java.util.function.Consumer;

import org.jdlpack.abi.plumbing.Downcalls;
import org.jdlpack.abi.plumbing.NativeAccess;

/**
 * The abi module's native-call layer, in one place: the C allocator ({@code malloc}, {@code free}),
 * foreign deleters, and reinterpreting foreign addresses. When native access is denied, every
 * operation fails with the {@link IllegalCallerException} that names the flag to pass.
 *
 * <p>Everything here is safe to call from any thread, including native threads inside upcalls.
 */
@SuppressWarnings("restricted")
final class NativeMemory {

    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle MALLOC;
    private static final MethodHandle FREE;
    /** Address-less: the deleter's address is the first argument. */
    private static final MethodHandle DELETER;
    /** All of the address space, for reads at raw addresses without a segment per read; null when native access is denied. */
    private static final MemorySegment EVERYTHING;

    static {
        boolean disabled = NativeAccess.disabled(NativeMemory.class);
        MethodHandle malloc;
        MethodHandle free;
        MemorySegment everything;
        MethodHandle deleter;
        try {
            // critical: malloc and free never call back into Java and return quickly. Pointers are
            // declared as 64-bit integers (the same register on every LP64 ABI): no segment is
            // boxed per call, so free() allocates nothing even in a deleter with the heap exhausted.
            malloc = LINKER.downcallHandle(LINKER.defaultLookup().find("malloc").orElseThrow(),
                    FunctionDescriptor.of(JAVA_LONG, JAVA_LONG), Linker.Option.critical(false));
            free = LINKER.downcallHandle(LINKER.defaultLookup().find("free").orElseThrow(),
                    FunctionDescriptor.ofVoid(JAVA_LONG), Linker.Option.critical(false));
            everything = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);
            deleter = LINKER.downcallHandle(FunctionDescriptor.ofVoid(JAVA_LONG));
            NativeAccess.warnIfWasDisabled(NativeMemory.class, disabled); // once allowed: denied, the failure says it
        } catch (IllegalCallerException e) {
            // Denied (--illegal-native-access=deny): this class still initializes, so that every
            // use fails with the message naming the flag, not with ExceptionInInitializerError
            // once and NoClassDefFoundError ever after.
            malloc = Downcalls.failing(MethodType.methodType(long.class, long.class), () -> denied(e));
            free = Downcalls.failing(MethodType.methodType(void.class, long.class), () -> denied(e));
            everything = null;
            deleter = Downcalls.failing(MethodType.methodType(void.class, MemorySegment.class, long.class), () -> denied(e));
        }
        DELETER = deleter;
        MALLOC = malloc;
        FREE = free;
        EVERYTHING = everything;
    }

    private static IllegalCallerException denied(IllegalCallerException cause) {
        return NativeAccess.denied(NativeMemory.class, cause);
    }

    /** Every restricted operation of this class goes through here, so that a refusal names the flag. */
    private static MemorySegment reinterpret(MemorySegment segment, long size, Arena arena, Consumer<MemorySegment> cleanup) {
        try {
            return arena == null ? segment.reinterpret(size) : segment.reinterpret(size, arena, cleanup);
        } catch (IllegalCallerException e) {
            throw denied(e);
        }
    }

    private static MemorySegment everything() {
        if (EVERYTHING == null) {
            throw denied(new IllegalCallerException("native access is denied"));
        }
        return EVERYTHING;
    }

    private NativeMemory() {
    }

    /**
     * A segment of {@code size} bytes at a native address, in the global scope: the caller vouches
     * that the bytes exist for as long as it uses the segment.
     *
     * @param address the address
     * @param size    the byte size
     * @return the segment
     */
    public static MemorySegment at(long address, long size) {
        return reinterpret(MemorySegment.ofAddress(address), size, null, null);
    }

    /**
     * Reads a native-order 64-bit value at a raw address, allocating nothing; the caller vouches
     * that the 8 bytes exist.
     *
     * @param address the address of the value, any alignment
     * @return the value
     */
    public static long readLong(long address) {
        return everything().get(JAVA_LONG_UNALIGNED, address);
    }

    /** {@link #readLong} for a 32-bit value. */
    public static int readInt(long address) {
        return everything().get(JAVA_INT_UNALIGNED, address);
    }

    /** {@link #readLong} for a 16-bit value. */
    public static short readShort(long address) {
        return everything().get(JAVA_SHORT_UNALIGNED, address);
    }

    /** {@link #readLong} for a byte. */
    public static byte readByte(long address) {
        return everything().get(JAVA_BYTE, address);
    }

    /**
     * Writes a native-order 64-bit value at a raw address, allocating nothing; the caller vouches
     * that the 8 bytes exist and are its to write.
     *
     * @param address the address of the value, any alignment
     * @param value   the value
     */
    public static void writeLong(long address, long value) {
        everything().set(JAVA_LONG_UNALIGNED, address, value);
    }

    /** {@link #writeLong} for a 32-bit value. */
    static void writeInt(long address, int value) {
        everything().set(JAVA_INT_UNALIGNED, address, value);
    }

    /** {@link #writeLong} for a 16-bit value. */
    static void writeShort(long address, short value) {
        everything().set(JAVA_SHORT_UNALIGNED, address, value);
    }

    /** {@link #writeLong} for a byte. */
    static void writeByte(long address, byte value) {
        everything().set(JAVA_BYTE, address, value);
    }

    /**
     * A segment of {@code size} bytes at a native address, valid until {@code arena} closes, which
     * then runs {@code cleanup}.
     *
     * @param address the address
     * @param size    the byte size
     * @param arena   the lifetime
     * @param cleanup run once when the arena closes, or null
     * @return the segment
     */
    public static MemorySegment at(long address, long size, Arena arena, Consumer<MemorySegment> cleanup) {
        return reinterpret(MemorySegment.ofAddress(address), size, arena, cleanup);
    }

    /**
     * {@code malloc(size)}.
     *
     * @param size bytes to allocate, more than 0
     * @return the address
     * @throws OutOfMemoryError when malloc returns NULL
     */
    public static long malloc(long size) {
        long address;
        try {
            address = (long) MALLOC.invokeExact(size);
        } catch (RuntimeException | Error e) {
            throw e; // native access denied (the message names the flag), or a StackOverflowError on a nearly full stack
        } catch (Throwable t) {
            throw new AssertionError("malloc downcall failed", t);
        }
        if (address == 0) {
            throw new OutOfMemoryError("malloc(" + size + ") returned NULL");
        }
        return address;
    }

    /**
     * {@code free(address)}.
     *
     * @param address an address malloc returned
     * @throws AssertionError only if the downcall machinery itself fails
     */
    public static void free(long address) {
        try {
            FREE.invokeExact(address);
        } catch (RuntimeException | Error e) {
            throw e; // native access denied (the message names the flag), or a StackOverflowError on a nearly full stack
        } catch (Throwable t) {
            throw new AssertionError("free downcall failed", t);
        }
    }

    /**
     * {@code deleter(self)}: a DLPack deleter, {@code void (*)(void* self)}, through one address-less
     * downcall for every deleter; the pointer travels as a 64-bit integer (the same register on
     * LP64 ABIs), so that no segment is boxed for it.
     *
     * @param deleter the function's address, not 0
     * @param self    the managed tensor
     * @throws Throwable whatever the downcall machinery throws; the caller reports it
     */
    static void callDeleter(long deleter, long self) throws Throwable {
        DELETER.invokeExact(MemorySegment.ofAddress(deleter), self);
    }
}
