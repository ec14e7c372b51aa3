// tensorkit/sparse/compressed.h: compressed sparse row (CSR) and column (CSC) matrices.
//
// Glossary
//   CSR        a 2-D sparse matrix [M, N] as row_ptr (int64 [M+1]), col_indices (int64 [nnz])
//              and values ([nnz], any dtype): the entries of row r sit at positions
//              [row_ptr[r], row_ptr[r+1]) of col_indices and values.
//   CSC        the same by columns: col_ptr [N+1], row_indices [nnz], values [nnz].
//   major      the compressed axis (rows for CSR, columns for CSC); minor: the other one. Both
//              classes are one implementation, CompressedMatrix<major axis>.
//   sorted     minor indices are non-decreasing within each major slice. Duplicates (equal
//              minor indices in one slice) are allowed: FromSparse keeps them, in input order,
//              and every product treats them as summed.
//   stable     FromSparse keeps entries with equal (major, minor) in their input order, so the
//              result does not depend on the thread count.
//   The arrays of a CsrMatrix/CscMatrix are contiguous tensors (Create copies strided inputs) on
//   one device; To(device) copies them to another. On a CUDA device every method and product
//   runs there and returns device arrays, except col_indices32 (CPU only). They may share storage
//   with the tensors they were made from.
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
namespace sparse_internal {
CsrMatrix CsrFromSparse(const SparseTensor& st, const char* op);
CsrMatrix WrapCsr(Tensor ptr, Tensor col, Tensor values, int64_t rows, int64_t cols);
}  // namespace sparse_internal

namespace compressed_detail {

// A 2-D sparse matrix compressed along axis kMajor (0: CSR, 1: CSC); Self is the public class.
template <int kMajor>
class CompressedMatrix {
 public:
  using Self = std::conditional_t<kMajor == 0, CsrMatrix, CscMatrix>;
  // The same matrix compressed along the other axis.
  using Other = std::conditional_t<kMajor == 0, CscMatrix, CsrMatrix>;

  // Wraps int64 ptr [major dim + 1], int64 minor indices [nnz] and values [nnz] (CSR: row_ptr,
  // col_indices; CSC: col_ptr, row_indices) and calls Validate(). Strided arrays are copied to
  // contiguous ones. The arrays live on one device, where the matrix then stays.
  static Self Create(Tensor ptr, Tensor minor_indices, Tensor values, std::vector<int64_t> shape);
  // From a 2-D SparseTensor in any order (stable; see the glossary). Checks index bounds.
  static Self FromSparse(const SparseTensor& st);

  // COO in order {major, minor} (CSR: {0, 1}; CSC: {1, 0}); values are shared, indices new.
  SparseTensor ToSparse() const;
  // ptr[0] == 0, non-decreasing, ptr[major dim] == nnz, minor indices in range and sorted
  // within slices; throws Error naming the slice and position of the first violation.
  void Validate() const;
  // A copy with every array on `device` (Tensor::To of each).
  Self To(Device device) const;

  const Tensor& values() const { return values_; }
  std::vector<int64_t> shape() const { return {rows_, cols_}; }
  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  int64_t nnz() const { return minor_.defined() ? minor_.Dim(0) : 0; }
  DType dtype() const { return values_.dtype(); }
  Device device() const { return values_.device(); }

 protected:
  // The matrix made of arrays already known to be valid.
  static Self Wrap(Tensor ptr, Tensor minor, Tensor values, int64_t rows, int64_t cols);
  // Entries per major slice: int64 [major dim].
  Tensor SliceNnz(const char* op) const;
  // The matrix compressed along the other axis.
  Other Recompress(const char* op) const;

  Tensor ptr_, minor_, values_;
  int64_t rows_ = 0, cols_ = 0;

  friend CsrMatrix sparse_internal::CsrFromSparse(const SparseTensor& st, const char* op);
  friend CsrMatrix sparse_internal::WrapCsr(Tensor ptr, Tensor col, Tensor values, int64_t rows,
                                            int64_t cols);
};

}  // namespace compressed_detail

class CsrMatrix : public compressed_detail::CompressedMatrix<0> {
 public:
  CsrMatrix() = default;
  // Create(row_ptr, col_indices, values, shape), FromSparse, ToSparse, Validate, To: see
  // CompressedMatrix.

  // The same matrix compressed by columns.
  CscMatrix ToCsc() const;
  // Number of stored entries per row: int64 [M].
  Tensor RowNnz() const;
  // col_indices as int32 (built on first use, then shared by every copy of this handle), or
  // nullptr when cols() > INT32_MAX. The products read it: 4 bytes less per entry to stream.
  const int32_t* col_indices32() const;

  const Tensor& row_ptr() const { return ptr_; }
  const Tensor& col_indices() const { return minor_; }

 private:
  struct Narrow {
    std::once_flag once;
    Tensor cols;
  };
  std::shared_ptr<Narrow> narrow_ = std::make_shared<Narrow>();
};

class CscMatrix : public compressed_detail::CompressedMatrix<1> {
 public:
  CscMatrix() = default;
  // Create(col_ptr, row_indices, values, shape), FromSparse, ToSparse, Validate, To: see
  // CompressedMatrix.

  // The same matrix compressed by rows.
  CsrMatrix ToCsr() const;
  // Number of stored entries per column: int64 [N].
  Tensor ColNnz() const;

  const Tensor& col_ptr() const { return ptr_; }
  const Tensor& row_indices() const { return minor_; }
};

}  // namespace tensorkit

#endif  // TENSORKIT_SPARSE_COMPRESSED_H_
