package org.jdlpack.opencl;

import java.util.List;

import org.jdlpack.testsupport.PeerRequirement;

/** The OpenCL runtime the tests run on: PoCL on the CPU here and in CI (required there). */
final class OpenCLPeer {

    private OpenCLPeer() {
    }

    /**
     * The first device of the default numbering.
     *
     * @return the device
     * @throws RuntimeException that skips the test (fails it under CI=true) when OpenCL or a
     *                          device is missing, naming what to install
     */
    static OpenCLDevice firstDevice() {
        List<OpenCLDevice> devices;
        try {
            devices = OpenCLDevices.discover();
        } catch (OpenCLException e) {
            throw PeerRequirement.missing("OpenCL", e.getMessage());
        }
        if (devices.isEmpty()) {
            throw PeerRequirement.missing("OpenCL", "no OpenCL platform has a device; install pocl-opencl-icd");
        }
        return devices.get(0);
    }
}
