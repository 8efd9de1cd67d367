/*
 * Prints what the C compiler says about every DLPack struct, field and enum value, one
 * "name value" pair a line. The Java conformance test compares each with the Java layouts.
 */
#include <stdalign.h>
#include <stdio.h>

#include "dlpack.h"

#define STRUCT(T) \
  printf("sizeof.%s %zu\n", #T, sizeof(T)); \
  printf("alignof.%s %zu\n", #T, alignof(T))
#define FIELD(T, f) printf("offsetof.%s.%s %zu\n", #T, #f, offsetof(T, f))
#define ENUM(e) printf("enum.%s %lld\n", #e, (long long)(e))

int main(void) {
  STRUCT(DLPackVersion);
  FIELD(DLPackVersion, major);
  FIELD(DLPackVersion, minor);

  STRUCT(DLDevice);
  FIELD(DLDevice, device_type);
  FIELD(DLDevice, device_id);
  printf("sizeof.DLDeviceType %zu\n", sizeof(DLDeviceType));

  STRUCT(DLDataType);
  FIELD(DLDataType, code);
  FIELD(DLDataType, bits);
  FIELD(DLDataType, lanes);

  STRUCT(DLTensor);
  FIELD(DLTensor, data);
  FIELD(DLTensor, device);
  FIELD(DLTensor, ndim);
  FIELD(DLTensor, dtype);
  FIELD(DLTensor, shape);
  FIELD(DLTensor, strides);
  FIELD(DLTensor, byte_offset);

  STRUCT(DLManagedTensor);
  FIELD(DLManagedTensor, dl_tensor);
  FIELD(DLManagedTensor, manager_ctx);
  FIELD(DLManagedTensor, deleter);

  STRUCT(DLManagedTensorVersioned);
  FIELD(DLManagedTensorVersioned, version);
  FIELD(DLManagedTensorVersioned, manager_ctx);
  FIELD(DLManagedTensorVersioned, deleter);
  FIELD(DLManagedTensorVersioned, flags);
  FIELD(DLManagedTensorVersioned, dl_tensor);

  STRUCT(DLPackExchangeAPIHeader);
  FIELD(DLPackExchangeAPIHeader, version);
  FIELD(DLPackExchangeAPIHeader, prev_api);

  STRUCT(DLPackExchangeAPI);
  FIELD(DLPackExchangeAPI, header);
  FIELD(DLPackExchangeAPI, managed_tensor_allocator);
  FIELD(DLPackExchangeAPI, managed_tensor_from_py_object_no_sync);
  FIELD(DLPackExchangeAPI, managed_tensor_to_py_object_no_sync);
  FIELD(DLPackExchangeAPI, dltensor_from_py_object_no_sync);
  FIELD(DLPackExchangeAPI, current_work_stream);

  ENUM(DLPACK_MAJOR_VERSION);
  ENUM(DLPACK_MINOR_VERSION);
  ENUM(DLPACK_FLAG_BITMASK_READ_ONLY);
  ENUM(DLPACK_FLAG_BITMASK_IS_COPIED);
  ENUM(DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED);

  ENUM(kDLCPU);
  ENUM(kDLCUDA);
  ENUM(kDLCUDAHost);
  ENUM(kDLOpenCL);
  ENUM(kDLVulkan);
  ENUM(kDLMetal);
  ENUM(kDLVPI);
  ENUM(kDLROCM);
  ENUM(kDLROCMHost);
  ENUM(kDLExtDev);
  ENUM(kDLCUDAManaged);
  ENUM(kDLOneAPI);
  ENUM(kDLWebGPU);
  ENUM(kDLHexagon);
  ENUM(kDLMAIA);
  ENUM(kDLTrn);
  ENUM(kDLTPU);
  ENUM(kDLTPUHost);
  ENUM(kDLAscend);

  ENUM(kDLInt);
  ENUM(kDLUInt);
  ENUM(kDLFloat);
  ENUM(kDLOpaqueHandle);
  ENUM(kDLBfloat);
  ENUM(kDLComplex);
  ENUM(kDLBool);
  ENUM(kDLFloat8_e3m4);
  ENUM(kDLFloat8_e4m3);
  ENUM(kDLFloat8_e4m3b11fnuz);
  ENUM(kDLFloat8_e4m3fn);
  ENUM(kDLFloat8_e4m3fnuz);
  ENUM(kDLFloat8_e5m2);
  ENUM(kDLFloat8_e5m2fnuz);
  ENUM(kDLFloat8_e8m0fnu);
  ENUM(kDLFloat6_e2m3fn);
  ENUM(kDLFloat6_e3m2fn);
  ENUM(kDLFloat4_e2m1fn);
  ENUM(kDLBcomplex);
  return 0;
}
