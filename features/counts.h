// tensorkit/features/counts.h: per-row counts of ids (bag of words) and multi-hot indicators.
//
// Glossary
//   ids             non-negative int32 or int64 categorical values, grouped in rows: a rank-2
//                   SparseTensor [B, L] (row = index[0]; the column only has to be in bounds), a
//                   rank-1 SparseTensor [L] (one row), or a JaggedTensor (its B rows). CountSparse
//                   also takes rank 3 or more [B, ...]: row = index[0] again, every entry under
//                   it counted in one row (TensorFlow's kernel does so).
//   count           for each row r and id v, the number of entries of row r with id v, or the sum
//                   of their weights in entry order (TensorFlow's SparseCountSparseOutput).
//   binary          every (row, id) that occurs counts 1, whatever the weights.
//   min_length      the output has at least this many columns; -1 (or 0) for no minimum.
//   max_length      when >= 0: ids >= max_length are dropped and the output has exactly
//                   max_length columns (even below min_length, and 0 columns for 0, as
//                   TensorFlow does); -1 for no maximum.
//   width           the output's number of columns: max_length when >= 0, else
//                   max(largest kept id + 1, min_length, 1): TensorFlow's rule, in which an input
//                   without ids still has one column.
//   indicator       a multi-hot row: 1 at every id the row holds (tf.sparse.to_indicator).
//   row-major       output entries sorted by (row, id), each (row, id) once.
#ifndef TENSORKIT_FEATURES_COUNTS_H_
#define TENSORKIT_FEATURES_COUNTS_H_

#include <cstdint>

#include "tensorkit/common/dtype.h"
#include "tensorkit/common/outputs.h"
#include "tensorkit/dense/tensor.h"
#include "tensorkit/features/jagged.h"
#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// The counts of every row's ids as a SparseTensor in row-major order (order {0, 1}, or {0} for
// rank-1 ids): shape [B, width] for rank-2 ids, [width] for rank-1 ids, entries (row, id) with
// the count as value; ids of rank 3 or more count as rank 2 (shape [B, width], rows by
// index[0]). TensorFlow's SparseCountSparseOutput, whose rules these are:
//   - weights undefined: int64 counts; weights [nnz] of int32, int64, float32 or float64: the
//     sums of the weights in entry order, in their dtype (bit for bit TensorFlow's, whose
//     kernel adds in entry order too); weights with 0 elements: counts in the weights' dtype
//     (TensorFlow's way of passing no weights).
//   - binary: every value is 1 (in the output dtype).
//   - an id of INT64_MAX without max_length (the width would overflow; TensorFlow's is then
//     -1), negative ids, indices outside the shape, rank 0, weights of the wrong size, min_length
//     or max_length below -1 are Errors naming the first bad entry or value.
// The ids' entries may come in any order: rows are grouped by a stable sort, so sums still run
// in entry order. On the CPU (parallel over rows, the same results at any thread count) or on
// the ids' CUDA device (keys made there and summed by sparse/'s device Coalesce, in entry order
// for every (row, id) of at most 2048 entries; longer float sums may round differently).
SparseTensor CountSparse(const SparseTensor& ids, const Tensor& weights = {}, bool binary = false,
                         int64_t min_length = -1, int64_t max_length = -1);
// The same, its outputs made by `out` (common/outputs.h), e.g. a TensorFlow kernel's: output 0
// the indices (int64 [K, 1 or 2]), 1 the values ([K] of the count dtype), 2 the dense shape
// (int64 [1 or 2], the result's shape, which TensorFlow's op returns as a tensor), each a
// contiguous CPU tensor of exactly those dims and dtype; out.Commit() once all are written (not
// when it throws). The result's indices and values are outputs 0 and 1. CPU only: ids on a CUDA
// device are an Error (kUnsupported).
SparseTensor CountSparse(const SparseTensor& ids, const Tensor& weights, bool binary,
                         int64_t min_length, int64_t max_length, OutputAllocator& out);
// The same for the rows of a jagged tensor: [B, width]. `weights` is this call's argument (pass
// ids.weights() to count with the tensor's own weights); ids.values() must be 1-D.
SparseTensor CountSparse(const JaggedTensor& ids, const Tensor& weights = {}, bool binary = false,
                         int64_t min_length = -1, int64_t max_length = -1);

// What ToIndicator does with an id outside [0, depth).
enum class OutOfRangeIds {
  kError,  // an Error naming the entry (tf.sparse.to_indicator refuses them too)
  kDrop,   // ignored, as the one-hot of TensorFlow's indicator_column ignores -1 and ids >= depth
};

// Multi-hot rows: entry (row, id) with value 1 (of `dtype`, any numeric dtype) for every id a
// row holds, once, in row-major order; shape [B, depth] ([depth] for rank-1 ids). depth >= 0.
SparseTensor ToIndicator(const SparseTensor& ids, int64_t depth, DType dtype = DType::kFloat32,
                         OutOfRangeIds out_of_range = OutOfRangeIds::kError);
SparseTensor ToIndicator(const JaggedTensor& ids, int64_t depth, DType dtype = DType::kFloat32,
                         OutOfRangeIds out_of_range = OutOfRangeIds::kError);
// The same as a dense [B, depth] (or [depth]) tensor of 0 and 1.
Tensor ToIndicatorDense(const SparseTensor& ids, int64_t depth, DType dtype = DType::kFloat32,
                        OutOfRangeIds out_of_range = OutOfRangeIds::kError);
Tensor ToIndicatorDense(const JaggedTensor& ids, int64_t depth, DType dtype = DType::kFloat32,
                        OutOfRangeIds out_of_range = OutOfRangeIds::kError);

}  // namespace tensorkit

#endif  // TENSORKIT_FEATURES_COUNTS_H_
