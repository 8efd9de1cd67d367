package com.example.flink.submit;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;

import jdk.jfr.consumer.RecordedClass;
import jdk.jfr.consumer.RecordedClassLoader;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingStream;

/**
 * Which class loaders loaded one class, and which of them the JVM has unloaded since, from the
 * JVM's own flight-recorder events (jdk.ClassLoad, jdk.ClassUnload) in this process.
 *
 * <p>Thread safety: the recording's thread adds, the caller reads; both under this object's lock.
 */
final class UnloadWatch implements AutoCloseable {

    /** What {@link #awaitUnloaded} saw for the loaders that loaded the class since the last call. */
    record Result(String className, int loaders, int unloaded, long millis) {

        boolean allUnloaded() {
            return loaders > 0 && unloaded == loaders;
        }

        @Override
        public String toString() {
            return allUnloaded()
                    ? className + " was loaded by " + loaders + " class loaders; all " + loaders + " unloaded " + millis + " ms after the job ended"
                    : "NOT UNLOADED: " + className + " was loaded by " + loaders + " class loaders, " + unloaded + " unloaded after " + millis + " ms";
        }
    }

    private final String className;
    private final RecordingStream stream = new RecordingStream();
    private final Set<Long> loaded = new HashSet<>();
    private final Set<Long> unloaded = new HashSet<>();

    private UnloadWatch(String className) {
        this.className = className;
    }

    static UnloadWatch start(String className) {
        UnloadWatch watch = new UnloadWatch(className);
        watch.stream.enable("jdk.ClassLoad").withoutThreshold();
        watch.stream.enable("jdk.ClassUnload");
        watch.stream.setMaxAge(Duration.ofSeconds(10));
        watch.stream.onEvent("jdk.ClassLoad", e -> watch.record(e, "loadedClass", watch.loaded));
        watch.stream.onEvent("jdk.ClassUnload", e -> watch.record(e, "unloadedClass", watch.unloaded));
        watch.stream.startAsync();
        return watch;
    }

    private void record(RecordedEvent event, String classField, Set<Long> into) {
        RecordedClass type = event.getClass(classField);
        RecordedClassLoader loader = event.getValue("definingClassLoader");
        if (type != null && loader != null && className.equals(type.getName())) {
            synchronized (this) {
                into.add(loader.getId());
            }
        }
    }

    /**
     * Collects garbage until every loader that has loaded the class is unloaded, or the time is up.
     * After each collection one object goes through a serialization stream and back: the JDK's
     * serialization caches hold a class whose cache entry a collection cleared until the next
     * serialization and deserialization, which a running cluster does at every task deployment and
     * this idle one does not (docs/engines.md).
     */
    Result awaitUnloaded(Duration timeout) throws InterruptedException {
        long start = System.nanoTime();
        long deadline = start + timeout.toNanos();
        // Events reach the stream about a second after they happen: first wait for the loads.
        Thread.sleep(1500);
        while (System.nanoTime() < deadline) {
            synchronized (this) {
                if (!loaded.isEmpty() && unloaded.containsAll(loaded)) {
                    break;
                }
            }
            System.gc();
            roundTrip();
            Thread.sleep(200);
        }
        synchronized (this) {
            Set<Long> gone = new HashSet<>(loaded);
            gone.retainAll(unloaded);
            Result result = new Result(className, loaded.size(), gone.size(), (System.nanoTime() - start) / 1_000_000);
            loaded.removeAll(gone);
            unloaded.removeAll(gone);
            return result;
        }
    }

    private record Token(int value) implements Serializable {
    }

    private static void roundTrip() {
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
                out.writeObject(new Token(1));
            }
            try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
                in.readObject();
            }
        } catch (IOException | ClassNotFoundException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        stream.close();
    }
}
