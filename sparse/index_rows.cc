// The index-row primitives of index_rows.h that are not templates: tuples, the bounds, order
// and repeat checks with their messages, and the device choice of the functions taking rows on
// any device (their CUDA bodies: cuda/structure.h). Sorting lives in sort.cc, compression in
// compressed.cc.
#include "tensorkit/sparse/index_rows.h"

#include <algorithm>
#include <array>
#include <numeric>
#include <sstream>

#include "tensorkit/common/device.h"
#include "tensorkit/common/error.h"
#include "tensorkit/sparse/cuda/structure.h"
#include "tensorkit/sparse/device_ops.h"

namespace tensorkit::sparse_rows {

void CheckCreated(const SparseTensor& st, const char* op) {
  TK_CHECK(st.indices().defined() && st.values().defined(), kInvalidArgument, op,
           ": the SparseTensor is empty (default-constructed); make one with "
           "SparseTensor::Create or SparseTensor::FromDense");
}

std::string RowString(const int64_t* row, int rank) {
  std::ostringstream os;
  os << '[';
  for (int k = 0; k < rank; ++k) os << (k ? " " : "") << row[k];
  os << ']';
  return os.str();
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
  const Tensor idx = st.indices().HostContiguous();
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

// --- Rows on any device: the device chosen once per call -------------------------------------

int64_t FirstOutOfBounds(const Tensor& idx, const std::vector<int64_t>& shape,
                         std::vector<int64_t>* row) {
  if (OnCuda(idx)) return sparse_cuda::FirstOutOfBounds(idx.Contiguous(), shape, row);
  const Tensor host = idx.HostContiguous();
  const int64_t* rows = host.data<int64_t>();
  const int64_t rank = static_cast<int64_t>(shape.size());
  const int64_t bad = FirstOutOfBounds(rows, idx.Dim(0), shape);
  if (bad >= 0) row->assign(rows + bad * rank, rows + (bad + 1) * rank);
  return bad;
}

void CheckBounds(const char* op, const Tensor& idx, const std::vector<int64_t>& shape) {
  if (OnCuda(idx)) return sparse_cuda::CheckBounds(op, idx, shape);
  const Tensor host = idx.HostContiguous();
  CheckBounds(op, host.data<int64_t>(), idx.Dim(0), shape);
}

int64_t FirstUnordered(const Tensor& idx, const std::vector<int>& order, bool strict,
                       std::vector<int64_t>* rows) {
  if (OnCuda(idx)) return sparse_cuda::FirstUnordered(idx.Contiguous(), order, strict, rows);
  const Tensor host = idx.HostContiguous();
  const int64_t* r = host.data<int64_t>();
  const int rank = static_cast<int>(idx.Dim(1));
  const int64_t i = FirstUnordered(r, idx.Dim(0), rank, order, strict);
  if (i > 0) rows->assign(r + (i - 1) * rank, r + (i + 1) * rank);
  return i;
}

void SortEntries(const Tensor& idx, const Tensor& values, const std::vector<int64_t>& shape,
                 const std::vector<int>& order, Tensor* sorted_idx, Tensor* sorted_values) {
  if (OnCuda(idx)) {
    return sparse_cuda::SortEntries(idx.Contiguous(), values.Contiguous(), shape, order, sorted_idx,
                                    sorted_values);
  }
  const Tensor host = idx.HostContiguous();
  const int64_t n = idx.Dim(0);
  *sorted_idx = Tensor::Empty({n, static_cast<int64_t>(shape.size())}, DType::kInt64);
  *sorted_values = SortEntries("SortEntries", host.data<int64_t>(), n, shape, order, values,
                               /*may_move=*/false, sorted_idx->data<int64_t>());
}

Tensor RunPointers(const Tensor& idx, int axis, int64_t num) {
  if (OnCuda(idx)) return sparse_cuda::RunPointers(idx.Contiguous(), axis, num);
  const Tensor host = idx.HostContiguous();
  Tensor ptr = Tensor::Empty({num + 1}, DType::kInt64);
  FillPtrFromSorted(KeyView{host.data<int64_t>() + axis, idx.Dim(1)}, idx.Dim(0), num,
                    ptr.data<int64_t>());
  return ptr;
}

}  // namespace tensorkit::sparse_rows
