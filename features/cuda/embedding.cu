// CUDA bodies of EmbeddingBag and EmbeddingBags (device_ops.h): the ids checked by one kernel
// per table with one fetch of all verdicts, then one warp per bag, each lane reducing a few
// columns in id order with embedding_device.h's function, the CPU kernels' sequence of
// operations. No atomics touch a value, so results do not depend on scheduling.
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "tensorkit/common/cuda/cuda_util.h"
#include "tensorkit/common/dtype.h"
#include "tensorkit/common/error.h"
#include "tensorkit/features/cuda/warps.cuh"
#include "tensorkit/features/device_ops.h"
#include "tensorkit/features/embedding_device.h"

namespace tensorkit::features_cuda {
namespace {

namespace cb = common_cuda;
namespace ei = embedding_internal;

constexpr int kColsPerLane = 4;  // a warp covers 128 columns of a bag per pass over its ids

// The first position in [begin, end) whose id is outside [0, rows) (one unsigned compare also
// catches negatives); *first stays all ones when there is none.
template <typename I>
__global__ void FirstBadIdKernel(const I* ids, int64_t begin, int64_t end, uint64_t rows,
                                 unsigned long long* first) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = begin + static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < end;
       i += step) {
    if (static_cast<uint64_t>(static_cast<int64_t>(ids[i])) >= rows) {
      atomicMin(first, static_cast<unsigned long long>(i));
    }
  }
}

template <typename T, typename I, typename C>
__global__ void BagKernel(ei::BagJob<C> a, int64_t num_bags) {
  ForEachItemByWarp(num_bags, [&](int64_t b, int lane) {
    for (int64_t c = 0; c < a.d; c += kWarp * kColsPerLane) {
      ei::ReduceBagColumns<kColsPerLane, T, I>(a, a.first_bag + b, c + lane, kWarp);
    }
  });
}

}  // namespace

std::vector<int64_t> FirstIdsOutOfRange(const Tensor& ids, const std::vector<int64_t>& begins,
                                        const std::vector<int64_t>& num_rows, const char* op) {
  const int device = ids.device().index;
  cb::DeviceGuard guard(device, op);
  const size_t ranges = num_rows.size();
  std::vector<int64_t> first(ranges, -1);
  if (ranges == 0 || ids.NumElements() == 0) return first;
  Tensor verdicts = Tensor::FromVector(first).To(ids.device());  // all ones: none yet
  auto* slots = static_cast<unsigned long long*>(verdicts.raw_data());
  cudaStream_t stream = cb::Stream(device);
  for (size_t r = 0; r < ranges; ++r) {
    const int64_t n = begins[r + 1] - begins[r];
    if (n == 0) continue;
    const unsigned grid = WarpGridFor(n, /*per_thread=*/true);
    const uint64_t rows = static_cast<uint64_t>(num_rows[r]);
    if (ids.dtype() == DType::kInt64) {
      FirstBadIdKernel<<<grid, kWarpThreads, 0, stream>>>(ids.data<int64_t>(), begins[r],
                                                          begins[r + 1], rows, slots + r);
    } else {
      FirstBadIdKernel<<<grid, kWarpThreads, 0, stream>>>(ids.data<int32_t>(), begins[r],
                                                          begins[r + 1], rows, slots + r);
    }
    TK_CUDA_CHECK(op, cudaGetLastError());
  }
  return verdicts.To(Device::Cpu()).ToVector<int64_t>();  // the one wait
}

void EmbeddingBagOnDevice(const Tensor& table, const Tensor& ids, const Tensor& offsets,
                          const Tensor& weights, int64_t first_bag, int64_t num_bags,
                          int64_t padding_id, Combiner combiner, Tensor* out, int64_t col,
                          const char* op) {
  const int64_t d = table.Dim(1);
  if (num_bags == 0 || d == 0) return;
  const int device = table.device().index;
  cb::DeviceGuard guard(device, op);
  const unsigned grid = WarpGridFor(num_bags);
  cudaStream_t stream = cb::Stream(device);
  Dispatch<kFloatDTypes>(table.dtype(), op, [&]<typename T>() {
    using C = ComputeType<T>;
    const auto launch = [&]<typename I>() {
      ei::BagJob<C> a;
      a.table = table.data<T>();
      a.table_ld = table.Stride(0);
      a.d = d;
      a.ids = ids.data<I>();
      a.off = offsets.data<int64_t>();
      a.weights = weights.defined() ? weights.data<C>() : nullptr;
      a.padding_id = padding_id;
      a.combiner = combiner;
      a.out = out->data<T>() + col;
      a.out_ld = out->Dim(1);
      a.first_bag = first_bag;
      BagKernel<T, I, C><<<grid, kWarpThreads, 0, stream>>>(a, num_bags);
    };
    if (ids.dtype() == DType::kInt64) {
      launch.template operator()<int64_t>();
    } else {
      launch.template operator()<int32_t>();
    }
  });
  TK_CUDA_CHECK(op, cudaGetLastError());
}

}  // namespace tensorkit::features_cuda
