/**
 * Host-side plumbing that the device modules share with dlpack-cpu and nobody else: the planner
 * for strided host-device transfers (for org.jdlpack.cuda and org.jdlpack.opencl), and the memory
 * an {@code OwnedHostTensor}'s elements reach, unchecked (for org.jdlpack.onnxruntime). Exported
 * only to those modules; not an API.
 */
package org.jdlpack.cpu.internal;
