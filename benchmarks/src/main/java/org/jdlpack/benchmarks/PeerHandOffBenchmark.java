package org.jdlpack.benchmarks;

import java.util.concurrent.TimeUnit;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.python.DLPackSource;
import org.jdlpack.python.PythonObject;
import org.jdlpack.python.PythonRuntime;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Java tensors against PyTorch 2.13's and JAX 0.10's own tensors, same run, on a 2x3x4x5 float32
 * tensor (ExchangeBenchmark's shape). Needs the peers venv: run with {@code JDLPACK_PYTHON} set to
 * the python3 that {@code .ci/python-peers/make-venv} prints (docs/benchmarks.md gives the command).
 *
 * <ul>
 *   <li>{@code torchFromDlpack*}, {@code jaxFromDlpack*}: a Python loop of 1000
 *       {@code torch.from_dlpack(x)} (or {@code jax.dlpack.from_dlpack(x)}) calls, per call, of a
 *       Java tensor object and of the library's own tensor: the protocol and the consumer's import
 *       and release;</li>
 *   <li>{@code importTorch*}: {@code PythonRuntime.importTensor} of a torch tensor and close, from
 *       Java: through torch's C exchange API, and in a fork with
 *       {@code -Dorg.jdlpack.python.exchangeApi=false} through {@code __dlpack__(max_version=(1, 3))}.</li>
 * </ul>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 2, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED"})
public class PeerHandOffBenchmark {

    private PythonRuntime python;
    private OwnedHostTensor tensor;
    private PythonObject javaObject;
    private PythonObject torchTensor;
    private PythonObject torchLoopJava;
    private PythonObject torchLoopTorch;
    private PythonObject jaxLoopJava;
    private PythonObject jaxLoopJax;

    @Setup(Level.Trial)
    public void setUp() {
        python = PythonRuntime.get();
        tensor = OwnedHostTensor.allocate(DLDataType.FLOAT32, 2, 3, 4, 5);
        javaObject = python.toPython(DLPackSource.of(tensor));
        python.set("x", javaObject);
        python.exec("""
                import torch, jax, jax.numpy as jnp, jax.dlpack
                t = torch.zeros((2, 3, 4, 5), dtype=torch.float32)
                j = jnp.zeros((2, 3, 4, 5), dtype=jnp.float32)
                def torch_loop(source):
                    def loop():
                        for _ in range(1000):
                            torch.from_dlpack(source)
                    return loop
                def jax_loop(source):
                    def loop():
                        for _ in range(1000):
                            jax.dlpack.from_dlpack(source)
                    return loop
                torch_java, torch_torch = torch_loop(x), torch_loop(t)
                jax_java, jax_jax = jax_loop(x), jax_loop(j)
                """);
        torchTensor = python.get("t");
        torchLoopJava = python.get("torch_java");
        torchLoopTorch = python.get("torch_torch");
        jaxLoopJava = python.get("jax_java");
        jaxLoopJax = python.get("jax_jax");
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        for (PythonObject object : new PythonObject[] {javaObject, torchTensor, torchLoopJava, torchLoopTorch, jaxLoopJava, jaxLoopJax}) {
            object.close();
        }
        python.exec("del x, t, j, torch_java, torch_torch, jax_java, jax_jax\nimport gc\ngc.collect()");
        tensor.close();
    }

    @Benchmark
    @OperationsPerInvocation(1000)
    public void torchFromDlpackJavaTensor() {
        python.call(torchLoopJava).close();
    }

    @Benchmark
    @OperationsPerInvocation(1000)
    public void torchFromDlpackTorchTensor() {
        python.call(torchLoopTorch).close();
    }

    @Benchmark
    @OperationsPerInvocation(1000)
    public void jaxFromDlpackJavaTensor() {
        python.call(jaxLoopJava).close();
    }

    @Benchmark
    @OperationsPerInvocation(1000)
    public void jaxFromDlpackJaxArray() {
        python.call(jaxLoopJax).close();
    }

    @Benchmark
    public void importTorchExchangeApi() {
        python.importTensor(torchTensor).close();
    }

    @Benchmark
    @Fork(value = 2, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Dorg.jdlpack.python.exchangeApi=false"})
    public void importTorchThroughDlpack() {
        python.importTensor(torchTensor).close();
    }
}
