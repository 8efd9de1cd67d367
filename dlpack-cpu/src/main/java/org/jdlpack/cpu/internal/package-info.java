/**
 * Host-side plumbing that the device modules share with dlpack-cpu and nobody else: the planner
 * for strided host-device transfers and the row walk behind every strided copy (for
 * org.jdlpack.cuda and org.jdlpack.opencl), and the memory a wrapped {@code OwnedHostTensor} does
 * not own (for org.jdlpack.onnxruntime). Exported only to those modules; not an API.
 */
package org.jdlpack.cpu.internal;
