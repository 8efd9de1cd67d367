package org.jdlpack.abi;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;

import org.junit.jupiter.api.Test;

/**
 * The owner's reference count, which every export and every deleter call updates, keeps a cache
 * line to itself in the JVM running the tests: no byte of a neighbouring object can share its
 * line. Without that, threads exporting from owners of their own slowed each other down
 * (benchmarks/notes.md, "And the owner's reference count"). The padding fields look unused, so
 * this test is what keeps them.
 */
class ExportOwnerLayoutTest {

    private static final long CACHE_LINE = 64;

    @Test
    void theReferenceCountHasACacheLineToItself() throws ReflectiveOperationException {
        Field[] fields = Arrays.stream(ExportOwner.class.getDeclaredFields())
                .filter(f -> !Modifier.isStatic(f.getModifiers())).toArray(Field[]::new);
        long references = offset(ExportOwner.class.getDeclaredField("references"));
        long end = 0;
        for (Field field : fields) {
            end = Math.max(end, offset(field) + size(field.getType()));
        }
        // The previous object ends at or before this one's offset 0, the next one starts at or after `end`.
        assertThat(references).as("bytes before the reference count").isGreaterThanOrEqualTo(CACHE_LINE);
        assertThat(end - references).as("bytes from the reference count to the object's end").isGreaterThanOrEqualTo(CACHE_LINE);
    }

    /** {@code sun.misc.Unsafe.objectFieldOffset}, called reflectively: the test reads the layout, nothing else. */
    private static long offset(Field field) throws ReflectiveOperationException {
        Class<?> unsafeClass = Class.forName("sun.misc.Unsafe");
        Field theUnsafe = unsafeClass.getDeclaredField("theUnsafe");
        theUnsafe.setAccessible(true);
        Method objectFieldOffset = unsafeClass.getMethod("objectFieldOffset", Field.class);
        return (long) objectFieldOffset.invoke(theUnsafe.get(null), field);
    }

    /** An upper bound of a field's size: 8 for references, which covers uncompressed ones. */
    private static long size(Class<?> type) {
        if (type == long.class || type == double.class || !type.isPrimitive()) {
            return 8;
        }
        return type == int.class || type == float.class ? 4 : type == short.class || type == char.class ? 2 : 1;
    }
}
