// CUDA body of EmbeddingBagBackward (device_ops.h; embedding_backward.cc Note [sorted
// gradient]): the positions sorted stably by id with sparse/'s device radix sort, each id's run
// found by binary search (RunPointers) and the ids that occur listed by Select
// (common/cuda/launch.cuh); then one warp per run, lanes over columns, each column summed in bag
// order by embedding_device.h's RunColumnSum, the CPU body's sequence. Every output element is
// written by one thread, so there are no atomics and the bits are the CPU's.
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "tensorkit/common/cuda/cuda_util.h"
#include "tensorkit/common/dtype.h"
#include "tensorkit/common/error.h"
#include "tensorkit/dense/views.h"
#include "tensorkit/features/cuda/elements.cuh"
#include "tensorkit/features/cuda/warps.cuh"
#include "tensorkit/features/device_ops.h"
#include "tensorkit/features/embedding_device.h"
#include "tensorkit/features/features_internal.h"
#include "tensorkit/sparse/index_rows.h"

namespace tensorkit::features_cuda {
namespace {

namespace cb = common_cuda;
namespace ei = embedding_internal;
namespace fi = features_internal;

// The sort keys (each position's id, as device rows [n, 1]) and the positions.
template <typename I>
__global__ void IdKeysKernel(const I* ids, int64_t n, int64_t* keys, int64_t* pos) {
  for (int64_t i = FirstItem(); i < n; i += ItemStep()) {
    keys[i] = static_cast<int64_t>(ids[i]);
    pos[i] = i;
  }
}

// Whether id v occurs (its run of sorted positions is not empty) and is not the padding id.
struct OccursAt {
  const int64_t* ptr;
  int64_t padding_id;
  __device__ bool operator()(int64_t v) const { return v != padding_id && ptr[v + 1] > ptr[v]; }
};

// bags[q] = the bag of sorted position q (PositionBag), once for all of the sums' column passes.
__global__ void PositionBagsKernel(const int64_t* perm, const int64_t* off, int64_t batch,
                                   int64_t n, int64_t* bags) {
  for (int64_t q = FirstItem(); q < n; q += ItemStep()) {
    bags[q] = ei::PositionBag(perm, off, batch, q);
  }
}

template <typename C>
__global__ void DivisorsKernel(const int64_t* ids, const int64_t* off, const C* weights,
                               int64_t padding_id, Combiner combiner, int64_t batch, C* divisors) {
  for (int64_t b = FirstItem(); b < batch; b += ItemStep()) {
    divisors[b] = ei::GradDivisor<C>(ids, off, weights, padding_id, combiner, b);
  }
}

// One warp per bag, lanes over columns: each column's winner in bag order.
template <typename T>
__global__ void WinnersKernel(const T* table, int64_t ld, const int64_t* ids, const int64_t* off,
                              int64_t padding_id, Combiner combiner, int64_t batch, int64_t d,
                              int64_t* winners) {
  ForEachItemByWarp(batch, [&](int64_t b, int lane) {
    for (int64_t c = lane; c < d; c += kWarp) {
      winners[b * d + c] = ei::BagWinner(table, ld, ids, off, padding_id, combiner, b, c);
    }
  });
}

// One warp per run k (id run_ids[k], positions perm[ptr[id], ptr[id + 1])), lanes over columns:
// the sums into the COO rows (out_idx, out_values) or added into table_grad's row.
template <typename T, typename C>
__global__ void SumRunsKernel(ei::GradJob<C> a, const int64_t* run_ids, const int64_t* ptr,
                              int64_t runs, int64_t* out_idx, T* out_values, T* table_grad,
                              int64_t s0, int64_t s1) {
  ForEachItemByWarp(runs, [&](int64_t k, int lane) {
    const int64_t v = run_ids[k];
    for (int64_t c = lane; c < a.d; c += kWarp) {
      const C acc = ei::RunColumnSum<T>(a, ptr[v], ptr[v + 1], c);
      if (table_grad != nullptr) {
        T* x = table_grad + v * s0 + c * s1;
        *x = static_cast<T>(fi::Rounded<false>(static_cast<C>(*x), acc));
        continue;
      }
      const int64_t e = k * a.d + c;
      out_idx[2 * e] = v;
      out_idx[2 * e + 1] = c;
      out_values[e] = static_cast<T>(acc);
    }
  });
}

// The ids that occur (not the padding id), ascending, and each id's run pointers: ptr [V + 1]
// over *perm, the positions sorted stably by id. *keys receives the ids as int64 [n, 1].
Tensor RunsOfIds(const Tensor& ids, int64_t num_rows, int64_t padding_id, Tensor* keys,
                 Tensor* perm, Tensor* ptr, const char* op) {
  const int device = ids.device().index;
  cudaStream_t stream = cb::Stream(device);
  const int64_t n = ids.NumElements();
  *keys = Tensor::Empty({n, 1}, DType::kInt64, ids.device());
  Tensor pos = Tensor::Empty({n}, DType::kInt64, ids.device());
  if (n > 0) {
    Dispatch<fi::kIdDTypes>(ids.dtype(), op, [&]<typename I>() {
      IdKeysKernel<<<WarpGridFor(n, true), kWarpThreads, 0, stream>>>(
          ids.data<I>(), n, keys->data<int64_t>(), pos.data<int64_t>());
    });
    TK_CUDA_CHECK(op, cudaGetLastError());
  }
  // Stable: each id keeps its positions in bag order, the order the CPU sums them in.
  Tensor sorted;
  sparse_rows::SortEntries(*keys, pos, {num_rows}, {0}, &sorted, perm);
  *ptr = sparse_rows::RunPointers(sorted, 0, num_rows);
  // The ids that occur, ascending (sparse/'s select; the count is the one wait).
  Tensor all = Tensor::Empty({num_rows}, DType::kInt64, ids.device());
  const int64_t runs = Select(num_rows, OccursAt{ptr->data<int64_t>(), padding_id},
                              static_cast<uint64_t*>(all.raw_data()), On(ids, op));
  return Slice(all, 0, 0, runs);
}

}  // namespace

GradRows EmbeddingGradOnDevice(const Tensor& grad, const Tensor& ids, const Tensor& offsets,
                               const Tensor& weights, const Tensor& table, Combiner combiner,
                               int64_t num_rows, int64_t padding_id, Tensor* table_grad,
                               const char* op) {
  const int device = ids.device().index;
  cb::DeviceGuard guard(device, op);
  cudaStream_t stream = cb::Stream(device);
  const int64_t batch = offsets.NumElements() - 1, d = grad.Dim(1);
  Tensor keys, perm, ptr;
  const Tensor run_ids = RunsOfIds(ids, num_rows, padding_id, &keys, &perm, &ptr, op);
  const int64_t runs = run_ids.NumElements();
  GradRows out;
  if (table_grad == nullptr) {
    int64_t nnz = 0;
    TK_CHECK(!__builtin_mul_overflow(runs, d, &nnz), kResourceExhausted, op, ": ", runs,
             " rows of ", d, " columns are more entries than int64 counts");
    out.indices = Tensor::Empty({nnz, 2}, DType::kInt64, grad.device());
    out.values = Tensor::Empty({nnz}, grad.dtype(), grad.device());
  }
  if (runs == 0 || d == 0) return out;
  const int64_t* id = keys.data<int64_t>();
  const int64_t* off = offsets.data<int64_t>();
  const bool extreme = combiner == Combiner::kMax || combiner == Combiner::kMin;
  const int64_t n = perm.NumElements();
  Tensor bags = Tensor::Empty({n}, DType::kInt64, ids.device());
  PositionBagsKernel<<<WarpGridFor(n, true), kWarpThreads, 0, stream>>>(
      perm.data<int64_t>(), off, batch, n, bags.data<int64_t>());
  TK_CUDA_CHECK(op, cudaGetLastError());
  // kMax / kMin: each column's winning position, which depends on the table only.
  Tensor winners;
  if (extreme) {
    winners = Tensor::Empty({batch, d}, DType::kInt64, grad.device());
    Dispatch<kFloatDTypes>(table.dtype(), op, [&]<typename U>() {
      WinnersKernel<<<WarpGridFor(batch), kWarpThreads, 0, stream>>>(
          table.data<U>(), table.Stride(0), id, off, padding_id, combiner, batch, d,
          winners.data<int64_t>());
    });
    TK_CUDA_CHECK(op, cudaGetLastError());
  }
  Dispatch<kFloatDTypes>(grad.dtype(), op, [&]<typename T>() {
    using C = ComputeType<T>;
    ei::GradJob<C> a;
    a.grad = grad.data<T>();
    a.d = d;
    a.perm = perm.data<int64_t>();
    a.bags = bags.data<int64_t>();
    a.weights = weights.defined() ? weights.data<C>() : nullptr;
    Tensor divisors;
    if (extreme) {
      a.winners = winners.data<int64_t>();
    } else {
      divisors = Tensor::Empty({batch}, DTypeOf<C>, grad.device());
      DivisorsKernel<<<WarpGridFor(batch, true), kWarpThreads, 0, stream>>>(
          id, off, a.weights, padding_id, combiner, batch, divisors.data<C>());
      a.divisors = divisors.data<C>();
    }
    TK_CUDA_CHECK(op, cudaGetLastError());
    T* dense = table_grad != nullptr ? table_grad->data<T>() : nullptr;
    SumRunsKernel<T, C><<<WarpGridFor(runs), kWarpThreads, 0, stream>>>(
        a, run_ids.data<int64_t>(), ptr.data<int64_t>(), runs,
        dense != nullptr ? nullptr : out.indices.data<int64_t>(),
        dense != nullptr ? nullptr : out.values.data<T>(), dense,
        dense != nullptr ? table_grad->Stride(0) : 0, dense != nullptr ? table_grad->Stride(1) : 0);
    TK_CUDA_CHECK(op, cudaGetLastError());
  });
  return out;
}

}  // namespace tensorkit::features_cuda
