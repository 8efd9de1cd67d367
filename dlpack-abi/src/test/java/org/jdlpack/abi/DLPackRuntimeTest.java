package org.jdlpack.abi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.ref.WeakReference;
import java.net.URL;
import java.net.URLClassLoader;
import java.time.Duration;
import java.util.Set;
import java.util.stream.Collectors;

import org.jdlpack.abi.testing.Collect;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.testsupport.CPeer;
import org.jdlpack.testsupport.PeerTensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The process-wide state starts lazily, refuses to be released while something is live, is
 * released completely (a class loader that loaded jdlpack can then be collected), and starts
 * again when used after a release.
 */
@ExtendWith(NothingLeftBehind.class)
class DLPackRuntimeTest {

    private static final CPeer PEER = CPeer.get();

    @Test
    void releaseRefusesWithCountsWhileSomethingIsLiveAndReleasesOnceNothingIs() {
        CPeer.Produced produced = PEER.make(PeerTensor.versioned());
        Arena arena = Arena.ofShared();
        ExportOwner owner = ExportOwner.of(arena, arena::close);
        try (ImportedTensor tensor = ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer())) {
            ExportedTensor export = owner.export(TensorSpec.of(arena.allocate(16), DLDataType.FLOAT32, 4));
            java.lang.foreign.MemorySegment consumed = owner.export(TensorSpec.of(arena.allocate(16), DLDataType.FLOAT32, 4)).consume();
            assertThatThrownBy(DLPackRuntime::release).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("2 live exports").hasMessageContaining("2 owned managed tensors");
            assertThat(DLPackRuntime.liveObjects()).as(tensor.toString()).isNotEmpty();
            export.close();
            PEER.delete(consumed, false);
        }
        owner.close();
        assertThat(DLPackRuntime.liveObjects()).isEmpty();
        DLPackRuntime.release();
        assertThat(threadNames()).doesNotContain("jdlpack-safety-net");

        // Used again: everything starts again.
        Arena again = Arena.ofShared();
        ExportOwner second = ExportOwner.of(again, again::close);
        try (ExportedTensor export = second.export(TensorSpec.of(again.allocate(8), DLDataType.FLOAT32, 2))) {
            assertThat(threadNames()).contains("jdlpack-safety-net"); // the export's object is watched
            PEER.delete(export.consume(), false);
        }
        second.close();
        assertThat(second.isReleased()).isTrue();
        DLPackRuntime.release();
    }

    /** The names of the running threads that this class loader's jdlpack started. */
    private static Set<String> threadNames() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getContextClassLoader() == DLPackRuntimeTest.class.getClassLoader())
                .map(Thread::getName).collect(Collectors.toSet());
    }

    /** Run inside a class loader of its own by the test below: exports, imports, forgets nothing. */
    public static final class Workload implements Runnable {
        @Override
        public void run() {
            CPeer peer = CPeer.get();
            Arena arena = Arena.ofShared();
            ExportOwner owner = ExportOwner.of(arena, arena::close);
            TensorSpec spec = TensorSpec.of(arena.allocate(64), DLDataType.FLOAT32, 4, 4);
            for (int i = 0; i < 100; i++) {
                peer.deleteOnNewThread(owner.export(spec).consume(), false);
                try (ImportedTensor back = owner.export(spec).importTensor()) {
                    back.hostSegment();
                }
                CPeer.Produced produced = peer.make(PeerTensor.versioned());
                ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer()).close();
            }
            owner.close();
        }
    }

    @Test
    void aClassLoaderThatLoadedJdlpackIsCollectableAfterARelease() throws Exception {
        assertThat(collectableAfter(true)).as("the loader after DLPackRuntime.release()").isTrue();
    }

    @Test
    void withoutAReleaseTheStubsTheHookAndTheThreadKeepTheClassLoader() throws Exception {
        // The reason the release exists: an upcall stub, a shutdown hook and a running thread are GC roots.
        assertThat(collectableAfter(false)).as("the loader without a release").isFalse();
    }

    /** Runs {@link Workload} in a fresh class loader holding jdlpack and the C peer; {@return whether that loader was collected} */
    private static boolean collectableAfter(boolean release) throws Exception {
        WeakReference<ClassLoader> weak = runInOwnLoader(release);
        return Collect.until(() -> weak.get() == null, Duration.ofSeconds(2));
    }

    /** In a method of its own, so that no local variable of a frame still on the stack holds the loader or its classes. */
    private static WeakReference<ClassLoader> runInOwnLoader(boolean release) throws Exception {
        URL[] urls = {location(DLPackStats.class), location(CPeer.class), location(DLPackRuntimeTest.class)};
        try (URLClassLoader loader = new URLClassLoader("job", urls, ClassLoader.getPlatformClassLoader())) {
            ClassLoader previous = Thread.currentThread().getContextClassLoader();
            Thread.currentThread().setContextClassLoader(loader); // as an engine runs a task
            try {
                Class<?> workload = Class.forName(Workload.class.getName(), true, loader);
                assertThat(workload.getClassLoader()).isSameAs(loader);
                ((Runnable) workload.getConstructor().newInstance()).run();
                if (release) {
                    Class.forName(DLPackRuntime.class.getName(), true, loader).getMethod("release").invoke(null);
                }
            } finally {
                Thread.currentThread().setContextClassLoader(previous);
            }
            return new WeakReference<>(loader);
        }
    }

    private static URL location(Class<?> type) {
        return type.getProtectionDomain().getCodeSource().getLocation();
    }
}
