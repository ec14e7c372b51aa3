// CUDA body of Vocabulary::Lookup for integer values (device_ops.h): one thread per value, a
// binary search in the sorted tokens and lookup_device.h's IntegerId, the CPU's rule.
#include <cuda_runtime.h>

#include <limits>

#include "tensorkit/common/cuda/cuda_util.h"
#include "tensorkit/common/error.h"
#include "tensorkit/common/host_device.h"
#include "tensorkit/features/device_ops.h"

namespace tensorkit::features_cuda {
namespace {

namespace cb = common_cuda;
namespace fi = features_internal;

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 1 << 16;

template <typename T>
__global__ void LookupKernel(const T* values, int64_t n, const int64_t* keys, const int64_t* index,
                             int64_t size, fi::IntegerIdRule rule, int64_t* out,
                             unsigned long long* first_oov) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const int64_t x = values[i];
    const int64_t pos = fi::SortedPosition(keys, size, x);
    const int64_t id = fi::IntegerId(rule, x, pos < 0 ? -1 : index[pos]);
    out[i] = id;
    // The smallest such position, whatever the order threads run in.
    if (id < 0) atomicMin(first_oov, static_cast<unsigned long long>(i));
  }
}

}  // namespace

Tensor IntegerLookup(const Tensor& values, const Tensor& keys, const Tensor& index,
                     const fi::IntegerIdRule& rule, int64_t* first_oov, const char* op) {
  const int device = values.device().index;
  cb::DeviceGuard guard(device, op);
  const Tensor v = values.IsContiguous() ? values : values.Clone();
  Tensor out = Tensor::Empty(values.Dims(), DType::kInt64, values.device());
  *first_oov = -1;
  const int64_t n = v.NumElements();
  if (n == 0) return out;
  constexpr unsigned long long kNone = std::numeric_limits<unsigned long long>::max();
  Tensor flag = Tensor::FromVector(std::vector<int64_t>{-1}).To(values.device());  // all ones
  auto* f = static_cast<unsigned long long*>(flag.raw_data());
  const unsigned grid = static_cast<unsigned>(BlocksFor(n, kThreads, kMaxBlocks));
  cudaStream_t stream = cb::Stream(device);
  const int64_t size = keys.NumElements();
  if (v.dtype() == DType::kInt64) {
    LookupKernel<<<grid, kThreads, 0, stream>>>(v.data<int64_t>(), n, keys.data<int64_t>(),
                                                index.data<int64_t>(), size, rule,
                                                out.data<int64_t>(), f);
  } else {
    LookupKernel<<<grid, kThreads, 0, stream>>>(v.data<int32_t>(), n, keys.data<int64_t>(),
                                                index.data<int64_t>(), size, rule,
                                                out.data<int64_t>(), f);
  }
  TK_CUDA_CHECK(op, cudaGetLastError());
  if (rule.num_oov == 0) {  // only then can a value be refused: one fetch, after the kernel
    const uint64_t got = static_cast<uint64_t>(flag.To(Device::Cpu()).data<int64_t>()[0]);
    if (got != kNone) *first_oov = static_cast<int64_t>(got);
  }
  return out;
}

}  // namespace tensorkit::features_cuda
