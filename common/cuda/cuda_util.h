// Internal, for .cu files only: CUDA error checks, the device guard, the current stream and the
// cached library handles. Includes the CUDA headers, so no public header may include it.
//
// Glossary
//   TK_CUDA_CHECK(op, call)    runs a CUDA runtime call; on failure throws tensorkit::Error whose
//                              message names the operation, the call and CUDA's own words. Out of
//                              memory has code kResourceExhausted, a missing driver or device
//                              kUnsupported, anything else kInternal.
//   TK_CUBLAS_CHECK, TK_CUSPARSE_CHECK  the same for cuBLAS and cuSPARSE status codes.
//   DeviceGuard                makes a device current for a scope and restores the previous one
//                              (the restore never throws).
//   library lease              a cuBLAS / cuSPARSE handle of one device held by one thread for
//                              a scope, taken from the device's pool of idle handles and bound
//                              to the current stream; threads never share a handle in use and
//                              streams never share a cuBLAS workspace. The libraries are loaded
//                              on first use (libraries.h): call them as
//                              lease.api->name(lease.handle, ...).
#ifndef TENSORKIT_COMMON_CUDA_CUDA_UTIL_H_
#define TENSORKIT_COMMON_CUDA_CUDA_UTIL_H_

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include <cstddef>

#include "tensorkit/common/cuda/libraries.h"
#include "tensorkit/common/error.h"

namespace tensorkit::common_cuda {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// Throws the Error of a failed CUDA runtime call (and clears CUDA's last error).
[[noreturn]] void ThrowCuda(cudaError_t err, const char* op, const char* call);
[[noreturn]] void ThrowCublas(cublasStatus_t status, const char* op, const char* call);
[[noreturn]] void ThrowCusparse(cusparseStatus_t status, const char* op, const char* call);

class DeviceGuard {
 public:
  DeviceGuard(int device, const char* op);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

// The current stream of `device` in this thread.
cudaStream_t Stream(int device);

// A library handle of one device for this thread, bound to the current stream (cuBLAS's with
// that stream's own workspace), with the device current, for as long as the lease lives. The
// handle comes from the device's pool (handle_pool.h) and goes back to it at the end; no lock
// is held while the library runs.
class CublasLease {
 public:
  CublasLease(int device, const char* op);
  ~CublasLease();
  CublasLease(const CublasLease&) = delete;
  CublasLease& operator=(const CublasLease&) = delete;

 private:
  DeviceGuard guard_;  // first: the device is current before the handle is made or bound

 public:
  const CublasApi* api = nullptr;
  cublasHandle_t handle = nullptr;

 private:
  int device_;
};

class CusparseLease {
 public:
  CusparseLease(int device, const char* op);
  ~CusparseLease();
  CusparseLease(const CusparseLease&) = delete;
  CusparseLease& operator=(const CusparseLease&) = delete;

 private:
  DeviceGuard guard_;

 public:
  const CusparseApi* api = nullptr;
  cusparseHandle_t handle = nullptr;

 private:
  int device_;
};

inline CublasLease Cublas(int device, const char* op) { return CublasLease(device, op); }
inline CusparseLease Cusparse(int device, const char* op) { return CusparseLease(device, op); }

}  // namespace tensorkit::common_cuda

#define TK_CUDA_CHECK(op, call)                                                          \
  do {                                                                                   \
    const cudaError_t tk_err_ = (call);                                                  \
    if (tk_err_ != cudaSuccess) ::tensorkit::common_cuda::ThrowCuda(tk_err_, op, #call); \
  } while (0)

#define TK_CUBLAS_CHECK(op, call)                               \
  do {                                                          \
    const cublasStatus_t tk_st_ = (call);                       \
    if (tk_st_ != CUBLAS_STATUS_SUCCESS) {                      \
      ::tensorkit::common_cuda::ThrowCublas(tk_st_, op, #call); \
    }                                                           \
  } while (0)

#define TK_CUSPARSE_CHECK(op, call)                               \
  do {                                                            \
    const cusparseStatus_t tk_st_ = (call);                       \
    if (tk_st_ != CUSPARSE_STATUS_SUCCESS) {                      \
      ::tensorkit::common_cuda::ThrowCusparse(tk_st_, op, #call); \
    }                                                             \
  } while (0)

#endif  // TENSORKIT_COMMON_CUDA_CUDA_UTIL_H_
