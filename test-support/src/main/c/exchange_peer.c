/*
 * The DLPack 1.3 C exchange API from C, written here from the header, for the tests and benchmarks
 * of dlpack-python: a consumer (as tvm-ffi consumes torch.Tensor) and a small producer type.
 *
 * Loaded by Python with ctypes.PyDLL, so every function runs on a Python thread with the GIL held,
 * and a function that returns with a Python exception set raises it in Python. It is linked
 * against no libpython: the few C API functions it calls are declared here and resolve against
 * the libpython the process already loaded (dlpack-python loads it RTLD_GLOBAL).
 *
 * Consumer (xc_consume_exchange, xc_view_exchange, xc_allocate, xc_round_trip): look the capsule up
 * on the object's type, check the version major first (walking prev_api), NULL-check every slot,
 * call the functions in the order the header describes (managed_tensor_from_py_object_no_sync,
 * then current_work_stream for the tensor's device unless it is the CPU, then use the tensor,
 * then its deleter), and
 * recycle a tensor through its deleter when anything after taking it fails. xc_consume_dlpack is
 * the same consumer on __dlpack__(max_version=(1, 3)), for comparison.
 *
 * Return codes of the consumer: 0 done; -1 a Python exception is set; XC_NO_API (the type has no
 * __dlpack_c_exchange_api__), XC_NOT_A_CAPSULE, XC_NO_MAJOR_1, XC_NULL_SLOT (out[0] holds the
 * mask of NULL slots, bit i for the i-th function of the table), XC_BAD_TENSOR (a tensor of
 * another major version, recycled), XC_NULL_TENSOR.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "dlpack.h"

typedef struct _object PyObject;
extern PyObject* PyObject_GetAttrString(PyObject* object, const char* name);
extern PyObject* PyObject_Type(PyObject* object);
extern PyObject* PyObject_Call(PyObject* callable, PyObject* args, PyObject* kwargs);
extern void* PyCapsule_GetPointer(PyObject* capsule, const char* name);
extern int PyCapsule_IsValid(PyObject* capsule, const char* name);
extern int PyCapsule_SetName(PyObject* capsule, const char* name);
extern PyObject* PyCapsule_New(void* pointer, const char* name, void (*destructor)(PyObject*));
extern void Py_DecRef(PyObject* object);
extern void Py_IncRef(PyObject* object);
extern void PyErr_SetString(PyObject* type, const char* message);
extern PyObject* PyErr_Occurred(void);
extern void PyErr_Clear(void);
extern PyObject* PyTuple_New(ssize_t size);
extern int PyTuple_SetItem(PyObject* tuple, ssize_t index, PyObject* item);
extern PyObject* PyDict_New(void);
extern int PyDict_SetItemString(PyObject* dict, const char* key, PyObject* value);
extern PyObject* PyLong_FromLong(long value);
extern long PyLong_AsLong(PyObject* object);
extern PyObject* PyExc_BufferError;
extern PyObject* PyExc_RuntimeError;
extern PyObject* PyExc_ValueError;

#define XC_NO_API (-10)
#define XC_NOT_A_CAPSULE (-11)
#define XC_NO_MAJOR_1 (-12)
#define XC_NULL_SLOT (-13)
#define XC_BAD_TENSOR (-14)
#define XC_NULL_TENSOR (-15)

static const char* const API_ATTRIBUTE = "__dlpack_c_exchange_api__";
static const char* const API_CAPSULE = "dlpack_exchange_api";

/* ---------------------------------------------------------------- the consumer */

/* The type's table of major version 1, or NULL and a code. Never leaves an exception set. */
static const DLPackExchangeAPI* find_api(PyObject* object, int* code) {
  PyObject* type = PyObject_Type(object);
  if (type == NULL) {
    PyErr_Clear();
    *code = XC_NO_API;
    return NULL;
  }
  PyObject* capsule = PyObject_GetAttrString(type, API_ATTRIBUTE); /* on the type, never the instance */
  Py_DecRef(type);
  if (capsule == NULL) {
    PyErr_Clear();
    *code = XC_NO_API;
    return NULL;
  }
  if (!PyCapsule_IsValid(capsule, API_CAPSULE)) {
    Py_DecRef(capsule);
    *code = XC_NOT_A_CAPSULE;
    return NULL;
  }
  /* The table lives for the process, as the header requires: the pointer outlives the capsule reference. */
  const DLPackExchangeAPIHeader* header = PyCapsule_GetPointer(capsule, API_CAPSULE);
  Py_DecRef(capsule);
  for (int step = 0; header != NULL && step < 8; step++) {
    if (header->version.major == DLPACK_MAJOR_VERSION) {
      return (const DLPackExchangeAPI*) header;
    }
    header = header->prev_api;
  }
  *code = XC_NO_MAJOR_1;
  return NULL;
}

/* Bit i set for each NULL function slot, in the table's order. */
static int64_t null_slots(const DLPackExchangeAPI* api) {
  int64_t mask = 0;
  if (api->managed_tensor_allocator == NULL) mask |= 1;
  if (api->managed_tensor_from_py_object_no_sync == NULL) mask |= 2;
  if (api->managed_tensor_to_py_object_no_sync == NULL) mask |= 4;
  if (api->dltensor_from_py_object_no_sync == NULL) mask |= 8;
  if (api->current_work_stream == NULL) mask |= 16;
  return mask;
}

static void recycle(DLManagedTensorVersioned* tensor) {
  if (tensor != NULL && tensor->deleter != NULL) {
    tensor->deleter(tensor);
  }
}

/* What the consumer read: out[0] ndim, [1] shape[0], [2] dtype code, [3] bits, [4] data address,
 * [5] flags, [6] version minor, [7] the work stream, [8] the first element as float32 bits, [9] tensors taken. */
static void record(const DLTensor* t, uint64_t flags, uint32_t minor, void* stream, int64_t* out) {
  out[0] = t->ndim;
  out[1] = t->ndim > 0 && t->shape != NULL ? t->shape[0] : -1;
  out[2] = t->dtype.code;
  out[3] = t->dtype.bits;
  out[4] = (int64_t) (intptr_t) t->data;
  out[5] = (int64_t) flags;
  out[6] = minor;
  out[7] = (int64_t) (intptr_t) stream;
  int32_t bits = 0;
  if (t->data != NULL && t->dtype.code == kDLFloat && t->dtype.bits == 32) {
    memcpy(&bits, (const char*) t->data + t->byte_offset, sizeof bits);
  }
  out[8] = bits;
}

/* Takes n tensors from object through managed_tensor_from_py_object_no_sync. */
int xc_consume_exchange(PyObject* object, int64_t n, int64_t* out) {
  int code = 0;
  const DLPackExchangeAPI* api = find_api(object, &code);
  if (api == NULL) {
    return code;
  }
  int64_t missing = null_slots(api) & ~(int64_t) 8; /* dltensor_from_py_object_no_sync may be NULL */
  if (missing != 0) {
    out[0] = missing;
    return XC_NULL_SLOT;
  }
  out[9] = 0;
  for (int64_t i = 0; i < n; i++) {
    DLManagedTensorVersioned* tensor = NULL;
    if (api->managed_tensor_from_py_object_no_sync(object, &tensor) != 0) {
      return -1; /* the producer set a Python exception */
    }
    if (tensor == NULL) {
      return XC_NULL_TENSOR;
    }
    if (tensor->version.major != DLPACK_MAJOR_VERSION) {
      recycle(tensor); /* the deleter is the one part of the layout every major keeps */
      return XC_BAD_TENSOR;
    }
    /* The stream to launch work on; a CPU tensor has none, and the header lets the consumer skip the call. */
    void* stream = NULL;
    if (tensor->dl_tensor.device.device_type != kDLCPU
        && api->current_work_stream(tensor->dl_tensor.device.device_type, tensor->dl_tensor.device.device_id, &stream) != 0) {
      recycle(tensor);
      return -1;
    }
    if (i == 0) {
      record(&tensor->dl_tensor, tensor->flags, tensor->version.minor, stream, out);
    }
    out[9]++;
    recycle(tensor); /* done with it */
  }
  return 0;
}

/* Asks the current_work_stream of object's type for a device; out[0] the stream. */
int xc_current_work_stream(PyObject* object, int32_t device_type, int32_t device_id, int64_t* out) {
  int code = 0;
  const DLPackExchangeAPI* api = find_api(object, &code);
  if (api == NULL || api->current_work_stream == NULL) {
    return api == NULL ? code : XC_NULL_SLOT;
  }
  void* stream = (void*) 1;
  int rc = api->current_work_stream((DLDeviceType) device_type, device_id, &stream);
  out[0] = (int64_t) (intptr_t) stream;
  return rc;
}

/* Calls the managed_tensor_from_py_object_no_sync of owner's type on another object (a producer must refuse it). */
int xc_from_py_object_of(PyObject* owner, PyObject* object) {
  int code = 0;
  const DLPackExchangeAPI* api = find_api(owner, &code);
  if (api == NULL || api->managed_tensor_from_py_object_no_sync == NULL) {
    return api == NULL ? code : XC_NULL_SLOT;
  }
  DLManagedTensorVersioned* tensor = NULL;
  int rc = api->managed_tensor_from_py_object_no_sync(object, &tensor);
  if (rc == 0) {
    recycle(tensor);
  }
  return rc;
}

/* Views object n times through dltensor_from_py_object_no_sync (a DLTensor on this stack). */
int xc_view_exchange(PyObject* object, int64_t n, int64_t* out) {
  int code = 0;
  const DLPackExchangeAPI* api = find_api(object, &code);
  if (api == NULL) {
    return code;
  }
  if (api->dltensor_from_py_object_no_sync == NULL || api->current_work_stream == NULL) {
    out[0] = null_slots(api);
    return XC_NULL_SLOT;
  }
  out[9] = 0;
  for (int64_t i = 0; i < n; i++) {
    DLTensor view;
    memset(&view, 0, sizeof view);
    if (api->dltensor_from_py_object_no_sync(object, &view) != 0) {
      return -1;
    }
    void* stream = NULL;
    if (view.device.device_type != kDLCPU && api->current_work_stream(view.device.device_type, view.device.device_id, &stream) != 0) {
      return -1;
    }
    if (i == 0) {
      record(&view, 0, 0, stream, out);
    }
    out[9]++;
  }
  return 0;
}

/* The same consumer on __dlpack__(max_version=(1, 3)): n capsules taken, renamed, used and deleted. */
int xc_consume_dlpack(PyObject* object, int64_t n, int64_t* out) {
  PyObject* method = PyObject_GetAttrString(object, "__dlpack__");
  if (method == NULL) {
    return -1;
  }
  PyObject* none = PyTuple_New(0);
  PyObject* kwargs = PyDict_New();
  PyObject* version = PyTuple_New(2);
  int rc = 0;
  if (none == NULL || kwargs == NULL || version == NULL) {
    rc = -1;
    goto done;
  }
  PyTuple_SetItem(version, 0, PyLong_FromLong(DLPACK_MAJOR_VERSION));
  PyTuple_SetItem(version, 1, PyLong_FromLong(DLPACK_MINOR_VERSION));
  if (PyDict_SetItemString(kwargs, "max_version", version) != 0) {
    rc = -1;
    goto done;
  }
  out[9] = 0;
  for (int64_t i = 0; i < n; i++) {
    PyObject* capsule = PyObject_Call(method, none, kwargs);
    if (capsule == NULL) {
      rc = -1;
      break;
    }
    DLManagedTensorVersioned* tensor = PyCapsule_GetPointer(capsule, "dltensor_versioned");
    if (tensor == NULL || PyCapsule_SetName(capsule, "used_dltensor_versioned") != 0) {
      Py_DecRef(capsule);
      rc = -1;
      break;
    }
    if (i == 0) {
      record(&tensor->dl_tensor, tensor->flags, tensor->version.minor, NULL, out);
    }
    out[9]++;
    recycle(tensor);
    Py_DecRef(capsule);
  }
done:
  Py_DecRef(version);
  Py_DecRef(kwargs);
  Py_DecRef(none);
  Py_DecRef(method);
  return rc;
}

/* SetError for the allocator: copies kind and message into the caller's buffers (256 bytes each). */
typedef struct {
  char* kind;
  char* message;
  int calls;
} error_context;

static void set_error(void* context, const char* kind, const char* message) {
  error_context* errors = context;
  strncpy(errors->kind, kind != NULL ? kind : "(NULL)", 255);
  errors->kind[255] = 0;
  strncpy(errors->message, message != NULL ? message : "(NULL)", 255);
  errors->message[255] = 0;
  errors->calls++;
}

/*
 * Asks the type's managed_tensor_allocator for a tensor like the prototype; on success checks it
 * (out as record() fills it, plus out[10] whether every byte was zero) and deletes it. Returns the
 * allocator's result; kind and message hold what SetError got, and out[11] how often it was called.
 */
int xc_allocate(PyObject* object, int32_t device_type, int32_t ndim, int64_t* shape, uint8_t code, uint8_t bits, char* kind,
                char* message, int64_t* out) {
  int found = 0;
  const DLPackExchangeAPI* api = find_api(object, &found);
  if (api == NULL) {
    return found;
  }
  if (api->managed_tensor_allocator == NULL) {
    out[0] = null_slots(api);
    return XC_NULL_SLOT;
  }
  DLTensor prototype;
  memset(&prototype, 0, sizeof prototype);
  prototype.device.device_type = (DLDeviceType) device_type;
  prototype.ndim = ndim;
  prototype.shape = shape;
  prototype.dtype.code = code;
  prototype.dtype.bits = bits;
  prototype.dtype.lanes = 1;
  error_context errors = {kind, message, 0};
  kind[0] = 0;
  message[0] = 0;
  DLManagedTensorVersioned* tensor = NULL;
  int rc = api->managed_tensor_allocator(&prototype, &tensor, &errors, set_error);
  out[11] = errors.calls;
  if (rc != 0 || tensor == NULL) {
    return rc != 0 ? rc : XC_NULL_TENSOR;
  }
  record(&tensor->dl_tensor, tensor->flags, tensor->version.minor, NULL, out);
  int64_t count = 1;
  for (int32_t i = 0; i < tensor->dl_tensor.ndim; i++) {
    count *= tensor->dl_tensor.shape[i];
  }
  int zero = 1;
  const unsigned char* bytes = tensor->dl_tensor.data;
  for (int64_t i = 0; i < count * (tensor->dl_tensor.dtype.bits / 8); i++) {
    zero &= bytes[i] == 0;
  }
  out[10] = zero;
  recycle(tensor);
  return 0;
}

/* Takes a tensor from object and gives it back to its producer as a new object (to_py_object). */
PyObject* xc_round_trip(PyObject* object) {
  int code = 0;
  const DLPackExchangeAPI* api = find_api(object, &code);
  if (api == NULL || api->managed_tensor_from_py_object_no_sync == NULL || api->managed_tensor_to_py_object_no_sync == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "xc_round_trip: no usable exchange API on the object's type");
    return NULL;
  }
  DLManagedTensorVersioned* tensor = NULL;
  if (api->managed_tensor_from_py_object_no_sync(object, &tensor) != 0) {
    return NULL;
  }
  void* made = NULL;
  if (api->managed_tensor_to_py_object_no_sync(tensor, &made) != 0) { /* it steals the tensor, also on failure */
    return NULL;
  }
  return made;
}

/* ---------------------------------------------------------------- the producer */

/* A float32 vector of n elements, 0, 0.5, 1, ...; its deleter frees it and counts. */
typedef struct {
  DLManagedTensorVersioned managed;
  int64_t shape[1];
  int64_t strides[1];
  float values[];
} produced;

static int64_t producer_deleted = 0;
static int64_t producer_made = 0;

static void producer_deleter(DLManagedTensorVersioned* self) {
  __atomic_fetch_add(&producer_deleted, 1, __ATOMIC_SEQ_CST); /* from any thread, with the GIL or not */
  free(self);
}

static DLManagedTensorVersioned* produce(int64_t n, int zeroed, uint8_t code, uint8_t bits) {
  size_t bytes = (size_t) n * (bits / 8 ? bits / 8 : 1);
  produced* p = calloc(1, sizeof(produced) + bytes);
  if (p == NULL) {
    return NULL;
  }
  p->managed.version.major = DLPACK_MAJOR_VERSION;
  p->managed.version.minor = DLPACK_MINOR_VERSION;
  p->managed.deleter = producer_deleter;
  p->shape[0] = n;
  p->strides[0] = 1;
  p->managed.dl_tensor.data = p->values;
  p->managed.dl_tensor.device.device_type = kDLCPU;
  p->managed.dl_tensor.ndim = 1;
  p->managed.dl_tensor.dtype.code = code;
  p->managed.dl_tensor.dtype.bits = bits;
  p->managed.dl_tensor.dtype.lanes = 1;
  p->managed.dl_tensor.shape = p->shape;
  p->managed.dl_tensor.strides = p->strides;
  if (!zeroed) {
    for (int64_t i = 0; i < n; i++) {
      p->values[i] = (float) i * 0.5f;
    }
  }
  __atomic_fetch_add(&producer_made, 1, __ATOMIC_SEQ_CST);
  return &p->managed;
}

/* The object's length: its attribute n. */
static int object_length(PyObject* object, int64_t* n) {
  PyObject* value = PyObject_GetAttrString(object, "n");
  if (value == NULL) {
    return -1;
  }
  long length = PyLong_AsLong(value);
  Py_DecRef(value);
  if (length == -1 && PyErr_Occurred() != NULL) {
    return -1;
  }
  if (length < 0) {
    PyErr_SetString(PyExc_BufferError, "a C producer tensor of negative length");
    return -1;
  }
  *n = length;
  return 0;
}

static int producer_from_py_object(void* object, DLManagedTensorVersioned** out) {
  int64_t n = 0;
  if (object_length(object, &n) != 0) {
    return -1;
  }
  DLManagedTensorVersioned* tensor = produce(n, 0, kDLFloat, 32);
  if (tensor == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "out of memory");
    return -1;
  }
  *out = tensor;
  return 0;
}

static int producer_to_py_object(DLManagedTensorVersioned* tensor, void** out) {
  (void) out;
  recycle(tensor); /* stolen: ours to delete */
  PyErr_SetString(PyExc_BufferError, "the C test producer makes no Python objects from tensors");
  return -1;
}

static int producer_allocate(DLTensor* prototype, DLManagedTensorVersioned** out, void* context,
                             void (*error)(void* context, const char* kind, const char* message)) {
  if (prototype->device.device_type != kDLCPU || prototype->ndim != 1) {
    error(context, "ValueError", "the C test producer allocates 1-d CPU tensors only");
    return -1;
  }
  DLManagedTensorVersioned* tensor = produce(prototype->shape[0], 1, prototype->dtype.code, prototype->dtype.bits);
  if (tensor == NULL) {
    error(context, "MemoryError", "out of memory");
    return -1;
  }
  *out = tensor;
  return 0;
}

static int producer_current_work_stream(DLDeviceType device_type, int32_t device_id, void** out) {
  (void) device_type;
  (void) device_id;
  *out = NULL; /* a CPU-only producer */
  return 0;
}

static const DLPackExchangeAPI PRODUCER = {
    {{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION}, NULL},
    producer_allocate,
    producer_from_py_object,
    producer_to_py_object,
    NULL, /* dltensor_from_py_object_no_sync: optional, and this producer has no storage to view */
    producer_current_work_stream,
};

/* The capsule for the producer type's __dlpack_c_exchange_api__. */
PyObject* xc_producer_capsule(void) {
  return PyCapsule_New((void*) &PRODUCER, API_CAPSULE, NULL);
}

static void producer_capsule_destructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, "dltensor_versioned")) { /* unconsumed */
    recycle(PyCapsule_GetPointer(capsule, "dltensor_versioned"));
  }
}

/* The producer's __dlpack__: the same tensor in a dltensor_versioned capsule. */
PyObject* xc_producer_dlpack(PyObject* object) {
  DLManagedTensorVersioned* tensor = NULL;
  if (producer_from_py_object(object, &tensor) != 0) {
    return NULL;
  }
  PyObject* capsule = PyCapsule_New(tensor, "dltensor_versioned", producer_capsule_destructor);
  if (capsule == NULL) {
    recycle(tensor);
  }
  return capsule;
}

/* A C-owned float32 vector handed to the type's managed_tensor_to_py_object_no_sync. */
PyObject* xc_to_py(PyObject* object, int64_t n) {
  int code = 0;
  const DLPackExchangeAPI* api = find_api(object, &code);
  if (api == NULL || api->managed_tensor_to_py_object_no_sync == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "xc_to_py: no usable exchange API on the object's type");
    return NULL;
  }
  DLManagedTensorVersioned* tensor = produce(n, 0, kDLFloat, 32);
  if (tensor == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "out of memory");
    return NULL;
  }
  void* made = NULL;
  if (api->managed_tensor_to_py_object_no_sync(tensor, &made) != 0) {
    return NULL;
  }
  return made;
}

int64_t xc_producer_deleted(void) {
  return __atomic_load_n(&producer_deleted, __ATOMIC_SEQ_CST);
}

int64_t xc_producer_made(void) {
  return __atomic_load_n(&producer_made, __ATOMIC_SEQ_CST);
}

/* ---------------------------------------------------------------- hostile tables */

static int never_from_py_object(void* object, DLManagedTensorVersioned** out) {
  (void) object;
  (void) out;
  PyErr_SetString(PyExc_RuntimeError, "a hostile table's function was called");
  return -1;
}

static int never_current_work_stream(DLDeviceType device_type, int32_t device_id, void** out) {
  (void) device_type;
  (void) device_id;
  (void) out;
  PyErr_SetString(PyExc_RuntimeError, "a hostile table's function was called");
  return -1;
}

/* Version 1.3, every slot NULL. */
static const DLPackExchangeAPI ALL_NULL = {{{1, 3}, NULL}, NULL, NULL, NULL, NULL, NULL};
/* Version 1.3, managed_tensor_from_py_object_no_sync NULL, the rest set. */
static const DLPackExchangeAPI FROM_PY_NULL = {{{1, 3}, NULL}, producer_allocate, NULL, producer_to_py_object, NULL,
                                               never_current_work_stream};
/* Version 1.3, current_work_stream NULL (the header says it must not be). */
static const DLPackExchangeAPI STREAM_NULL = {{{1, 3}, NULL}, producer_allocate, never_from_py_object, producer_to_py_object,
                                              NULL, NULL};
/* A major version nobody knows, no older table. */
static const DLPackExchangeAPI MAJOR_2 = {{{2, 0}, NULL}, NULL, never_from_py_object, NULL, NULL, never_current_work_stream};
/* A major version nobody knows, with the producer's 1.3 table behind it. */
static const DLPackExchangeAPI MAJOR_2_THEN_1 = {{{2, 0}, (DLPackExchangeAPIHeader*) &PRODUCER}, NULL, never_from_py_object, NULL,
                                                 NULL, never_current_work_stream};
/* Major version 0. */
static const DLPackExchangeAPI MAJOR_0 = {{{0, 9}, NULL}, producer_allocate, never_from_py_object, producer_to_py_object, NULL,
                                          never_current_work_stream};

/* A producer that hands out the same tensor on every call (a peer bug: each call must give a new owner its own). */
static DLManagedTensorVersioned* same_tensor = NULL;

static void same_tensor_deleter(DLManagedTensorVersioned* self) {
  __atomic_fetch_add(&producer_deleted, 1, __ATOMIC_SEQ_CST);
  same_tensor = NULL; /* under the GIL or not: the tests call it once, and only then make the next */
  free(self);
}

static int same_from_py_object(void* object, DLManagedTensorVersioned** out) {
  if (same_tensor == NULL) {
    if (producer_from_py_object(object, &same_tensor) != 0) {
      return -1;
    }
    same_tensor->deleter = same_tensor_deleter;
  }
  *out = same_tensor;
  return 0;
}

/* A producer that succeeds (returns 0 with a tensor) but leaves a Python exception set. */
static int error_set_from_py_object(void* object, DLManagedTensorVersioned** out) {
  if (producer_from_py_object(object, out) != 0) {
    return -1;
  }
  PyErr_SetString(PyExc_RuntimeError, "left set by a producer that returned 0");
  return 0;
}

/* Version 1.3: the same tensor on every call. */
static const DLPackExchangeAPI SAME_TWICE = {{{1, 3}, NULL}, producer_allocate, same_from_py_object, producer_to_py_object, NULL,
                                             producer_current_work_stream};
/* Version 1.3: success with an exception set. */
static const DLPackExchangeAPI ERROR_SET = {{{1, 3}, NULL}, producer_allocate, error_set_from_py_object, producer_to_py_object,
                                            NULL, producer_current_work_stream};

/*
 * A C consumer that hands one tensor to the object type's managed_tensor_to_py_object_no_sync twice
 * (a peer bug: the first call stole it). Returns the first object made; the second call's result
 * is recorded in *second_rc and its exception cleared.
 */
PyObject* xc_to_py_twice(PyObject* object, int64_t n, int64_t* second_rc) {
  int code = 0;
  const DLPackExchangeAPI* api = find_api(object, &code);
  if (api == NULL || api->managed_tensor_to_py_object_no_sync == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "xc_to_py_twice: no usable exchange API on the object's type");
    return NULL;
  }
  DLManagedTensorVersioned* tensor = produce(n, 0, kDLFloat, 32);
  if (tensor == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "out of memory");
    return NULL;
  }
  void* first = NULL;
  if (api->managed_tensor_to_py_object_no_sync(tensor, &first) != 0) {
    return NULL;
  }
  void* second = NULL;
  *second_rc = api->managed_tensor_to_py_object_no_sync(tensor, &second);
  if (*second_rc != 0) {
    PyErr_Clear();
  } else {
    Py_DecRef(second);
  }
  return first;
}

/*
 * A hostile __dlpack_c_exchange_api__: variants 0 to 5 the tables above, 6 a capsule of another
 * name, 8 the same tensor twice, 9 success with an exception set, 7 (and any other) an int.
 */
PyObject* xc_hostile_capsule(int variant) {
  switch (variant) {
    case 0: return PyCapsule_New((void*) &ALL_NULL, API_CAPSULE, NULL);
    case 1: return PyCapsule_New((void*) &FROM_PY_NULL, API_CAPSULE, NULL);
    case 2: return PyCapsule_New((void*) &STREAM_NULL, API_CAPSULE, NULL);
    case 3: return PyCapsule_New((void*) &MAJOR_2, API_CAPSULE, NULL);
    case 4: return PyCapsule_New((void*) &MAJOR_2_THEN_1, API_CAPSULE, NULL);
    case 5: return PyCapsule_New((void*) &MAJOR_0, API_CAPSULE, NULL);
    case 6: return PyCapsule_New((void*) &PRODUCER, "not_the_exchange_api", NULL);
    case 8: return PyCapsule_New((void*) &SAME_TWICE, API_CAPSULE, NULL);
    case 9: return PyCapsule_New((void*) &ERROR_SET, API_CAPSULE, NULL);
    default: return PyLong_FromLong((long) (intptr_t) &PRODUCER); /* the pointer as an int, as early drafts had it */
  }
}
