package org.jdlpack.opencl;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jdlpack.testsupport.NativeBuild;
import org.jdlpack.testsupport.PeerRequirement;
import org.junit.jupiter.api.Test;

/** The OpenCL constants jdlpack hard-codes, against the system's CL/cl.h. */
class OpenCLConstantsTest {

    @Test
    void constantsAndErrorNamesMatchTheOpenCLHeaders() throws IOException {
        if (!Files.exists(Path.of("/usr/include/CL/cl.h"))) {
            throw PeerRequirement.missing("OpenCL headers", "/usr/include/CL/cl.h is missing; install opencl-c-headers");
        }
        Map<String, Long> java = new LinkedHashMap<>();
        java.put("CL_SUCCESS", (long) CL.SUCCESS);
        java.put("CL_INVALID_MEM_OBJECT", (long) CL.INVALID_MEM_OBJECT);
        java.put("CL_TRUE", (long) CL.TRUE);
        java.put("CL_DEVICE_TYPE_ALL", CL.DEVICE_TYPE_ALL);
        java.put("CL_PLATFORM_NAME", (long) CL.PLATFORM_NAME);
        java.put("CL_PLATFORM_VENDOR", (long) CL.PLATFORM_VENDOR);
        java.put("CL_DEVICE_NAME", (long) CL.DEVICE_NAME);
        java.put("CL_DEVICE_VERSION", (long) CL.DEVICE_VERSION);
        java.put("CL_MEM_READ_WRITE", CL.MEM_READ_WRITE);
        java.put("CL_MEM_TYPE", (long) CL.MEM_TYPE);
        java.put("CL_MEM_SIZE", (long) CL.MEM_SIZE);
        java.put("CL_MEM_REFERENCE_COUNT", (long) CL.MEM_REFERENCE_COUNT);
        java.put("CL_MEM_CONTEXT", (long) CL.MEM_CONTEXT);
        java.put("CL_MEM_OBJECT_BUFFER", (long) CL.MEM_OBJECT_BUFFER);
        java.put("CL_BUFFER_CREATE_TYPE_REGION", (long) CL.BUFFER_CREATE_TYPE_REGION);
        java.put("CL_PROGRAM_BUILD_LOG", (long) CL.PROGRAM_BUILD_LOG);
        CL.ERROR_NAMES.forEach((code, name) -> {
            if (!name.equals("CL_PLATFORM_NOT_FOUND_KHR")) {
                java.put(name, (long) code);
            }
        });

        StringBuilder c = new StringBuilder("#define CL_TARGET_OPENCL_VERSION 300\n#include <CL/cl.h>\n#include <stdio.h>\nint main(void) {\n");
        java.keySet().forEach(name -> c.append("  printf(\"").append(name).append(" %lld\\n\", (long long)(").append(name).append("));\n"));
        c.append("  return 0;\n}\n");
        Path dir = NativeBuild.directory();
        Files.writeString(dir.resolve("cl_probe.c"), c);
        Path probe = NativeBuild.compile("cl_probe", "cl_probe.c");
        Map<String, Long> header = new LinkedHashMap<>();
        NativeBuild.run(dir, List.of(probe.toString())).lines().forEach(line -> {
            String[] parts = line.split(" ");
            header.put(parts[0], Long.parseLong(parts[1]));
        });
        assertThat(java).containsExactlyInAnyOrderEntriesOf(header);
        System.out.println("OpenCL: " + java.size() + " constants match CL/cl.h");
    }
}
