package org.jdlpack.djl;

import ai.djl.Device;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import org.jdlpack.abi.ExportOptions;
import org.jdlpack.abi.ExportOwner;
import org.jdlpack.abi.ImportLifetime;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.TensorSpec;
import org.jdlpack.abi.testing.VirtualThreadStress;
import org.junit.jupiter.api.Test;

/**
 * {@link DjlDLPack} from many virtual threads on several carriers, in a child JVM (a C++ abort
 * must fail this test, not the build; DJL offline as in the module's tests): Java tensors into
 * DJL and NDArrays into Java, each released in both orders and on another virtual thread, with a
 * manager of its own per operation; every Java owner released once and {@code DLPackStats} quiet
 * after ({@link VirtualThreadStress}).
 */
class DjlVirtualThreadsTest {

    /** DJL for one operation: a manager of its own, closed after it; legacy exports, the struct libtorch 2.7.1 takes. */
    private record Djl(DjlDLPack dlpack, NDManager manager) implements VirtualThreadStress.Library<NDArray> {

        @Override
        public NDArray fromJava(ExportOwner owner, TensorSpec spec) {
            return dlpack.toNDArray(owner.export(spec, ExportOptions.LEGACY), manager);
        }

        @Override
        public NDArray ramp(int n) {
            return manager.arange(n, n + 4f, 1f);
        }

        @Override
        public float get(NDArray tensor, int index) {
            return tensor.getFloat(index);
        }

        @Override
        public ImportedTensor toJava(NDArray tensor, ImportLifetime lifetime) {
            return dlpack.importTensor(tensor, lifetime);
        }

        @Override
        public void close() {
            manager.close();
        }
    }

    /** Child JVM: the run, then its summary line. */
    public static void main(String[] args) throws InterruptedException {
        DjlDLPack dlpack = DjlDLPack.get();
        VirtualThreadStress.run(() -> new Djl(dlpack, NDManager.newBaseManager(Device.cpu(), "PyTorch")));
    }

    @Test
    void manyVirtualThreadsOnSeveralCarriersHandTensorsBothWays() {
        VirtualThreadStress.assertPassed(VirtualThreadStress.child()
                .options("-Dai.djl.offline=true", "-DENGINE_CACHE_DIR=" + System.getProperty("ENGINE_CACHE_DIR"), "-DOPT_OUT_TRACKING=true")
                .run(DjlVirtualThreadsTest.class));
    }
}
