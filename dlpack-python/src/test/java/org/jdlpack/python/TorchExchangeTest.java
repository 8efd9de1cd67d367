package org.jdlpack.python;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLDataTypeCode;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.TensorSpec;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.cpu.HostTensorView;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.python.internal.bridge.ForeignDeleterGuard;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * PyTorch as a real peer, both directions, through {@code torch.from_dlpack(x)} on Java tensor
 * objects and {@link PythonRuntime#importTensor} on torch tensors. PyTorch 1.13 (Debian's
 * python3-torch) speaks legacy DLPack only, and refuses bool both ways.
 *
 * <p>Tagged {@code torch}: it runs in a test JVM of its own (the {@code torch} surefire execution),
 * embedding the Python that has PyTorch.
 */
@Tag("torch")
@ExtendWith(NothingLeftBehind.class)
class TorchExchangeTest {

    private static PythonRuntime python;

    @BeforeAll
    static void startTorch() {
        python = PythonPeers.torch();
        System.out.println("PyTorch peer: torch " + python.evalString("torch.__version__") + " on " + python.description());
    }

    @AfterEach
    void pythonHoldsNoJavaTensor() {
        PythonPeers.assertPythonHoldsNoJavaTensor(python);
        assertThat(ForeignDeleterGuard.pending()).as("torch tensors Java has not released").isZero();
    }

    // ---------------------------------------------------------------- PyTorch -> Java

    /** The dtypes PyTorch 1.13 exports, as torch names. */
    static Stream<String> torchDtypes() {
        return Stream.of("uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
                "complex64", "complex128");
    }

    static Stream<Arguments> torchTensors() {
        List<String> views = List.of("base", "base.t()", "base[::2]", "base[:, ::3]", "base[1:, 2:5]", "base[:, 3]", "base[2, 3]",
                "base[1].expand(4, 6)", "base[:0]");
        return torchDtypes().flatMap(dtype -> views.stream().map(view -> Arguments.of(dtype, view)));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("torchTensors")
    void everyTorchDtypeAndLayoutImportsExactly(String dtype, String view) {
        String values = dtype.equals("uint8") ? "torch.arange(24)" : dtype.startsWith("complex")
                ? "torch.complex(torch.arange(24) * 0.5 - 3, -torch.arange(24) * 0.25)"
                : dtype.startsWith("int") ? "torch.arange(24) - 7" : "torch.arange(24) * 0.5 - 3";
        python.exec("base = (" + values + ").to(torch." + dtype + ").reshape(4, 6)\nv = " + view);
        String expected = python.evalString(dtype.startsWith("complex")
                ? "' '.join(repr(float(x)) for x in torch.view_as_real(v.reshape(-1).clone()).double().reshape(-1).tolist())"
                : "' '.join(repr(float(x)) for x in v.reshape(-1).double().tolist())");
        String shape = python.evalString("list(v.shape)");
        String dataPointer = python.evalString("v.data_ptr()");
        try (PythonObject tensor = python.get("v")) {
            long pendingBefore = ForeignDeleterGuard.pending();
            ImportedTensor imported = python.importTensor(tensor);
            assertThat(imported.kind()).as("PyTorch 1.13 speaks legacy DLPack").isEqualTo(ManagedTensorKind.LEGACY);
            // Java now holds the torch tensor alive on its own: drop every Python reference.
            python.exec("del base, v\ngc.collect()");
            HostTensorView host = HostTensorView.of(imported);
            assertThat(host.layout().dtype().toString()).isEqualTo(dtype);
            assertThat(host.layout().shape()).containsExactly(NumPyToJavaTest.parseLongs(shape));
            assertThat(imported.dataAddress() + imported.layout().byteOffset()).as("zero copy").isEqualTo(Long.parseUnsignedLong(dataPointer));
            double[] wanted = parseDoubles(expected);
            boolean complex = host.layout().dtype().code() == DLDataTypeCode.COMPLEX;
            for (int i = 0; i < host.layout().elementCount(); i++) {
                if (complex) {
                    assertThat(host.getDouble(i)).as("%s %s real %d", dtype, view, i).isEqualTo(wanted[2 * i]);
                    assertThat(host.getImaginary(i, 0)).as("%s %s imaginary %d", dtype, view, i).isEqualTo(wanted[2 * i + 1]);
                } else {
                    assertThat(host.getDouble(i)).as("%s %s element %d", dtype, view, i).isEqualTo(wanted[i]);
                }
            }
            assertThat(ForeignDeleterGuard.pending()).isEqualTo(pendingBefore + 1);
            imported.close();
            assertThat(ForeignDeleterGuard.pending()).as("torch's deleter ran exactly once").isEqualTo(pendingBefore);
        }
    }

    /** {@return whether this is PyTorch 1.x, which has no DLPack bool (DLPack had no bool code before 0.8)} */
    private static boolean torch1() {
        return python.evalString("torch.__version__").startsWith("1.");
    }

    @Test
    void boolIsRefusedByTorch1AndExactFromLaterTorch() {
        python.exec("flags = torch.tensor([True, False, True])");
        try (PythonObject flags = python.get("flags")) {
            if (torch1()) {
                assertThatThrownBy(() -> python.importTensor(flags)).isInstanceOf(PythonException.class)
                        .satisfies(e -> assertThat(((PythonException) e).lastLine()).contains("Bool type is not supported by dlpack"));
            } else {
                try (ImportedTensor imported = python.importTensor(flags)) {
                    HostTensorView host = HostTensorView.of(imported);
                    assertThat(new long[] {host.getLong(0), host.getLong(1), host.getLong(2)}).containsExactly(1, 0, 1);
                }
            }
        }
        python.exec("del flags");
    }

    // ---------------------------------------------------------------- Java -> PyTorch

    /** The dtypes PyTorch 1.13 imports (no uint16/32/64, no bool). */
    static Stream<DLDataType> javaDtypes() {
        return Stream.of(DLDataType.UINT8, DLDataType.INT8, DLDataType.INT16, DLDataType.INT32, DLDataType.INT64,
                DLDataType.FLOAT16, DLDataType.BFLOAT16, DLDataType.FLOAT32, DLDataType.FLOAT64, DLDataType.COMPLEX64,
                DLDataType.COMPLEX128);
    }

    /** A layout over a 4x6 row-major base: shape, strides (elements) and the first element's index. */
    record Layout(String name, long[] shape, long[] strides, long firstElement) {
        @Override
        public String toString() {
            return name;
        }
    }

    static final List<Layout> LAYOUTS_AT_ELEMENT_0 = List.of(
            new Layout("contiguous", new long[] {4, 6}, new long[] {6, 1}, 0),
            new Layout("transposed", new long[] {6, 4}, new long[] {1, 6}, 0),
            new Layout("stepped", new long[] {2, 3}, new long[] {12, 2}, 0),
            new Layout("broadcast", new long[] {3, 6}, new long[] {0, 1}, 0),
            new Layout("empty", new long[] {0, 6}, new long[] {6, 1}, 0));

    /** Layouts whose first element is not the buffer's: they export a non-zero byte_offset unless folded. */
    static final List<Layout> LAYOUTS_WITH_OFFSET = List.of(
            new Layout("offset", new long[] {3, 4}, new long[] {6, 1}, 7),
            new Layout("column", new long[] {4}, new long[] {6}, 2),
            new Layout("0-d", new long[] {}, new long[] {}, 5));

    static Stream<Arguments> javaTensorsAtElement0() {
        return javaDtypes().flatMap(dtype -> LAYOUTS_AT_ELEMENT_0.stream().map(layout -> Arguments.of(dtype, layout)));
    }

    static Stream<Arguments> javaTensorsWithOffset() {
        return javaDtypes().flatMap(dtype -> LAYOUTS_WITH_OFFSET.stream().map(layout -> Arguments.of(dtype, layout)));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("javaTensorsAtElement0")
    void everyJavaDtypeAndLayoutReachesTorchExactly(DLDataType dtype, Layout layout) {
        exportToTorch(dtype, layout);
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("javaTensorsWithOffset")
    void javaViewsThatStartInsideTheirBufferReachTorchExactly(DLDataType dtype, Layout layout) {
        exportToTorch(dtype, layout);
    }

    private static void exportToTorch(DLDataType dtype, Layout layout) {
        try (OwnedHostTensor base = OwnedHostTensor.allocate(dtype, 24)) {
            HostTensorView all = base.host();
            boolean complex = dtype.code() == DLDataTypeCode.COMPLEX;
            for (int i = 0; i < 24; i++) {
                switch (dtype.code()) {
                    case UINT -> all.setLong(i, i);
                    case INT -> all.setLong(i, i - 7);
                    default -> all.setDouble(i, i * 0.5 - 3);
                }
                if (complex) {
                    all.setImaginary(i, 0, -i * 0.25);
                }
            }
            long elementBytes = dtype.bits() / 8;
            TensorSpec spec = TensorSpec.builder(base.spec().data(), dtype, layout.shape()).strides(layout.strides())
                    .byteOffset(layout.firstElement() * elementBytes).build();
            OwnedHostTensor view = OwnedHostTensor.wrap(spec, () -> { });
            HostTensorView expected = view.host();
            try (PythonObject x = python.toPython(DLPackSource.of(view))) {
                python.set("x", x);
            }
            python.exec("y = torch.from_dlpack(x)\ndel x");
            try {
                assertThat(python.evalString("str(y.dtype)")).isEqualTo("torch." + torchName(dtype));
                assertThat(python.evalString("list(y.shape)")).isEqualTo(pythonList(layout.shape()));
                assertThat(python.evalString("list(y.stride())")).isEqualTo(pythonList(layout.strides()));
                if (expected.layout().elementCount() > 0) {
                    assertThat(Long.parseLong(python.evalString("y.data_ptr()"))).as("zero copy: torch points at the first element")
                            .isEqualTo(base.spec().data().address() + layout.firstElement() * elementBytes);
                }
                double[] seen = parseDoubles(python.evalString(complex
                        ? "' '.join(repr(float(v)) for v in torch.view_as_real(y.reshape(-1).clone()).double().reshape(-1).tolist())"
                        : "' '.join(repr(float(v)) for v in y.reshape(-1).double().tolist())"));
                assertThat(seen).hasSize((int) expected.layout().elementCount() * (complex ? 2 : 1));
                for (int i = 0; i < expected.layout().elementCount(); i++) {
                    if (complex) {
                        assertThat(seen[2 * i]).as("%s %s real %d", dtype, layout, i).isEqualTo(expected.getDouble(i));
                        assertThat(seen[2 * i + 1]).as("%s %s imaginary %d", dtype, layout, i).isEqualTo(expected.getImaginary(i, 0));
                    } else {
                        assertThat(seen[i]).as("%s %s element %d", dtype, layout, i).isEqualTo(expected.getDouble(i));
                    }
                }
                assertThat(view.references()).as("Java's reference and torch's").isEqualTo(2);
            } finally {
                python.exec("y = None\ngc.collect()"); // also when an assertion failed, so that nothing leaks into the next case
            }
            assertThat(view.references()).as("torch's deleter ran exactly once").isEqualTo(1);
            view.close();
        }
    }

    @Test
    void boolFromJavaIsRefusedByTorch1AndTheTensorIsStillReleasedOnce() {
        try (OwnedHostTensor flags = OwnedHostTensor.allocate(DLDataType.BOOL, 2)) {
            try (PythonObject x = python.toPython(DLPackSource.of(flags))) {
                python.set("x", x);
            }
            flags.host().setLong(1, 1);
            if (torch1()) {
                assertThatThrownBy(() -> python.exec("torch.from_dlpack(x)")).isInstanceOf(PythonException.class)
                        .satisfies(e -> assertThat(((PythonException) e).lastLine()).contains("Unsupported code 6"));
            } else {
                assertThat(python.evalString("torch.from_dlpack(x).tolist()")).isEqualTo("[False, True]");
            }
            python.exec("del x\ngc.collect()");
            assertThat(flags.references()).as("the refused export was released exactly once").isEqualTo(1);
        }
    }

    @Test
    void aTorchTensorGoesToJavaAndBackToTorchWithoutACopy() {
        python.exec("t = torch.arange(12, dtype=torch.float32).reshape(3, 4)");
        try (PythonObject t = python.get("t"); ImportedTensor imported = python.importTensor(t)) {
            HostTensorView host = HostTensorView.of(imported);
            host.setDouble(5, 100);
            assertThat(python.evalString("float(t[1, 1])")).as("Java's write, seen by torch").isEqualTo("100.0");
        }
        python.exec("del t");
    }

    /** jdlpack's dtype names are NumPy's, which are PyTorch's for these types. */
    private static String torchName(DLDataType dtype) {
        return dtype.toString();
    }

    private static String pythonList(long[] values) {
        List<String> parts = new ArrayList<>();
        for (long v : values) {
            parts.add(Long.toString(v));
        }
        return "[" + String.join(", ", parts) + "]";
    }

    private static double[] parseDoubles(String spaceSeparated) {
        return spaceSeparated.isBlank() ? new double[0] : Stream.of(spaceSeparated.split(" ")).mapToDouble(Double::parseDouble).toArray();
    }
}
