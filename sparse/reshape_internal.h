// tensorkit/sparse/reshape_internal.h: Reshape's index arithmetic in the dense engine (not a
// public header), declared apart so that the host tests can check the device path's arithmetic
// on CPU tensors against the fused CPU pass.
#ifndef TENSORKIT_SPARSE_RESHAPE_INTERNAL_H_
#define TENSORKIT_SPARSE_RESHAPE_INTERNAL_H_

#include <cstdint>
#include <vector>

#include "tensorkit/dense/tensor.h"

namespace tensorkit::sparse_internal {

// out (int64 [nnz, new rank], on idx's device) = the rows of idx (int64 [nnz, rank], inside
// `shape`, unchecked) at the same row-major positions in new_dims.
void ReshapeInEngine(const Tensor& idx, const std::vector<int64_t>& shape,
                     const std::vector<int64_t>& new_dims, Tensor* out);

}  // namespace tensorkit::sparse_internal

#endif  // TENSORKIT_SPARSE_RESHAPE_INTERNAL_H_
