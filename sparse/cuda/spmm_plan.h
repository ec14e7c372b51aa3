// Internal: how the sparse-dense products hand their operands to cuSPARSE, as host code (no
// CUDA header) so that tests/sparse/spmm_plan_test.cc checks it on any machine.
//
// Glossary
//   layout      cuSPARSE reads a dense matrix as row-major (element (i, j) at i * ld + j) or
//               column-major (at i + j * ld) with ld >= the contiguous extent; a tensor whose
//               strides fit neither (negative, or no unit stride) is copied first.
//   op flags    every product is the non-transposed sparse operand times a dense one: cuSPARSE
//               documents its transposed-sparse products as not reproducible run to run, so a
//               dense @ sparse product c = a b runs as c^T = b^T a^T, with b^T the CSR arrays of
//               b's CSC form and a^T, c^T the same memory read in the other layout.
//   batch keys  a [B, M, K] operand is multiplied as one 2-D matrix: entry (b, m, k) at row
//               b * M + m and column k when b is one [K, N] shared by every batch, or column
//               b * K + k (a block diagonal) when b is [B, K, N] read as [B * K, N].
#ifndef TENSORKIT_SPARSE_CUDA_SPMM_PLAN_H_
#define TENSORKIT_SPARSE_CUDA_SPMM_PLAN_H_

#include <cstdint>

#include "tensorkit/common/host_device.h"

namespace tensorkit::sparse_cuda {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

struct DenseLayout {
  bool fits = false;  // false: copy to a contiguous tensor first
  bool row_major = true;
  int64_t ld = 1;
};

// The layout cuSPARSE can read a [rows, cols] operand with element strides (s0, s1) in, without
// a copy; row-major when both fit. Dims of 1 have stride 0 (the Pattern rule) and fit any ld.
inline DenseLayout PlanDense(int64_t rows, int64_t cols, int64_t s0, int64_t s1);

// The 2-D row and column of batched entry (b, m, k) (see the glossary).
TK_HOST_DEVICE inline void BatchKeys(int64_t b, int64_t m, int64_t k, int64_t rows_per_batch,
                                     int64_t cols_per_batch, bool block_diagonal, int64_t* row,
                                     int64_t* col);

// ---------------------------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------------------------

inline DenseLayout PlanDense(int64_t rows, int64_t cols, int64_t s0, int64_t s1) {
  if (rows <= 0 || cols <= 0) return {true, true, cols > 1 ? cols : 1};
  if (cols == 1 || s1 == 1) {  // rows contiguous
    const int64_t ld = rows == 1 ? cols : s0;
    if (ld >= cols) return {true, true, ld};
  }
  if (rows == 1 || s0 == 1) {  // columns contiguous
    const int64_t ld = cols == 1 ? rows : s1;
    if (ld >= rows) return {true, false, ld};
  }
  return {false, true, cols};
}

TK_HOST_DEVICE inline void BatchKeys(int64_t b, int64_t m, int64_t k, int64_t rows_per_batch,
                                     int64_t cols_per_batch, bool block_diagonal, int64_t* row,
                                     int64_t* col) {
  *row = b * rows_per_batch + m;
  *col = block_diagonal ? b * cols_per_batch + k : k;
}

}  // namespace tensorkit::sparse_cuda

#endif  // TENSORKIT_SPARSE_CUDA_SPMM_PLAN_H_
