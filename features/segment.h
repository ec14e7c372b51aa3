// tensorkit/features/segment.h: segment reductions and empty-row filling, with TensorFlow's
// semantics.
//
// Glossary
//   segment        the rows of `data` that share one segment id; output row s reduces them.
//   sorted ids     segment_ids non-decreasing (SegmentReduce, SparseSegmentReduce); unsorted
//                  ids may come in any sequence (UnsortedSegmentReduce).
//   sparse segment SparseSegmentReduce reduces rows data[indices[k]] into segment
//                  segment_ids[k]: a gather and a segment reduction in one pass.
//   empty row      an index r along axis 0 of a SparseTensor (rank >= 1) that no entry has;
//                  FillEmptyRows gives it one entry at (r, 0, ..., 0) holding a default value.
//   num_segments   the output's first dim; -1 lets the ids decide (the largest id + 1).
#ifndef TENSORKIT_FEATURES_SEGMENT_H_
#define TENSORKIT_FEATURES_SEGMENT_H_

#include <cstdint>
#include <string>
#include <type_traits>

#include "tensorkit/common/outputs.h"
#include "tensorkit/common/scalar.h"
#include "tensorkit/dense/tensor.h"
#include "tensorkit/features/combiner.h"
#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// Every reduction below: data [N, ...] of float16, bfloat16, float32, float64 (16-bit floats
// accumulate in float32) or, for kSum, kMax and kMin, int32 and int64 (sums wrap around; kMean
// and kSqrtN on integers are an Error: convert the data to a float dtype); the output has data's
// dtype and dims [num_segments, data.Dims()[1:]] (row = data.Dims()[1:] flattened); ids and
// indices are int32 or int64. SegmentReduce, UnsortedSegmentReduce and SparseSegmentReduce
// also run with every input on one CUDA device (the output there, the CPU's bits, one wait for
// the checks' verdict: segment_device.h); the gradient needs the CPU (a CUDA tensor is
// kUnsupported). Bad ids
// (unsorted where sorted ones are required, outside [0, num_segments), indices outside
// [0, N)), negative num_segments other than -1, sizes that disagree and output sizes that
// overflow int64 are an Error naming the position and the value; nothing is read or written
// out of bounds. Each output row is reduced by one task in entry order, starting from its first
// row (Note [one task per output row] in segment.cc): results are bit-identical at any thread
// count. kMean divides the sum by the count and kSqrtN by sqrt(count) (TensorFlow's sparse
// kernels sum in blocks of 8 and multiply by 1 / n for n < 10, so float results may differ from
// TensorFlow's in the last bit). kMax / kMin keep the first of equal values and compare with <
// (a NaN in the first row of a segment stays, later NaNs are skipped).

// Row s reduces the rows k of data with segment_ids[k] == s; segment_ids [N] sorted
// (non-decreasing) and >= 0. num_segments -1 means segment_ids[N - 1] + 1 (0 for N == 0),
// TensorFlow's SegmentSum output size; otherwise every id must be below it. Ids that do not
// occur (gaps) give 0 rows for every combiner (tf.math.segment_max's rule).
Tensor SegmentReduce(const Tensor& data, const Tensor& segment_ids, int64_t num_segments,
                     Combiner combiner);

// The same for segment_ids in any sequence (TensorFlow's UnsortedSegmentSum family and the
// tf.math.unsorted_segment_mean / _sqrt_n compositions): segment_ids' dims are a prefix of
// data's (one id per slice; the output is [num_segments, data.Dims()[segment_ids.NumAxes():]]).
// Negative ids are dropped, as TensorFlow drops them; ids >= num_segments are an Error;
// num_segments -1 means the largest id + 1. Empty segments give 0 for kSum, kMean and kSqrtN,
// the dtype's lowest value for kMax and its highest for kMin (tf.math.unsorted_segment_max /
// _min).
Tensor UnsortedSegmentReduce(const Tensor& data, const Tensor& segment_ids, int64_t num_segments,
                             Combiner combiner);

// Row s reduces the rows data[indices[k]] for the k with segment_ids[k] == s (TensorFlow's
// SparseSegmentSum / Mean / SqrtN, and their WithNumSegments forms when num_segments >= 0;
// kMax and kMin as well): indices and segment_ids [K], the ids sorted and >= 0, indices in
// [0, N). Empty segments give 0 for every combiner.
Tensor SparseSegmentReduce(const Tensor& data, const Tensor& indices, const Tensor& segment_ids,
                           int64_t num_segments, Combiner combiner);

// The gradient of SparseSegmentReduce for kSum, kMean and kSqrtN (TensorFlow's
// SparseSegmentSumGrad / MeanGrad / SqrtNGrad; kMax and kMin are an Error): grad
// [num_segments, ...], indices and segment_ids [K] (ids in any order, each in
// [0, grad.Dim(0)); indices in [0, num_rows)). The output [num_rows, grad.Dims()[1:]] sums, in
// entry order, grad[segment_ids[k]] * scale into row indices[k], scale 1, 1 / n or 1 / sqrt(n)
// for a segment of n entries (computed in double, as TensorFlow does, then rounded to the
// accumulator type); rows no index names are 0.
Tensor SparseSegmentReduceGrad(const Tensor& grad, const Tensor& indices, const Tensor& segment_ids,
                               int64_t num_rows, Combiner combiner);

// --- Empty rows ------------------------------------------------------------------------------

struct FillEmptyRowsResult {
  SparseTensor output;         // every entry of the input plus (r, 0, ...) for each empty row r,
                               // grouped by row in ascending row order, input order kept within a
                               // row (TensorFlow's CPU kernel); order {0..rank-1} when that is
                               // sorted (always for sorted input), else unknown
  Tensor empty_row_indicator;  // bool [rows]: true where the input row had no entry
  Tensor reverse_index_map;    // int64 [nnz]: the output position of input entry k
};

// TensorFlow's SparseFillEmptyRows: a SparseTensor of rank >= 1 (rows = shape[0]) in any order
// (entries are grouped by a stable counting sort on the row, as TensorFlow moves them; the
// input's order() claim is not relied on), default_value converted to the values' dtype.
// Sorted input without empty rows is returned as is (its indices and values shared). Errors:
// an index outside the shape (kOutOfRange naming the entry; TensorFlow checks only axis 0),
// shape[0] == 0 with entries, rank 0, string values (use the std::string overload). On a CUDA
// device the outputs are made there, the same (a stable radix sort of the rows groups them).
FillEmptyRowsResult FillEmptyRows(const SparseTensor& st, Scalar default_value);
// The same, its outputs made by `out` (common/outputs.h), e.g. a TensorFlow kernel's: output 0
// the indices, 1 the values, 2 empty_row_indicator, 3 reverse_index_map, each a contiguous
// tensor of exactly its dims and dtype on the input's device; out.Commit() once all are written
// (not when it throws). The results are those tensors, except when nothing moves (sorted input
// without empty rows): outputs 0 and 1 are then not made, and the result's indices and values
// are the input's (a host passes its inputs on).
FillEmptyRowsResult FillEmptyRows(const SparseTensor& st, Scalar default_value,
                                  OutputAllocator& out);
// The same for string values: default_value anything a std::string is made from ("" or a
// std::string; a template so that a number never converts to it).
template <typename S>
requires(std::is_constructible_v<std::string, const S&> &&
         !std::is_arithmetic_v<S>) FillEmptyRowsResult
    FillEmptyRows(const SparseTensor& st, const S& default_value);
FillEmptyRowsResult FillEmptyRowsOfStrings(const SparseTensor& st,
                                           const std::string& default_value);

struct FillEmptyRowsGradResult {
  Tensor d_values;         // [nnz]: grad_values[reverse_index_map[k]]
  Tensor d_default_value;  // rank 0: the sum of grad_values over the positions that no entry of
                           // reverse_index_map names (the filled ones), in position order
};

// TensorFlow's SparseFillEmptyRowsGrad: reverse_index_map int64 [nnz] (each in
// [0, grad_values.Dim(0)), else an Error: TensorFlow's fix of CVE-2020-15195), grad_values
// [nnz + number of empty rows] of an integer or float dtype (16-bit floats sum in float32), on
// one device. The default value's gradient is summed in fixed chunks joined in order, on a CUDA
// device too, so the bits agree.
FillEmptyRowsGradResult FillEmptyRowsGrad(const Tensor& reverse_index_map,
                                          const Tensor& grad_values);

// ---------------------------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------------------------

template <typename S>
requires(std::is_constructible_v<std::string, const S&> &&
         !std::is_arithmetic_v<S>) FillEmptyRowsResult
    FillEmptyRows(const SparseTensor& st, const S& default_value) {
  return FillEmptyRowsOfStrings(st, std::string(default_value));
}

}  // namespace tensorkit

#endif  // TENSORKIT_FEATURES_SEGMENT_H_
