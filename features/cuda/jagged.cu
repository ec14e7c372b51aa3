// CUDA bodies of JaggedTensor::ToPadded, FromPadded and ToSparse, and of KeyedJaggedTensor's
// gathers (device_ops.h): one thread per output element, its source from jagged_device.h's
// functions (the ones the host tests check against the CPU bodies); elements move as raw words
// of the dtype's size.
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "tensorkit/common/cuda/cuda_util.h"
#include "tensorkit/common/cuda/device_buffer.h"
#include "tensorkit/common/dtype.h"
#include "tensorkit/common/error.h"
#include "tensorkit/features/cuda/elements.cuh"
#include "tensorkit/features/cuda/warps.cuh"
#include "tensorkit/features/device_ops.h"
#include "tensorkit/features/jagged_device.h"

namespace tensorkit::features_cuda {
namespace {

namespace cb = common_cuda;
namespace ji = jagged_internal;

template <typename W>
__global__ void ToPaddedKernel(const W* src, const int64_t* off, int64_t len, int64_t inner,
                               int64_t total, W pad, W* out) {
  for (int64_t e = FirstItem(); e < total; e += ItemStep()) {
    const int64_t from = ji::PaddedSource(off, len, inner, e);
    out[e] = from < 0 ? pad : src[from];
  }
}

template <typename W>
__global__ void FromPaddedKernel(const W* dense, const int64_t* off, int64_t b, int64_t len,
                                 int64_t inner, int64_t total, W* out) {
  for (int64_t e = FirstItem(); e < total; e += ItemStep()) {
    out[e] = dense[ji::UnpaddedSource(off, b, len, inner, e)];
  }
}

// starts [num_blocks + 1] and sources [num_blocks]: the item blocks of jagged_device.h.
template <typename W>
__global__ void GatherKernel(const int64_t* starts, const uint64_t* sources, int64_t num_blocks,
                             int64_t inner, int64_t total, W* out) {
  for (int64_t e = FirstItem(); e < total; e += ItemStep()) {
    int64_t at = 0;
    const int64_t k = ji::GatheredElement(starts, num_blocks, inner, e, &at);
    out[e] = reinterpret_cast<const W*>(sources[k])[at];
  }
}

// padded[i] = len[i] for i < b and padded[b] = 0, the input of the scan whose last output is
// the total; *bad = 1 when some length lies outside [0, num_values] (every thread that finds
// one stores the same 1).
__global__ void PadLengthsKernel(const int64_t* len, int64_t b, int64_t num_values, int64_t* padded,
                                 int64_t* bad) {
  for (int64_t i = FirstItem(); i <= b; i += ItemStep()) {
    const int64_t v = i < b ? len[i] : 0;
    padded[i] = v;
    if (v < 0 || v > num_values) *bad = 1;
  }
}

__global__ void IndicesKernel(const int64_t* off, int64_t b, int64_t n, int64_t* idx) {
  for (int64_t i = FirstItem(); i < n; i += ItemStep()) {
    const int64_t r = ji::RowOfItem(off, b, i);
    idx[2 * i] = r;
    idx[2 * i + 1] = i - off[r];
  }
}

}  // namespace

void ToPaddedOnDevice(const Tensor& values, const Tensor& off, int64_t len, uint64_t pad_bits,
                      Tensor* out, const char* op) {
  const int64_t total = out->NumElements();
  if (total == 0) return;
  const int64_t b = out->Dim(0);
  const int64_t inner = total / (b * len);
  const int device = values.device().index;
  cb::DeviceGuard guard(device, op);
  BySize(DTypeSize(values.dtype()), [&]<typename W>() {
    const W* src = values.NumElements() > 0 ? static_cast<const W*>(values.raw_data()) : nullptr;
    ToPaddedKernel<<<WarpGridFor(total, true), kWarpThreads, 0, cb::Stream(device)>>>(
        src, off.data<int64_t>(), len, inner, total, static_cast<W>(pad_bits),
        static_cast<W*>(out->raw_data()));
  });
  TK_CUDA_CHECK(op, cudaGetLastError());
}

void FromPaddedOnDevice(const Tensor& dense, const Tensor& off, Tensor* out, const char* op) {
  const int64_t total = out->NumElements();
  if (total == 0) return;
  const int64_t b = dense.Dim(0), len = dense.Dim(1);
  const int64_t inner = total / out->Dim(0);
  const int device = dense.device().index;
  cb::DeviceGuard guard(device, op);
  BySize(DTypeSize(dense.dtype()), [&]<typename W>() {
    FromPaddedKernel<<<WarpGridFor(total, true), kWarpThreads, 0, cb::Stream(device)>>>(
        static_cast<const W*>(dense.raw_data()), off.data<int64_t>(), b, len, inner, total,
        static_cast<W*>(out->raw_data()));
  });
  TK_CUDA_CHECK(op, cudaGetLastError());
}

Tensor JaggedIndicesOnDevice(const Tensor& off, int64_t num_values, const char* op) {
  Tensor idx = Tensor::Empty({num_values, 2}, DType::kInt64, off.device());
  if (num_values == 0) return idx;
  const int device = off.device().index;
  cb::DeviceGuard guard(device, op);
  IndicesKernel<<<WarpGridFor(num_values, true), kWarpThreads, 0, cb::Stream(device)>>>(
      off.data<int64_t>(), off.NumElements() - 1, num_values, idx.data<int64_t>());
  TK_CUDA_CHECK(op, cudaGetLastError());
  return idx;
}

Tensor OffsetsFromLengthsOnDevice(const Tensor& lengths, int64_t num_values, const char* op) {
  const int64_t b = lengths.NumElements();
  const On on(lengths, op);
  Tensor offsets = Tensor::Empty({b + 1}, DType::kInt64, lengths.device());
  int64_t* off = offsets.data<int64_t>();
  // The scan's input (the lengths and a trailing 0), then the verdict and the total.
  cb::DeviceBuffer scratch(8 * (b + 3), on.device);
  int64_t* padded = scratch.as<int64_t>();
  int64_t* verdict = padded + b + 1;
  TK_CUDA_CHECK(op, cudaMemsetAsync(verdict, 0, 8, on.stream));
  PadLengthsKernel<<<cb::Grid(b + 1), cb::kThreads, 0, on.stream>>>(lengths.data<int64_t>(), b,
                                                                    num_values, padded, verdict);
  TK_CUDA_CHECK(op, cudaGetLastError());
  ExclusiveSum(padded, off, b + 1, on.device, op);
  TK_CUDA_CHECK(op, cudaMemcpyAsync(verdict + 1, off + b, 8, cudaMemcpyDeviceToDevice, on.stream));
  int64_t host[2] = {0, 0};
  cb::Memcpy(host, 0, verdict, on.device, 16, cb::CopyKind::kDeviceToHost);
  return host[0] == 0 && host[1] == num_values ? offsets : Tensor();
}

void GatherItemBlocksOnDevice(const std::vector<int64_t>& starts,
                              const std::vector<const void*>& sources, int64_t inner, Tensor* out,
                              const char* op) {
  const int64_t total = out->NumElements();
  const int64_t num_blocks = static_cast<int64_t>(sources.size());
  if (total == 0 || num_blocks == 0) return;
  const On on(*out, op);
  std::vector<uint64_t> addresses(sources.size());
  for (size_t k = 0; k < sources.size(); ++k) {
    addresses[k] = reinterpret_cast<uint64_t>(sources[k]);
  }
  const cb::DeviceBuffer dev_starts = Upload(starts, on);
  const cb::DeviceBuffer dev_sources = Upload(addresses, on);
  BySize(DTypeSize(out->dtype()), [&]<typename W>() {
    GatherKernel<<<WarpGridFor(total, true), kWarpThreads, 0, on.stream>>>(
        dev_starts.as<int64_t>(), dev_sources.as<uint64_t>(), num_blocks, inner, total,
        static_cast<W*>(out->raw_data()));
  });
  TK_CUDA_CHECK(op, cudaGetLastError());
}

}  // namespace tensorkit::features_cuda
