// CUDA body of Bucketize (device_ops.h): one thread per value, bucketize_device.h's fixed-step
// search over the padded boundaries, the same search as the CPU body's.
#include <cuda_runtime.h>

#include <vector>

#include "tensorkit/common/cuda/cuda_util.h"
#include "tensorkit/common/error.h"
#include "tensorkit/common/host_device.h"
#include "tensorkit/features/bucketize_device.h"
#include "tensorkit/features/device_ops.h"

namespace tensorkit::features_cuda {
namespace {

namespace cb = common_cuda;
namespace fi = features_internal;

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 1 << 16;

template <typename C, typename T>
__global__ void BucketizeKernel(const T* values, int64_t n, const C* slots, uint32_t top,
                                int32_t num_boundaries, int32_t* out) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    out[i] = fi::FixedStepBucket(slots, top, static_cast<C>(values[i]), num_boundaries);
  }
}

template <typename C>
Tensor Run(const Tensor& values, const std::vector<C>& slots, int32_t num_boundaries,
           const char* op) {
  const int device = values.device().index;
  cb::DeviceGuard guard(device, op);
  const Tensor v = values.IsContiguous() ? values : values.Clone();
  Tensor out = Tensor::Empty(values.Dims(), DType::kInt32, values.device());
  const int64_t n = v.NumElements();
  if (n == 0) return out;
  const Tensor b = Tensor::FromVector(std::vector<C>(slots)).To(values.device());
  const uint32_t top = static_cast<uint32_t>(slots.size()) / 2;
  const unsigned grid = static_cast<unsigned>(BlocksFor(n, kThreads, kMaxBlocks));
  cudaStream_t stream = cb::Stream(device);
  Dispatch<Bit(DType::kInt32) | Bit(DType::kInt64) | Bit(DType::kFloat32) | Bit(DType::kFloat64)>(
      v.dtype(), op, [&]<typename T>() {
        BucketizeKernel<C, T><<<grid, kThreads, 0, stream>>>(v.data<T>(), n, b.data<C>(), top,
                                                             num_boundaries, out.data<int32_t>());
      });
  TK_CUDA_CHECK(op, cudaGetLastError());
  return out;
}

}  // namespace

Tensor BucketizeOnDevice(const Tensor& values, const std::vector<float>& slots,
                         int32_t num_boundaries, const char* op) {
  return Run(values, slots, num_boundaries, op);
}
Tensor BucketizeOnDevice(const Tensor& values, const std::vector<double>& slots,
                         int32_t num_boundaries, const char* op) {
  return Run(values, slots, num_boundaries, op);
}

}  // namespace tensorkit::features_cuda
