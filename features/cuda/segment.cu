// CUDA bodies of SegmentReduce, UnsortedSegmentReduce and SparseSegmentReduce (device_ops.h):
// one check kernel over the ids with one fetch of its verdict (which also sizes the output when
// num_segments is -1); unsorted ids sorted stably on the device (sparse/'s SortEntries, negative
// ids to a segment past the end); the segment starts by a binary search per segment; then one
// warp per segment, lanes over the row's elements, each element reduced by segment_device.h's
// function in the CPU's order: the CPU's bits. No atomics touch a value.
#include <cuda_runtime.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "tensorkit/common/cuda/cuda_util.h"
#include "tensorkit/common/dtype.h"
#include "tensorkit/common/error.h"
#include "tensorkit/dense/views.h"
#include "tensorkit/features/cuda/warps.cuh"
#include "tensorkit/features/device_ops.h"
#include "tensorkit/features/segment_device.h"
#include "tensorkit/sparse/index_rows.h"

namespace tensorkit::features_cuda {
namespace {

namespace cb = common_cuda;
namespace fi = features_internal;

// verdict[0]: the first bad id position, verdict[1]: the first bad index position (both all
// ones when none), verdict[2]: the last id.
template <typename I, typename J>
__global__ void CheckKernel(const I* ids, const J* idx, int64_t k, int64_t limit, uint64_t rows,
                            unsigned long long* verdict) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < k; i += step) {
    const int64_t v = static_cast<int64_t>(ids[i]);
    if (v < 0 || v >= limit || (i > 0 && v < static_cast<int64_t>(ids[i - 1]))) {
      atomicMin(verdict, static_cast<unsigned long long>(i));
    }
    if (idx != nullptr && static_cast<uint64_t>(static_cast<int64_t>(idx[i])) >= rows) {
      atomicMin(verdict + 1, static_cast<unsigned long long>(i));
    }
    if (i == k - 1) verdict[2] = static_cast<unsigned long long>(v);
  }
}

// verdict[0]: the first position whose id is not below limit (all ones when none), verdict[1]:
// the largest id.
template <typename I>
__global__ void UnsortedCheckKernel(const I* ids, int64_t k, int64_t limit, long long* verdict) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < k; i += step) {
    const int64_t v = static_cast<int64_t>(ids[i]);
    if (v >= limit) {
      atomicMin(reinterpret_cast<unsigned long long*>(verdict), static_cast<unsigned long long>(i));
    }
    atomicMax(verdict + 1, static_cast<long long>(v));
  }
}

// The sort keys of unsorted ids (a negative id goes past the last segment, `drop`) and their
// positions.
template <typename I>
__global__ void UnsortedKeysKernel(const I* ids, int64_t k, int64_t drop, int64_t* keys,
                                   int64_t* pos) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < k; i += step) {
    const int64_t v = static_cast<int64_t>(ids[i]);
    keys[i] = v < 0 ? drop : v;
    pos[i] = i;
  }
}

template <typename I>
__global__ void StartsKernel(const I* ids, int64_t k, int64_t num_out, int64_t* start) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t s = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; s <= num_out;
       s += step) {
    start[s] = fi::LowerBoundOf(ids, k, s);
  }
}

template <typename A, typename T, typename J>
__global__ void ReduceKernel(fi::SegmentJob<T, J> a, int64_t num_out) {
  ForEachItemByWarp(num_out, [&](int64_t s, int lane) {
    for (int64_t t = lane; t < a.d; t += kWarp) fi::ReduceSegmentElement<A>(a, s, t);
  });
}

// Calls f.template operator()<I>() for the int32 / int64 dtype of t.
template <typename F>
void WithIndexType(const Tensor& t, F&& f) {
  if (t.dtype() == DType::kInt64) {
    f.template operator()<int64_t>();
  } else {
    f.template operator()<int32_t>();
  }
}

}  // namespace

SegmentVerdict CheckSortedSegmentsOnDevice(const Tensor& indices, const Tensor& segment_ids,
                                           int64_t num_segments, int64_t num_rows, const char* op) {
  SegmentVerdict out;
  const int64_t k = segment_ids.NumElements();
  if (k == 0) return out;
  const int device = segment_ids.device().index;
  cb::DeviceGuard guard(device, op);
  Tensor verdict = Tensor::FromVector(std::vector<int64_t>{-1, -1, -1}).To(segment_ids.device());
  auto* slots = static_cast<unsigned long long*>(verdict.raw_data());
  const int64_t limit = num_segments >= 0 ? num_segments : std::numeric_limits<int64_t>::max();
  cudaStream_t stream = cb::Stream(device);
  const Tensor& idx = indices.defined() ? indices : segment_ids;  // the dtype to compile for
  WithIndexType(segment_ids, [&]<typename I>() {
    WithIndexType(idx, [&]<typename J>() {
      CheckKernel<<<WarpGridFor(k, true), kWarpThreads, 0, stream>>>(
          segment_ids.data<I>(), indices.defined() ? indices.data<J>() : nullptr, k, limit,
          static_cast<uint64_t>(num_rows), slots);
    });
  });
  TK_CUDA_CHECK(op, cudaGetLastError());
  const std::vector<int64_t> v = verdict.To(Device::Cpu()).ToVector<int64_t>();  // the one wait
  out.first_bad_id = v[0];
  out.first_bad_index = v[1];
  out.last_id = v[2];
  return out;
}

UnsortedVerdict CheckUnsortedIdsOnDevice(const Tensor& segment_ids, int64_t num_segments,
                                         const char* op) {
  UnsortedVerdict out;
  const int64_t k = segment_ids.NumElements();
  if (k == 0) return out;
  const int device = segment_ids.device().index;
  cb::DeviceGuard guard(device, op);
  Tensor verdict = Tensor::FromVector(std::vector<int64_t>{-1, -1}).To(segment_ids.device());
  auto* slots = static_cast<long long*>(verdict.raw_data());
  const int64_t limit = num_segments >= 0 ? num_segments : std::numeric_limits<int64_t>::max();
  WithIndexType(segment_ids, [&]<typename I>() {
    UnsortedCheckKernel<<<WarpGridFor(k, true), kWarpThreads, 0, cb::Stream(device)>>>(
        segment_ids.data<I>(), k, limit, slots);
  });
  TK_CUDA_CHECK(op, cudaGetLastError());
  const std::vector<int64_t> v = verdict.To(Device::Cpu()).ToVector<int64_t>();  // the one wait
  out.first_bad_id = v[0];
  out.max_id = v[1];
  return out;
}

namespace {

// Reduces out's rows from slots [start[s], start[s + 1]) of `src` (or of data's rows themselves
// when src is undefined), start from the sorted `keys` [K].
void ReduceSlots(const Tensor& data, const Tensor& src, const Tensor& keys, Combiner combiner,
                 fi::SegmentOrder order, bool unsorted, Tensor* out, const char* op) {
  const int64_t num_out = out->Dim(0);
  const int64_t d = out->NumElements() / num_out;
  const int device = data.device().index;
  cb::DeviceGuard guard(device, op);
  cudaStream_t stream = cb::Stream(device);
  Tensor start = Tensor::Empty({num_out + 1}, DType::kInt64, data.device());
  WithIndexType(keys, [&]<typename I>() {
    StartsKernel<<<WarpGridFor(num_out + 1, true), kWarpThreads, 0, stream>>>(
        keys.data<I>(), keys.NumElements(), num_out, start.data<int64_t>());
  });
  TK_CUDA_CHECK(op, cudaGetLastError());
  const Tensor& src_type = src.defined() ? src : keys;  // the dtype to compile for
  Dispatch<kFloatDTypes | Bit(DType::kInt32) | Bit(DType::kInt64)>(
      data.dtype(), op, [&]<typename T>() {
        WithIndexType(src_type, [&]<typename J>() {
          fi::SegmentJob<T, J> a;
          a.data = data.data<T>();
          a.d = d;
          a.indices = src.defined() ? src.data<J>() : nullptr;
          a.start = start.data<int64_t>();
          a.combiner = combiner;
          a.order = order;
          a.empty = fi::EmptyValue<T>(combiner, unsorted);
          a.out = out->data<T>();
          ReduceKernel<ComputeType<T>, T, J>
              <<<WarpGridFor(num_out), kWarpThreads, 0, stream>>>(a, num_out);
        });
      });
  TK_CUDA_CHECK(op, cudaGetLastError());
}

}  // namespace

void SortedSegmentReduceOnDevice(const Tensor& data, const Tensor& indices,
                                 const Tensor& segment_ids, Combiner combiner, Tensor* out,
                                 const char* op) {
  if (out->NumElements() == 0) return;
  ReduceSlots(data, indices, segment_ids, combiner,
              indices.defined() ? fi::SegmentOrder::kBlocks : fi::SegmentOrder::kEigen,
              /*unsorted=*/false, out, op);
}

void UnsortedSegmentReduceOnDevice(const Tensor& data, const Tensor& segment_ids, Combiner combiner,
                                   Tensor* out, const char* op) {
  if (out->NumElements() == 0) return;
  const int64_t num_out = out->Dim(0);
  const int64_t k = segment_ids.NumElements();
  Tensor keys = Tensor::Empty({k, 1}, DType::kInt64, data.device());
  Tensor pos = Tensor::Empty({k}, DType::kInt64, data.device());
  {
    cb::DeviceGuard guard(data.device().index, op);
    WithIndexType(segment_ids, [&]<typename I>() {
      UnsortedKeysKernel<<<WarpGridFor(k, true), kWarpThreads, 0,
                           cb::Stream(data.device().index)>>>(
          segment_ids.data<I>(), k, num_out, keys.data<int64_t>(), pos.data<int64_t>());
    });
    TK_CUDA_CHECK(op, cudaGetLastError());
  }
  // A stable sort keeps each segment's rows in entry order (the CPU's counting sort does too).
  Tensor sorted_keys, sorted_pos;
  sparse_rows::SortEntries(keys, pos, {num_out + 1}, {0}, &sorted_keys, &sorted_pos);
  ReduceSlots(data, sorted_pos, *View(sorted_keys, {k}), combiner, fi::SegmentOrder::kFromZero,
              /*unsorted=*/true, out, op);
}

}  // namespace tensorkit::features_cuda
