package org.jdlpack.opencl;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.ImportLifetime;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.ExportedTensor;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.TensorLayout;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Use after close of OpenCL owners and views is an {@link IllegalStateException}, never a native
 * call on a released handle (which PoCL answers with SIGABRT), and no close releases twice. Each
 * test gets a context of its own, since some close it.
 */
@ExtendWith(NothingLeftBehind.class)
class OpenCLLifetimeTest {

    private static OpenCLDevice device;
    private OpenCLContext context;

    @BeforeAll
    static void findDevice() {
        device = OpenCLPeer.firstDevice();
    }

    @BeforeEach
    void openContext() {
        context = OpenCLContext.create(device);
    }

    @AfterEach
    void closeContext() {
        context.close();
    }

    /** The two reproductions of the report (issue 13, item 1), each ending in the call that aborted the JVM. */
    enum Reproduction {
        /** Export a buffer, import it, view it; close the tensor and the buffer; read through the view. */
        VIEW_READ_AFTER_TENSOR_AND_BUFFER_CLOSED,
        /** Read a buffer after closing it. */
        BUFFER_READ_AFTER_CLOSE;

        /** Runs it on {@code context}; returns what the last call threw, or "no exception". */
        String runOn(OpenCLContext context) {
            OpenCLBuffer buffer = context.allocate(64);
            buffer.write(0, new float[] {1, 2, 3, 4});
            try {
                if (this == BUFFER_READ_AFTER_CLOSE) {
                    buffer.close();
                    buffer.readFloats(0, 4);
                } else {
                    ImportedTensor tensor = buffer.export(TensorLayout.of(DLDataType.FLOAT32, 4)).importTensor();
                    OpenCLTensorView view = OpenCLTensorView.of(tensor, context);
                    tensor.close();
                    buffer.close();
                    view.readFloats();
                }
                return "no exception";
            } catch (RuntimeException e) {
                return e.getClass().getName() + ": " + e.getMessage();
            }
        }
    }

    /** Child JVM: runs one reproduction and prints its outcome; a crash shows as a failed exit. */
    public static void main(String[] args) {
        try (OpenCLContext context = OpenCLContext.create(OpenCLPeer.firstDevice())) {
            System.out.println("OUTCOME " + Reproduction.valueOf(args[0]).runOn(context));
        }
    }

    @ParameterizedTest
    @EnumSource(Reproduction.class)
    void theReportedReproductionEndsInAnExceptionInAChildJvm(Reproduction reproduction) throws Exception {
        List<String> command = List.of(ProcessHandle.current().info().command().orElseThrow(), "--enable-native-access=ALL-UNNAMED",
                "-cp", System.getProperty("java.class.path"), OpenCLLifetimeTest.class.getName(), reproduction.name());
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as("exit status of the child JVM; its output:%n%s", output).isZero();
        assertThat(output).contains("OUTCOME java.lang.IllegalStateException: ");
    }

    @ParameterizedTest
    @EnumSource(Reproduction.class)
    void theReportedReproductionEndsInAnExceptionInProcess(Reproduction reproduction) {
        assertThat(reproduction.runOn(context)).isIn("java.lang.IllegalStateException: OpenCLBuffer is closed",
                "java.lang.IllegalStateException: ImportedTensor is closed");
    }

    @Test
    void everyOperationOfAClosedBufferThrowsAndASecondCloseReleasesNothing() {
        OpenCLBuffer buffer = context.allocate(64);
        MemorySegment raw = MemorySegment.ofAddress(buffer.handle().address());
        try (ExportedTensor export = buffer.export(TensorLayout.of(DLDataType.FLOAT32, 16))) {
            assertThat(buffer.referenceCount()).isEqualTo(2);
            buffer.close();
            assertThat(referenceCount(raw)).as("the export's reference").isEqualTo(1);

            assertThatThrownBy(buffer::close).isInstanceOf(IllegalStateException.class).hasMessage("OpenCLBuffer already closed");
            assertThat(referenceCount(raw)).as("a second close released nothing").isEqualTo(1);
            assertThatThrownBy(() -> buffer.readFloats(0, 4)).isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(() -> buffer.write(0, new float[] {1})).isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(buffer::referenceCount).isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(() -> buffer.export(TensorLayout.of(DLDataType.FLOAT32, 16))).isInstanceOf(IllegalStateException.class)
                    .hasMessage("OpenCLBuffer is closed");
            assertThat(referenceCount(raw)).as("a refused export retained nothing").isEqualTo(1);

            // The export still works: its consumer holds the buffer alive.
            try (ImportedTensor imported = export.importTensor()) {
                assertThat(OpenCLTensorView.of(imported, context).readFloats()).hasSize(16);
            }
        }
    }

    @Test
    void aViewFailsOnceItsTensorIsClosedEvenWhileTheBufferLives() {
        try (OpenCLBuffer buffer = context.allocate(64)) {
            buffer.write(0, new float[] {7, 8});
            ImportedTensor tensor = buffer.export(TensorLayout.of(DLDataType.FLOAT32, 2)).importTensor();
            OpenCLTensorView view = OpenCLTensorView.of(tensor, context);
            assertThat(view.readFloats()).containsExactly(7, 8);
            MemorySegment handle = view.handle();
            tensor.close();
            assertThatThrownBy(view::readFloats).isInstanceOf(IllegalStateException.class).hasMessage("ImportedTensor is closed");
            assertThatThrownBy(() -> view.writeFloats(new float[] {1, 2})).isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(() -> OpenCLTensorView.of(tensor, context)).isInstanceOf(IllegalStateException.class);
            try (OpenCLKernel kernel = context.compile("__kernel void k(__global float* d) { d[0] = 1; }", "k")) {
                assertThatThrownBy(() -> kernel.run(1, handle)).isInstanceOf(IllegalStateException.class);
            }
            assertThat(buffer.readFloats(0, 2)).as("nothing was written").containsExactly(7, 8);
        }
    }

    @Test
    void aViewOfATensorInACallersArenaFailsOnceTheArenaIsClosed() {
        try (OpenCLBuffer buffer = context.allocate(64)) {
            OpenCLTensorView view;
            try (Arena arena = Arena.ofConfined()) {
                ImportedTensor tensor = buffer.export(TensorLayout.of(DLDataType.FLOAT32, 4)).importTensor(ImportLifetime.in(arena));
                view = OpenCLTensorView.of(tensor, context);
                assertThat(view.readFloats()).hasSize(4);
            }
            assertThatThrownBy(view::readFloats).isInstanceOf(IllegalStateException.class);
        }
    }

    @Test
    void aClosedKernelRefusesToRunAndAClosedBufferArgumentIsRefusedWithoutARetain() {
        String source = "__kernel void fill(__global float* d, float v) { d[get_global_id(0)] = v; }";
        OpenCLKernel kernel = context.compile(source, "fill");
        try (OpenCLBuffer target = context.allocate(16)) {
            kernel.run(4, target, 2f);
            assertThat(target.readFloats(0, 4)).containsExactly(2, 2, 2, 2);
            assertThat(target.referenceCount()).as("the run released what it retained").isEqualTo(1);

            OpenCLBuffer closed = context.allocate(16);
            closed.close();
            assertThatThrownBy(() -> kernel.run(4, closed, 3f)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("argument 0 of kernel fill");
            assertThatThrownBy(() -> kernel.run(4, target, closed, 3f)).isInstanceOf(IllegalStateException.class);
            assertThat(target.referenceCount()).as("a refused run released what it had retained").isEqualTo(1);

            kernel.close();
            assertThatThrownBy(() -> kernel.run(4, target, 5f)).isInstanceOf(IllegalStateException.class)
                    .hasMessage("OpenCLKernel is closed");
            assertThatThrownBy(kernel::close).isInstanceOf(IllegalStateException.class).hasMessage("OpenCLKernel already closed");
            assertThat(target.readFloats(0, 4)).containsExactly(2, 2, 2, 2);
        }
    }

    @Test
    void aClosedContextRefusesEverythingThatNeedsItsQueue() {
        OpenCLContext context = OpenCLContext.create(device);
        OpenCLBuffer buffer = context.allocate(16);
        ImportedTensor tensor = buffer.export(TensorLayout.of(DLDataType.FLOAT32, 4)).importTensor();
        OpenCLTensorView view = OpenCLTensorView.of(tensor, context);
        context.close();
        assertThatThrownBy(context::close).isInstanceOf(IllegalStateException.class).hasMessage("OpenCLContext already closed");
        assertThatThrownBy(context::finish).isInstanceOf(IllegalStateException.class).hasMessage("OpenCLContext is closed");
        assertThatThrownBy(() -> context.allocate(16)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> context.compile("__kernel void k() { }", "k")).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> buffer.readFloats(0, 4)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(view::readFloats).isInstanceOf(IllegalStateException.class);
        // The buffer and the tensor are still owned, and release normally.
        tensor.close();
        buffer.close();
    }

    @Test
    void exportsRacingACloseEitherRetainOrThrowAndTheCountAddsUp() throws Exception {
        for (int round = 0; round < 50; round++) {
            OpenCLBuffer buffer = context.allocate(64);
            MemorySegment raw = MemorySegment.ofAddress(buffer.handle().address());
            CLBuffers.retainMemObject(raw); // the test's own reference, so that the count stays readable
            List<ExportedTensor> exports = new java.util.concurrent.CopyOnWriteArrayList<>();
            Thread exporter = Thread.ofPlatform().start(() -> {
                while (true) {
                    try {
                        exports.add(buffer.export(TensorLayout.of(DLDataType.FLOAT32, 16)));
                    } catch (IllegalStateException closed) {
                        return;
                    }
                }
            });
            while (exports.isEmpty() && exporter.isAlive()) {
                Thread.onSpinWait();
            }
            closeRetryingWhileInUse(buffer);
            exporter.join();
            assertThat(referenceCount(raw)).isEqualTo(1 + exports.size());
            exports.forEach(ExportedTensor::close);
            assertThat(referenceCount(raw)).isEqualTo(1);
            CLBuffers.releaseMemObject(raw);
        }
    }

    /** A close fails, leaving the buffer open, while another thread is inside an OpenCL call on it. */
    private static void closeRetryingWhileInUse(OpenCLBuffer buffer) {
        while (true) {
            try {
                buffer.close();
                return;
            } catch (IllegalStateException inUse) {
                assertThat(inUse).hasMessageContaining("in use by a native call on another thread");
            }
        }
    }

    private static int referenceCount(MemorySegment mem) {
        return (int) CLBuffers.getMemObjectInfo(mem, CL.MEM_REFERENCE_COUNT, JAVA_INT);
    }
}
