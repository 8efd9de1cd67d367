/**
 * Host-side plumbing that the device modules share with dlpack-cpu and nobody else: the planner
 * for strided host-device transfers and the row walk behind every strided copy. Exported only to
 * org.jdlpack.cuda and org.jdlpack.opencl; not an API.
 */
package org.jdlpack.cpu.internal;
