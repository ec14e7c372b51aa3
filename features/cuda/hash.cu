// CUDA bodies of HashBucketFast / HashBucketStrong for integer ids (device_ops.h): one thread
// per value, the decimal string built in registers and hashed with hash_device.h's functions,
// the same ones the CPU body runs.
#include <cuda_runtime.h>

#include "tensorkit/common/cuda/cuda_util.h"
#include "tensorkit/common/error.h"
#include "tensorkit/common/host_device.h"
#include "tensorkit/features/device_ops.h"
#include "tensorkit/features/hash_device.h"

namespace tensorkit::features_cuda {
namespace {

namespace cb = common_cuda;
namespace fi = features_internal;

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 1 << 16;  // grid-stride loops cover the rest

template <typename T>
__global__ void HashKernel(const T* values, int64_t n, uint64_t buckets, bool strong, uint64_t key0,
                           uint64_t key1, int64_t* out) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    out[i] = static_cast<int64_t>(fi::IntegerHash(values[i], strong, key0, key1) % buckets);
  }
}

}  // namespace

Tensor IntegerHashBuckets(const Tensor& values, uint64_t buckets, bool strong,
                          const std::array<uint64_t, 2>& key, const char* op) {
  const int device = values.device().index;
  cb::DeviceGuard guard(device, op);
  const Tensor v = values.IsContiguous() ? values : values.Clone();
  Tensor out = Tensor::Empty(values.Dims(), DType::kInt64, values.device());
  const int64_t n = v.NumElements();
  if (n == 0) return out;
  const unsigned grid = static_cast<unsigned>(BlocksFor(n, kThreads, kMaxBlocks));
  cudaStream_t stream = cb::Stream(device);
  if (v.dtype() == DType::kInt64) {
    HashKernel<<<grid, kThreads, 0, stream>>>(v.data<int64_t>(), n, buckets, strong, key[0], key[1],
                                              out.data<int64_t>());
  } else {
    HashKernel<<<grid, kThreads, 0, stream>>>(v.data<int32_t>(), n, buckets, strong, key[0], key[1],
                                              out.data<int64_t>());
  }
  TK_CUDA_CHECK(op, cudaGetLastError());
  return out;
}

}  // namespace tensorkit::features_cuda
