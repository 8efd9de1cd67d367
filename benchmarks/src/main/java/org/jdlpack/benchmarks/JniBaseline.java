package org.jdlpack.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

import org.jdlpack.testsupport.NativeBuild;

/**
 * The JNI baseline users would otherwise write (jni_baseline.c): compiled with gcc against this
 * JDK's JNI headers when first used, then loaded with System.load.
 */
public final class JniBaseline {

    static {
        Path dir = NativeBuild.directory(); // holds dlpack.h
        try (InputStream source = JniBaseline.class.getResourceAsStream("jni_baseline.c")) {
            Files.copy(source, dir.resolve("jni_baseline.c"), StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new ExceptionInInitializerError(e);
        }
        Path javaHome = Path.of(System.getProperty("java.home"));
        Path library = NativeBuild.compile("libjnibaseline.so", "-shared", "-fPIC", "-I" + javaHome.resolve("include"),
                "-I" + javaHome.resolve("include/linux"), "jni_baseline.c");
        System.load(library.toString());
    }

    private JniBaseline() {
    }

    /** Builds a versioned managed tensor around a direct buffer (float32, compact). */
    static native long export(ByteBuffer buffer, long[] shape);

    /** Reads the metadata and calls the deleter, as the C peer's consumer does. */
    static native long consume(long pointer);
}
