// tensorkit/dense/gemm.h: the CPU matrix-product backend behind AddProduct.
//
// Glossary
//   row-major     element (i, j) of a matrix with leading dimension ld is at i*ld + j, as with
//                 cblas and CblasRowMajor.
//   op(X)         X, or its transpose when the matching trans_* flag is set. op(A) is m x k,
//                 op(B) is k x n, C is m x n; A is stored m x k (k x m when transposed), B is
//                 stored k x n (n x k when transposed).
//   leading dim   lda/ldb/ldc: elements between consecutive stored rows; at least the stored row
//                 length (and at least 1), as cblas requires.
//   batch stride  elements between the first elements of consecutive operands of a batch; 0
//                 reuses one A or B for every product. The C operands must not overlap.
//   backend       the library that runs the products: BLIS (gemm.cc explains the choice). A
//   large
//                 product is cut into tiles of C, and the tiles of all products of a batch run as
//                 oneTBB tasks (ParallelFor), each one single-threaded BLIS call: GetNumThreads()
//                 is the only thread count, no other thread pool competes with oneTBB's, and
//                 calling Gemm from inside a ParallelFor body is fine (nested tasks).
//   deterministic the tiles depend on m, n, k and the machine's core count only, never on the
//                 thread count, and k is never split: results are bit-identical at any thread
//                 count.
//   aliasing      C must not overlap A or B.
#ifndef TENSORKIT_DENSE_GEMM_H_
#define TENSORKIT_DENSE_GEMM_H_

#include <cstdint>

#include "tensorkit/common/dtype.h"

namespace tensorkit::gemm {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// C[m,n] = alpha * op(A)[m,k] * op(B)[k,n] + beta * C for dtype kFloat32 or kFloat64.
// beta == 0 never reads C (NaN in C cannot leak); alpha == 0 or k == 0 never reads A or B and
// gives C = beta * C. Any m, n, k >= 0. Throws Error for negative sizes, leading dimensions that
// are too small, null pointers to non-empty operands, or another dtype.
void Gemm(DType dtype, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
          const void* a, int64_t lda, const void* b, int64_t ldb, double beta, void* c,
          int64_t ldc);

// `batch` independent products as in Gemm; operand i starts at a + i*stride_a elements (likewise
// b and c). The tiles of all products run side by side as oneTBB tasks. Also throws Error for
// batch < 0, stride_c == 0 with batch > 1, or strides whose offsets overflow int64.
void GemmBatched(DType dtype, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                 double alpha, const void* a, int64_t lda, int64_t stride_a, const void* b,
                 int64_t ldb, int64_t stride_b, double beta, void* c, int64_t ldc, int64_t stride_c,
                 int64_t batch);

// Name of the backend, the kernels it uses on this CPU and why, e.g. "blis(skx): chosen by
// tensorkit: the CPU has AVX-512 F/DQ/BW/VL; sgemm micro-tile 32x12, dgemm 16x14". The choice is
// made at the first GEMM of the process.
const char* BackendName();

}  // namespace tensorkit::gemm

#endif  // TENSORKIT_DENSE_GEMM_H_
