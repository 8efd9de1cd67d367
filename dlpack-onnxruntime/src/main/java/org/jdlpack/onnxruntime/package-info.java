/**
 * ONNX Runtime sessions fed and read without copies.
 *
 * <ul>
 *   <li>{@link org.jdlpack.onnxruntime.OrtBridge}: the front door. Makes inputs and outputs and
 *       runs sessions with them.</li>
 *   <li>{@link org.jdlpack.onnxruntime.OrtInput}: an {@code OnnxTensor} over a DLPack tensor's
 *       memory (imported, Java-owned or borrowed), and the hold that keeps that memory alive
 *       until the input closes.</li>
 *   <li>{@link org.jdlpack.onnxruntime.OrtOutput}: a pinned output, written by ONNX Runtime into
 *       an {@code OwnedHostTensor} that exports to any DLPack consumer.</li>
 *   <li>{@link org.jdlpack.onnxruntime.GuardedSession}: an {@code OrtSession} whose close waits
 *       for the bridge's runs in flight.</li>
 *   <li>{@link org.jdlpack.onnxruntime.CopiedOutputs}: outputs ONNX Runtime allocated itself,
 *       copied into exportable tensors.</li>
 *   <li>{@link org.jdlpack.onnxruntime.OrtCApiSession}: the C route, ONNX Runtime's C API through
 *       FFM, for what the Java API cannot do (tensors over 2 GiB, uint16/32/64 and float8, runs
 *       without maps, IOBinding, outputs of a shape the model decides without a copy); its
 *       failures are {@link org.jdlpack.onnxruntime.OrtStatusException}s. Its pieces:
 *       {@link org.jdlpack.onnxruntime.OrtCApiTensor} (a value over a tensor's memory),
 *       {@link org.jdlpack.onnxruntime.OrtCApiRun} (a prepared run),
 *       {@link org.jdlpack.onnxruntime.OrtCApiBinding} (an IOBinding) and
 *       {@link org.jdlpack.onnxruntime.AllocatedOutputs} (ONNX Runtime's own outputs, exported).</li>
 * </ul>
 *
 * <p>ONNX Runtime reads and writes tensor memory through raw pointers, outside the FFM runtime's
 * lifetime checks: memory freed under it gives silently wrong numbers or a crash. The types here
 * order the releases so that cannot happen: the {@code OnnxTensor} never escapes, is closed before
 * the memory, and runs only after a check that everything it touches is open; a run holds what it
 * touches (inputs, outputs, a guarded session) until it returns, and memory a tensor does not own
 * (a wrapped tensor's) never reaches ONNX Runtime in place.
 */
package org.jdlpack.onnxruntime;
