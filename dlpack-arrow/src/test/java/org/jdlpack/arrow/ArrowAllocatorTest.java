package org.jdlpack.arrow;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * A fresh Arrow allocator per test, which must hold no memory when the test ends: every exported
 * or imported buffer has been released by then. A subclass's own {@code @AfterEach} runs before
 * the check, so it can first let a consumer drop its references.
 */
abstract class ArrowAllocatorTest {

    BufferAllocator allocator;

    @BeforeEach
    void openAllocator() {
        allocator = new RootAllocator();
    }

    @AfterEach
    void nothingAllocated() {
        assertThat(allocator.getAllocatedMemory()).as("Arrow memory still allocated after the test").isZero();
        allocator.close();
    }
}
