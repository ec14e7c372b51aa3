// tensorkit/sparse/sparse_ops.h: slicing, splitting and permuting SparseTensors.
//
// Glossary
//   box      a block of the dense shape: start[a] <= index[a] < start[a] + size[a] on every axis.
//   piece    one output of Split: a box that spans every axis except the split axis.
//   shifted  entries of a box or piece have start subtracted, so they index the smaller shape.
// Every function keeps the input's entry sequence (so a known order stays valid) and works for
// any value dtype, nnz = 0 and rank 0 (where an axis makes sense). Results are new tensors, except
// that Permute/Transpose share the values tensor with the input.
#ifndef TENSORKIT_SPARSE_SPARSE_OPS_H_
#define TENSORKIT_SPARSE_SPARSE_OPS_H_

#include <cstdint>
#include <vector>

#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// The entries inside the box [start, start + size), shifted. size[a] == -1 means "to the end";
// needs 0 <= start[a] <= shape[a] and start[a] + size[a] <= shape[a].
SparseTensor Slice(const SparseTensor& st, const std::vector<int64_t>& start,
                   const std::vector<int64_t>& size);

// `num` pieces along `axis`; when shape[axis] is not a multiple of num, the first
// shape[axis] % num pieces are one longer (TensorFlow's sparse split).
std::vector<SparseTensor> Split(const SparseTensor& st, int axis, int64_t num);
// Pieces of the given sizes along `axis`; the sizes must add up to shape[axis].
std::vector<SparseTensor> Split(const SparseTensor& st, int axis,
                                const std::vector<int64_t>& sizes);

// Output axis i is input axis perm[i] (NumPy's rule, as dense Permute). The order follows the
// axes: order {0, 1} becomes {1, 0} under perm {1, 0}.
SparseTensor Permute(const SparseTensor& st, const std::vector<int>& perm);
// Same as Permute.
SparseTensor Transpose(const SparseTensor& st, const std::vector<int>& perm);
// Swaps two axes (negative axes count from the end).
SparseTensor Transpose(const SparseTensor& st, int axis1, int axis2);

// The same entries in another dense shape with as many elements (TensorFlow's SparseReshape):
// each entry keeps its row-major position; one dim of new_shape may be -1 (inferred). Indices
// outside st's shape are an Error naming the entry. Values are shared; a row-major order
// {0..rank-1} carries over, any other order becomes unknown. Runs on st's device.
SparseTensor Reshape(const SparseTensor& st, const std::vector<int64_t>& new_shape);
// new_shape with its -1 (if any) resolved against `shape`: the dims Reshape gives. An Error,
// naming `op`, both shapes and the element counts, when they cannot hold the same elements
// (counts that differ, more than one -1, a dim below -1, a product past int64).
std::vector<int64_t> ReshapedDims(const std::vector<int64_t>& shape,
                                  const std::vector<int64_t>& new_shape,
                                  const char* op = "Reshape");
// Reshape's index rows written into `out`: a contiguous int64 [nnz, new_dims.size()] tensor on
// st's device (e.g. a host framework's output buffer); new_dims as ReshapedDims gives them.
void ReshapeIndicesInto(const SparseTensor& st, const std::vector<int64_t>& new_dims, Tensor* out,
                        const char* op = "Reshape");

}  // namespace tensorkit

#endif  // TENSORKIT_SPARSE_SPARSE_OPS_H_
