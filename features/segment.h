// tensorkit/features/segment.h: segment reductions and empty-row filling, with TensorFlow's
// semantics.
//
// Glossary
//   segment        the rows of `data` that share one segment id; output row s reduces them.
//   sorted ids     segment_ids non-decreasing (SegmentReduce, SparseSegmentReduce); unsorted
//                  ids may come in any sequence (UnsortedSegmentReduce).
//   sparse segment SparseSegmentReduce reduces rows data[indices[k]] into segment
//                  segment_ids[k]: a gather and a segment reduction in one pass.
//   empty row      a row of a 2-D SparseTensor with no entry; FillEmptyRows gives it one entry
//                  at column 0 holding a default value.
#ifndef TENSORKIT_FEATURES_SEGMENT_H_
#define TENSORKIT_FEATURES_SEGMENT_H_

#include <cstdint>

#include "tensorkit/common/scalar.h"
#include "tensorkit/dense/tensor.h"
#include "tensorkit/features/combiner.h"
#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// Every reduction below: data [N, ...] of float16, bfloat16, float32, float64 (16-bit floats
// accumulate in float32) or, for kSum, kMax and kMin, int32 and int64; the output has data's
// dtype and dims [num_segments, data.Dims()[1:]]; ids are int32 or int64. Bad ids (unsorted
// where sorted ones are required, outside [0, num_segments), indices outside [0, N)) are an
// Error naming the position and the value; nothing is read or written out of bounds. Results
// are bit-identical at any thread count: each output row is reduced by one task in entry
// order.

// Row s reduces the rows k of data with segment_ids[k] == s; segment_ids [N] sorted
// (non-decreasing) and >= 0. num_segments -1 means segment_ids[N - 1] + 1 (0 for N == 0),
// TensorFlow's SegmentSum output size; otherwise every id must be below it. Empty segments give
// 0 for every combiner (tf.math.segment_max's rule).
Tensor SegmentReduce(const Tensor& data, const Tensor& segment_ids, int64_t num_segments,
                     Combiner combiner);

// The same for segment_ids in any sequence (TensorFlow's UnsortedSegmentSum family): ids that
// are negative are dropped, as TensorFlow drops them; ids >= num_segments are an Error. Empty
// segments give 0 for kSum, kMean and kSqrtN, the dtype's lowest value for kMax and its highest
// for kMin (tf.math.unsorted_segment_max / _min).
Tensor UnsortedSegmentReduce(const Tensor& data, const Tensor& segment_ids, int64_t num_segments,
                             Combiner combiner);

// Row s reduces the rows data[indices[k]] for the k with segment_ids[k] == s (TensorFlow's
// SparseSegmentSum / Mean / SqrtN, and their WithNumSegments forms when num_segments >= 0):
// indices and segment_ids [K], the ids sorted, indices in [0, N). Empty segments give 0 for
// every combiner.
Tensor SparseSegmentReduce(const Tensor& data, const Tensor& indices, const Tensor& segment_ids,
                           int64_t num_segments, Combiner combiner);

// The gradient of SparseSegmentReduce for kSum, kMean and kSqrtN (TensorFlow's
// SparseSegmentSumGrad / MeanGrad / SqrtNGrad): [num_rows, grad.Dims()[1:]], row indices[k]
// receiving grad[segment_ids[k]] scaled as the forward pass scaled it.
Tensor SparseSegmentReduceGrad(const Tensor& grad, const Tensor& indices, const Tensor& segment_ids,
                               int64_t num_rows, Combiner combiner);

// --- Empty rows ------------------------------------------------------------------------------

struct FillEmptyRowsResult {
  SparseTensor output;         // every entry of the input plus (r, 0, ...) for each empty row r,
                               // grouped by row, input order kept within a row (TensorFlow's)
  Tensor empty_row_indicator;  // bool [rows]: true where the input row had no entry
  Tensor reverse_index_map;    // int64 [nnz]: the output position of input entry k
};

// TensorFlow's SparseFillEmptyRows: a SparseTensor of rank >= 1 (rows = shape[0]) in any
// order (entries are moved by a stable sort on the row, as TensorFlow moves them),
// default_value converted to the values' dtype. Indices outside the shape are an Error naming the
// entry.
FillEmptyRowsResult FillEmptyRows(const SparseTensor& st, Scalar default_value);

struct FillEmptyRowsGradResult {
  Tensor d_values;         // [nnz]: grad_values[reverse_index_map[k]]
  Tensor d_default_value;  // rank 0: the sum of grad_values over the filled positions
};

// TensorFlow's SparseFillEmptyRowsGrad: reverse_index_map int64 [nnz] (each in
// [0, grad_values.Dim(0)), else an Error), grad_values [nnz + number of empty rows].
FillEmptyRowsGradResult FillEmptyRowsGrad(const Tensor& reverse_index_map,
                                          const Tensor& grad_values);

}  // namespace tensorkit

#endif  // TENSORKIT_FEATURES_SEGMENT_H_
