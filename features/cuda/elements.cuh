// What features/' CUDA bodies with one thread per element share: the grid-stride loop's start
// and step, small host arrays copied to the device for the kernels, and CUB's scan. Elements that
// only move are moved as raw words of their dtype's size (BySize of common/dtype.h).
#ifndef TENSORKIT_FEATURES_CUDA_ELEMENTS_CUH_
#define TENSORKIT_FEATURES_CUDA_ELEMENTS_CUH_

#include <cuda_runtime.h>

#include <cstdint>
#include <cub/cub.cuh>
#include <vector>

#include "tensorkit/common/cuda/cuda_util.h"
#include "tensorkit/common/cuda/device_buffer.h"

namespace tensorkit::features_cuda {

__device__ inline int64_t FirstThread() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline int64_t ThreadStep() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

// `host` in device memory, copied on the current stream of `device` (a pageable source is
// staged before the call returns, so the vector may go at once).
template <typename T>
common_cuda::DeviceBuffer Upload(const std::vector<T>& host, int device, const char* op) {
  const int64_t bytes = static_cast<int64_t>(host.size() * sizeof(T));
  common_cuda::DeviceBuffer b(bytes, device);
  if (bytes > 0) {
    TK_CUDA_CHECK(op, cudaMemcpyAsync(b.data(), host.data(), static_cast<size_t>(bytes),
                                      cudaMemcpyHostToDevice, common_cuda::Stream(device)));
  }
  return b;
}

// out[k] = in[0] + ... + in[k - 1] for k < n, on the current stream of `device` (CUB's scan:
// a first call sizes its scratch).
inline void ExclusiveSum(const int64_t* in, int64_t* out, int64_t n, int device, const char* op) {
  cudaStream_t stream = common_cuda::Stream(device);
  size_t temp = 0;
  TK_CUDA_CHECK(op, cub::DeviceScan::ExclusiveSum(nullptr, temp, in, out, n, stream));
  const common_cuda::DeviceBuffer scratch(static_cast<int64_t>(temp), device);
  TK_CUDA_CHECK(op, cub::DeviceScan::ExclusiveSum(scratch.data(), temp, in, out, n, stream));
}

}  // namespace tensorkit::features_cuda

#endif  // TENSORKIT_FEATURES_CUDA_ELEMENTS_CUH_
