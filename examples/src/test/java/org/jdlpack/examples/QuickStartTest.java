package org.jdlpack.examples;

import static org.assertj.core.api.Assertions.assertThat;

import org.jdlpack.testsupport.PeerRequirement;
import org.junit.jupiter.api.Test;

/** The quick start runs and tells the truth. */
class QuickStartTest {

    @Test
    void quickStartShowsZeroCopyBothWaysAndExactlyOnceRelease() {
        String out = RecipeOutput.of(QuickStart::run);

        assertThat(out).contains("[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]");
        assertThat(out).contains("sums it: 21.0");
        assertThat(out).contains("Java now reads [10.0, 20.0, 30.0, 40.0, 50.0, 60.0]");
        assertThat(out).contains("memory still alive for C: true");
        assertThat(out).containsPattern("Java's release ran on Thread\\[.*\\]; memory alive: false");
        assertThat(out).contains("-> [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]");
        assertThat(out).contains("called C's deleter 1 time(s)");
        if (QuickStart.numPyOrNull() != null || PeerRequirement.isCi()) {
            assertThat(out).contains("7. Read a NumPy array in place: 2-d, [0.0, 1.0, 4.0, 9.0, 16.0, 25.0]");
        } else {
            assertThat(out).contains("7. (NumPy not found: skipping the NumPy part)");
        }
        assertThat(out).contains("Live exports: 0, managed tensors Java still owns: 0");
    }
}
