// CUDA bodies of FillEmptyRows and FillEmptyRowsGrad (device_ops.h). FillEmptyRows groups the
// entries by a stable sort of their rows (sparse/'s device radix sort), finds each row's first
// grouped entry by binary search and the empty rows before it by a scan, then gives each grouped
// entry and each row a thread that writes at fill_device.h's slots: TensorFlow's output, as on
// the CPU. The gradient's default-value sum runs fill_device.h's chunk sums, one thread per
// chunk, then the chunks in order: the CPU's sequence, without atomics on any value.
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "tensorkit/common/cuda/cuda_util.h"
#include "tensorkit/common/cuda/device_buffer.h"
#include "tensorkit/common/dtype.h"
#include "tensorkit/common/error.h"
#include "tensorkit/dense/views.h"
#include "tensorkit/features/cuda/elements.cuh"
#include "tensorkit/features/cuda/warps.cuh"
#include "tensorkit/features/device_ops.h"
#include "tensorkit/features/fill_device.h"
#include "tensorkit/sparse/index_rows.h"

namespace tensorkit::features_cuda {
namespace {

namespace cb = common_cuda;
namespace fi = features_internal;

// The sort keys (row of each entry, as device rows [nnz, 1]) and the entries' positions.
__global__ void RowKeysKernel(const int64_t* idx, int64_t nnz, int rank, int64_t* keys,
                              int64_t* pos) {
  for (int64_t i = FirstItem(); i < nnz; i += ItemStep()) {
    keys[i] = idx[i * rank];
    pos[i] = i;
  }
}

// flags[r] = 1 for a row without entries (r < rows), flags[rows] = 0: the scan's input.
__global__ void EmptyFlagsKernel(const int64_t* start, int64_t rows, int64_t* flags) {
  for (int64_t r = FirstItem(); r <= rows; r += ItemStep()) {
    flags[r] = r < rows && start[r + 1] == start[r] ? 1 : 0;
  }
}

// Grouped entry q (input position perm[q], or q without perm) moves to its slot.
template <typename W>
__global__ void PlaceEntriesKernel(const int64_t* idx, const W* values, const int64_t* perm,
                                   const int64_t* empties, int64_t nnz, int rank, int64_t* out_idx,
                                   W* out_values, int64_t* reverse) {
  for (int64_t q = FirstItem(); q < nnz; q += ItemStep()) {
    const int64_t i = perm != nullptr ? perm[q] : q;
    const int64_t* row = idx + i * rank;
    const int64_t slot = fi::EntrySlot(empties, row[0], q);
    reverse[i] = slot;
    if (out_idx == nullptr) continue;
    for (int a = 0; a < rank; ++a) out_idx[slot * rank + a] = row[a];
    out_values[slot] = values[i];
  }
}

// Row r's empty flag, and for an empty row its default entry (r, 0, ..., 0) = fill.
template <typename W>
__global__ void PlaceDefaultsKernel(const int64_t* start, const int64_t* empties, int64_t rows,
                                    int rank, W fill, int64_t* out_idx, W* out_values,
                                    bool* empty) {
  for (int64_t r = FirstItem(); r < rows; r += ItemStep()) {
    const bool none = start[r + 1] == start[r];
    empty[r] = none;
    if (!none || out_idx == nullptr) continue;
    const int64_t slot = fi::DefaultSlot(start, empties, r);
    out_idx[slot * rank] = r;
    for (int a = 1; a < rank; ++a) out_idx[slot * rank + a] = 0;
    out_values[slot] = fill;
  }
}

// d_values[i] = grad[reverse[i]], and the positions some entry names marked (every writer of a
// byte writes 1, so the order of the writes does not matter).
template <typename T>
__global__ void GradGatherKernel(const int64_t* reverse, const T* grad, int64_t n, T* d_values,
                                 uint8_t* used) {
  for (int64_t i = FirstItem(); i < n; i += ItemStep()) {
    d_values[i] = grad[reverse[i]];
    used[reverse[i]] = 1;
  }
}

template <typename Acc, typename T>
__global__ void ChunkSumsKernel(const T* grad, const uint8_t* used, int64_t n_full, int64_t chunk,
                                int64_t num_chunks, Acc* parts) {
  for (int64_t c = FirstItem(); c < num_chunks; c += ItemStep()) {
    const int64_t end = (c + 1) * chunk < n_full ? (c + 1) * chunk : n_full;
    parts[c] = fi::UnusedSum<Acc>(grad, used, c * chunk, end);
  }
}

template <typename Acc, typename T>
__global__ void JoinChunksKernel(const Acc* parts, int64_t num_chunks, T* out) {
  *out = static_cast<T>(fi::SumInOrder(parts, num_chunks));
}

}  // namespace

FillPlan PlanFillOnDevice(const Tensor& idx, int64_t rows, bool sorted, const char* op) {
  const int device = idx.device().index;
  cb::DeviceGuard guard(device, op);
  cudaStream_t stream = cb::Stream(device);
  const int64_t nnz = idx.Dim(0);
  const int rank = static_cast<int>(idx.Dim(1));
  FillPlan plan;
  Tensor grouped = idx;  // rows sorted by column 0
  if (!sorted && nnz > 0) {
    Tensor keys = Tensor::Empty({nnz, 1}, DType::kInt64, idx.device());
    Tensor pos = Tensor::Empty({nnz}, DType::kInt64, idx.device());
    RowKeysKernel<<<WarpGridFor(nnz, true), kWarpThreads, 0, stream>>>(
        idx.data<int64_t>(), nnz, rank, keys.data<int64_t>(), pos.data<int64_t>());
    TK_CUDA_CHECK(op, cudaGetLastError());
    // Stable, so each row keeps its entries in input order (TensorFlow's).
    sparse_rows::SortEntries(keys, pos, {rows}, {0}, &grouped, &plan.perm);
  }
  plan.start = sparse_rows::RunPointers(grouped, 0, rows);
  Tensor flags = Tensor::Empty({rows + 1}, DType::kInt64, idx.device());
  plan.empties = Tensor::Empty({rows + 1}, DType::kInt64, idx.device());
  EmptyFlagsKernel<<<WarpGridFor(rows + 1, true), kWarpThreads, 0, stream>>>(
      plan.start.data<int64_t>(), rows, flags.data<int64_t>());
  TK_CUDA_CHECK(op, cudaGetLastError());
  ExclusiveSum(flags.data<int64_t>(), plan.empties.data<int64_t>(), rows + 1, device, op);
  plan.num_empty = Slice(plan.empties, 0, rows, rows + 1).ToVector<int64_t>()[0];  // the wait
  return plan;
}

void FillOnDevice(const FillPlan& plan, const Tensor& idx, const Tensor& values, uint64_t fill_bits,
                  Tensor* out_idx, Tensor* out_values, Tensor* empty, Tensor* reverse,
                  const char* op) {
  const int device = idx.device().index;
  cb::DeviceGuard guard(device, op);
  cudaStream_t stream = cb::Stream(device);
  const int64_t nnz = idx.Dim(0), rows = empty->Dim(0);
  const int rank = static_cast<int>(idx.Dim(1));
  const bool write = out_idx != nullptr;
  BySize(DTypeSize(values.dtype()), [&]<typename W>() {
    W* out_v = write ? static_cast<W*>(out_values->raw_data()) : nullptr;
    int64_t* out_i = write ? out_idx->data<int64_t>() : nullptr;
    if (nnz > 0) {
      PlaceEntriesKernel<<<WarpGridFor(nnz, true), kWarpThreads, 0, stream>>>(
          idx.data<int64_t>(), static_cast<const W*>(values.raw_data()),
          plan.perm.defined() ? plan.perm.data<int64_t>() : nullptr, plan.empties.data<int64_t>(),
          nnz, rank, out_i, out_v, reverse->data<int64_t>());
      TK_CUDA_CHECK(op, cudaGetLastError());
    }
    if (rows > 0) {
      PlaceDefaultsKernel<<<WarpGridFor(rows, true), kWarpThreads, 0, stream>>>(
          plan.start.data<int64_t>(), plan.empties.data<int64_t>(), rows, rank,
          static_cast<W>(fill_bits), out_i, out_v, empty->data<bool>());
      TK_CUDA_CHECK(op, cudaGetLastError());
    }
  });
}

void FillGradOnDevice(const Tensor& reverse, const Tensor& grad, int64_t chunk, Tensor* d_values,
                      Tensor* d_default, const char* op) {
  const int device = grad.device().index;
  cb::DeviceGuard guard(device, op);
  cudaStream_t stream = cb::Stream(device);
  const int64_t n = reverse.NumElements(), n_full = grad.NumElements();
  const int64_t num_chunks = (n_full + chunk - 1) / chunk;
  Tensor used = Tensor::Zeros({n_full}, DType::kUInt8, grad.device());
  uint8_t* marks = n_full > 0 ? used.data<uint8_t>() : nullptr;
  Dispatch<kIntDTypes | kFloatDTypes>(grad.dtype(), op, [&]<typename T>() {
    using Acc = ComputeType<T>;
    if (n > 0) {
      GradGatherKernel<<<WarpGridFor(n, true), kWarpThreads, 0, stream>>>(
          reverse.data<int64_t>(), grad.data<T>(), n, d_values->data<T>(), marks);
      TK_CUDA_CHECK(op, cudaGetLastError());
    }
    const cb::DeviceBuffer parts(num_chunks * static_cast<int64_t>(sizeof(Acc)), device);
    if (num_chunks > 0) {
      ChunkSumsKernel<<<WarpGridFor(num_chunks, true), kWarpThreads, 0, stream>>>(
          grad.data<T>(), marks, n_full, chunk, num_chunks, parts.as<Acc>());
      TK_CUDA_CHECK(op, cudaGetLastError());
    }
    JoinChunksKernel<<<1, 1, 0, stream>>>(parts.as<Acc>(), num_chunks, d_default->data<T>());
    TK_CUDA_CHECK(op, cudaGetLastError());
  });
}

}  // namespace tensorkit::features_cuda
