// What features/' CUDA bodies with one thread per element share: the grid-stride loop's start
// and step, small host arrays copied to the device for the kernels and the selection of
// positions (common/cuda/launch.cuh, which sparse/'s kernels use too), and CUB's scan. Elements
// that only move are moved as raw words of their dtype's size (BySize of common/dtype.h).
#ifndef TENSORKIT_FEATURES_CUDA_ELEMENTS_CUH_
#define TENSORKIT_FEATURES_CUDA_ELEMENTS_CUH_

#include <cuda_runtime.h>

#include <cstdint>
#include <cub/cub.cuh>
#include <vector>

#include "tensorkit/common/cuda/cuda_util.h"
#include "tensorkit/common/cuda/device_buffer.h"
#include "tensorkit/common/cuda/launch.cuh"

namespace tensorkit::features_cuda {

using common_cuda::FirstItem;
using common_cuda::ItemStep;
using common_cuda::On;
using common_cuda::Select;
using common_cuda::Upload;

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
