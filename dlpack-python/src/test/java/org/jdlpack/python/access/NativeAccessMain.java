package org.jdlpack.python.access;

import org.jdlpack.python.PythonRuntime;

/**
 * Run in a child JVM by {@code NativeAccessMessageTest}: starts Python twice (a refusal in a
 * static initializer would be an {@code ExceptionInInitializerError} the first time and a
 * message-less {@code NoClassDefFoundError} the second) and prints what happened.
 *
 * <p>In a package of its own: on the module path the package {@code org.jdlpack.python} belongs to
 * the named module, and this class stays on the class path.
 */
public final class NativeAccessMain {

    private NativeAccessMain() {
    }

    public static void main(String[] args) {
        System.out.println("RESULT module " + PythonRuntime.class.getModule());
        for (int attempt = 0; attempt < 2; attempt++) {
            try {
                PythonRuntime python = PythonRuntime.get();
                python.exec("x = 1 + 1");
                System.out.println("RESULT STARTED " + python.description());
            } catch (Throwable t) {
                System.out.println("RESULT FAILED " + t);
            }
        }
    }
}
