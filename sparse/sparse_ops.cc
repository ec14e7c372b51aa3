// Slice, Split and Permute of SparseTensors (sparse_ops.h).
#include "tensorkit/sparse/sparse_ops.h"

#include <algorithm>

#include "tensorkit/sparse/internal.h"

namespace tensorkit {
namespace si = sparse_internal;
namespace {

// The entries at `positions` with `start` subtracted from their indices, as a tensor of
// `shape` on `st`'s device with `st`'s order.
SparseTensor TakeShifted(const SparseTensor& st, const int64_t* rows, const Tensor& vals,
                         const std::vector<int64_t>& positions, const std::vector<int64_t>& start,
                         std::vector<int64_t> shape) {
  const int rank = st.rank();
  Tensor indices = si::GatherRows(rows, rank, positions);
  if (!positions.empty() && rank > 0) {
    int64_t* out = indices.data<int64_t>();
    const int64_t n = static_cast<int64_t>(positions.size());
    ParallelFor(0, n, GrainFor(8 * rank), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        for (int a = 0; a < rank; ++a) out[i * rank + a] -= start[a];
      }
    });
  }
  Tensor values = si::GatherValues(vals, positions, /*may_move=*/false);
  return SparseTensor::Create(si::OnDevice(indices, st.device()), si::OnDevice(values, st.device()),
                              std::move(shape), st.order());
}

void CheckCreated(const SparseTensor& st, const char* op) {
  TK_CHECK(st.indices().defined() && st.values().defined(), kInvalidArgument, op,
           ": the SparseTensor is empty (default-constructed); make one with SparseTensor::Create");
}

}  // namespace

SparseTensor Slice(const SparseTensor& st, const std::vector<int64_t>& start,
                   const std::vector<int64_t>& size) {
  CheckCreated(st, "Slice");
  const int rank = st.rank();
  const std::vector<int64_t>& shape = st.shape();
  TK_CHECK(static_cast<int>(start.size()) == rank && static_cast<int>(size.size()) == rank,
           kInvalidArgument, "Slice: start ", ShapeString(start), " and size ", ShapeString(size),
           " must have one entry per axis of shape ", ShapeString(shape));
  std::vector<int64_t> out_shape(static_cast<size_t>(rank));
  for (int a = 0; a < rank; ++a) {
    TK_CHECK(start[a] >= 0 && start[a] <= shape[a], kOutOfRange, "Slice: start ", start[a],
             " is out of range for axis ", a, " of shape ", ShapeString(shape));
    const int64_t room = shape[a] - start[a];
    const int64_t s = size[a] == -1 ? room : size[a];
    TK_CHECK(s >= 0 && s <= room, kOutOfRange, "Slice: size ", size[a], " on axis ", a,
             " does not fit shape ", ShapeString(shape), " from start ", start[a], " (at most ",
             room, ", or -1 for the rest)");
    out_shape[a] = s;
  }
  const Tensor idx = si::HostContiguous(st.indices());
  const int64_t* rows = static_cast<const int64_t*>(idx.raw_data());
  std::vector<int64_t> positions = si::SelectPositions(st.nnz(), [&](int64_t i) {
    bool inside = true;
    for (int a = 0; a < rank; ++a) {
      const int64_t v = rows[i * rank + a];
      inside &= v >= start[a] && v - start[a] < out_shape[a];
    }
    return inside;
  });
  return TakeShifted(st, rows, si::HostContiguous(st.values()), positions, start, out_shape);
}

std::vector<SparseTensor> Split(const SparseTensor& st, int axis,
                                const std::vector<int64_t>& sizes) {
  CheckCreated(st, "Split");
  const int rank = st.rank();
  TK_CHECK(axis >= -rank && axis < rank, kInvalidArgument, "Split: axis ", axis,
           " is out of range for shape ", ShapeString(st.shape()));
  if (axis < 0) axis += rank;
  int64_t sum = 0;
  for (int64_t s : sizes) {
    TK_CHECK(s >= 0, kInvalidArgument, "Split: negative size ", s, " in ", ShapeString(sizes));
    sum += std::min<int64_t>(s, st.shape()[axis] + 1);  // capped: no overflow, still a mismatch
  }
  TK_CHECK(sum == st.shape()[axis], kShapeMismatch, "Split: sizes ", ShapeString(sizes),
           " must add up to dim ", st.shape()[axis], " of axis ", axis, " (shape ",
           ShapeString(st.shape()), ")");
  const Tensor idx = si::HostContiguous(st.indices());
  const int64_t* rows = static_cast<const int64_t*>(idx.raw_data());
  // Every entry must land in a piece: check the split axis (other axes are only shifted by 0).
  const int64_t n = st.nnz();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = rows[i * rank + axis];
    if (v < 0 || v >= st.shape()[axis]) si::ThrowOutOfBounds("Split", rows, i, st.shape());
  }
  const Tensor vals = si::HostContiguous(st.values());
  std::vector<SparseTensor> pieces;
  std::vector<int64_t> start(static_cast<size_t>(rank), 0);
  for (int64_t s : sizes) {
    std::vector<int64_t> shape = st.shape();
    shape[axis] = s;
    const int64_t lo = start[axis];
    std::vector<int64_t> positions = si::SelectPositions(n, [&](int64_t i) {
      const int64_t v = rows[i * rank + axis];
      return v >= lo && v < lo + s;
    });
    pieces.push_back(TakeShifted(st, rows, vals, positions, start, shape));
    start[axis] += s;
  }
  return pieces;
}

std::vector<SparseTensor> Split(const SparseTensor& st, int axis, int64_t num) {
  CheckCreated(st, "Split");
  const int rank = st.rank();
  TK_CHECK(axis >= -rank && axis < rank, kInvalidArgument, "Split: axis ", axis,
           " is out of range for shape ", ShapeString(st.shape()));
  if (axis < 0) axis += rank;
  TK_CHECK(num >= 1, kInvalidArgument, "Split: the number of pieces must be >= 1, got ", num);
  const int64_t dim = st.shape()[axis];
  std::vector<int64_t> sizes(static_cast<size_t>(num), dim / num);
  for (int64_t p = 0; p < dim % num; ++p) ++sizes[p];
  return Split(st, axis, sizes);
}

SparseTensor Permute(const SparseTensor& st, const std::vector<int>& perm) {
  CheckCreated(st, "Permute");
  const int rank = st.rank();
  TK_CHECK(si::IsPermutation(perm, rank), kInvalidArgument, "Permute: axes ", ShapeString(perm),
           " must be a permutation of 0..", rank - 1, " for shape ", ShapeString(st.shape()));
  const Tensor idx = si::HostContiguous(st.indices());
  const int64_t* rows = static_cast<const int64_t*>(idx.raw_data());
  const int64_t n = st.nnz();
  Tensor indices = Tensor::Empty({n, rank}, DType::kInt64);
  if (n > 0 && rank > 0) {
    int64_t* out = indices.data<int64_t>();
    ParallelFor(0, n, GrainFor(16 * rank), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        for (int a = 0; a < rank; ++a) out[i * rank + a] = rows[i * rank + perm[a]];
      }
    });
  }
  std::vector<int64_t> shape(static_cast<size_t>(rank));
  std::vector<int> where(static_cast<size_t>(rank));  // where[input axis] = output axis
  for (int a = 0; a < rank; ++a) {
    shape[a] = st.shape()[perm[a]];
    where[perm[a]] = a;
  }
  std::vector<int> order = st.order();
  if (st.OrderKnown()) {
    for (int& o : order) o = where[o];
  }
  return SparseTensor::Create(si::OnDevice(indices, st.device()), st.values(), shape, order);
}

SparseTensor Transpose(const SparseTensor& st, const std::vector<int>& perm) {
  return Permute(st, perm);
}

SparseTensor Transpose(const SparseTensor& st, int axis1, int axis2) {
  CheckCreated(st, "Transpose");
  const int rank = st.rank();
  TK_CHECK(axis1 >= -rank && axis1 < rank && axis2 >= -rank && axis2 < rank, kInvalidArgument,
           "Transpose: axes ", axis1, " and ", axis2, " must be in [", -rank, ", ", rank,
           ") for shape ", ShapeString(st.shape()));
  std::vector<int> perm(static_cast<size_t>(rank));
  for (int a = 0; a < rank; ++a) perm[a] = a;
  std::swap(perm[(axis1 + rank) % rank], perm[(axis2 + rank) % rank]);
  return Permute(st, perm);
}

}  // namespace tensorkit
