package org.jdlpack.python;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.jdlpack.abi.DLPackStats;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.cpu.HostTensorView;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.python.internal.bridge.ForeignDeleterGuard;
import org.jdlpack.python.internal.bridge.JavaTensors;

/**
 * Run in a child JVM by {@link VirtualThreadsTest}: many virtual threads on several carriers call
 * every kind of {@link PythonRuntime} operation at once for a while (a Fatal Python error aborts
 * the process, which is why this is a child), then prints one summary line with what ran, on
 * which carriers, and every counter that must be back to zero.
 *
 * <p>Arguments: the number of virtual threads and the seconds to run.
 */
public final class VirtualThreadsMain {

    private static final Set<String> CARRIERS = ConcurrentHashMap.newKeySet();
    private static final AtomicLong OPERATIONS = new AtomicLong();
    private static final AtomicLong FAILURES = new AtomicLong();
    private static final AtomicReference<Throwable> FIRST_FAILURE = new AtomicReference<>();

    private VirtualThreadsMain() {
    }

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        long seconds = Long.parseLong(args[1]);
        PythonRuntime python = PythonRuntime.get();
        python.exec("import gc\nimport numpy as np\nvt_len = len");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        try (PythonObject fromDlpack = python.eval("np.from_dlpack"); PythonObject sum = python.eval("lambda a: float(a.sum())")) {
            Thread[] workers = new Thread[threads];
            for (int i = 0; i < threads; i++) {
                workers[i] = Thread.ofVirtual().name("python-" + i).start(() -> work(python, fromDlpack, sum, deadline));
            }
            for (Thread worker : workers) {
                worker.join();
            }
        }
        python.exec("gc.collect()");
        Throwable first = FIRST_FAILURE.get();
        if (first != null) {
            first.printStackTrace(System.out);
        }
        System.out.println("summary: threads=" + threads + " seconds=" + seconds + " carriers=" + CARRIERS.size()
                + " operations=" + OPERATIONS.get() + " failures=" + FAILURES.get()
                + " liveExports=" + DLPackStats.liveExports() + " ownedManagedTensors=" + DLPackStats.ownedManagedTensors()
                + " exportHeaderBytes=" + DLPackStats.exportHeaderBytes() + " javaTensors=" + JavaTensors.live()
                + " guardedDeleters=" + ForeignDeleterGuard.pending() + " carrierNames=" + CARRIERS);
    }

    private static void work(PythonRuntime python, PythonObject fromDlpack, PythonObject sum, long deadline) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        while (System.nanoTime() < deadline) {
            noteCarrier();
            int n = random.nextInt(1000);
            try {
                switch (random.nextInt(6)) {
                    case 0 -> expect(python.evalString(n + " * 2"), Integer.toString(n * 2));
                    case 1, 2 -> pythonObjects(python, n);
                    case 3 -> javaToNumPy(python, fromDlpack, sum, n);
                    case 4 -> numPyToJava(python, n);
                    default -> pythonException(python);
                }
                OPERATIONS.incrementAndGet();
            } catch (Throwable t) {
                FAILURES.incrementAndGet();
                FIRST_FAILURE.compareAndSet(null, t);
            }
            noteCarrier();
            Thread.yield(); // lets the virtual thread resume on another carrier
        }
    }

    /** Python objects made, passed back to Python, read and closed. */
    private static void pythonObjects(PythonRuntime python, int n) {
        try (PythonObject list = python.eval("[" + n + "] * 3"); PythonObject len = python.get("vt_len");
             PythonObject length = python.call(len, list)) {
            expect(length.str(), "3");
            expect(list.str(), "[" + n + ", " + n + ", " + n + "]");
        }
        PythonObject[] items = new PythonObject[8];
        for (int i = 0; i < items.length; i++) {
            items[i] = python.eval(Integer.toString(n + i));
        }
        for (int i = 0; i < items.length; i++) {
            expect(items[i].str(), Integer.toString(n + i));
            items[i].close();
        }
    }

    /** A Java tensor into NumPy; NumPy's array outlives the Java owner, so its deleter frees the memory. */
    private static void javaToNumPy(PythonRuntime python, PythonObject fromDlpack, PythonObject sum, int n) {
        OwnedHostTensor tensor = OwnedHostTensor.copyOf(new double[] {n, 1, 2, 3}, 4);
        PythonObject array;
        try (PythonObject x = python.toPython(DLPackSource.of(tensor))) {
            array = python.call(fromDlpack, x);
        } finally {
            tensor.close();
        }
        try (array; PythonObject total = python.call(sum, array)) {
            expect(total.str(), (n + 6) + ".0");
        }
    }

    /** A NumPy array into Java, read and closed on this virtual thread: NumPy's deleter runs here. */
    private static void numPyToJava(PythonRuntime python, int n) {
        ImportedTensor tensor;
        try (PythonObject array = python.eval("np.arange(4.0) + " + n)) {
            tensor = python.importTensor(array);
        }
        try (tensor) {
            double last = HostTensorView.of(tensor).getDouble(3);
            if (last != n + 3) {
                throw new AssertionError("read " + last + ", expected " + (n + 3));
            }
        }
    }

    private static void pythonException(PythonRuntime python) {
        try {
            python.exec("1 / 0");
            throw new AssertionError("1 / 0 did not raise");
        } catch (PythonException expected) {
            expect(expected.lastLine(), "ZeroDivisionError: division by zero");
        }
    }

    private static void noteCarrier() {
        String name = Thread.currentThread().toString(); // VirtualThread[#22,python-0]/runnable@ForkJoinPool-1-worker-1
        int at = name.lastIndexOf('@');
        if (at >= 0) {
            CARRIERS.add(name.substring(at + 1));
        }
    }

    private static void expect(String actual, String expected) {
        if (!actual.equals(expected)) {
            throw new AssertionError("got '" + actual + "', expected '" + expected + "'");
        }
    }
}
