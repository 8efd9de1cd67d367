/*
 * The C test peer: a native library that consumes jdlpack's exports and produces tensors of its
 * own, ordinary, unusual and malformed, with counting deleters. Built as a shared library at test
 * time and called from Java through FFM downcalls.
 *
 * Produced tensors are tracked in a table by id. Their deleter counts calls and records the
 * calling thread, but frees nothing: everything is freed by peer_reset(), so a second deleter call
 * is observable as a count of 2 rather than a use after free.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "dlpack.h"
#include "peer_deleter.h"

#define PEER_API __attribute__((visibility("default")))

/* ---------- consuming: reading tensors written by Java ---------- */

static DLTensor* tensor_of(void* managed, int legacy) {
  return legacy ? &((DLManagedTensor*)managed)->dl_tensor : &((DLManagedTensorVersioned*)managed)->dl_tensor;
}

/* Byte address of the element with the given logical (row-major) index. */
static char* element_at(const DLTensor* t, int64_t linear, size_t elem_size) {
  int64_t offset = 0;
  for (int d = t->ndim - 1; d >= 0; d--) {
    int64_t extent = t->shape[d];
    int64_t index = linear % extent;
    linear /= extent;
    int64_t stride = t->strides ? t->strides[d] : 0;
    if (!t->strides) {
      stride = 1;
      for (int e = d + 1; e < t->ndim; e++) stride *= t->shape[e];
    }
    offset += index * stride;
  }
  return (char*)t->data + t->byte_offset + offset * (int64_t)elem_size;
}

static int64_t element_count(const DLTensor* t) {
  int64_t n = 1;
  for (int d = 0; d < t->ndim; d++) n *= t->shape[d];
  return n;
}

/* Sum of a float32 tensor in logical order, honouring strides and byte_offset. */
PEER_API double peer_sum_f32(void* managed, int legacy) {
  DLTensor* t = tensor_of(managed, legacy);
  double sum = 0;
  int64_t n = element_count(t);
  for (int64_t i = 0; i < n; i++) {
    float v;
    memcpy(&v, element_at(t, i, sizeof(float)), sizeof v);
    sum += v;
  }
  return sum;
}

/* Writes start, start+step, ... into a float32 tensor in logical order. */
PEER_API void peer_fill_f32(void* managed, int legacy, float start, float step) {
  DLTensor* t = tensor_of(managed, legacy);
  int64_t n = element_count(t);
  for (int64_t i = 0; i < n; i++) {
    float v = start + step * (float)i;
    memcpy(element_at(t, i, sizeof(float)), &v, sizeof v);
  }
}

/* Reads a field of a managed tensor as C sees it, so Java can check what it wrote. */
PEER_API int64_t peer_field(void* managed, int legacy, int which) {
  DLTensor* t = tensor_of(managed, legacy);
  switch (which) {
    case 0: return legacy ? -1 : (int64_t)((DLManagedTensorVersioned*)managed)->version.major;
    case 1: return legacy ? -1 : (int64_t)((DLManagedTensorVersioned*)managed)->version.minor;
    case 2: return legacy ? -1 : (int64_t)((DLManagedTensorVersioned*)managed)->flags;
    case 3: return t->ndim;
    case 4: return t->device.device_type;
    case 5: return t->device.device_id;
    case 6: return t->dtype.code;
    case 7: return t->dtype.bits;
    case 8: return t->dtype.lanes;
    case 9: return (int64_t)t->byte_offset;
    case 10: return (int64_t)(intptr_t)t->data;
    case 11: return t->strides == NULL;
    default:
      if (which >= 100 && which < 100 + t->ndim) return t->shape[which - 100];
      if (which >= 200 && which < 200 + t->ndim) return t->strides[which - 200];
      return INT64_MIN;
  }
}

PEER_API void peer_delete(void* managed, int legacy) { call_deleter(managed, legacy); }

typedef struct {
  void** tensors;
  int begin, end, legacy;
  pthread_barrier_t* start;
} delete_job;

static void* delete_slice(void* arg) {
  delete_job* job = arg;
  pthread_barrier_wait(job->start);
  for (int i = job->begin; i < job->end; i++) peer_delete(job->tensors[i], job->legacy);
  return NULL;
}

/*
 * Calls the deleters of n tensors from nthreads new pthreads released together, so that
 * deleters run concurrently on threads the JVM did not create. Returns 0 when all threads ran.
 */
PEER_API int peer_delete_on_threads(void** tensors, int n, int legacy, int nthreads) {
  pthread_t threads[64];
  delete_job jobs[64];
  pthread_barrier_t start;
  if (nthreads < 1 || nthreads > 64) return -1;
  pthread_barrier_init(&start, NULL, (unsigned)nthreads);
  for (int k = 0; k < nthreads; k++) {
    jobs[k] = (delete_job){tensors, (int)((int64_t)n * k / nthreads), (int)((int64_t)n * (k + 1) / nthreads), legacy, &start};
    if (pthread_create(&threads[k], NULL, delete_slice, &jobs[k]) != 0) return -2;
  }
  for (int k = 0; k < nthreads; k++) pthread_join(threads[k], NULL);
  pthread_barrier_destroy(&start);
  return 0;
}

static void* delete_one(void* arg) {
  void** job = arg;
  peer_delete(job[0], (int)(intptr_t)job[1]);
  return NULL;
}

static void* delete_one_owned(void* arg) {
  delete_one(arg);
  free(arg);
  return NULL;
}

/* Calls one deleter from a new pthread and waits for it. */
PEER_API int peer_delete_on_new_thread(void* managed, int legacy) {
  pthread_t thread;
  void* job[2] = {managed, (void*)(intptr_t)legacy};
  if (pthread_create(&thread, NULL, delete_one, job) != 0) return -1;
  return pthread_join(thread, NULL);
}

/* ---------- producing: tensors for Java to import ---------- */

typedef struct {
  void* managed;
  int legacy;
  void* data;
  int64_t* shape;
  int64_t* strides;
  atomic_int calls;
  atomic_long thread;
} produced;

static produced** table;
static int table_size, table_capacity;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_long total_calls;

static void count_call(produced* p) {
  atomic_fetch_add(&p->calls, 1);
  atomic_store(&p->thread, (long)syscall(SYS_gettid));
  atomic_fetch_add(&total_calls, 1);
}

static void counting_deleter_versioned(DLManagedTensorVersioned* self) { count_call(self->manager_ctx); }
static void counting_deleter_legacy(DLManagedTensor* self) { count_call(self->manager_ctx); }

/*
 * For benchmarks: a deleter that does nothing, so that what is timed is the consumer's side (a
 * counting deleter makes a gettid system call and updates a process-wide counter, which threads
 * importing their own tensors would then share). The tensor stays owned by the table.
 */
static void quiet_deleter(void* self) { (void)self; }

PEER_API void peer_use_quiet_deleter(void* managed, int legacy) {
  if (legacy) {
    ((DLManagedTensor*)managed)->deleter = (void (*)(DLManagedTensor*))quiet_deleter;
  } else {
    ((DLManagedTensorVersioned*)managed)->deleter = (void (*)(DLManagedTensorVersioned*))quiet_deleter;
  }
}

/*
 * Makes a managed tensor from the given fields. data_mode: 0 allocate a buffer that holds every
 * element the shape and strides reach (filled with 0, 1, 2, ... as float32 by memory position),
 * 1 NULL data, 2 a small dummy buffer. null_shape writes a NULL shape pointer; strides NULL gives
 * NULL strides. Returns the struct, or NULL on allocation failure; *id_out gets the table id.
 */
PEER_API void* peer_make(int legacy, uint32_t major, uint32_t minor, uint64_t flags, int32_t ndim,
                         const int64_t* shape, int null_shape, const int64_t* strides, uint8_t code,
                         uint8_t bits, uint16_t lanes, uint64_t byte_offset, int data_mode,
                         int32_t device_type, int null_deleter, int* id_out) {
  produced* p = calloc(1, sizeof *p);
  int n = ndim > 0 && ndim < 4096 ? ndim : 0;
  p->legacy = legacy;
  p->shape = calloc((size_t)n + 1, sizeof(int64_t));
  if (shape) memcpy(p->shape, shape, (size_t)n * sizeof(int64_t));
  if (strides) {
    p->strides = calloc((size_t)n + 1, sizeof(int64_t));
    memcpy(p->strides, strides, (size_t)n * sizeof(int64_t));
  }
  /* For valid shapes, place data so every reachable element lies in the buffer. */
  int64_t low = 0, high = 0;
  int sane = 1;
  for (int d = 0; d < n; d++) {
    int64_t extent = p->shape[d];
    int64_t stride = p->strides ? p->strides[d] : 1;
    __int128 reach = (__int128)stride * (extent > 0 ? extent - 1 : 0);
    if (extent < 0 || extent > (1L << 28) || reach > (1L << 30) || reach < -(1L << 30)) sane = 0;
    if (!p->strides) {
      int64_t s = 1;
      for (int e = d + 1; e < n; e++) s *= p->shape[e] > 0 ? p->shape[e] : 1;
      reach = (__int128)s * (extent > 0 ? extent - 1 : 0);
    }
    if (reach < 0) low += (int64_t)reach; else high += (int64_t)reach;
  }
  size_t elem = bits >= 8 ? (size_t)bits / 8 * lanes : 1;
  void* data_pointer = NULL;
  if (data_mode == 0 && !sane) {
    /* Never hand out a tensor whose data does not exist: the caller asked for real data. */
    free(p->shape);
    free(p->strides);
    free(p);
    *id_out = -1;
    return NULL;
  }
  if (data_mode == 0 && sane) {
    size_t count = (size_t)(high - low + 1);
    size_t bytes = count * elem + (size_t)(byte_offset < 4096 ? byte_offset : 0) + 64;
    p->data = calloc(1, bytes);
    if (elem == 4) {
      char* first = (char*)p->data + (byte_offset < 4096 ? byte_offset : 0);
      for (size_t i = 0; i < count; i++) {
        float v = (float)i; /* memcpy: byte_offset may be misaligned */
        memcpy(first + i * sizeof v, &v, sizeof v);
      }
    }
    /* data + byte_offset + low * elem is the first reachable byte */
    data_pointer = (char*)p->data - low * (int64_t)elem;
  } else if (data_mode != 1) {
    p->data = calloc(1, 64);
    data_pointer = p->data;
  }
  DLTensor* t;
  if (legacy) {
    DLManagedTensor* m = calloc(1, sizeof *m);
    m->manager_ctx = p;
    m->deleter = null_deleter ? NULL : counting_deleter_legacy;
    t = &m->dl_tensor;
    p->managed = m;
  } else {
    DLManagedTensorVersioned* m = calloc(1, sizeof *m);
    m->version.major = major;
    m->version.minor = minor;
    m->flags = flags;
    m->manager_ctx = p;
    m->deleter = null_deleter ? NULL : counting_deleter_versioned;
    t = &m->dl_tensor;
    p->managed = m;
  }
  t->data = data_pointer;
  t->device.device_type = (DLDeviceType)device_type;
  t->device.device_id = 0;
  t->ndim = ndim;
  t->dtype.code = code;
  t->dtype.bits = bits;
  t->dtype.lanes = lanes;
  t->shape = null_shape ? NULL : p->shape;
  t->strides = p->strides;
  t->byte_offset = byte_offset;

  pthread_mutex_lock(&table_lock);
  if (table_size == table_capacity) {
    table_capacity = table_capacity ? table_capacity * 2 : 1024;
    table = realloc(table, (size_t)table_capacity * sizeof *table);
  }
  *id_out = table_size;
  table[table_size++] = p;
  pthread_mutex_unlock(&table_lock);
  return p->managed;
}

/* How often the deleter of tensor id ran. */
PEER_API int peer_deleter_calls(int id) {
  pthread_mutex_lock(&table_lock);
  int calls = id >= 0 && id < table_size ? atomic_load(&table[id]->calls) : -1;
  pthread_mutex_unlock(&table_lock);
  return calls;
}

/* The Linux thread id that last ran the deleter of tensor id, 0 if none did. */
PEER_API long peer_deleter_thread(int id) {
  pthread_mutex_lock(&table_lock);
  long thread = id >= 0 && id < table_size ? atomic_load(&table[id]->thread) : -1;
  pthread_mutex_unlock(&table_lock);
  return thread;
}

PEER_API long peer_total_deleter_calls(void) { return atomic_load(&total_calls); }

PEER_API long peer_current_thread(void) { return (long)syscall(SYS_gettid); }

/* Frees every produced tensor. Only call when Java holds none of them. */
PEER_API void peer_reset(void) {
  pthread_mutex_lock(&table_lock);
  for (int i = 0; i < table_size; i++) {
    produced* p = table[i];
    free(p->managed);
    free(p->data);
    free(p->shape);
    free(p->strides);
    free(p);
  }
  table_size = 0;
  atomic_store(&total_calls, 0);
  pthread_mutex_unlock(&table_lock);
}

/* Calls the deleter found in `source` with another self pointer: a bogus call, on purpose. */
PEER_API void peer_call_deleter_of(void* source, int legacy, void* self) {
  if (legacy) {
    ((DLManagedTensor*)source)->deleter((DLManagedTensor*)self);
  } else {
    ((DLManagedTensorVersioned*)source)->deleter((DLManagedTensorVersioned*)self);
  }
}

/* The same-run comparison peers for the benchmarks: plain memcpy, and a strided float gather. */
PEER_API void peer_memcpy(void* dst, const void* src, size_t bytes) { memcpy(dst, src, bytes); }

PEER_API void peer_gather_f32(float* dst, const float* src, int64_t rows, int64_t cols, int64_t row_stride,
                              int64_t col_stride) {
  for (int64_t r = 0; r < rows; r++) {
    const float* row = src + r * row_stride;
    for (int64_t c = 0; c < cols; c++) *dst++ = row[c * col_stride];
  }
}

/* Starts calling a deleter on a new pthread and returns at once; peer_join waits for it. */
PEER_API long peer_delete_async(void* managed, int legacy) {
  pthread_t thread;
  void** job = malloc(2 * sizeof(void*));
  job[0] = managed;
  job[1] = (void*)(intptr_t)legacy;
  if (pthread_create(&thread, NULL, delete_one_owned, job) != 0) {
    free(job);
    return 0;
  }
  return (long)thread;
}

PEER_API int peer_join(long thread) { return pthread_join((pthread_t)thread, NULL); }

/*
 * A C API in the style of cuVS and other native libraries: it allocates a result tensor and
 * hands it out through an out-parameter; the caller owns it and must call its deleter.
 * Returns 0 on success.
 */
PEER_API int peer_make_result(int rows, int cols, DLManagedTensorVersioned** out) {
  if (rows < 0 || cols < 0 || !out) return 1;
  int64_t shape[2] = {rows, cols};
  int64_t strides[2] = {cols, 1};
  int id;
  *out = peer_make(0, 1, 3, 0, 2, shape, 0, strides, kDLFloat, 32, 1, 0, 0, kDLCPU, 0, &id);
  return *out ? 0 : 2;
}

/* What a C consumer does with a tensor it received: read the metadata, then release it. */
PEER_API int64_t peer_consume(void* managed, int legacy) {
  DLTensor* t = tensor_of(managed, legacy);
  int64_t seen = t->ndim + t->shape[0] + (int64_t)(intptr_t)t->data + t->dtype.bits;
  peer_delete(managed, legacy);
  return seen;
}

/* Calls a void(void) function n times: the cost of an upcall from the calling thread. */
PEER_API void peer_call_n(void (*fn)(void), long n) {
  for (long i = 0; i < n; i++) fn();
}

typedef struct {
  void (*fn)(void);
  long n;
} call_job;

static void* call_n_job(void* arg) {
  call_job* job = arg;
  peer_call_n(job->fn, job->n);
  return NULL;
}

/* The same from a new pthread the JVM has never seen, joined before returning. */
PEER_API int peer_call_n_on_new_thread(void (*fn)(void), long n) {
  pthread_t thread;
  call_job job = {fn, n};
  if (pthread_create(&thread, NULL, call_n_job, &job) != 0) return -1;
  return pthread_join(thread, NULL);
}
