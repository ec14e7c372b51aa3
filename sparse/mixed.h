// tensorkit/sparse/mixed.h: elementwise operations mixing sparse and dense operands.
//
// Glossary
//   broadcasting  the dense operand's dims, aligned on the right with the sparse shape, must
//                 each equal the sparse dim or be 1 (NumPy's rule, one direction only: the
//                 result always has the sparse operand's shape).
//   same sparsity Mul keeps the sparse operand's indices (shared, not copied) and order; a
//                 dense value that is inf or NaN at an absent position does not create an
//                 entry (absent entries stay absent, unlike 0 * inf in dense arithmetic).
//   duplicates    Add sums them (the dense meaning); Mul scales each stored entry.
//   Value dtypes: those of the dense arithmetic ops (the arithmetic runs in the dense kernel
//   engine, with its broadcasting and integer wrap-around); both operands must have the same
//   dtype and device. Both run on a CUDA device too (sparse/README.md).
#ifndef TENSORKIT_SPARSE_MIXED_H_
#define TENSORKIT_SPARSE_MIXED_H_

#include "tensorkit/dense/tensor.h"
#include "tensorkit/sparse/products.h"
#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// Dense a + b with b broadcast to a's shape (at most kMaxAxes axes).
Tensor Add(const SparseTensor& a, const Tensor& b);
// a * b (b broadcast) on a's entries only: a sparse tensor with a's indices.
SparseTensor Mul(const SparseTensor& a, const Tensor& b);
// SparseAdd (products.h) under the name Add, so that Add takes any pair of sparse and dense
// operands: the union with sums, coalesced, order {0..rank-1}. One definition, SparseAdd's.
inline SparseTensor Add(const SparseTensor& a, const SparseTensor& b) { return SparseAdd(a, b); }

}  // namespace tensorkit

#endif  // TENSORKIT_SPARSE_MIXED_H_
