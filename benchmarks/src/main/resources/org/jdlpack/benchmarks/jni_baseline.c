/*
 * The JNI baseline: the export a JVM user writes without jdlpack. Java passes a direct
 * ByteBuffer and a shape; C builds a DLManagedTensorVersioned around the buffer's address and
 * pins the buffer with a global reference; the deleter frees the struct and drops the reference
 * (attaching to the JVM, since a consumer may call it from any thread).
 */
#include <jni.h>
#include <stdlib.h>

#include "dlpack.h"

typedef struct {
  JavaVM* vm;
  jobject buffer;
} baseline_ctx;

static void baseline_deleter(DLManagedTensorVersioned* self) {
  baseline_ctx* ctx = self->manager_ctx;
  JNIEnv* env;
  int attached = 0;
  if ((*ctx->vm)->GetEnv(ctx->vm, (void**)&env, JNI_VERSION_1_8) == JNI_EDETACHED) {
    (*ctx->vm)->AttachCurrentThreadAsDaemon(ctx->vm, (void**)&env, NULL);
    attached = 1;
  }
  (*env)->DeleteGlobalRef(env, ctx->buffer);
  (void)attached;
  free(ctx);
  free(self);
}

JNIEXPORT jlong JNICALL Java_org_jdlpack_benchmarks_JniBaseline_export(JNIEnv* env, jclass cls, jobject buffer, jlongArray shape) {
  (void)cls;
  jsize ndim = (*env)->GetArrayLength(env, shape);
  DLManagedTensorVersioned* m = malloc(sizeof *m + 2 * (size_t)ndim * sizeof(int64_t));
  baseline_ctx* ctx = malloc(sizeof *ctx);
  if (!m || !ctx) return 0;
  (*env)->GetJavaVM(env, &ctx->vm);
  ctx->buffer = (*env)->NewGlobalRef(env, buffer);
  int64_t* dims = (int64_t*)(m + 1);
  int64_t* strides = dims + ndim;
  (*env)->GetLongArrayRegion(env, shape, 0, ndim, (jlong*)dims);
  int64_t stride = 1;
  for (jsize i = ndim - 1; i >= 0; i--) {
    strides[i] = stride;
    stride *= dims[i];
  }
  m->version.major = 1;
  m->version.minor = 3;
  m->manager_ctx = ctx;
  m->deleter = baseline_deleter;
  m->flags = 0;
  m->dl_tensor.data = (*env)->GetDirectBufferAddress(env, buffer);
  m->dl_tensor.device.device_type = kDLCPU;
  m->dl_tensor.device.device_id = 0;
  m->dl_tensor.ndim = ndim;
  m->dl_tensor.dtype.code = kDLFloat;
  m->dl_tensor.dtype.bits = 32;
  m->dl_tensor.dtype.lanes = 1;
  m->dl_tensor.shape = dims;
  m->dl_tensor.strides = strides;
  m->dl_tensor.byte_offset = 0;
  return (jlong)(intptr_t)m;
}

/* The same consumer as the C peer's peer_consume: read the metadata, call the deleter. */
JNIEXPORT jlong JNICALL Java_org_jdlpack_benchmarks_JniBaseline_consume(JNIEnv* env, jclass cls, jlong pointer) {
  (void)env;
  (void)cls;
  DLManagedTensorVersioned* m = (DLManagedTensorVersioned*)(intptr_t)pointer;
  DLTensor* t = &m->dl_tensor;
  int64_t seen = t->ndim + t->shape[0] + (int64_t)(intptr_t)t->data + t->dtype.bits;
  m->deleter(m);
  return seen;
}
