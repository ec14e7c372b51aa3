// The sparse primitives of internal.h that are not templates (sorting lives in sort.cc,
// compression in compressed.cc).
#include "tensorkit/sparse/internal.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <numeric>
#include <sstream>

namespace tensorkit::sparse_internal {

Tensor HostContiguous(const Tensor& t) { return t.HostContiguous(); }

Tensor Contiguous(const Tensor& t) { return t.IsContiguous() ? t : t.Clone(); }

void CheckCreated(const SparseTensor& st, const char* op) {
  TK_CHECK(st.indices().defined() && st.values().defined(), kInvalidArgument, op,
           ": the SparseTensor is empty (default-constructed); make one with "
           "SparseTensor::Create or SparseTensor::FromDense");
}

void CheckSameDevice(Device a, Device b, const char* op, const char* a_name, const char* b_name) {
  TK_CHECK(a == b, kDeviceMismatch, op, ": ", a_name, " is on ", a, " but ", b_name, " is on ", b,
           "; move ", b_name, " with To(", a, ")");
}

std::string RowString(const int64_t* row, int rank) {
  std::ostringstream os;
  os << '[';
  for (int k = 0; k < rank; ++k) os << (k ? " " : "") << row[k];
  os << ']';
  return os.str();
}

bool IsPermutation(const std::vector<int>& p, int n) {
  if (static_cast<int>(p.size()) != n) return false;
  std::vector<bool> seen(static_cast<size_t>(n), false);
  for (int a : p) {
    if (a < 0 || a >= n || seen[a]) return false;
    seen[a] = true;
  }
  return true;
}

std::vector<int> Iota(int n) {
  std::vector<int> v(static_cast<size_t>(std::max(n, 0)));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

int64_t FirstOutOfBounds(const int64_t* idx, int64_t nnz, const std::vector<int64_t>& shape) {
  const int rank = static_cast<int>(shape.size());
  const int64_t* dims = shape.data();
  return FirstWhere(nnz, [&](int64_t i) { return OutOfBounds(idx + i * rank, dims, rank); });
}

void ThrowOutOfBounds(const char* op, const int64_t* idx, int64_t entry,
                      const std::vector<int64_t>& shape) {
  ThrowOutOfBoundsRow(op, idx + entry * static_cast<int64_t>(shape.size()), entry, shape);
}

void ThrowOutOfBoundsRow(const char* op, const int64_t* row, int64_t entry,
                         const std::vector<int64_t>& shape) {
  const int rank = static_cast<int>(shape.size());
  int axis = 0;
  while (axis < rank && row[axis] >= 0 && row[axis] < shape[axis]) ++axis;
  std::ostringstream why;
  if (axis < rank && row[axis] < 0) {
    why << "axis " << axis << ": " << row[axis] << " < 0";
  } else if (axis < rank) {
    why << "axis " << axis << ": " << row[axis] << " >= " << shape[axis];
  }
  Throw(ErrorCode::kOutOfRange, op, ": entry ", entry, " at ", RowString(row, rank),
        " is out of bounds for shape ", ShapeString(shape), " (", why.str(),
        "); ValidateIndices() finds such entries");
}

void CheckBounds(const char* op, const int64_t* idx, int64_t nnz,
                 const std::vector<int64_t>& shape) {
  const int64_t bad = FirstOutOfBounds(idx, nnz, shape);
  if (bad >= 0) ThrowOutOfBounds(op, idx, bad, shape);
}

void CheckIndexBounds(const SparseTensor& st, const char* op) {
  CheckCreated(st, op);
  if (st.nnz() == 0 || st.rank() == 0) return;
  const Tensor idx = HostContiguous(st.indices());
  CheckBounds(op, static_cast<const int64_t*>(idx.raw_data()), st.nnz(), st.shape());
}

void ThrowRepeat(const char* op, int64_t entry, const int64_t* row, int rank, int64_t earlier) {
  Throw(ErrorCode::kInvalidArgument, op, ": entry ", entry, " at ", RowString(row, rank),
        " repeats entry ", earlier,
        "; indices must be unique (Coalesce() merges repeated indices)");
}

void ThrowUnordered(const char* op, int64_t i, const int64_t* here, const int64_t* prev,
                    const std::vector<int>& order) {
  const int r = static_cast<int>(order.size());
  if (SameRow(here, prev, r)) ThrowRepeat(op, i, here, r, i - 1);
  Throw(ErrorCode::kInvalidArgument, op, ": entry ", i, " at ", RowString(here, r),
        " is not after entry ", i - 1, " at ", RowString(prev, r), " in order ", ShapeString(order),
        "; sort with Reorder(", ShapeString(order),
        ") or create the tensor with the order "
        "its entries have");
}

namespace {

// Note [rank-specialised checks]: the per-entry tests of FirstUnordered and FirstInvalid run
// over every entry of every validated tensor; with the rank and the axis order in fixed-size
// arrays (kRank > 0) the compiler unrolls them into a few branch-free compares per entry.
template <int kRank, bool kBounds>
int64_t FirstBadRow(const int64_t* rows, int64_t n, int rank, const int64_t* shape,
                    const std::vector<int>& order, bool strict) {
  const int r = kRank > 0 ? kRank : rank;
  constexpr int kSlots = kRank > 0 ? kRank : 1;
  std::array<int, kSlots> fixed_order{};
  std::array<int64_t, kSlots> fixed_shape{};
  if constexpr (kRank > 0) {
    for (int k = 0; k < kRank; ++k) {
      fixed_order[k] = order[k];
      fixed_shape[k] = kBounds ? shape[k] : 0;
    }
  }
  const int* ord = kRank > 0 ? fixed_order.data() : order.data();
  const int64_t* dims = kRank > 0 ? fixed_shape.data() : shape;
  const int limit = strict ? 0 : -1;  // the largest bad value of the compare (row i, row i-1)
  return FirstWhere(n, [&](int64_t i) -> bool {
    const int64_t* x = rows + i * r;
    bool bad = false;
    if constexpr (kBounds) bad = OutOfBounds(x, dims, r);
    if (i == 0) return bad;
    const int64_t* y = x - r;
    int cmp = 0;
    for (int k = 0; k < r; ++k) {
      const int a = ord[k];
      const int here = (x[a] > y[a]) - (x[a] < y[a]);
      cmp = cmp != 0 ? cmp : here;
    }
    return bad || cmp <= limit;
  });
}

template <bool kBounds>
int64_t FirstBadRowAnyRank(const int64_t* rows, int64_t n, int rank, const int64_t* shape,
                           const std::vector<int>& order, bool strict) {
  switch (rank) {
    case 1:
      return FirstBadRow<1, kBounds>(rows, n, rank, shape, order, strict);
    case 2:
      return FirstBadRow<2, kBounds>(rows, n, rank, shape, order, strict);
    case 3:
      return FirstBadRow<3, kBounds>(rows, n, rank, shape, order, strict);
    case 4:
      return FirstBadRow<4, kBounds>(rows, n, rank, shape, order, strict);
    default:
      return FirstBadRow<0, kBounds>(rows, n, rank, shape, order, strict);
  }
}

}  // namespace

int64_t FirstUnordered(const int64_t* rows, int64_t n, int rank, const std::vector<int>& order,
                       bool strict) {
  return FirstBadRowAnyRank<false>(rows, n, rank, nullptr, order, strict);
}

int64_t FirstInvalid(const int64_t* rows, int64_t n, const std::vector<int64_t>& shape,
                     const std::vector<int>& order, bool strict) {
  return FirstBadRowAnyRank<true>(rows, n, static_cast<int>(shape.size()), shape.data(), order,
                                  strict);
}

namespace {

// Entries this far ahead are prefetched: random reads overlap instead of waiting one by one.
constexpr int64_t kPrefetch = 16;

// GatherRows for a rank known at compile time (kRank > 0) or at run time (kRank == 0).
template <int kRank>
void GatherRowsImpl(const int64_t* idx, int rank, const int64_t* perm, int64_t n, int64_t* dst) {
  const int r = kRank > 0 ? kRank : rank;
  ParallelFor(0, n, GrainFor(8 * (r + 1)), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      if (i + kPrefetch < e) __builtin_prefetch(idx + perm[i + kPrefetch] * r);
      const int64_t* src = idx + perm[i] * r;
      for (int k = 0; k < r; ++k) dst[i * r + k] = src[k];
    }
  });
}

}  // namespace

Tensor GatherRows(const int64_t* idx, int rank, const int64_t* perm, int64_t n) {
  Tensor out = Tensor::Empty({n, rank}, DType::kInt64);
  if (n == 0 || rank == 0) return out;
  int64_t* dst = out.data<int64_t>();
  switch (rank) {
    case 1:
      GatherRowsImpl<1>(idx, rank, perm, n, dst);
      break;
    case 2:
      GatherRowsImpl<2>(idx, rank, perm, n, dst);
      break;
    case 3:
      GatherRowsImpl<3>(idx, rank, perm, n, dst);
      break;
    case 4:
      GatherRowsImpl<4>(idx, rank, perm, n, dst);
      break;
    default:
      GatherRowsImpl<0>(idx, rank, perm, n, dst);
  }
  return out;
}

Tensor GatherValues(const Tensor& values, const int64_t* perm, int64_t n, bool may_move) {
  Tensor out = Tensor::Empty({n}, values.dtype());
  if (n == 0) return out;
  const int64_t stride = values.Stride(0);
  Dispatch(values.dtype(), "GatherValues", [&]<typename T>() {
    T* src = values.data<T>();
    T* dst = out.data<T>();
    ParallelFor(0, n, GrainFor(sizeof(T) + 8), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        if (i + kPrefetch < e) __builtin_prefetch(src + perm[i + kPrefetch] * stride);
        if constexpr (std::is_same_v<T, std::string>) {
          if (may_move) {
            dst[i] = std::move(src[perm[i] * stride]);
            continue;
          }
        }
        dst[i] = src[perm[i] * stride];
      }
    });
  });
  return out;
}

}  // namespace tensorkit::sparse_internal
