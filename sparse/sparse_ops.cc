// Slice, Split and Permute of SparseTensors (sparse_ops.h).
#include "tensorkit/sparse/sparse_ops.h"

#include <algorithm>
#include <utility>

#include "tensorkit/sparse/device_ops.h"
#include "tensorkit/sparse/internal.h"

namespace tensorkit {
namespace si = sparse_internal;
namespace {

// The n entries at `positions` with `start` subtracted from their indices, as a tensor of
// `shape` with `st`'s order.
SparseTensor TakeShifted(const SparseTensor& st, const int64_t* rows, const Tensor& vals,
                         const int64_t* positions, int64_t n, const std::vector<int64_t>& start,
                         std::vector<int64_t> shape) {
  const int rank = st.rank();
  Tensor indices = si::GatherRows(rows, rank, positions, n);
  if (n > 0 && rank > 0) {
    int64_t* out = indices.data<int64_t>();
    ParallelFor(0, n, GrainFor(8 * rank), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        for (int a = 0; a < rank; ++a) out[i * rank + a] -= start[a];
      }
    });
  }
  Tensor values = si::GatherValues(vals, positions, n);
  return SparseTensor::Create(std::move(indices), std::move(values), std::move(shape), st.order());
}

// Pieces at most this many split by SplitFew (its counters: one per piece per fixed chunk).
constexpr int64_t kFewPieces = 256;

// SplitInto for few pieces: one pass per fixed chunk checks the bounds and counts the
// chunk's entries of every piece; then each chunk writes its entries, shifted, straight into
// their pieces' new tensors, after those of earlier chunks (so in input order, as TensorFlow
// keeps them). Two passes over the entries and nothing in between.
// rows: st's host index rows; outside(i): whether entry i lies outside the shape.
template <typename PieceOf, typename Outside>
std::vector<SparseTensor> SplitFew(const SparseTensor& st, const int64_t* rows, int axis,
                                   const std::vector<int64_t>& sizes, const PieceOf& piece_of,
                                   const Outside& outside) {
  const int rank = st.rank();
  const int64_t n = st.nnz(), num = static_cast<int64_t>(sizes.size());
  const int64_t num_chunks = NumChunks(n, kChunk);
  std::vector<int64_t> at(static_cast<size_t>(num_chunks * num), 0);  // [chunk][piece]
  const int64_t bad = FirstFailure(
      n,
      [&](int64_t b, int64_t e) {
        int64_t* h = at.data() + b / kChunk * num;
        for (int64_t i = b; i < e; ++i) {
          if (outside(i)) return false;
          ++h[piece_of(rows[i * rank + axis])];
        }
        return true;
      },
      outside);
  if (bad >= 0) si::ThrowOutOfBounds("Split", rows, bad, st.shape());
  std::vector<int64_t> count(static_cast<size_t>(num), 0), start(static_cast<size_t>(num), 0);
  for (int64_t p = 0; p < num; ++p) {
    for (int64_t c = 0; c < num_chunks; ++c) {
      const int64_t k = at[c * num + p];
      at[c * num + p] = count[p];
      count[p] += k;
    }
    if (p > 0) start[p] = start[p - 1] + sizes[p - 1];
  }
  const Tensor vals = st.values().HostContiguous();
  std::vector<Tensor> out_idx, out_vals;
  std::vector<SparseTensor> pieces;
  for (int64_t p = 0; p < num; ++p) {
    out_idx.push_back(Tensor::Empty({count[p], rank}, DType::kInt64));
    out_vals.push_back(Tensor::Empty({count[p]}, st.dtype()));
  }
  Dispatch(st.dtype(), "Split", [&]<typename T>() {
    const T* src = n > 0 ? vals.data<T>() : nullptr;
    std::vector<int64_t*> to_idx(static_cast<size_t>(num));
    std::vector<T*> to_val(static_cast<size_t>(num));
    for (int64_t p = 0; p < num; ++p) {
      to_idx[p] = count[p] * rank > 0 ? out_idx[p].data<int64_t>() : nullptr;
      to_val[p] = count[p] > 0 ? out_vals[p].data<T>() : nullptr;
    }
    ParallelChunks(n, kChunk, [&](int64_t c, int64_t b, int64_t e) {
      int64_t* h = at.data() + c * num;
      for (int64_t i = b; i < e; ++i) {
        const int64_t* x = rows + i * rank;
        const int64_t p = piece_of(x[axis]);
        const int64_t k = h[p]++;
        int64_t* y = to_idx[p] + k * rank;
        for (int a = 0; a < rank; ++a) y[a] = x[a];
        y[axis] -= start[p];
        to_val[p][k] = src[i];
      }
    });
  });
  for (int64_t p = 0; p < num; ++p) {
    std::vector<int64_t> shape = st.shape();
    shape[axis] = sizes[p];
    pieces.push_back(SparseTensor::Create(std::move(out_idx[p]), std::move(out_vals[p]),
                                          std::move(shape), st.order()));
  }
  return pieces;
}

// Pieces of `sizes` along `axis` (already checked): piece_of(v) is the piece of coordinate v.
// Few pieces: SplitFew. Otherwise one pass finds each entry's piece, one stable counting pass
// (Compress) groups the entries by piece, and each piece gathers its range: O(nnz + pieces).
template <typename PieceOf>
std::vector<SparseTensor> SplitInto(const SparseTensor& st, int axis,
                                    const std::vector<int64_t>& sizes, const PieceOf& piece_of) {
  const int rank = st.rank();
  const int64_t n = st.nnz(), num = static_cast<int64_t>(sizes.size());
  const Tensor idx = st.indices().HostContiguous();
  const int64_t* rows = n * rank > 0 ? idx.data<int64_t>() : nullptr;
  // Every entry must lie inside the shape: the split axis picks its piece, and an entry out of
  // bounds on another axis would make an invalid piece (TensorFlow's SparseSplit refuses it too).
  const int64_t* shape = st.shape().data();
  const auto outside = [&](int64_t i) { return si::OutOfBounds(rows + i * rank, shape, rank); };
  if (num <= kFewPieces) return SplitFew(st, rows, axis, sizes, piece_of, outside);
  const int64_t bad = FirstWhere(n, outside);
  if (bad >= 0) si::ThrowOutOfBounds("Split", rows, bad, st.shape());
  Tensor piece = Tensor::Empty({n}, DType::kInt64);
  Tensor positions = Tensor::Empty({n}, DType::kInt64);
  int64_t* pc = piece.data<int64_t>();
  int64_t* pos = positions.data<int64_t>();
  ParallelFor(0, n, GrainFor(24), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      pc[i] = piece_of(rows[i * rank + axis]);
      pos[i] = i;
    }
  });
  static const int64_t kZero = 0;
  const si::Compressed by_piece = si::Compress({pc, 1}, {&kZero, 0}, n, num, positions);
  const int64_t* ptr = by_piece.ptr.data<int64_t>();
  const int64_t* perm = by_piece.values.data<int64_t>();
  const Tensor vals = st.values().HostContiguous();
  std::vector<SparseTensor> pieces;
  pieces.reserve(static_cast<size_t>(num));
  std::vector<int64_t> start(static_cast<size_t>(rank), 0);
  for (int64_t p = 0; p < num; ++p) {
    std::vector<int64_t> shape = st.shape();
    shape[axis] = sizes[p];
    pieces.push_back(TakeShifted(st, rows, vals, perm + ptr[p], ptr[p + 1] - ptr[p], start, shape));
    start[axis] += sizes[p];
  }
  return pieces;
}

// Rows with columns permuted (out[i][a] = row i's index on perm[a]).
Tensor PermuteIndices(const SparseTensor& st, const std::vector<int>& perm) {
  const int rank = st.rank();
  const Tensor idx = st.indices().HostContiguous();
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
  return indices;
}

}  // namespace

SparseTensor Slice(const SparseTensor& st, const std::vector<int64_t>& start,
                   const std::vector<int64_t>& size) {
  si::CheckCreated(st, "Slice");
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
  if (OnCuda(st)) return sparse_cuda::Slice(st, start, out_shape);
  const Tensor idx = st.indices().HostContiguous();
  const int64_t* rows = static_cast<const int64_t*>(idx.raw_data());
  std::vector<int64_t> positions = si::SelectPositions(st.nnz(), [&](int64_t i) {
    bool inside = true;
    for (int a = 0; a < rank; ++a) {
      const int64_t v = rows[i * rank + a];
      inside &= v >= start[a] && v - start[a] < out_shape[a];
    }
    return inside;
  });
  return TakeShifted(st, rows, st.values().HostContiguous(), positions.data(),
                     static_cast<int64_t>(positions.size()), start, out_shape);
}

std::vector<SparseTensor> Split(const SparseTensor& st, int axis,
                                const std::vector<int64_t>& sizes) {
  si::CheckCreated(st, "Split");
  axis = NormalizeAxis(axis, st.rank(), "Split");
  int64_t sum = 0;
  for (int64_t s : sizes) {
    TK_CHECK(s >= 0, kInvalidArgument, "Split: negative size ", s, " in ", ShapeString(sizes));
    sum += std::min<int64_t>(s, st.shape()[axis] + 1);  // capped: no overflow, still a mismatch
  }
  TK_CHECK(sum == st.shape()[axis], kShapeMismatch, "Split: sizes ", ShapeString(sizes),
           " must add up to dim ", st.shape()[axis], " of axis ", axis, " (shape ",
           ShapeString(st.shape()), ")");
  if (OnCuda(st)) return sparse_cuda::Split(st, axis, sizes);
  std::vector<int64_t> starts(sizes.size() + 1, 0);  // starts[p]: first coordinate of piece p
  for (size_t p = 0; p < sizes.size(); ++p) starts[p + 1] = starts[p] + sizes[p];
  // The last piece starting at or before v; it is not empty, since the next one starts after v.
  return SplitInto(st, axis, sizes, [&](int64_t v) {
    return static_cast<int64_t>(std::upper_bound(starts.begin(), starts.end(), v) -
                                starts.begin()) -
           1;
  });
}

std::vector<SparseTensor> Split(const SparseTensor& st, int axis, int64_t num) {
  si::CheckCreated(st, "Split");
  axis = NormalizeAxis(axis, st.rank(), "Split");
  TK_CHECK(num >= 1, kInvalidArgument, "Split: the number of pieces must be >= 1, got ", num);
  const int64_t dim = st.shape()[axis];
  const int64_t q = dim / num, r = dim % num;  // the first r pieces have q + 1 coordinates
  std::vector<int64_t> sizes(static_cast<size_t>(num), q);
  for (int64_t p = 0; p < r; ++p) ++sizes[p];
  if (OnCuda(st)) return sparse_cuda::Split(st, axis, sizes);
  const int64_t long_end = r * (q + 1);  // coordinates of the longer pieces end here
  return SplitInto(st, axis, sizes, [&](int64_t v) {
    return v < long_end ? v / (q + 1) : r + (v - long_end) / q;  // q > 0 whenever v >= long_end
  });
}

SparseTensor Permute(const SparseTensor& st, const std::vector<int>& perm) {
  si::CheckCreated(st, "Permute");
  const int rank = st.rank();
  TK_CHECK(si::IsPermutation(perm, rank), kInvalidArgument, "Permute: axes ", ShapeString(perm),
           " must be a permutation of 0..", rank - 1, " for shape ", ShapeString(st.shape()));
  Tensor indices = OnCuda(st) ? sparse_cuda::PermuteIndices(st, perm) : PermuteIndices(st, perm);
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
  return SparseTensor::Create(std::move(indices), st.values(), shape, order);
}

SparseTensor Transpose(const SparseTensor& st, const std::vector<int>& perm) {
  return Permute(st, perm);
}

SparseTensor Transpose(const SparseTensor& st, int axis1, int axis2) {
  si::CheckCreated(st, "Transpose");
  const int rank = st.rank();
  axis1 = NormalizeAxis(axis1, rank, "Transpose");
  axis2 = NormalizeAxis(axis2, rank, "Transpose");
  std::vector<int> perm = si::Iota(rank);
  std::swap(perm[axis1], perm[axis2]);
  return Permute(st, perm);
}

}  // namespace tensorkit
