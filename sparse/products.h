// tensorkit/sparse/products.h: products with sparse operands.
//
// Glossary
//   SpMV / SpMM      sparse matrix times a dense vector / matrix: c = alpha*(a @ b) + beta*c.
//   batched          a sparse [B, M, K] times a dense [B, K, N] (or one shared [K, N]) gives a
//                    dense [B, M, N]: one product per batch entry.
//   SpGEMM           sparse times sparse, a sparse result: tensorkit's row-by-row kernel with a
//                    dense accumulator (spgemm.cc) for b up to 4M columns, SuiteSparse:GraphBLAS's
//                    hash-based product for wider b. Every product of a pair of entries makes a
//                    result entry, even when the sum cancels to 0.
//   duplicates       entries with the same index count as their sum in every product.
//   absent entries   are zeros: an entry of the result that no product touches is absent from
//                    a sparse result and 0 (times alpha) in a dense one.
//   beta == 0        c is never read, so NaN in an uninitialised c cannot leak.
//   on an Error      c is as it was, also when an allocation failed (kResourceExhausted): the
//                    work space is allocated before c is written.
//   Dense operands may have any strides (views, transposes). Results are bit-identical at any
//   thread count except SpGEMM of floating values with b wider than 4M columns, whose sums
//   GraphBLAS may split across threads. Accumulation is in the value type (float for the 16-bit
//   floats; integers wrap around on overflow).
//   on a device  a product whose sparse operand is on a CUDA device runs there through
//                cuSPARSE, every operand on that device: sparse-dense products take float32,
//                float64, float16 and bfloat16, SparseSparseProduct float32 and float64 (its
//                float16 and bfloat16 are refused on the CPU and on a device alike);
//                SparseAdd and SparseMultiply run on the device's sort and merge, any dtype
//                (sparse/README.md).
#ifndef TENSORKIT_SPARSE_PRODUCTS_H_
#define TENSORKIT_SPARSE_PRODUCTS_H_

#include "tensorkit/common/scalar.h"
#include "tensorkit/dense/tensor.h"
#include "tensorkit/sparse/compressed.h"
#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// c = alpha*(a @ b) + beta*c. a: [M, K] with b [K, N] -> c [M, N], or b [K] -> c [M];
// a: [B, M, K] with b [B, K, N] or [K, N] -> c [B, M, N]. Same dtype everywhere; c must not
// overlap b.
void SparseDenseProduct(Scalar alpha, Scalar beta, const SparseTensor& a, const Tensor& b,
                        Tensor* c);
void SparseDenseProduct(Scalar alpha, Scalar beta, const CsrMatrix& a, const Tensor& b, Tensor* c);

// c = alpha*(a @ b) + beta*c with a dense: a [M, K], b [K, N] -> c [M, N], or a [K] -> c [N].
void DenseSparseProduct(Scalar alpha, Scalar beta, const Tensor& a, const SparseTensor& b,
                        Tensor* c);
void DenseSparseProduct(Scalar alpha, Scalar beta, const Tensor& a, const CsrMatrix& b, Tensor* c);

// a [M, K] @ b [K, N] -> sparse [M, N] with order {0, 1}, without duplicates. Value dtypes:
// bool (or/and), int8..int64, uint8, float32, float64.
SparseTensor SparseSparseProduct(const SparseTensor& a, const SparseTensor& b);
CsrMatrix SparseSparseProduct(const CsrMatrix& a, const CsrMatrix& b);

// Elementwise union with sums (SparseAdd) and intersection with products (SparseMultiply) of
// two sparse tensors of the same shape and dtype (any rank). Duplicates are summed first; the
// result is coalesced, order {0..rank-1}. Same dtypes as SparseSparseProduct.
SparseTensor SparseAdd(const SparseTensor& a, const SparseTensor& b);
SparseTensor SparseMultiply(const SparseTensor& a, const SparseTensor& b);

}  // namespace tensorkit

#endif  // TENSORKIT_SPARSE_PRODUCTS_H_
