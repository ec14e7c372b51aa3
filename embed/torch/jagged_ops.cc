// FBGEMM's jagged and sparse-data operators (their schemas and semantics) on tensorkit:
// asynchronous_complete_cumsum, jagged_to_padded_dense (and its backward), dense_to_jagged_forward
// and permute_2D_sparse_data. Every malformed input is an Error naming the operator, the argument
// and the position: FBGEMM's CPU kernels read and write out of bounds on bad offsets (FBGEMM
// #1187, #5879).

#include <algorithm>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "tensorkit/common/simd_path.h"
#include "tensorkit/dense/external.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/dense/views.h"
#include "tensorkit/embed/torch/torch_glue.h"
#include "tensorkit/features/jagged.h"

namespace tensorkit::torch_ops {
namespace {

// Offsets of one jagged dimension: o[0] >= 0, non-decreasing, o[n - 1] <= limit.
void CheckOffsets(const Tensor& offsets, int64_t limit, const char* limit_name, const char* op) {
  const int64_t* o = offsets.data<int64_t>();
  const int64_t n = offsets.Dim(0);
  TK_CHECK(n >= 1, kInvalidArgument, op,
           ": offsets must hold B + 1 >= 1 elements (0 first for an empty batch), got none");
  TK_CHECK(o[0] >= 0, kInvalidArgument, op, ": offsets[0] = ", o[0], " is negative");
  // A branch-free pass (it vectorises); only a failure looks for the position.
  bool ordered = true;
  for (int64_t i = 1; i < n; ++i) ordered &= o[i] >= o[i - 1];
  for (int64_t i = 1; !ordered && i < n; ++i) {
    TK_CHECK(o[i] >= o[i - 1], kInvalidArgument, op, ": offsets[", i, "] = ", o[i],
             " is less than offsets[", i - 1, "] = ", o[i - 1], " (offsets never decrease)");
  }
  TK_CHECK(o[n - 1] <= limit, kOutOfRange, op, ": offsets[", n - 1, "] = ", o[n - 1],
           " is past the end of the values (", limit_name, " = ", limit, ")");
}

// The one jagged dimension's offsets of an FBGEMM offsets list, as int64.
Tensor OneOffsets(const std::vector<TorchTensor>& offsets, const char* op) {
  TK_CHECK(offsets.size() == 1, kUnsupported, op,
           ": one jagged dimension is supported (a list of one offsets tensor), got ",
           offsets.size(), " offsets tensors");
  return IndexVector(offsets[0], op, "offsets[0]");
}

// ---- asynchronous_complete_cumsum ----------------------------------------------------------

TorchTensor AsynchronousCompleteCumsum(TorchTensor t_in) {
  const char* op = "tensorkit::asynchronous_complete_cumsum";
  return Run(op, [&] {
    TK_CHECK(t_in.dim() == 1 || t_in.dim() == 2, kInvalidArgument, op,
             ": t_in must be 1-D or 2-D, got shape ", SizesText(t_in));
    const Tensor in = Wrap(t_in, op, "t_in");
    const int64_t rows = t_in.dim() == 1 ? 1 : in.Dim(0), n = in.Dim(-1);
    std::vector<int64_t> dims = in.Dims();
    dims.back() += 1;
    TorchTensor out_t = Empty(dims, t_in.scalar_type());
    Tensor out = Wrap(out_t, op, "output");
    const Tensor src = in.IsContiguous() ? in : in.Clone();
    constexpr DTypeSet kSet =
        Bit(DType::kInt32) | Bit(DType::kInt64) | Bit(DType::kFloat32) | Bit(DType::kFloat64);
    Dispatch<kSet>(in.dtype(), op, [&]<typename T>() {
      const T* s = src.data<T>();
      T* d = out.data<T>();
      ParallelFor(0, rows, GrainFor(n * static_cast<int64_t>(sizeof(T))),
                  [&](int64_t b, int64_t e) {
                    for (int64_t r = b; r < e; ++r) {
                      T sum = 0;
                      const T* sr = s + r * n;
                      T* dr = d + r * (n + 1);
                      for (int64_t i = 0; i < n; ++i) {
                        dr[i] = sum;
                        sum += sr[i];
                      }
                      dr[n] = sum;
                    }
                  });
    });
    return out_t;
  });
}

// ---- jagged_to_padded_dense ----------------------------------------------------------------

TorchTensor JaggedToPaddedDense(TorchTensor values, std::vector<TorchTensor> offsets,
                                std::vector<int64_t> max_lengths, double padding_value) {
  const char* op = "tensorkit::jagged_to_padded_dense";
  return Run(op, [&] {
    const TorchStream stream(values, op);
    TK_CHECK(values.dim() == 1 || values.dim() == 2, kInvalidArgument, op,
             ": values must be 1-D [N] or 2-D [N, D], got shape ", SizesText(values));
    Tensor off = OneOffsets(offsets, op);
    TK_CHECK(max_lengths.size() == 1, kInvalidArgument, op,
             ": max_lengths must hold one length per jagged dimension (1), got ",
             max_lengths.size());
    TK_CHECK(max_lengths[0] >= 0, kInvalidArgument, op, ": max_lengths[0] = ", max_lengths[0],
             " is negative");
    const Tensor vals = WrapAny(values, op, "values");
    CheckOffsets(off, vals.Dim(0), "values.size(0)", op);
    // FBGEMM reads only [offsets[0], offsets[B]): the rows as a JaggedTensor over that view of
    // values, with offsets from 0, padded by JaggedTensor::ToPadded.
    const int64_t* o = off.data<int64_t>();
    const int64_t B = off.Dim(0) - 1;
    Tensor rows = vals;
    Tensor from_zero = off;
    if (o[0] != 0 || o[B] != vals.Dim(0)) {
      rows = Slice(vals, 0, o[0], o[B]);
      from_zero = Tensor::Empty({B + 1}, DType::kInt64);
      int64_t* z = from_zero.data<int64_t>();
      for (int64_t r = 0; r <= B; ++r) z[r] = o[r] - o[0];
    }
    return Export(JaggedTensor::FromOffsets(rows, OnDevice(from_zero, vals.device()))
                      .ToPadded(max_lengths[0], Scalar(padding_value)));
  });
}

// dense [B, L] or [B, L, D] to values [total_L] or [total_L, D]: row b's first
// min(length, L) items from dense[b], the rest (and items no row covers) zeros. Both
// dense_to_jagged_forward and jagged_to_padded_dense_backward.
TorchTensor PaddedToJagged(const TorchTensor& dense_t, const std::vector<TorchTensor>& offsets,
                           std::optional<int64_t> total_L, const char* op) {
  TK_CHECK(dense_t.dim() == 2 || dense_t.dim() == 3, kInvalidArgument, op,
           ": dense must be 2-D [B, L] or 3-D [B, L, D], got shape ", SizesText(dense_t));
  const Tensor off = OneOffsets(offsets, op);
  const int64_t* o = off.data<int64_t>();
  const int64_t B = dense_t.size(0), L = dense_t.size(1);
  TK_CHECK(off.Dim(0) == B + 1, kShapeMismatch, op, ": offsets[0] has ", off.Dim(0),
           " elements but dense has B = ", B, " rows; offsets need B + 1");
  if (total_L) {
    TK_CHECK(*total_L >= 0, kInvalidArgument, op, ": total_L = ", *total_L, " is negative");
  }
  const int64_t total = total_L ? *total_L : std::max<int64_t>(o[B], 0);
  CheckOffsets(off, total, "total_L", op);
  const TorchTensor dense_c =
      dense_t.is_contiguous() ? dense_t : torch::stable::contiguous(dense_t);
  const Tensor dense = Wrap(dense_c, op, "dense");
  const int64_t D = dense_t.dim() == 3 ? dense_t.size(2) : 1;
  std::vector<int64_t> out_dims{total};
  if (dense_t.dim() == 3) out_dims.push_back(D);
  TorchTensor out_t = Empty(out_dims, dense_t.scalar_type());
  const int64_t item = D * DTypeSize(dense.dtype());
  const char* src = static_cast<const char*>(dense.raw_data());
  char* dst = static_cast<char*>(out_t.data_ptr());
  // Items before the first row and after the last: zeros.
  if (total > 0) {
    std::memset(dst, 0, static_cast<size_t>(o[0] * item));
    std::memset(dst + o[B] * item, 0, static_cast<size_t>((total - o[B]) * item));
  }
  ParallelFor(0, B, GrainFor(std::max<int64_t>(1, L * item)), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const int64_t len = o[r + 1] - o[r], n = std::min(len, L);
      std::memcpy(dst + o[r] * item, src + r * L * item, static_cast<size_t>(n * item));
      // Items past L (truncated by the padded form) have no gradient: zeros.
      std::memset(dst + (o[r] + n) * item, 0, static_cast<size_t>((len - n) * item));
    }
  });
  return out_t;
}

TorchTensor DenseToJaggedForward(TorchTensor dense, std::vector<TorchTensor> x_offsets,
                                 std::optional<int64_t> total_L) {
  const char* op = "tensorkit::dense_to_jagged_forward";
  return Run(op, [&] { return PaddedToJagged(dense, x_offsets, total_L, op); });
}

TorchTensor JaggedToPaddedDenseBackward(TorchTensor grad_output, std::vector<TorchTensor> offsets,
                                        int64_t total_L) {
  const char* op = "tensorkit::jagged_to_padded_dense_backward";
  return Run(op, [&] { return PaddedToJagged(grad_output, offsets, total_L, op); });
}

// ---- permute_2D_sparse_data ----------------------------------------------------------------

std::tuple<TorchTensor, TorchTensor, std::optional<TorchTensor>> Permute2DSparseData(
    TorchTensor permute, TorchTensor lengths, TorchTensor values,
    std::optional<TorchTensor> weights, std::optional<int64_t> permuted_lengths_sum) {
  const char* op = "tensorkit::permute_2D_sparse_data";
  return Run(op, [&] {
    TK_CHECK(lengths.dim() == 2, kInvalidArgument, op, ": lengths must be 2-D [T, B], got shape ",
             SizesText(lengths));
    TK_CHECK(lengths.scalar_type() == ScalarType::Int || lengths.scalar_type() == ScalarType::Long,
             kDTypeMismatch, op, ": lengths must be torch.int32 or torch.int64, got ",
             ScalarTypeName(lengths.scalar_type()));
    TK_CHECK(values.dim() >= 1, kInvalidArgument, op, ": values must be at least 1-D, got shape ",
             SizesText(values));
    const Tensor perm = IndexVector(permute, op, "permute");
    const int64_t T = lengths.size(0), B = lengths.size(1), P = perm.Dim(0);
    const int64_t* p = perm.data<int64_t>();
    for (int64_t i = 0; i < P; ++i) {
      TK_CHECK(p[i] >= 0 && p[i] < T, kOutOfRange, op, ": permute[", i, "] = ", p[i],
               " is not a feature index in [0, ", T, ")");
    }
    const Tensor vals = Wrap(values, op, "values");
    Tensor w;
    if (weights) {
      TK_CHECK(weights->dim() == 1 && weights->size(0) == values.size(0), kShapeMismatch, op,
               ": weights must be [N] with N = values.size(0) = ", values.size(0), ", got shape ",
               SizesText(*weights));
      w = Wrap(*weights, op, "weights");
    }
    std::vector<std::string> names(static_cast<size_t>(T)), chosen(static_cast<size_t>(P));
    for (int64_t t = 0; t < T; ++t) names[t] = std::to_string(t);
    for (int64_t i = 0; i < P; ++i) chosen[i] = names[p[i]];
    // The constructor checks the lengths (each >= 0, adding up to N); with T = 0 (then P = 0)
    // there are none to check but N = 0.
    TK_CHECK(T > 0 || vals.Dim(0) == 0, kShapeMismatch, op,
             ": lengths has no features but values has ", vals.Dim(0), " items");
    KeyedJaggedTensor out;
    if (T > 0) {
      const KeyedJaggedTensor kjt(names, vals, Wrap(lengths, op, "lengths"), w);
      if (P > 0) out = kjt.Permute(chosen);
    }
    if (P == 0) {
      std::vector<int64_t> dims = vals.Dims();
      dims[0] = 0;
      const TorchTensor empty_lengths = Empty({0, B}, lengths.scalar_type());
      if (permuted_lengths_sum) {
        TK_CHECK(*permuted_lengths_sum == 0, kInvalidArgument, op,
                 ": permuted_lengths_sum = ", *permuted_lengths_sum,
                 " but the permuted lengths add up to 0");
      }
      std::optional<TorchTensor> empty_weights;
      if (weights) empty_weights = Empty({0}, weights->scalar_type());
      return std::make_tuple(empty_lengths, Empty(dims, values.scalar_type()), empty_weights);
    }
    const int64_t total = out.values().Dim(0);
    if (permuted_lengths_sum) {
      TK_CHECK(*permuted_lengths_sum == total, kInvalidArgument, op,
               ": permuted_lengths_sum = ", *permuted_lengths_sum,
               " but the permuted lengths add up to ", total);
    }
    TorchTensor out_lengths = Empty({P, B}, lengths.scalar_type());
    Tensor out_lengths_w = Wrap(out_lengths, op, "permuted_lengths");
    Copy(out.lengths(), &out_lengths_w);
    std::optional<TorchTensor> out_weights;
    if (weights) out_weights = Export(out.weights());
    return std::make_tuple(out_lengths, Export(out.values()), out_weights);
  });
}

}  // namespace

STABLE_TORCH_LIBRARY_IMPL(tensorkit, CPU, m) {
  m.impl("asynchronous_complete_cumsum", TORCH_BOX(&AsynchronousCompleteCumsum));
  m.impl("jagged_to_padded_dense", TORCH_BOX(&JaggedToPaddedDense));
  m.impl("jagged_to_padded_dense_backward", TORCH_BOX(&JaggedToPaddedDenseBackward));
  m.impl("dense_to_jagged_forward", TORCH_BOX(&DenseToJaggedForward));
  m.impl("permute_2D_sparse_data", TORCH_BOX(&Permute2DSparseData));
}

// On CUDA tensors: jagged_to_padded_dense through JaggedTensor::ToPadded's device body, the
// offsets checked on the host (one copy). The others have no device path here.
STABLE_TORCH_LIBRARY_IMPL(tensorkit, CUDA, m) {
  m.impl("jagged_to_padded_dense", TORCH_BOX(&JaggedToPaddedDense));
}

}  // namespace tensorkit::torch_ops
