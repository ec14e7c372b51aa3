// SparseTensor::Concat: along order[0] (TensorFlow's rules) or along any axis.
#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "tensorkit/common/streaming.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/dense/transpose_internal.h"
#include "tensorkit/dense/views.h"
#include "tensorkit/sparse/device_ops.h"
#include "tensorkit/sparse/internal.h"
#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit {
namespace si = sparse_internal;
namespace {

// Rank, dtype, device and dims except `axis` agree across inputs; throws Error otherwise.
void CheckCompatible(const std::vector<SparseTensor>& inputs, int axis, const char* op) {
  const SparseTensor& first = inputs[0];
  for (size_t k = 1; k < inputs.size(); ++k) {
    const SparseTensor& in = inputs[k];
    TK_CHECK(in.rank() == first.rank(), kShapeMismatch, op, ": input ", k, " has rank ", in.rank(),
             " (shape ", ShapeString(in.shape()), ") but input 0 has rank ", first.rank(),
             " (shape ", ShapeString(first.shape()), ")");
    TK_CHECK(in.dtype() == first.dtype(), kDTypeMismatch, op, ": input ", k, " has ",
             DTypeName(in.dtype()), " values but input 0 has ", DTypeName(first.dtype()));
    TK_CHECK(in.device() == first.device(), kDeviceMismatch, op, ": input ", k, " is on ",
             in.device(), " but input 0 is on ", first.device());
    for (int a = 0; a < first.rank(); ++a) {
      TK_CHECK(a == axis || in.shape()[a] == first.shape()[a], kShapeMismatch, op, ": input ", k,
               " has shape ", ShapeString(in.shape()), " but input 0 has shape ",
               ShapeString(first.shape()), "; they may differ only on the concatenation axis ",
               axis);
    }
  }
}

// Adds `shift` to column `axis` of n rows of `rank` int64 (unsigned: unvalidated indices may
// not overflow).
void AddShift(int64_t* rows, int64_t n, int rank, int axis, int64_t shift) {
  for (int64_t i = 0; i < n; ++i) {
    int64_t& v = rows[i * rank + axis];
    v = static_cast<int64_t>(static_cast<uint64_t>(v) + static_cast<uint64_t>(shift));
  }
}

// n rows from src to dst with AddShift, dst written by StreamingCopy through an L1 buffer.
constexpr int64_t kBufferWords = 2048;  // 16 KiB: StreamRowsShifted takes rank <= this

void StreamRowsShifted(const int64_t* src, int64_t n, int rank, int axis, int64_t shift,
                       int64_t* dst) {
  if (rank == 0) return;
  alignas(64) int64_t buf[kBufferWords];
  const int64_t step = kBufferWords / rank;
  for (int64_t r = 0; r < n; r += step) {
    const int64_t m = std::min(step, n - r);
    std::memcpy(buf, src + r * rank, static_cast<size_t>(m * rank) * sizeof(int64_t));
    AddShift(buf, m, rank, axis, shift);
    StreamingCopy(dst + r * rank, buf, m * rank * 8);
  }
}

// Copies every input's entries one after another, adding to `axis` the sum of the previous
// inputs' dims there; `order` is the output's order.
SparseTensor ConcatRows(const std::vector<SparseTensor>& inputs, int axis,
                        const std::vector<int>& order) {
  const int rank = inputs[0].rank();
  const DType dtype = inputs[0].dtype();
  int64_t total = 0;
  std::vector<int64_t> shape = inputs[0].shape();
  shape[axis] = 0;
  for (const SparseTensor& in : inputs) {
    total += in.nnz();
    TK_CHECK(!__builtin_add_overflow(shape[axis], in.shape()[axis], &shape[axis]), kOutOfRange,
             "Concat: the joined dim on axis ", axis, " overflows int64");
  }
  if (OnCuda(inputs[0])) return sparse_cuda::Concat(inputs, axis, shape, total, order);
  Tensor indices = Tensor::Empty({total, rank}, DType::kInt64);
  Tensor values = Tensor::Empty({total}, dtype);
  // An output too large to stay in the caches is written past them (transpose_internal.h): no
  // line of it is read first. Rows then go through a small buffer, where the shift is added.
  const bool stream = rank <= kBufferWords &&
                      total * (8 * rank + DTypeSize(dtype)) >= transpose_internal::StreamingBytes();
  int64_t row0 = 0, shift = 0;
  for (const SparseTensor& in : inputs) {
    const int64_t n = in.nnz();
    if (n > 0) {
      const Tensor idx = in.indices().HostContiguous();
      const Tensor vals = in.values().HostContiguous();
      const int64_t* src_rows = static_cast<const int64_t*>(idx.raw_data());
      int64_t* dst_rows = static_cast<int64_t*>(indices.raw_data()) + row0 * rank;
      Dispatch(dtype, "Concat", [&]<typename T>() {
        const T* src = vals.data<T>();
        T* dst = values.data<T>() + row0;
        ParallelFor(0, n, GrainFor(8 * rank + sizeof(T)), [&](int64_t b, int64_t e) {
          if constexpr (std::is_trivially_copyable_v<T>) {
            if (stream) {
              StreamRowsShifted(src_rows + b * rank, e - b, rank, axis, shift, dst_rows + b * rank);
              StreamingCopy(dst + b, src + b, static_cast<int64_t>((e - b) * sizeof(T)));
              return;
            }
          }
          if (rank > 0) {
            std::memcpy(dst_rows + b * rank, src_rows + b * rank,
                        static_cast<size_t>((e - b) * rank) * sizeof(int64_t));
            AddShift(dst_rows + b * rank, e - b, rank, axis, shift);
          }
          if constexpr (std::is_trivially_copyable_v<T>) {
            std::memcpy(static_cast<void*>(dst + b), src + b,
                        static_cast<size_t>(e - b) * sizeof(T));
          } else {
            std::copy(src + b, src + e, dst + b);
          }
        });
      });
    }
    row0 += n;
    shift += in.shape()[axis];
  }
  return SparseTensor::Create(std::move(indices), std::move(values), shape, order);
}

void CheckInputs(const std::vector<SparseTensor>& inputs, const char* op) {
  TK_CHECK(!inputs.empty(), kInvalidArgument, op, ": no inputs; pass at least one SparseTensor");
  for (size_t k = 0; k < inputs.size(); ++k) {
    si::CheckCreated(inputs[k], (std::string(op) + ": input " + std::to_string(k)).c_str());
  }
}

}  // namespace

SparseTensor SparseTensor::Concat(const std::vector<SparseTensor>& inputs) {
  const char* op = "Concat";
  CheckInputs(inputs, op);
  for (size_t k = 0; k < inputs.size(); ++k) {
    TK_CHECK(inputs[k].OrderKnown(), kInvalidArgument, op, ": input ", k,
             " has an unknown order; Concat(inputs) joins along order[0], so Reorder every input "
             "first, or call Concat(inputs, axis)");
  }
  TK_CHECK(inputs[0].rank() > 0, kInvalidArgument, op, ": rank-0 tensors have no axis to join");
  const int axis = inputs[0].order()[0];
  for (size_t k = 1; k < inputs.size(); ++k) {
    TK_CHECK(inputs[k].rank() == inputs[0].rank(), kShapeMismatch, op, ": input ", k, " has rank ",
             inputs[k].rank(), " but input 0 has rank ", inputs[0].rank());
    TK_CHECK(inputs[k].order()[0] == axis, kInvalidArgument, op, ": input ", k, " has order ",
             ShapeString(inputs[k].order()), " but input 0 has order ",
             ShapeString(inputs[0].order()),
             "; order[0] (the primary axis) must match: Reorder "
             "the inputs or call Concat(inputs, axis)");
  }
  CheckCompatible(inputs, axis, op);
  const bool same = std::all_of(inputs.begin(), inputs.end(), [&](const SparseTensor& in) {
    return in.order() == inputs[0].order();
  });
  return ConcatRows(inputs, axis,
                    same ? inputs[0].order() : std::vector<int>(inputs[0].rank(), -1));
}

SparseTensor SparseTensor::Concat(const std::vector<SparseTensor>& inputs, int axis) {
  const char* op = "Concat";
  CheckInputs(inputs, op);
  const int rank = inputs[0].rank();
  TK_CHECK(rank > 0, kInvalidArgument, op, ": rank-0 tensors have no axis to join");
  axis = NormalizeAxis(axis, rank, op);
  CheckCompatible(inputs, axis, op);
  // Sorted inputs stay sorted when joined along their first order axis.
  const std::vector<int>& first = inputs[0].order();
  const bool keep = inputs[0].OrderKnown() && first[0] == axis &&
                    std::all_of(inputs.begin(), inputs.end(),
                                [&](const SparseTensor& in) { return in.order() == first; });
  return ConcatRows(inputs, axis, keep ? first : std::vector<int>(rank, -1));
}

}  // namespace tensorkit
