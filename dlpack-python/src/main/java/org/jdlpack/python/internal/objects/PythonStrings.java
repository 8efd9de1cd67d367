package org.jdlpack.python.internal.objects;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;

import org.jdlpack.python.internal.capi.LibPythonErrors;
import org.jdlpack.python.internal.capi.LibPythonObjects;

/**
 * Python strings and Java strings: a {@code str} made from a Java string, the characters of a
 * {@code str}, {@code str(x)}, and the name of an object's type for messages. None of them leaves
 * a Python exception set.
 *
 * <p>Every method needs the GIL held and makes only downcalls. Thread safety: stateless.
 */
public final class PythonStrings {

    private static final MemorySegment QUALNAME = Arena.global().allocateFrom("__qualname__");

    private PythonStrings() {
    }

    /**
     * {@return a new {@code str} of {@code value}}
     *
     * @throws IllegalArgumentException if Python could not decode it (the error cleared)
     */
    public static MemorySegment string(Arena arena, String value) {
        MemorySegment text = LibPythonObjects.unicodeFromUtf8(arena, value);
        if (text.address() == 0) {
            LibPythonErrors.errClear();
            throw new IllegalArgumentException("Python could not decode the string");
        }
        return text;
    }

    /** {@return the characters of a {@code str}, or "(undecodable)" (the error cleared)} */
    public static String utf8(MemorySegment unicode) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment chars = LibPythonObjects.unicodeUtf8(unicode, arena);
            if (chars.address() == 0) {
                LibPythonErrors.errClear();
                return "(undecodable)";
            }
            return new String(chars.toArray(JAVA_BYTE), StandardCharsets.UTF_8);
        }
    }

    /** {@return {@code str(object)} of a borrowed {@code object}, or null if it raised (the error cleared)} */
    public static String str(MemorySegment object) {
        MemorySegment text = LibPythonObjects.objectStr(object);
        if (text.address() == 0) {
            LibPythonErrors.errClear();
            return null;
        }
        try {
            return utf8(text);
        } finally {
            LibPythonObjects.decRef(text);
        }
    }

    /** {@return {@code type(object).__qualname__}, or "?" if Python cannot say} */
    public static String typeName(MemorySegment object) {
        MemorySegment type = LibPythonObjects.objectType(object);
        if (type.address() == 0) {
            LibPythonErrors.errClear();
            return "?";
        }
        try {
            return typeNameOfType(type);
        } finally {
            LibPythonObjects.decRef(type);
        }
    }

    /** {@return {@code type.__qualname__}, or "?" if Python cannot say} */
    public static String typeNameOfType(MemorySegment type) {
        MemorySegment name = LibPythonObjects.objectGetAttrString(type, QUALNAME);
        if (name.address() == 0) {
            LibPythonErrors.errClear();
            return "?";
        }
        try {
            return utf8(name);
        } finally {
            LibPythonObjects.decRef(name);
        }
    }
}
