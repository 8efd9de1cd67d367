package org.jdlpack.python;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.StructLayout;
import java.util.Map;
import java.util.stream.Collectors;

import org.jdlpack.abi.testing.LayoutFacts;
import org.jdlpack.python.internal.bridge.DLPackExchangeAPILayout;
import org.jdlpack.testsupport.CPeer;
import org.junit.jupiter.api.Test;

/**
 * The exchange API tables dlpack-python writes and reads ({@link DLPackExchangeAPILayout}), size,
 * alignment and every offset, against what the C compiler says about the project's dlpack.h (the
 * probe dlpack-abi's conformance test runs; the exchange API entries are checked here).
 */
class ExchangeApiLayoutTest {

    private final LayoutFacts javaSide = new LayoutFacts();

    @Test
    void theExchangeApiTablesMatchTheCCompiler() {
        javaSide.struct("DLPackExchangeAPIHeader", DLPackExchangeAPILayout.HEADER_LAYOUT, DLPackExchangeAPILayout.HEADER_SIZE);
        javaSide.field("DLPackExchangeAPIHeader", DLPackExchangeAPILayout.HEADER_LAYOUT, "version", DLPackExchangeAPILayout.HEADER_VERSION);
        javaSide.field("DLPackExchangeAPIHeader", DLPackExchangeAPILayout.HEADER_LAYOUT, "prev_api", DLPackExchangeAPILayout.HEADER_PREV_API);
        assertThat(DLPackExchangeAPILayout.HEADER_LAYOUT.byteOffset(PathElement.groupElement("version"), PathElement.groupElement("minor")))
                .isEqualTo(DLPackExchangeAPILayout.HEADER_VERSION_MINOR);

        StructLayout api = DLPackExchangeAPILayout.LAYOUT;
        javaSide.struct("DLPackExchangeAPI", api, DLPackExchangeAPILayout.SIZE);
        javaSide.field("DLPackExchangeAPI", api, "header", DLPackExchangeAPILayout.HEADER);
        javaSide.field("DLPackExchangeAPI", api, "managed_tensor_allocator", DLPackExchangeAPILayout.MANAGED_TENSOR_ALLOCATOR);
        javaSide.field("DLPackExchangeAPI", api, "managed_tensor_from_py_object_no_sync",
                DLPackExchangeAPILayout.MANAGED_TENSOR_FROM_PY_OBJECT_NO_SYNC);
        javaSide.field("DLPackExchangeAPI", api, "managed_tensor_to_py_object_no_sync", DLPackExchangeAPILayout.MANAGED_TENSOR_TO_PY_OBJECT_NO_SYNC);
        javaSide.field("DLPackExchangeAPI", api, "dltensor_from_py_object_no_sync", DLPackExchangeAPILayout.DLTENSOR_FROM_PY_OBJECT_NO_SYNC);
        javaSide.field("DLPackExchangeAPI", api, "current_work_stream", DLPackExchangeAPILayout.CURRENT_WORK_STREAM);

        Map<String, Long> c = CPeer.probeAbi().entrySet().stream().filter(e -> e.getKey().contains("DLPackExchangeAPI"))
                .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
        javaSide.assertSameAs(c);
    }
}
