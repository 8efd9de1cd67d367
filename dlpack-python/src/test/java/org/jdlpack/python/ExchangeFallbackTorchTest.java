package org.jdlpack.python;

import static org.assertj.core.api.Assertions.assertThat;

import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.cpu.HostTensorView;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.testsupport.ExchangePeer;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.python.internal.bridge.ExchangeImports;
import org.jdlpack.python.internal.bridge.ForeignDeleterGuard;
import org.jdlpack.python.internal.bridge.JavaTensors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Debian's Python with NumPy 1.24 and PyTorch 1.13, which have neither the exchange API nor
 * {@code max_version}: {@link PythonRuntime#importTensor} falls back to {@code __dlpack__()} for
 * both, and the Java tensor type (a C-level type with the exchange API) works with both, and with
 * the C consumer, under that Python too.
 */
@Tag("torch")
@ExtendWith(NothingLeftBehind.class)
class ExchangeFallbackTorchTest {

    private static PythonRuntime python;

    @BeforeAll
    static void startTorch() {
        python = PythonPeers.torch();
        python.exec("import numpy as np\n" + ExchangePeer.pythonSetup("xc") + "\nout = (ctypes.c_int64 * 12)()");
    }

    @AfterEach
    void nothingHeld() {
        python.exec("gc.collect()");
        assertThat(JavaTensors.live()).isZero();
        assertThat(ForeignDeleterGuard.pending()).isZero();
    }

    @Test
    void torchAndNumPyTensorsHaveNoTableAndAreImportedThroughLegacyDunderDlpack() {
        assertThat(python.evalString("(hasattr(torch.Tensor, '__dlpack_c_exchange_api__'), "
                + "hasattr(np.ndarray, '__dlpack_c_exchange_api__'))")).isEqualTo("(False, False)");
        for (String expression : new String[] {"torch.arange(4, dtype=torch.float64)", "np.arange(4.0)"}) {
            long fellBack = ExchangeImports.FELL_BACK.get();
            try (PythonObject object = python.eval(expression); ImportedTensor tensor = python.importTensor(object)) {
                assertThat(ExchangeImports.FELL_BACK.get()).as(expression).isEqualTo(fellBack + 1);
                assertThat(tensor.kind()).as(expression + ": no max_version, so legacy").isEqualTo(ManagedTensorKind.LEGACY);
                assertThat(HostTensorView.of(tensor).getDouble(3)).isEqualTo(3.0);
            }
        }
    }

    @Test
    void aJavaTensorReachesNumPy124AndTorch113AndTheCConsumerThroughItsCLevelType() {
        try (OwnedHostTensor tensor = OwnedHostTensor.copyOf(new float[] {1, 2, 3}, 3)) {
            try (PythonObject x = python.toPython(DLPackSource.of(tensor))) {
                python.set("x", x);
            }
            assertThat(python.evalString("np.from_dlpack(x).tolist()")).isEqualTo("[1.0, 2.0, 3.0]");
            assertThat(python.evalString("torch.from_dlpack(x).tolist()")).isEqualTo("[1.0, 2.0, 3.0]");
            assertThat(python.evalString("xc.xc_consume_exchange(x, 3, out)")).isEqualTo("0");
            assertThat(python.evalString("(out[0], out[1], out[6], out[9])")).isEqualTo("(1, 3, 3, 3)");
            assertThat(python.evalString("xc.xc_consume_dlpack(x, 3, out)")).isEqualTo("0");
            python.exec("del x\ngc.collect()");
            assertThat(tensor.references()).isEqualTo(1);
        }
    }
}
