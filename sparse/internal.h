// tensorkit/sparse/internal.h: the one set of sparse primitives (not part of the public API).
// Every sparse source uses these; sparse/README.md lists where each is defined.
//
// Glossary
//   host rows   indices as a contiguous int64 array on the CPU: row i is idx[i*rank .. +rank).
//   permutation positions of entries in their new sequence: entry perm[i] moves to slot i.
//   head        an entry that starts a run of equal index tuples (or of equal group coordinates).
//   position    the C-order number of an element of a dense pattern.
//   compressed  entries grouped by a major key: ptr [num_major + 1] delimits each key's slice of
//               the minor keys and values (CSR: major = row; CSC: major = column).
//
// Validation scans follow Note [fast pass, slow pass] (common/parallel.h). The index-row
// primitives that features/ shares are declared in index_rows.h (namespace sparse_rows) and
// brought in below, so that sparse/ names them as before.
#ifndef TENSORKIT_SPARSE_INTERNAL_H_
#define TENSORKIT_SPARSE_INTERNAL_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "tensorkit/common/parallel.h"
#include "tensorkit/common/wrap.h"
#include "tensorkit/dense/tensor.h"
#include "tensorkit/sparse/compressed.h"
#include "tensorkit/sparse/index_rows.h"
#include "tensorkit/sparse/keys.h"
#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit::sparse_internal {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// --- From index_rows.h ------------------------------------------------------------------------

using sparse_rows::CheckBounds;
using sparse_rows::CheckCreated;
using sparse_rows::CheckIndexBounds;
using sparse_rows::Compress;
using sparse_rows::Compressed;
using sparse_rows::FillPtrFromSorted;
using sparse_rows::FirstInvalid;
using sparse_rows::FirstOutOfBounds;
using sparse_rows::FirstUnordered;
using sparse_rows::Iota;
using sparse_rows::KeyView;
using sparse_rows::OutOfBounds;
using sparse_rows::RowString;
using sparse_rows::SameRow;
using sparse_rows::SelectPositions;
using sparse_rows::SortEntries;
using sparse_rows::SortPermutation;
using sparse_rows::SortSlices;
using sparse_rows::ThrowOutOfBounds;
using sparse_rows::ThrowOutOfBoundsRow;
using sparse_rows::ThrowRepeat;
using sparse_rows::ThrowUnordered;
using sparse_rows::WithRank;

// --- Tensors and devices ---------------------------------------------------------------------

// Throws Error naming `op` for a default-constructed matrix (a SparseTensor: index_rows.h).
void CheckCreated(const CsrMatrix& m, const char* op);
void CheckCreated(const CscMatrix& m, const char* op);
// Throws Error naming `op` unless the matrix was created and is on the CPU (col_indices32, a
// host array).
void CheckOnCpu(const CsrMatrix& m, const char* op);

// --- Index rows -------------------------------------------------------------------------------

// True when p holds every number of 0..n-1 exactly once.
bool IsPermutation(const std::vector<int>& p, int n);
// Sign of row x minus row y compared along `order`: -1, 0 or 1, without branches.
inline int CompareRows(const int64_t* x, const int64_t* y, const std::vector<int>& order);

// --- Gathers ----------------------------------------------------------------------------------

// Rows perm[0], ..., perm[n-1] of host rows `idx` as a new [n, rank] tensor.
Tensor GatherRows(const int64_t* idx, int rank, const int64_t* perm, int64_t n);
// values[perm[i]] for i < n as a new [n] tensor; `values` is a CPU [nnz] tensor of any strides
// and dtype; strings are moved when `may_move`.
Tensor GatherValues(const Tensor& values, const int64_t* perm, int64_t n, bool may_move = false);

// Calls f(position, memory_index, index) for the elements at C-order positions [begin, end) of
// a pattern with public dims/strides; `index` is the public index tuple of the element.
template <typename F>
void ForEachPosition(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides,
                     int64_t offset, int64_t begin, int64_t end, F&& f);

// --- Compression (CSR/CSC, grouping by output position) --------------------------------------

// Compresses a 2-D SparseTensor by `major_axis` (0: CSR, 1: CSC), as FromSparse does, on the
// tensor's device; errors name `op`.
Compressed CompressSparse(const SparseTensor& st, int major_axis, const char* op);
// The messages of a compressed matrix's minor-index checks, the same for the CPU and the
// device: entry p (in slice r) holds `value` outside [0, num_minor), or `value` below the `prev`
// at p - 1.
[[noreturn]] void ThrowMinorOutside(const char* op, const char* major_name, const char* minor_name,
                                    int64_t value, int64_t p, int64_t r, int64_t num_minor);
[[noreturn]] void ThrowMinorUnsorted(const char* op, const char* major_name, const char* minor_name,
                                     int64_t prev, int64_t value, int64_t p, int64_t r);
// The pointer checks of Validate on host pointers ptr [num_major + 1] for nnz minor indices:
// ptr[0] == 0, ptr[num_major] == nnz, non-decreasing.
void CheckCompressedPointers(const int64_t* ptr, int64_t num_major, int64_t nnz, const char* op,
                             const char* major_name, const char* minor_name);
// CsrMatrix::FromSparse with errors naming `op` (for operations that take SparseTensors).
CsrMatrix CsrFromSparse(const SparseTensor& st, const char* op);
// The CSR matrix of arrays the caller built valid (no Validate pass): int64 row_ptr and col on
// the values' device.
CsrMatrix WrapCsr(Tensor ptr, Tensor col, Tensor values, int64_t rows, int64_t cols);

// --- Checks shared by the CPU and CUDA bodies of the compute operations ----------------------

// Value dtypes the sparse-dense products accept: every numeric dtype but bool.
inline constexpr DTypeSet kProductDTypes = kNumericDTypes & ~Bit(DType::kBool);
// The operands of a sparse-dense product (products.cc): b [K] / [K, N] (`batched`: [B, K, N] /
// [K, N]) and c against a sparse [batches *] m x k operand of `dtype` on `device`, whose
// executor multiplies the value dtypes `dtypes` (kProductDTypes on the CPU); returns n, the
// columns of b and c (1 for vectors).
int64_t CheckSparseDense(const char* op, DType dtype, DTypeSet dtypes, Device device, bool batched,
                         int64_t batches, int64_t m, int64_t k, const Tensor& b, const Tensor* c);
// The same for dense a @ sparse b ([k, n], `b_dtype`, on `device`) into c; true when a is a
// vector [K] (c then [N]).
bool CheckDenseSparse(const char* op, const Tensor& a, DType b_dtype, DTypeSet dtypes,
                      Device device, int64_t k, int64_t n, const Tensor* c);

// Value dtypes of the reductions: every numeric dtype but bool.
inline constexpr DTypeSet kReduceDTypes = kNumericDTypes & ~Bit(DType::kBool);
// Which axes a reduction (reduce.cc) reduces, and the sizes of the kept and reduced index spaces.
struct ReducePlan {
  std::vector<bool> reduced;       // by axis
  std::vector<int64_t> out_shape;  // kept dims, in order
  int64_t out_size = 1;            // product of kept dims (valid when !out_overflow)
  int64_t slice_size = 1;          // product of reduced dims (valid when !slice_overflow)
  bool out_overflow = false, slice_overflow = false;
};
// The plan of reducing st over `axes` (normalised; a repeated axis is an Error naming `op`).
ReducePlan MakePlan(const SparseTensor& st, std::vector<int> axes, const char* op);
// Throws Error naming `op` unless every slice of a dense max (`max`) or min is non-empty and
// countable.
void CheckExtremeSlices(const SparseTensor& st, const ReducePlan& plan, bool max, const char* op);
// Throws Error naming `op` unless the kept axes (and, with `by_position`, the reduced axes) of a
// reduction to a SparseTensor can be numbered in int64.
void CheckSparseReduction(const SparseTensor& st, const ReducePlan& plan, bool by_position,
                          const char* op);

// --- Arithmetic of the compute files ---------------------------------------------------------

// Value dtypes of the products with sparse results (those GraphBLAS has built-in types for).
inline constexpr DTypeSet kSparseResultDTypes =
    Bit(DType::kBool) | kIntDTypes | Bit(DType::kFloat32) | Bit(DType::kFloat64);
// a @ b through GraphBLAS (spgemm.cc's path for very wide b). Operands already checked.
CsrMatrix GraphBLASProduct(const CsrMatrix& a, const CsrMatrix& b);

// ---------------------------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------------------------

inline int CompareRows(const int64_t* x, const int64_t* y, const std::vector<int>& order) {
  return sparse_keys::CompareRowsIn(x, y, order.data(), static_cast<int>(order.size()));
}

template <typename F>
void ForEachPosition(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides,
                     int64_t offset, int64_t begin, int64_t end, F&& f) {
  const int rank = static_cast<int>(dims.size());
  if (begin >= end) return;
  std::vector<int64_t> index(static_cast<size_t>(rank), 0);
  int64_t mem = offset;
  int64_t rest = begin;
  for (int a = rank - 1; a >= 0; --a) {  // decompose the start position once
    index[a] = rest % dims[a];
    rest /= dims[a];
    mem += index[a] * strides[a];
  }
  for (int64_t pos = begin; pos < end; ++pos) {
    f(pos, mem, index.data());
    for (int a = rank - 1; a >= 0; --a) {  // odometer step, last axis fastest
      if (++index[a] < dims[a]) {
        mem += strides[a];
        break;
      }
      mem -= strides[a] * (dims[a] - 1);
      index[a] = 0;
    }
  }
}

}  // namespace tensorkit::sparse_internal

#endif  // TENSORKIT_SPARSE_INTERNAL_H_
