// Internal: sparse compute on a CUDA device, behind a header with no CUDA include so that the
// sparse sources compile the same with and without CUDA. Implemented in cuda/*.cu, or in
// no_gpu/compute_stub.cc (throwing "built without CUDA"). Callers have checked every operand.
//
// Glossary
//   CsrOperand    device CSR arrays (contiguous int64 ptr [rows + 1] and minor [nnz], values
//                 [nnz]); a CSC matrix passes as the CSR matrix of its transpose.
//   DenseOperand  a device dense matrix [rows, cols] in a layout of spmm_plan.h that fits.
#ifndef TENSORKIT_SPARSE_CUDA_COMPUTE_H_
#define TENSORKIT_SPARSE_CUDA_COMPUTE_H_

#include <cstdint>

#include "tensorkit/common/dtype.h"
#include "tensorkit/common/scalar.h"
#include "tensorkit/dense/tensor.h"
#include "tensorkit/sparse/cuda/spmm_plan.h"

namespace tensorkit::sparse_cuda {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// Value dtypes of cuSPARSE's generic products (the 16-bit floats compute in float32).
inline constexpr DTypeSet kCusparseDTypes =
    Bit(DType::kFloat32) | Bit(DType::kFloat64) | Bit(DType::kFloat16) | Bit(DType::kBFloat16);

struct CsrOperand {
  const int64_t* ptr = nullptr;
  const int64_t* minor = nullptr;
  const void* values = nullptr;
  int64_t rows = 0, cols = 0, nnz = 0;
};

struct DenseOperand {
  void* data = nullptr;
  int64_t rows = 0, cols = 0;
  DenseLayout layout;
};

// c = alpha * (a @ b) + beta * c on `device`'s current stream (nnz > 0, every dim > 0). With
// `vector`, b and c are contiguous vectors (cusparseSpMV), else matrices (cusparseSpMM).
void Spmm(const char* op, DType dtype, const CsrOperand& a, const DenseOperand& b,
          const DenseOperand& c, bool vector, Scalar alpha, Scalar beta, int device);

// Device CSR arrays: ptr [rows + 1], minor [nnz] and values [nnz], contiguous.
struct CsrArrays {
  Tensor ptr, minor, values;
};

// Every count and dim of a cuSPARSE SpGEMM operand or result stays below this (its 32-bit
// indices).
inline constexpr int64_t kSpgemmIndexLimit = int64_t{1} << 31;

// a @ b with cusparseSpGEMM on the operands' device: a [rows, a_cols] and b [a_cols, b_cols]
// with int32 ptr and minor (the index type its CSR operands take), nnz > 0 each, dims and counts
// below kSpgemmIndexLimit; returns new int32 arrays (column order within rows as cuSPARSE gives
// it). Throws kUnsupported when the result would reach kSpgemmIndexLimit entries.
CsrArrays Spgemm(const char* op, const CsrArrays& a, int64_t a_cols, const CsrArrays& b,
                 int64_t b_cols);

// The [nnz, 2] int64 rows (BatchKeys) of the entries of batched int64 indices [nnz, 3] (any
// strides) whose indices are inside [batches, m, k]; a new tensor on the same device.
Tensor BatchKeyRows(const Tensor& indices, int64_t m, int64_t k, bool block_diagonal,
                    const char* op);

}  // namespace tensorkit::sparse_cuda

#endif  // TENSORKIT_SPARSE_CUDA_COMPUTE_H_
