// CUDA part of CountSparse (device_ops.h): the (row, id) keys of every entry, with the first
// negative id and the largest id found in the same pass. counts.cc sorts and sums the keys with
// sparse/'s device Coalesce (entry order within each (row, id)).
#include <cuda_runtime.h>

#include <vector>

#include "tensorkit/common/cuda/cuda_util.h"
#include "tensorkit/common/error.h"
#include "tensorkit/common/host_device.h"
#include "tensorkit/features/device_ops.h"
#include "tensorkit/features/jagged_device.h"

namespace tensorkit::features_cuda {
namespace {

namespace cb = common_cuda;

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 1 << 16;

// stats[0]: the first entry with a negative id (as unsigned: all ones for none); stats[1]: the
// largest id (signed, starting at -1). Min and max are order-free, so the result is too.
template <typename T>
__global__ void KeysKernel(const T* ids, int64_t n, const int64_t* indices, int rank,
                           const int64_t* offsets, int64_t batch, int64_t* keys,
                           unsigned long long* first_negative, long long* max_id) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const int64_t id = ids[i];
    int64_t row = 0;
    if (offsets != nullptr) {
      row = jagged_internal::RowOfItem(offsets, batch, i);
    } else if (rank >= 2) {
      row = indices[rank * i];
    }
    keys[2 * i] = row;
    keys[2 * i + 1] = id;
    if (id < 0) atomicMin(first_negative, static_cast<unsigned long long>(i));
    atomicMax(max_id, static_cast<long long>(id));
  }
}

}  // namespace

CountKeys CountKeysOnDevice(const Tensor& ids, const Tensor& indices, const Tensor& offsets,
                            const char* op) {
  const int device = ids.device().index;
  cb::DeviceGuard guard(device, op);
  const Tensor v = ids.IsContiguous() ? ids : ids.Clone();
  const int64_t n = v.NumElements();
  CountKeys out;
  out.keys = Tensor::Empty({n, 2}, DType::kInt64, ids.device());
  if (n == 0) return out;
  // stats[0] all ones (no negative id), stats[1] = -1 (no id yet).
  Tensor stats = Tensor::FromVector(std::vector<int64_t>{-1, -1}).To(ids.device());
  auto* s = static_cast<int64_t*>(stats.raw_data());
  const Tensor idx = indices.defined() && !indices.IsContiguous() ? indices.Clone() : indices;
  const int64_t* ip = idx.defined() ? idx.data<int64_t>() : nullptr;
  const int rank = idx.defined() ? static_cast<int>(idx.Dim(1)) : 0;
  const int64_t* op_off = offsets.defined() ? offsets.data<int64_t>() : nullptr;
  const int64_t batch = offsets.defined() ? offsets.NumElements() - 1 : 0;
  const unsigned grid = static_cast<unsigned>(BlocksFor(n, kThreads, kMaxBlocks));
  cudaStream_t stream = cb::Stream(device);
  auto* first_negative = reinterpret_cast<unsigned long long*>(s);
  auto* max_id = reinterpret_cast<long long*>(s + 1);
  if (v.dtype() == DType::kInt64) {
    KeysKernel<<<grid, kThreads, 0, stream>>>(v.data<int64_t>(), n, ip, rank, op_off, batch,
                                              out.keys.data<int64_t>(), first_negative, max_id);
  } else {
    KeysKernel<<<grid, kThreads, 0, stream>>>(v.data<int32_t>(), n, ip, rank, op_off, batch,
                                              out.keys.data<int64_t>(), first_negative, max_id);
  }
  TK_CUDA_CHECK(op, cudaGetLastError());
  const Tensor host = stats.To(Device::Cpu());
  out.first_negative = host.data<int64_t>()[0];  // all ones reads as -1
  out.max_id = host.data<int64_t>()[1];
  return out;
}

}  // namespace tensorkit::features_cuda
