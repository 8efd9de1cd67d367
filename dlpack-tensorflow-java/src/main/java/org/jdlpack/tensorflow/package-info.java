/**
 * TensorFlow Java tensors to DLPack and back: {@link org.jdlpack.tensorflow.TensorFlowDLPack} is the
 * front door.
 *
 * <p>TensorFlow to Java goes through TensorFlow's C API (a new eager tensor handle holds the buffer,
 * its delete is the release); Java to TensorFlow through {@code tensorflow::TFE_HandleFromDLPack},
 * which has no C entry, called by its Itanium-mangled name after every field was checked.
 * TensorFlow Java 1.1.0 gives no public access to a tensor's native handle: the adapter reaches
 * {@code RawTensor.nativeHandle()} and {@code RawTensor.fromHandle(TF_Tensor)}, both package-private,
 * through a private lookup (module path: {@code --add-opens tensorflow/org.tensorflow=org.jdlpack.tensorflow}).
 */
package org.jdlpack.tensorflow;
