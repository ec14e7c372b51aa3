// The CUDA half of the common layer: stream-ordered allocation and copies.
#include <cuda_runtime.h>

#include "tensorkit/common/backend_cuda.h"
#include "tensorkit/common/error.h"

namespace tensorkit::cuda_backend {
namespace {

// Checks a CUDA call; the message carries the call's text and CUDA's own words.
#define TK_CUDA_CALL(call)                                                       \
  do {                                                                           \
    cudaError_t err_ = (call);                                                   \
    if (err_ != cudaSuccess) {                                                   \
      ::tensorkit::Throw(::tensorkit::ErrorCode::kInternal, "CUDA call ", #call, \
                         " failed: ", cudaGetErrorString(err_));                 \
    }                                                                            \
  } while (0)

// Makes `device` current for the duration of a call, restoring the previous one.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    cudaGetDevice(&previous_);
    if (previous_ != device) TK_CUDA_CALL(cudaSetDevice(device));
  }
  ~DeviceGuard() { cudaSetDevice(previous_); }

 private:
  int previous_ = 0;
};

}  // namespace

bool Built() { return true; }

int DeviceCount() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return n;
}

void* Malloc(int64_t bytes, int device) {
  DeviceGuard guard(device);
  void* p = nullptr;
  cudaError_t err = cudaMallocAsync(&p, static_cast<size_t>(bytes), cudaStreamPerThread);
  if (err != cudaSuccess) {
    cudaGetLastError();
    Throw(ErrorCode::kResourceExhausted, "Storage::Allocate: cannot allocate ", bytes,
          " bytes on cuda:", device, ": ", cudaGetErrorString(err));
  }
  return p;
}

void Free(void* ptr, int device) {
  DeviceGuard guard(device);
  cudaFreeAsync(ptr, cudaStreamPerThread);  // a destructor must not throw
}

void Memcpy(void* dst, const void* src, int64_t bytes, int kind, int device) {
  DeviceGuard guard(device);
  const cudaMemcpyKind k = kind == 0   ? cudaMemcpyHostToDevice
                           : kind == 1 ? cudaMemcpyDeviceToHost
                                       : cudaMemcpyDeviceToDevice;
  TK_CUDA_CALL(cudaMemcpyAsync(dst, src, static_cast<size_t>(bytes), k, cudaStreamPerThread));
  TK_CUDA_CALL(cudaStreamSynchronize(cudaStreamPerThread));
}

void Memset0(void* dst, int64_t bytes, int device) {
  DeviceGuard guard(device);
  TK_CUDA_CALL(cudaMemsetAsync(dst, 0, static_cast<size_t>(bytes), cudaStreamPerThread));
  TK_CUDA_CALL(cudaStreamSynchronize(cudaStreamPerThread));
}

}  // namespace tensorkit::cuda_backend
