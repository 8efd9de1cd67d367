package org.jdlpack.cpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLPackStats;
import org.jdlpack.abi.ManagedTensorHandle;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.peer.NothingLeftBehind;
import org.jdlpack.abi.peer.NumPyPeer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Java tensors consumed by {@code np.from_dlpack}: zero copy both ways, one deleter call. */
@ExtendWith(NothingLeftBehind.class)
class JavaToNumPyTest {

    private static NumPyPeer numpy;

    @BeforeAll
    static void startNumPy() {
        numpy = NumPyPeer.require();
    }

    private static ManagedTensorHandle export(CpuTensor tensor, ManagedTensorKind kind) {
        return kind == ManagedTensorKind.VERSIONED ? tensor.exportVersioned() : tensor.exportLegacy();
    }

    @ParameterizedTest
    @EnumSource(ManagedTensorKind.class)
    void numPySeesJavasValuesAndJavaSeesNumPysWrites(ManagedTensorKind kind) {
        CpuTensor tensor = CpuTensor.copyOf(new float[] {1, 2, 3, 4, 5, 6}, 2, 3);
        numpy.putCapsule("cap", export(tensor, kind));
        numpy.exec("arr = np.from_dlpack(JavaTensor(cap))\ndel cap");
        assertThat(numpy.eval("arr.dtype")).isEqualTo("float32");
        assertThat(numpy.eval("arr.shape")).isEqualTo("(2, 3)");
        assertThat(numpy.eval("arr.tolist()")).isEqualTo("[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]");
        assertThat(numpy.eval("arr.ctypes.data")).isEqualTo(Long.toString(tensor.spec().data().address()));

        if (kind == ManagedTensorKind.VERSIONED) {
            numpy.exec("arr[1, 2] = 42");
            assertThat(tensor.host().getFloat(5)).isEqualTo(42f);
        } else {
            // NumPy's own policy: a legacy capsule cannot say read-only, so NumPy imports it read-only.
            assertThat(numpy.eval("arr.flags.writeable")).isEqualTo("False");
        }
        tensor.host().setFloat(0, -1);
        assertThat(numpy.eval("float(arr[0, 0])")).isEqualTo("-1.0");

        assertThat(tensor.references()).as("Java's reference and NumPy's").isEqualTo(2);
        numpy.exec("del arr\ngc.collect()");
        assertThat(tensor.references()).as("NumPy's deleter ran exactly once").isEqualTo(1);
        tensor.close();
        assertThat(tensor.references()).isZero();
    }

    @Test
    void theLastReferenceMayDieOnAPythonThread() {
        CpuTensor tensor = CpuTensor.copyOf(new double[] {1, 2, 3}, 3);
        numpy.putCapsule("cap", tensor.exportVersioned());
        tensor.close(); // NumPy now holds the last reference
        numpy.exec("""
                holder = [np.from_dlpack(JavaTensor(cap))]
                del cap
                seen = []
                def drop():
                    seen.append(float(holder[0].sum()))
                    holder.clear()
                    gc.collect()
                t = threading.Thread(target=drop)
                t.start()
                t.join()
                """);
        assertThat(numpy.eval("seen")).isEqualTo("[6.0]");
        assertThat(tensor.references()).as("released by NumPy's deleter on a Python thread").isZero();
    }

    @Test
    void readOnlyTensorsReachNumPyReadOnlyOrAsACopy() {
        try (CpuTensor source = CpuTensor.copyOf(new int[] {1, 2, 3}, 3)) {
            CpuTensor readOnly = CpuTensor.wrap(org.jdlpack.abi.TensorSpec.of(source.spec().data().asReadOnly(), DLDataType.INT32, 3),
                    () -> { });
            assertThatThrownBy(readOnly::exportLegacy).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("read-only");

            numpy.putCapsule("cap", readOnly.exportVersioned());
            numpy.exec("ro = np.from_dlpack(JavaTensor(cap))\ndel cap");
            assertThat(numpy.eval("ro.flags.writeable")).isEqualTo("False");
            assertThat(numpy.eval("_refusal(lambda: ro.__setitem__(0, 9))")).contains("read-only");
            numpy.exec("del ro\ngc.collect()");

            numpy.putCapsule("cap", readOnly.exportVersionedCopy());
            numpy.exec("cp = np.from_dlpack(JavaTensor(cap))\ndel cap\ncp[0] = 9");
            assertThat(numpy.eval("cp.tolist()")).isEqualTo("[9, 2, 3]");
            assertThat(source.host().getLong(0)).as("the copy is not the original").isEqualTo(1);
            numpy.exec("del cp\ngc.collect()");

            numpy.putCapsule("cap", readOnly.exportLegacyCopy());
            numpy.exec("lc = np.from_dlpack(JavaTensor(cap))\ndel cap");
            assertThat(numpy.eval("lc.tolist()")).isEqualTo("[1, 2, 3]");
            numpy.exec("del lc\ngc.collect()");
            readOnly.close();
        }
    }

    @ParameterizedTest
    @EnumSource(ManagedTensorKind.class)
    void aCapsuleNobodyConsumesStillReleasesTheTensorOnce(ManagedTensorKind kind) {
        long before = NumPyPeer.CAPSULE_DESTRUCTOR_RELEASES.get();
        CpuTensor tensor = CpuTensor.allocate(DLDataType.FLOAT32, 4);
        numpy.putCapsule("cap", export(tensor, kind));
        assertThat(tensor.references()).isEqualTo(2);
        numpy.exec("del cap\ngc.collect()");
        assertThat(tensor.references()).isEqualTo(1);
        assertThat(NumPyPeer.CAPSULE_DESTRUCTOR_RELEASES.get()).isEqualTo(before + 1);
        tensor.close();
    }

    @ParameterizedTest
    @EnumSource(ManagedTensorKind.class)
    void numPyRefusesACapsuleConsumedTwice(ManagedTensorKind kind) {
        CpuTensor tensor = CpuTensor.allocate(DLDataType.FLOAT32, 4);
        numpy.putCapsule("cap", export(tensor, kind));
        numpy.exec("jt = JavaTensor(cap)\ndel cap\nfirst = np.from_dlpack(jt)");
        String refusal = numpy.eval("_refusal(lambda: np.from_dlpack(jt))");
        assertThat(refusal).as("NumPy's refusal of a used capsule").isNotEmpty();
        numpy.exec("del first, jt\ngc.collect()");
        assertThat(tensor.references()).isEqualTo(1);
        tensor.close();
        assertThat(DLPackStats.liveExports()).isZero();
    }
}
