// tensorkit/dense/views.h: zero-copy views of a dense Tensor.
//
// Glossary
//   view         a Tensor on the same Storage as its source with a new Pattern; writing through
//                a view writes the source. No function here allocates element memory.
//   axis         public numbering (0 = outermost); every axis argument may be negative and then
//                counts from the end (-1 = last axis).
//   slice range  Slice(t, axis, start, end, step) takes indexes start, start+step, ... that lie
//                strictly before `end` in the direction of `step`:
//                  step > 0:  0 <= start <= end <= dim;
//                  step < 0:  -1 <= end <= start <= dim-1 (end -1 means "through index 0", so
//                             Slice(t, 0, 4, -1, -1) is elements 4, 3, 2, 1, 0);
//                  step == 0 is an error; start == end is an empty slice (dim 0).
//                Negative indexes never count from the end: -1 is only "before index 0".
//   C order      the order of index tuples with the last axis varying fastest.
//   View         View(t, dims) is the tensor with `dims` whose elements, listed in C order, are
//                t's elements listed in C order, sharing t's storage; nullopt when no strided
//                pattern can express that (e.g. flattening a transposed matrix).
//   valid result every returned view has a valid Pattern (dense/pattern.h): stride 0 exactly on
//                dim-1 axes, dims of 0 allowed.
#ifndef TENSORKIT_DENSE_VIEWS_H_
#define TENSORKIT_DENSE_VIEWS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "tensorkit/dense/tensor.h"

namespace tensorkit {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// The indexes start, start+step, ... before `end` along `axis` (see "slice range").
Tensor Slice(const Tensor& t, int axis, int64_t start, int64_t end, int64_t step = 1);
// The hyperplane index along `axis`; the result has one axis less. 0 <= index < Dim(axis).
Tensor Select(const Tensor& t, int axis, int64_t index);
// Swaps two axes (a no-op when they are the same axis).
Tensor Transpose(const Tensor& t, int axis1, int axis2);
// Output axis i is input axis axes[i] (NumPy's transpose rule); `axes` is a permutation.
Tensor Permute(const Tensor& t, const std::vector<int>& axes);

// The tensor with `dims` that lists t's elements in the same C order (see "View"); nullopt
// when the layout of t does not allow it. One entry of `dims` may be -1: it is inferred from
// the element count. Throws Error when the element counts differ.
std::optional<Tensor> View(const Tensor& t, const std::vector<int64_t>& dims);
// Merges axes axis1 .. axis1+num_axes-1 into one (C order within the merged axes); nullopt
// when their strides do not allow it. num_axes >= 1; num_axes == 1 returns t unchanged.
std::optional<Tensor> MergeAxes(const Tensor& t, int axis1, int num_axes = 2);
// Splits `axis` into `dims` read in C order; their product must be Dim(axis) (one -1 may be
// inferred). A negative stride stays negative. Always possible, never copies.
Tensor SplitAxis(const Tensor& t, int axis, const std::vector<int64_t>& dims);
// Removes `axis`, which must have dim 1.
Tensor Squeeze(const Tensor& t, int axis);
// Inserts a dim-1 axis so that it becomes axis `axis` of the result: 0 <= axis <= NumAxes(),
// or -(NumAxes()+1) <= axis < 0 counting from the end (-1 appends).
Tensor Unsqueeze(const Tensor& t, int axis);
// Rows [start, end) of axis 0: Slice(t, 0, start, end).
Tensor SliceRows(const Tensor& t, int64_t start, int64_t end);

// Convenience: View(t, {NumElements()}), a 1-D view when one exists.
std::optional<Tensor> Flatten(const Tensor& t);

}  // namespace tensorkit

#endif  // TENSORKIT_DENSE_VIEWS_H_
