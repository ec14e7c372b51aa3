// tensorkit/sparse/compressed.h: compressed sparse row (CSR) and column (CSC) matrices.
//
// Glossary
//   CSR        a 2-D sparse matrix [M, N] as row_ptr (int64 [M+1]), col_indices (int64 [nnz])
//              and values ([nnz], any dtype): the entries of row r sit at positions
//              [row_ptr[r], row_ptr[r+1]) of col_indices and values.
//   CSC        the same by columns: col_ptr [N+1], row_indices [nnz], values [nnz].
//   major      the compressed axis (rows for CSR, columns for CSC); minor: the other one.
//   sorted     minor indices are non-decreasing within each major slice. Duplicates (equal
//              minor indices in one slice) are allowed: FromSparse keeps them, in input order,
//              and every product treats them as summed.
//   stable     FromSparse keeps entries with equal (major, minor) in their input order, so the
//              result does not depend on the thread count.
//   The arrays of a CsrMatrix/CscMatrix are contiguous CPU tensors (Create copies strided
//   inputs); they may share storage with the tensors they were made from.
#ifndef TENSORKIT_SPARSE_COMPRESSED_H_
#define TENSORKIT_SPARSE_COMPRESSED_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <type_traits>
#include <vector>

#include "tensorkit/dense/tensor.h"
#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

class CscMatrix;
class CsrMatrix;
namespace compressed_detail {
// CsrMatrix::FromSparse with errors naming `op` (for operations that take SparseTensors).
CsrMatrix CsrFromSparse(const SparseTensor& st, const char* op);
}  // namespace compressed_detail

class CsrMatrix {
 public:
  CsrMatrix() = default;
  // Wraps the three arrays (int64 row_ptr [M+1], int64 col_indices [nnz], values [nnz]) and
  // calls Validate(). Strided arrays are copied to contiguous ones; CPU only.
  static CsrMatrix Create(Tensor row_ptr, Tensor col_indices, Tensor values,
                          std::vector<int64_t> shape);
  // From a 2-D SparseTensor in any order (stable; see the glossary). Checks index bounds.
  static CsrMatrix FromSparse(const SparseTensor& st);

  // COO with order {0, 1}; values are shared, indices are new.
  SparseTensor ToSparse() const;
  // The same matrix compressed by columns.
  CscMatrix ToCsc() const;
  // row_ptr[0] == 0, non-decreasing, row_ptr[M] == nnz, column indices in [0, N) and sorted
  // within rows; throws Error naming the row and position of the first violation.
  void Validate() const;
  // Number of stored entries per row: int64 [M].
  Tensor RowNnz() const;
  // col_indices as int32 (built on first use, then shared by every copy of this handle), or
  // nullptr when cols() > INT32_MAX. The products read it: 4 bytes less per entry to stream.
  const int32_t* col_indices32() const;

  const Tensor& row_ptr() const { return row_ptr_; }
  const Tensor& col_indices() const { return col_indices_; }
  const Tensor& values() const { return values_; }
  std::vector<int64_t> shape() const { return {rows_, cols_}; }
  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  int64_t nnz() const { return col_indices_.defined() ? col_indices_.Dim(0) : 0; }
  DType dtype() const { return values_.dtype(); }

 private:
  friend class CscMatrix;
  friend CsrMatrix compressed_detail::CsrFromSparse(const SparseTensor& st, const char* op);
  struct Narrow {
    std::once_flag once;
    Tensor cols;
  };
  Tensor row_ptr_, col_indices_, values_;
  int64_t rows_ = 0, cols_ = 0;
  std::shared_ptr<Narrow> narrow_ = std::make_shared<Narrow>();
};

class CscMatrix {
 public:
  CscMatrix() = default;
  // Wraps int64 col_ptr [N+1], int64 row_indices [nnz], values [nnz]; calls Validate().
  static CscMatrix Create(Tensor col_ptr, Tensor row_indices, Tensor values,
                          std::vector<int64_t> shape);
  // From a 2-D SparseTensor in any order (stable). Checks index bounds.
  static CscMatrix FromSparse(const SparseTensor& st);

  // COO with order {1, 0} (sorted by column, then row); values are shared.
  SparseTensor ToSparse() const;
  CsrMatrix ToCsr() const;
  // Same checks as CsrMatrix::Validate, by columns.
  void Validate() const;
  // Number of stored entries per column: int64 [N].
  Tensor ColNnz() const;

  const Tensor& col_ptr() const { return col_ptr_; }
  const Tensor& row_indices() const { return row_indices_; }
  const Tensor& values() const { return values_; }
  std::vector<int64_t> shape() const { return {rows_, cols_}; }
  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  int64_t nnz() const { return row_indices_.defined() ? row_indices_.Dim(0) : 0; }
  DType dtype() const { return values_.dtype(); }

 private:
  friend class CsrMatrix;
  Tensor col_ptr_, row_indices_, values_;
  int64_t rows_ = 0, cols_ = 0;
};

// Building blocks shared by the sparse compute files (products, reductions, GraphBLAS glue).
namespace compressed_detail {

// The arrays of a compressed matrix: ptr [num_major+1], minor [nnz], values [nnz].
struct Compressed {
  Tensor ptr, minor, values;
};

// A strided view of one int64 key per entry: key of entry e is data[e * stride].
struct KeyView {
  const int64_t* data = nullptr;
  int64_t stride = 1;
  int64_t operator[](int64_t e) const { return data[e * stride]; }
};

// Compresses nnz entries by major key (in [0, num_major)), minor keys sorted within each major
// slice, stable. Keys must already be in range. `values` is [nnz] of any dtype and strides.
// When the entries are already sorted by (major, minor), no sorting happens and contiguous
// values are shared.
Compressed Compress(KeyView major, KeyView minor, int64_t nnz, int64_t num_major,
                    const Tensor& values);

// Compresses a 2-D SparseTensor by `major_axis` (0: CSR, 1: CSC), as FromSparse does; errors
// name `op`.
Compressed CompressSparse(const SparseTensor& st, int major_axis, const char* op);
// Throws Error naming `op` unless the sparse tensor is on the CPU.
void CheckOnCpu(const SparseTensor& st, const char* op);
// Checks that st is on the CPU and every index lies inside its shape; throws Error
// naming `op`, the entry position and its coordinates.
void CheckIndexBounds(const SparseTensor& st, const char* op);

// A contiguous CPU tensor with the same elements (the tensor itself when already contiguous).
Tensor Contiguous(const Tensor& t);

// Copies values[perm[i]] to out[i] for every i (any dtype; `values` of any strides).
Tensor Gather(const Tensor& values, const int64_t* perm, int64_t n);

// Value dtypes of the products with sparse results (those GraphBLAS has built-in types for).
inline constexpr DTypeSet kSparseResultDTypes =
    Bit(DType::kBool) | kIntDTypes | Bit(DType::kFloat32) | Bit(DType::kFloat64);
// a @ b through GraphBLAS (spgemm.cc's path for very wide b). Operands already checked.
CsrMatrix GraphBLASProduct(const CsrMatrix& a, const CsrMatrix& b);
// Arithmetic of the compute files: integers wrap in uint64 (no signed-overflow UB), floats
// compute in ComputeType (float for the 16-bit floats).
template <typename T>
using Acc = std::conditional_t<std::is_integral_v<T>, uint64_t, ComputeType<T>>;

template <typename T>
inline Acc<T> ToAcc(T v) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<uint64_t>(static_cast<int64_t>(v));
  } else {
    return static_cast<ComputeType<T>>(v);
  }
}

template <typename T>
inline T FromAcc(Acc<T> v) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<int64_t>(v));
  } else {
    return T(v);
  }
}

}  // namespace compressed_detail

}  // namespace tensorkit

#endif  // TENSORKIT_SPARSE_COMPRESSED_H_
