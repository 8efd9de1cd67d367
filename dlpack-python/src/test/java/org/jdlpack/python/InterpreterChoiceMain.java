package org.jdlpack.python;

import java.nio.file.Path;

/**
 * Run in a child JVM by {@link PythonRuntimeApiTest}: the interpreter chosen by the system
 * property, a second choice naming another Python, and a retry after a Python that could not run.
 *
 * <p>Arguments: what to try, in order: {@code get} (plain {@link PythonRuntime#get()}) or a path
 * for {@link PythonRuntime#get(Path)}.
 */
public final class InterpreterChoiceMain {

    private InterpreterChoiceMain() {
    }

    public static void main(String[] args) {
        for (String attempt : args) {
            try {
                PythonRuntime python = attempt.equals("get") ? PythonRuntime.get() : PythonRuntime.get(Path.of(attempt));
                System.out.println("RESULT " + attempt + " -> " + python.location().realExecutable());
            } catch (RuntimeException e) {
                System.out.println("RESULT " + attempt + " -> " + e.getClass().getSimpleName() + ": " + e.getMessage().lines().findFirst().orElse(""));
            }
        }
    }
}
