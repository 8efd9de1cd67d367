package org.jdlpack.python;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.StructLayout;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;

import org.jdlpack.testsupport.CPeer;
import org.junit.jupiter.api.Test;

/**
 * The exchange API tables dlpack-python writes and reads ({@link DLPackExchangeAPILayout}), size,
 * alignment and every offset, against what the C compiler says about the project's dlpack.h (the
 * probe dlpack-abi's conformance test runs; the exchange API entries are checked here).
 */
class ExchangeApiLayoutTest {

    private final Map<String, Long> java = new LinkedHashMap<>();

    private void struct(String name, StructLayout layout, long sizeConstant) {
        assertThat(layout.byteSize()).as("layout size of " + name).isEqualTo(sizeConstant);
        java.put("sizeof." + name, sizeConstant);
        java.put("alignof." + name, layout.byteAlignment());
    }

    private void field(String struct, StructLayout layout, String field, long offsetConstant) {
        assertThat(layout.byteOffset(PathElement.groupElement(field))).as("layout offset of " + struct + "." + field)
                .isEqualTo(offsetConstant);
        java.put("offsetof." + struct + "." + field, offsetConstant);
    }

    @Test
    void theExchangeApiTablesMatchTheCCompiler() {
        struct("DLPackExchangeAPIHeader", DLPackExchangeAPILayout.HEADER_LAYOUT, DLPackExchangeAPILayout.HEADER_SIZE);
        field("DLPackExchangeAPIHeader", DLPackExchangeAPILayout.HEADER_LAYOUT, "version", DLPackExchangeAPILayout.HEADER_VERSION);
        field("DLPackExchangeAPIHeader", DLPackExchangeAPILayout.HEADER_LAYOUT, "prev_api", DLPackExchangeAPILayout.HEADER_PREV_API);
        assertThat(DLPackExchangeAPILayout.HEADER_LAYOUT.byteOffset(PathElement.groupElement("version"), PathElement.groupElement("minor")))
                .isEqualTo(DLPackExchangeAPILayout.HEADER_VERSION_MINOR);

        StructLayout api = DLPackExchangeAPILayout.LAYOUT;
        struct("DLPackExchangeAPI", api, DLPackExchangeAPILayout.SIZE);
        field("DLPackExchangeAPI", api, "header", DLPackExchangeAPILayout.HEADER);
        field("DLPackExchangeAPI", api, "managed_tensor_allocator", DLPackExchangeAPILayout.MANAGED_TENSOR_ALLOCATOR);
        field("DLPackExchangeAPI", api, "managed_tensor_from_py_object_no_sync",
                DLPackExchangeAPILayout.MANAGED_TENSOR_FROM_PY_OBJECT_NO_SYNC);
        field("DLPackExchangeAPI", api, "managed_tensor_to_py_object_no_sync", DLPackExchangeAPILayout.MANAGED_TENSOR_TO_PY_OBJECT_NO_SYNC);
        field("DLPackExchangeAPI", api, "dltensor_from_py_object_no_sync", DLPackExchangeAPILayout.DLTENSOR_FROM_PY_OBJECT_NO_SYNC);
        field("DLPackExchangeAPI", api, "current_work_stream", DLPackExchangeAPILayout.CURRENT_WORK_STREAM);

        Map<String, Long> c = CPeer.probeAbi().entrySet().stream().filter(e -> e.getKey().contains("DLPackExchangeAPI"))
                .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
        assertThat(java.keySet()).as("the exchange API names the C probe printed").containsExactlyInAnyOrderElementsOf(c.keySet());
        for (var entry : java.entrySet()) {
            assertThat(entry.getValue()).as(entry.getKey()).isEqualTo(c.get(entry.getKey()));
        }
    }
}
