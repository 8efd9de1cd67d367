/**
 * OpenCL buffers as DLPack tensors ({@code kDLOpenCL}), through libOpenCL downcalls: device
 * discovery and numbering ({@link org.jdlpack.opencl.OpenCLDevices}), contexts, buffers and their
 * exports, and host transfers of imported OpenCL tensors ({@link org.jdlpack.opencl.OpenCLTensorView}).
 */
package org.jdlpack.opencl;
