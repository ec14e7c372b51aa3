// Reductions of sparse tensors. Entries are grouped by output position with the stable
// compression of compressed.h (major key = output position, minor key = position within the
// reduced slice), so every output sums its entries in one fixed order.
#include "tensorkit/sparse/reduce.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <type_traits>
#include <utility>

#include "tensorkit/common/parallel.h"
#include "tensorkit/dense/functors.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/dense/views.h"
#include "tensorkit/sparse/device_ops.h"
#include "tensorkit/sparse/internal.h"

namespace tensorkit {
namespace si = sparse_internal;
namespace {

// Multiplies into *acc, flagging overflow past int64.
void MulChecked(int64_t* acc, int64_t d, bool* overflow) {
  if (d != 0 && *acc > std::numeric_limits<int64_t>::max() / d) {
    *overflow = true;
  } else {
    *acc *= d;
  }
}

}  // namespace

namespace sparse_internal {

ReducePlan MakePlan(const SparseTensor& st, std::vector<int> axes, const char* op) {
  const int rank = st.rank();
  ReducePlan plan;
  plan.reduced.assign(rank, false);
  for (int& a : axes) {
    a = NormalizeAxis(a, rank, op);
    TK_CHECK(!plan.reduced[a], kInvalidArgument, op, ": axis ", a, " appears twice in axes ",
             ShapeString(axes));
    plan.reduced[a] = true;
  }
  for (int a = 0; a < rank; ++a) {
    const int64_t d = st.shape()[a];
    if (plan.reduced[a]) {
      MulChecked(&plan.slice_size, d, &plan.slice_overflow);
    } else {
      plan.out_shape.push_back(d);
      MulChecked(&plan.out_size, d, &plan.out_overflow);
    }
  }
  return plan;
}

void CheckExtremeSlices(const SparseTensor& st, const ReducePlan& plan, bool max, const char* op) {
  TK_CHECK(plan.slice_size > 0 || plan.slice_overflow, kInvalidArgument, op,
           ": the reduced axes of shape ", ShapeString(st.shape()),
           " have a zero dim, so each slice is empty and has no ", max ? "max" : "min");
  TK_CHECK(!plan.slice_overflow, kUnsupported, op, ": the reduced axes of shape ",
           ShapeString(st.shape()), " span more than 2^63 positions");
}

void CheckSparseReduction(const SparseTensor& st, const ReducePlan& plan, bool by_position,
                          const char* op) {
  TK_CHECK(!plan.out_overflow && plan.out_size <= (int64_t{1} << 62), kUnsupported, op,
           ": the kept axes of shape ", ShapeString(st.shape()), " span more than 2^62 positions");
  TK_CHECK(!by_position || !plan.slice_overflow, kUnsupported, op, ": the reduced axes of shape ",
           ShapeString(st.shape()), " span more than 2^63 positions");
}

}  // namespace sparse_internal

namespace {

using si::kReduceDTypes;
using si::ReducePlan;

// Per entry: its linear position among the kept axes (out[i * stride]) and among the reduced
// axes (in[i * stride]).
void ComputeKeys(const SparseTensor& st, const ReducePlan& plan, bool want_in, int64_t* out,
                 int64_t* in, int64_t stride = 1) {
  const int64_t nnz = st.nnz();
  const int rank = st.rank();
  if (nnz == 0) return;
  if (rank == 0) {
    for (int64_t i = 0; i < nnz; ++i) {
      out[i * stride] = 0;
      if (want_in) in[i * stride] = 0;
    }
    return;
  }
  const int64_t* idx = st.indices().data<int64_t>();
  const int64_t s0 = st.indices().Stride(0), s1 = st.indices().Stride(1);
  const std::vector<int64_t>& shape = st.shape();
  ParallelFor(0, nnz, GrainFor(8 * (rank + 2)), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      int64_t ko = 0, ki = 0;
      for (int a = 0; a < rank; ++a) {
        const int64_t v = idx[i * s0 + a * s1];
        if (plan.reduced[a]) {
          // Only when wanted: the reduced axes may span more than int64 counts.
          if (want_in) ki = ki * shape[a] + v;
        } else {
          ko = ko * shape[a] + v;
        }
      }
      out[i * stride] = ko;
      if (want_in) in[i * stride] = ki;
    }
  });
}

// Entries grouped by output position (ptr over out_size), sorted within by `in` key when given.
si::Compressed Group(const SparseTensor& st, const ReducePlan& plan, bool by_in) {
  const int64_t nnz = st.nnz();
  Tensor out_key = Tensor::Empty({nnz}, DType::kInt64);
  Tensor in_key = Tensor::Empty({by_in ? nnz : 0}, DType::kInt64);
  ComputeKeys(st, plan, by_in, out_key.data<int64_t>(), in_key.data<int64_t>());
  static const int64_t kZero = 0;
  si::KeyView minor{&kZero, 0};
  if (by_in) minor = {in_key.data<int64_t>(), 1};
  return si::Compress({out_key.data<int64_t>(), 1}, minor, nnz, plan.out_size, st.values());
}

// Common checks: CPU, bounds, dtype.
void CheckInput(const SparseTensor& st, const char* op) {
  si::CheckIndexBounds(st, op);
  CheckDType<kReduceDTypes>(st.dtype(), op);
}

// Max (kMax) or min of one output's slice: entries [p0, p1) sorted by their position `in`
// within the slice (duplicates of a position summed first), and 0 when fewer than slice_size
// positions are stored (an absent entry is an implicit zero). NaN propagates (the dense Max /
// Min), and the values are met in entry order, the zero last, as on a CUDA device.
template <typename T, bool kMax>
T SliceExtreme(const T* val, const int64_t* in, int64_t p0, int64_t p1, int64_t slice_size) {
  using C = ComputeType<T>;
  using F = std::conditional_t<kMax, engine::MaxF, engine::MinF>;
  C best{};
  int64_t distinct = 0;
  for (int64_t p = p0; p < p1;) {
    C sum = static_cast<C>(val[p]);
    int64_t q = p + 1;
    for (; q < p1 && in[q] == in[p]; ++q) sum = AddW(sum, static_cast<C>(val[q]));
    sum = static_cast<C>(static_cast<T>(sum));  // round as a stored value would be
    best = distinct == 0 ? sum : F::Apply(best, sum);
    ++distinct;
    p = q;
  }
  if (distinct < slice_size) best = distinct == 0 ? C{} : F::Apply(best, C{});
  return static_cast<T>(best);
}

// Dense max (kMax) or min over the plan's axes.
template <bool kMax>
Tensor ReduceExtreme(const SparseTensor& st, std::vector<int> axes, const char* op) {
  if (OnCuda(st)) {
    return sparse_cuda::ReduceDense(
        st, std::move(axes), kMax ? sparse_cuda::MergeOp::kMax : sparse_cuda::MergeOp::kMin, op);
  }
  CheckInput(st, op);
  const ReducePlan plan = si::MakePlan(st, std::move(axes), op);
  Tensor out = Tensor::Empty(plan.out_shape, st.dtype());
  if (plan.out_size == 0) return out;
  si::CheckExtremeSlices(st, plan, kMax, op);
  const si::Compressed g = Group(st, plan, /*by_in=*/true);
  const int64_t* ptr = g.ptr.data<int64_t>();
  const int64_t* in = g.minor.data<int64_t>();
  Dispatch<kReduceDTypes>(st.dtype(), op, [&]<typename T>() {
    const T* val = g.values.data<T>();
    T* o = out.data<T>();
    ParallelFor(0, plan.out_size, GrainFor(16 * (st.nnz() / plan.out_size + 1)),
                [&](int64_t b, int64_t e) {
                  for (int64_t r = b; r < e; ++r) {
                    o[r] = SliceExtreme<T, kMax>(val, in, ptr[r], ptr[r + 1], plan.slice_size);
                  }
                });
  });
  return out;
}

// Per-output sums of grouped entries into out (dense, out_size elements).
template <typename T>
void SumGroups(const Tensor& ptr_t, const Tensor& values, int64_t out_size, T* o) {
  const int64_t* ptr = ptr_t.data<int64_t>();
  const T* val = values.data<T>();
  const int64_t nnz = values.Dim(0);
  ParallelFor(0, out_size, GrainFor(16 * (nnz / std::max<int64_t>(out_size, 1) + 1)),
              [&](int64_t b, int64_t e) {
                for (int64_t r = b; r < e; ++r) {
                  ComputeType<T> sum{};
                  for (int64_t p = ptr[r]; p < ptr[r + 1]; ++p) {
                    sum = AddW(sum, static_cast<ComputeType<T>>(val[p]));
                  }
                  o[r] = static_cast<T>(sum);
                }
              });
}

}  // namespace

Tensor ReduceSum(const SparseTensor& st, std::vector<int> axes) {
  const char* op = "ReduceSum";
  if (OnCuda(st))
    return sparse_cuda::ReduceDense(st, std::move(axes), sparse_cuda::MergeOp::kSum, op);
  CheckInput(st, op);
  const ReducePlan plan = si::MakePlan(st, std::move(axes), op);
  Tensor out = Tensor::Empty(plan.out_shape, st.dtype());  // checks rank and size
  if (plan.out_size == 0) return out;
  const si::Compressed g = Group(st, plan, /*by_in=*/false);
  Dispatch<kReduceDTypes>(st.dtype(), op, [&]<typename T>() {
    SumGroups<T>(g.ptr, g.values, plan.out_size, out.data<T>());
  });
  return out;
}

Tensor ReduceMax(const SparseTensor& st, std::vector<int> axes) {
  return ReduceExtreme<true>(st, std::move(axes), "ReduceMax");
}

Tensor ReduceMin(const SparseTensor& st, std::vector<int> axes) {
  return ReduceExtreme<false>(st, std::move(axes), "ReduceMin");
}

namespace {

enum class Reduction { kSum, kMax, kMin };

// The merge that combines an output's entries on a CUDA device.
sparse_cuda::MergeOp RuleOf(Reduction kind) {
  return kind == Reduction::kSum   ? sparse_cuda::MergeOp::kSum
         : kind == Reduction::kMax ? sparse_cuda::MergeOp::kMax
                                   : sparse_cuda::MergeOp::kMin;
}

// The sparse result of a reduction: one entry per output position that has stored entries,
// coalesced, order {0..rank-1}.
// The entries grouped by output position: ptr [groups + 1] into `values` (and, for the
// extremes, `in`, each entry's position within its reduced slice), `keys` the output position
// of each group, ascending.
struct OutputGroups {
  Tensor ptr, values, in;
  std::vector<int64_t> keys;
};

// Grouping by a counting sort, for a small output position space.
OutputGroups GroupByCounting(const SparseTensor& st, const ReducePlan& plan, bool by_in) {
  si::Compressed g = Group(st, plan, by_in);
  const int64_t* ptr = g.ptr.data<int64_t>();
  OutputGroups out;
  std::vector<int64_t> starts;
  for (int64_t r = 0; r < plan.out_size; ++r) {
    if (ptr[r + 1] > ptr[r]) {
      out.keys.push_back(r);
      starts.push_back(ptr[r]);
    }
  }
  starts.push_back(st.nnz());
  out.ptr = Tensor::FromVector(std::move(starts));
  out.values = g.values;
  out.in = g.minor;
  return out;
}

// Grouping by the one stable sort of (output position, position in the slice) rows, for a
// large output position space.
OutputGroups GroupBySorting(const SparseTensor& st, const ReducePlan& plan, bool by_in) {
  const int64_t nnz = st.nnz();
  const int width = by_in ? 2 : 1;
  std::vector<int64_t> rows(static_cast<size_t>(nnz * width)), sorted(rows.size());
  ComputeKeys(st, plan, by_in, rows.data(), by_in ? rows.data() + 1 : nullptr, width);
  std::vector<int64_t> key_shape{plan.out_size};
  if (by_in) key_shape.push_back(plan.slice_size);
  const std::vector<int64_t> perm =
      si::SortPermutation(rows.data(), nnz, key_shape, si::Iota(width), sorted.data());
  std::vector<int64_t> starts = si::SelectPositions(
      nnz, [&](int64_t e) { return e == 0 || sorted[e * width] != sorted[(e - 1) * width]; });
  OutputGroups out;
  out.keys.resize(starts.size());
  for (size_t g = 0; g < starts.size(); ++g) out.keys[g] = sorted[starts[g] * width];
  starts.push_back(nnz);
  std::vector<int64_t> in(static_cast<size_t>(by_in ? nnz : 0));
  for (int64_t e = 0; e < static_cast<int64_t>(in.size()); ++e) in[e] = sorted[e * width + 1];
  out.ptr = Tensor::FromVector(std::move(starts));
  out.in = Tensor::FromVector(std::move(in));
  out.values = si::GatherValues(st.values(), perm.data(), nnz);
  return out;
}

// One value per group: the sum, or the extreme over the slice (absent positions count as 0).
Tensor CombineGroups(const OutputGroups& g, Reduction kind, const ReducePlan& plan, DType dtype,
                     int64_t nnz, const char* op) {
  const int64_t groups = static_cast<int64_t>(g.keys.size());
  Tensor out_values = Tensor::Empty({groups}, dtype);
  Dispatch<kReduceDTypes>(dtype, op, [&]<typename T>() {
    if (kind == Reduction::kSum) {
      SumGroups<T>(g.ptr, g.values, groups, out_values.data<T>());
      return;
    }
    const int64_t* ptr = g.ptr.data<int64_t>();
    const int64_t* in = g.in.data<int64_t>();
    const T* val = g.values.data<T>();
    T* o = out_values.data<T>();
    ParallelFor(0, groups, GrainFor(16 * (nnz / std::max<int64_t>(groups, 1) + 1)),
                [&](int64_t b, int64_t e) {
                  for (int64_t i = b; i < e; ++i) {
                    o[i] =
                        kind == Reduction::kMax
                            ? SliceExtreme<T, true>(val, in, ptr[i], ptr[i + 1], plan.slice_size)
                            : SliceExtreme<T, false>(val, in, ptr[i], ptr[i + 1], plan.slice_size);
                  }
                });
  });
  return out_values;
}

// The index rows of C-order output positions `keys` in out_shape.
Tensor DecodeKeys(const std::vector<int64_t>& keys, const std::vector<int64_t>& out_shape) {
  const int out_rank = static_cast<int>(out_shape.size());
  const int64_t groups = static_cast<int64_t>(keys.size());
  Tensor out_idx = Tensor::Empty({groups, out_rank}, DType::kInt64);
  int64_t* oi = out_idx.data<int64_t>();
  ParallelFor(0, groups, GrainFor(8 * (out_rank + 1)), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      int64_t key = keys[i];
      for (int a = out_rank - 1; a >= 0; --a) {
        oi[i * out_rank + a] = key % out_shape[a];
        key /= out_shape[a];
      }
    }
  });
  return out_idx;
}

// The sparse reductions: entries grouped by output position, each group combined, the
// positions decoded into index rows.
SparseTensor ReduceToSparse(const SparseTensor& st, std::vector<int> axes, Reduction kind,
                            const char* op) {
  if (OnCuda(st)) return sparse_cuda::ReduceSparse(st, std::move(axes), RuleOf(kind), op);
  CheckInput(st, op);
  const ReducePlan plan = si::MakePlan(st, std::move(axes), op);
  const bool by_in = kind != Reduction::kSum;  // extremes count the distinct reduced positions
  si::CheckSparseReduction(st, plan, by_in, op);
  const OutputGroups groups = plan.out_size <= 4 * st.nnz() + 1024
                                  ? GroupByCounting(st, plan, by_in)
                                  : GroupBySorting(st, plan, by_in);
  const Tensor values = CombineGroups(groups, kind, plan, st.dtype(), st.nnz(), op);
  return SparseTensor::Create(DecodeKeys(groups.keys, plan.out_shape), values, plan.out_shape,
                              si::Iota(static_cast<int>(plan.out_shape.size())));
}

}  // namespace

SparseTensor ReduceSumSparse(const SparseTensor& st, std::vector<int> axes) {
  const char* op = "ReduceSumSparse";
  return ReduceToSparse(st, std::move(axes), Reduction::kSum, op);
}

SparseTensor ReduceMaxSparse(const SparseTensor& st, std::vector<int> axes) {
  return ReduceToSparse(st, std::move(axes), Reduction::kMax, "ReduceMaxSparse");
}

SparseTensor ReduceMinSparse(const SparseTensor& st, std::vector<int> axes) {
  return ReduceToSparse(st, std::move(axes), Reduction::kMin, "ReduceMinSparse");
}

Tensor RowNnz(const SparseTensor& st, int axis) {
  const char* op = "RowNnz";
  if (OnCuda(st)) return sparse_cuda::RowNnz(st, axis);
  si::CheckIndexBounds(st, op);
  axis = NormalizeAxis(axis, st.rank(), op);
  const int64_t dim = st.shape()[axis];
  Tensor out = Tensor::Zeros({dim}, DType::kInt64);
  const int64_t nnz = st.nnz();
  if (nnz == 0) return out;
  int64_t* o = out.data<int64_t>();
  const int64_t* idx = st.indices().data<int64_t>() + axis * st.indices().Stride(1);
  const int64_t s0 = st.indices().Stride(0);
  // Integer counts do not depend on the order of the increments.
  ParallelFor(0, nnz, GrainFor(16), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      std::atomic_ref<int64_t>(o[idx[i * s0]]).fetch_add(1, std::memory_order_relaxed);
    }
  });
  return out;
}

}  // namespace tensorkit
