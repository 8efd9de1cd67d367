package org.jdlpack.engines.flink;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;

/**
 * Where the job's function tells the test which class loader loaded it, without keeping that
 * loader alive: only weak references. The test's class loader has it, and the cluster loads it
 * parent-first ({@code classloader.parent-first-patterns.additional}), so the job and the test see
 * the same class; the job jar does not contain it.
 *
 * <p>Thread safety: any thread.
 */
public final class LoaderProbe {

    private static final Map<ClassLoader, Integer> IDS = new WeakHashMap<>();
    private static final Map<String, List<WeakReference<ClassLoader>>> BY_JOB = new LinkedHashMap<>();
    private static int next;

    private LoaderProbe() {
    }

    /** Records that {@code job} ran in {@code loader}; {@return the loader's id, the same for the same loader} */
    public static synchronized int register(String job, ClassLoader loader) {
        Integer id = IDS.get(loader);
        if (id == null) {
            id = ++next;
            IDS.put(loader, id);
            BY_JOB.computeIfAbsent(job, j -> new ArrayList<>()).add(new WeakReference<>(loader));
        }
        return id;
    }

    /** {@return how many distinct loaders {@code job} ran in} */
    public static synchronized int loaders(String job) {
        return BY_JOB.getOrDefault(job, List.of()).size();
    }

    /** {@return how many of {@code job}'s loaders are still reachable} */
    public static synchronized int live(String job) {
        return (int) BY_JOB.getOrDefault(job, List.of()).stream().filter(r -> r.get() != null).count();
    }
}
