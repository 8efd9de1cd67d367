package org.jdlpack.cuda;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jdlpack.testsupport.NativeBuild;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/** jdlpack's CUDA constants and struct sizes against the CUDA runtime headers, when installed. */
class CudaConstantsTest {

    @Test
    void constantsMatchCudaRuntimeApiH() throws IOException {
        Path include = Path.of(System.getenv().getOrDefault("CUDA_HOME", "/usr/local/cuda"), "include");
        if (!Files.exists(include.resolve("cuda_runtime_api.h"))) {
            include = Path.of("/usr/local/cuda-13.0/include");
        }
        Assumptions.assumeTrue(NativeBuild.compilerAvailable(), "no C compiler to compile the header probe with");
        Assumptions.assumeTrue(Files.exists(include.resolve("cuda_runtime_api.h")),
                "the CUDA runtime headers are not installed (looked in $CUDA_HOME/include and /usr/local/cuda*/include)");
        Map<String, String> java = new LinkedHashMap<>();
        java.put("cudaSuccess", "" + Cudart.SUCCESS);
        java.put("cudaErrorInvalidValue", "" + Cudart.ERROR_INVALID_VALUE);
        java.put("cudaErrorInsufficientDriver", "" + Cudart.ERROR_INSUFFICIENT_DRIVER);
        java.put("cudaErrorNoDevice", "" + Cudart.ERROR_NO_DEVICE);
        java.put("cudaMemcpyHostToDevice", "" + Cudart.MEMCPY_HOST_TO_DEVICE);
        java.put("cudaMemcpyDeviceToHost", "" + Cudart.MEMCPY_DEVICE_TO_HOST);
        java.put("cudaMemcpyDefault", "" + Cudart.MEMCPY_DEFAULT);
        java.put("cudaMemoryTypeUnregistered", "" + Cudart.MEMORY_TYPE_UNREGISTERED);
        java.put("cudaMemoryTypeHost", "" + Cudart.MEMORY_TYPE_HOST);
        java.put("cudaMemoryTypeDevice", "" + Cudart.MEMORY_TYPE_DEVICE);
        java.put("cudaMemoryTypeManaged", "" + Cudart.MEMORY_TYPE_MANAGED);
        java.put("cudaMemAttachGlobal", "" + Cudart.MEM_ATTACH_GLOBAL);
        java.put("cudaEventDisableTiming", "" + Cudart.EVENT_DISABLE_TIMING);
        java.put("(long long)cudaStreamLegacy", "" + Cudart.STREAM_LEGACY);
        java.put("(long long)cudaStreamPerThread", "" + Cudart.STREAM_PER_THREAD);
        java.put("sizeof(struct cudaPointerAttributes) <= " + Cudart.POINTER_ATTRIBUTES_ROOM, "1");
        java.put("offsetof(struct cudaPointerAttributes, type)", "0");
        java.put("offsetof(struct cudaPointerAttributes, device)", "4");
        java.put("offsetof(struct cudaDeviceProp, name)", "0");
        java.put("sizeof(struct cudaDeviceProp) <= " + Cudart.DEVICE_PROP_ROOM, "1");

        StringBuilder c = new StringBuilder("#include <stddef.h>\n#include <stdio.h>\n#include <cuda_runtime_api.h>\nint main(void) {\n");
        int i = 0;
        for (String expression : java.keySet()) {
            c.append("  printf(\"").append(i++).append(" %lld\\n\", (long long)(").append(expression).append("));\n");
        }
        c.append("  return 0;\n}\n");
        Path dir = NativeBuild.directory();
        Files.writeString(dir.resolve("cuda_probe.c"), c);
        Path probe = NativeBuild.compile("cuda_probe", "-I" + include, "cuda_probe.c");
        List<String> values = NativeBuild.run(dir, List.of(probe.toString())).lines().map(line -> line.split(" ")[1]).toList();
        assertThat(values).containsExactlyElementsOf(java.values());
        System.out.println("CUDA: " + values.size() + " constants and layouts match " + include.resolve("cuda_runtime_api.h"));
    }
}
