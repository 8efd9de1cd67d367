package org.jdlpack.abi;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.net.URL;
import java.net.URLClassLoader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.jdlpack.abi.testing.Collect;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The safety net of a jdlpack whose class loader was closed while owners were still open, as Flink
 * closes a job's loader after a refused release hook: classes the net had not needed yet can no
 * longer be loaded, and its thread must go on releasing (found with examples/flink: the thread
 * died of a NoClassDefFoundError for Diagnostics, thrown again from its own catch).
 */
@ExtendWith(NothingLeftBehind.class)
class SafetyNetAfterLoaderCloseTest {

    @Test
    void theSafetyNetGoesOnReleasingAfterItsClassLoaderWasClosed() throws Throwable {
        URL classes = ExportOwner.class.getProtectionDomain().getCodeSource().getLocation();
        AtomicInteger released = new AtomicInteger();
        List<Object> forgotten = new ArrayList<>();
        MethodHandle leaksReported;
        try (URLClassLoader job = new URLClassLoader(new URL[] {classes}, ClassLoader.getPlatformClassLoader())) {
            Class<?> owner = Class.forName(ExportOwner.class.getName(), true, job);
            MethodHandle of = MethodHandles.publicLookup().findStatic(owner, "of", MethodType.methodType(owner, Runnable.class));
            for (int i = 0; i < 3; i++) {
                forgotten.add(of.invoke((Runnable) released::incrementAndGet));
            }
            leaksReported = MethodHandles.publicLookup().findStatic(Class.forName(DLPackStats.class.getName(), true, job),
                    "leaksReported", MethodType.methodType(long.class));
        }
        forgotten.clear();
        MethodHandle leaks = leaksReported;
        assertThat(Collect.until(() -> released.get() == 3 && count(leaks) == 3, Duration.ofSeconds(30)))
                .as("released %d of 3, reported %d", released.get(), count(leaks)).isTrue();
    }

    private static long count(MethodHandle leaksReported) {
        try {
            return (long) leaksReported.invokeExact();
        } catch (Throwable e) {
            throw new AssertionError(e);
        }
    }
}
