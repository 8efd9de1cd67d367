package org.jdlpack.abi.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.StructLayout;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Sizes, alignments, offsets and enum values as the Java side states them, named the way the C
 * probe (test-support's abi_probe.c, run by {@code CPeer.probeAbi()}) prints them, so that a test
 * can compare the two. Each recorded size and offset is also checked against the layout it
 * describes: the hand-written constant, the layout and the C compiler must all agree.
 *
 * <p>Not thread-safe: one instance per test.
 */
public final class LayoutFacts {

    private final Map<String, Long> facts = new LinkedHashMap<>();

    /** Records {@code sizeof} and {@code alignof} of a struct, after checking the constant against the layout. */
    public void struct(String name, StructLayout layout, long sizeConstant) {
        assertThat(layout.byteSize()).as("layout size of " + name).isEqualTo(sizeConstant);
        facts.put("sizeof." + name, sizeConstant);
        facts.put("alignof." + name, layout.byteAlignment());
    }

    /** Records {@code offsetof} of a field, after checking the constant against the layout. */
    public void field(String struct, StructLayout layout, String field, long offsetConstant) {
        assertThat(layout.byteOffset(PathElement.groupElement(field))).as("layout offset of " + struct + "." + field)
                .isEqualTo(offsetConstant);
        facts.put("offsetof." + struct + "." + field, offsetConstant);
    }

    /** Records any other fact under the probe's name for it ({@code enum.NAME}, {@code sizeof.NAME}). */
    public void put(String name, long value) {
        facts.put(name, value);
    }

    /**
     * Asserts that the C probe printed exactly the recorded names, each with the recorded value.
     *
     * @return how many facts matched
     */
    public int assertSameAs(Map<String, Long> c) {
        assertThat(facts.keySet()).as("the names the C probe printed").containsExactlyInAnyOrderElementsOf(c.keySet());
        for (var entry : facts.entrySet()) {
            assertThat(entry.getValue()).as(entry.getKey()).isEqualTo(c.get(entry.getKey()));
        }
        return facts.size();
    }
}
