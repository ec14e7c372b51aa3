// tensorkit/sparse/reduce.h: reductions of sparse tensors over sets of axes.
//
// Glossary
//   axes            the axes reduced away (any set, negative numbers count from the end, no
//                   repeats); the result has the remaining axes, in their order. An empty set
//                   reduces nothing: ReduceSum(st, {}) is the dense copy of st.
//   duplicates      entries with the same index are summed first (the dense meaning of a
//                   SparseTensor), in every reduction.
//   implicit zeros  absent entries are zeros, so ReduceMax/ReduceMin of a slice that has fewer
//                   distinct stored positions than positions includes 0: the max of a slice
//                   with stored {-3, -1} and a missing entry is 0, not -1.
//   determinism     sums add each output's entries in a fixed order (by position, then input
//                   order), so results are bit-identical at any thread count.
//   Value dtypes: every numeric dtype but bool (integers wrap around on overflow).
//   NaN            ReduceMax / ReduceMin (and the sparse forms) propagate NaN, like NumPy's max
//                  and min and the dense Max / Min.
//   on a device    every reduction of a tensor on a CUDA device runs there and returns its
//                  result there, with the CPU's bits (sparse/README.md).
#ifndef TENSORKIT_SPARSE_REDUCE_H_
#define TENSORKIT_SPARSE_REDUCE_H_

#include <vector>

#include "tensorkit/dense/tensor.h"
#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// Dense sum over `axes`; the result has the other axes (at most kMaxAxes of them).
Tensor ReduceSum(const SparseTensor& st, std::vector<int> axes);
// Dense max / min over `axes`, absent entries counting as 0 (see the glossary). Throws Error
// when a reduced slice is empty (a reduced dim is 0) and the result is not.
Tensor ReduceMax(const SparseTensor& st, std::vector<int> axes);
Tensor ReduceMin(const SparseTensor& st, std::vector<int> axes);
// Sparse sum / max / min over `axes`: one entry per output position that has at least one
// stored entry (kept even when the value is 0), coalesced, order {0..rank-1}. Any rank. Values
// are those of ReduceSum / ReduceMax / ReduceMin (implicit zeros included), so ToDense() of the
// result equals the dense reduction.
SparseTensor ReduceSumSparse(const SparseTensor& st, std::vector<int> axes);
SparseTensor ReduceMaxSparse(const SparseTensor& st, std::vector<int> axes);
SparseTensor ReduceMinSparse(const SparseTensor& st, std::vector<int> axes);
// Stored entries (duplicates counted) per index of `axis`: int64 [shape[axis]].
Tensor RowNnz(const SparseTensor& st, int axis);

}  // namespace tensorkit

#endif  // TENSORKIT_SPARSE_REDUCE_H_
