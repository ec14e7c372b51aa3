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
// Note [fast pass, slow pass]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Validation is cheap only when the common case (everything valid) costs one branch-free read:
// each fixed chunk of entries ORs a branch-free test over its entries (unsigned compares for
// bounds, a three-way compare for order), and only when some chunk fails does a serial pass
// search that chunk for the first failing entry, which the message names. FirstWhere is the
// pattern; FirstFailure is the same for passes that do other work while they read (packing
// keys, computing destinations). Chunks are fixed, so the answer never depends on threads.
#ifndef TENSORKIT_SPARSE_INTERNAL_H_
#define TENSORKIT_SPARSE_INTERNAL_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "tensorkit/common/parallel.h"
#include "tensorkit/common/wrap.h"
#include "tensorkit/dense/tensor.h"
#include "tensorkit/sparse/compressed.h"
#include "tensorkit/sparse/keys.h"
#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit::sparse_internal {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// --- Chunks and validation (Note [fast pass, slow pass]) --------------------------------------

// Fixed chunk size for per-chunk passes (independent of the thread count).
inline constexpr int64_t kChunk = 1 << 16;

// The first i in [0, n) with bad(i), or -1. bad should be branch-free; chunks of `chunk` items
// stop early (per block) once they or an earlier chunk have failed.
template <typename Bad>
int64_t FirstWhere(int64_t n, const Bad& bad, int64_t chunk = kChunk);
// The same when the fast pass is chunk_ok(b, e), which returns false when some entry of [b, e)
// fails (and may do other work as it reads them); bad(i) then finds the entry.
template <typename ChunkOk, typename Bad>
int64_t FirstFailure(int64_t n, const ChunkOk& chunk_ok, const Bad& bad);

// --- Tensors and devices ---------------------------------------------------------------------

// The one device predicate of sparse/ (Note [device choice] in device_ops.h): true when the
// operand lives on a CUDA device, so that an operation runs its sparse_cuda body. A SparseTensor
// or matrix is on its values' device; a default-constructed one counts as on the CPU, whose body
// then throws the "empty" error.
inline bool OnCuda(Device d) { return d.is_cuda(); }
inline bool OnCuda(const Tensor& t) { return OnCuda(t.device()); }
inline bool OnCuda(const SparseTensor& st) { return OnCuda(st.device()); }
inline bool OnCuda(const CsrMatrix& m) { return OnCuda(m.device()); }
// A CPU tensor with default strides holding t's elements: t itself when it already is one.
Tensor HostContiguous(const Tensor& t);
// t with default strides on its own device: t itself when it already has them.
Tensor Contiguous(const Tensor& t);
// Throws Error naming `op` for a default-constructed SparseTensor.
void CheckCreated(const SparseTensor& st, const char* op);
void CheckCreated(const CsrMatrix& m, const char* op);
void CheckCreated(const CscMatrix& m, const char* op);
// Throws Error (kDeviceMismatch) naming `op`, both operands (a_name, b_name), their devices and
// the fix unless they are on one device.
void CheckSameDevice(Device a, Device b, const char* op, const char* a_name = "a",
                     const char* b_name = "b");
// Throws Error naming `op` unless the matrix was created and is on the CPU (col_indices32, a
// host array).
void CheckOnCpu(const CsrMatrix& m, const char* op);

// --- Index rows -------------------------------------------------------------------------------

// "[3 7]": an index tuple as it appears in messages.
std::string RowString(const int64_t* row, int rank);
// True when p holds every number of 0..n-1 exactly once.
bool IsPermutation(const std::vector<int>& p, int n);
// 0..n-1.
std::vector<int> Iota(int n);
// Calls f.template operator()<R>() with R the rank when it is 1, 2 or 3 (loops over the axes
// then unroll into branch-free code), else with R = 0 (any rank); returns what f returns.
template <typename F>
decltype(auto) WithRank(int rank, const F& f);

// True when rows a and b agree on every axis (keys.h, shared with the CUDA kernels).
using sparse_keys::SameRow;
// Sign of row x minus row y compared along `order`: -1, 0 or 1, without branches.
inline int CompareRows(const int64_t* x, const int64_t* y, const std::vector<int>& order);

// Bounds: the one check and the one message for an entry outside the shape.
// True when some axis of `row` lies outside `shape` (keys.h, shared with the CUDA kernels).
using sparse_keys::OutOfBounds;
// Position of the first entry of host rows `idx` outside `shape`, or -1.
int64_t FirstOutOfBounds(const int64_t* idx, int64_t nnz, const std::vector<int64_t>& shape);
// Throws Error(kOutOfRange): "op: entry i at [..] is out of bounds for shape [..] (axis a: ..)".
[[noreturn]] void ThrowOutOfBounds(const char* op, const int64_t* idx, int64_t entry,
                                   const std::vector<int64_t>& shape);
// The same message for entry `entry` whose index tuple is `row` (fetched from a device).
[[noreturn]] void ThrowOutOfBoundsRow(const char* op, const int64_t* row, int64_t entry,
                                      const std::vector<int64_t>& shape);
// Throws the message above for the first entry outside `shape`, if any.
void CheckBounds(const char* op, const int64_t* idx, int64_t nnz,
                 const std::vector<int64_t>& shape);
// CheckCreated, then CheckBounds on st's (CPU) indices (any strides).
void CheckIndexBounds(const SparseTensor& st, const char* op);
// The messages of ValidateIndices, the same for the CPU and the device: entry `entry` (at `row`)
// repeats entry `earlier`; entry i (at `here`) is not after entry i - 1 (at `prev`) in `order`.
[[noreturn]] void ThrowRepeat(const char* op, int64_t entry, const int64_t* row, int rank,
                              int64_t earlier);
[[noreturn]] void ThrowUnordered(const char* op, int64_t i, const int64_t* here,
                                 const int64_t* prev, const std::vector<int>& order);

// Sortedness: the first entry i > 0 of host rows that is not after entry i - 1 in `order`
// (strictly after when `strict`, so that a repeat also counts), or -1.
int64_t FirstUnordered(const int64_t* rows, int64_t n, int rank, const std::vector<int>& order,
                       bool strict);
// Bounds and sortedness in one pass: the first entry i of host rows that lies outside `shape`
// or (i > 0) is not after entry i - 1 in `order` (strictly when `strict`), or -1. Entries are
// judged in sequence, as TensorFlow's IndicesValid judges them.
int64_t FirstInvalid(const int64_t* rows, int64_t n, const std::vector<int64_t>& shape,
                     const std::vector<int>& order, bool strict);

// --- Sorting ----------------------------------------------------------------------------------

// The one stable sort of entries: the permutation that sorts host rows lexicographically by the
// axes in `order` (a permutation of all axes). Every index must be within `shape` (check
// first). Packs each row's key with its position into 64 or 128 bits and radix-sorts when they
// fit; otherwise a parallel stable merge sort compares rows. When `sorted_rows` is given
// (nnz * rank numbers) it receives the rows in sorted sequence.
std::vector<int64_t> SortPermutation(const int64_t* idx, int64_t nnz,
                                     const std::vector<int64_t>& shape,
                                     const std::vector<int>& order, int64_t* sorted_rows = nullptr);

// Reorder's and Coalesce's sort: throws Error(kOutOfRange) naming `op` and the first entry
// outside `shape`, else writes the rows sorted stably by `order` to `sorted_rows` (nnz * rank
// numbers, also used as scratch) and returns the contiguous host `values` in the same sequence
// (strings moved when `may_move`). Packs fields into 64-bit words when they fit (the same radix
// passes as SortPermutation), else falls back to SortPermutation and a gather.
Tensor SortEntries(const char* op, const int64_t* idx, int64_t nnz,
                   const std::vector<int64_t>& shape, const std::vector<int>& order,
                   const Tensor& values, bool may_move, int64_t* sorted_rows);

// Sorts the minor keys of every slice [ptr[r], ptr[r+1]) stably, moving the values along (T the
// values' CType); slices already sorted are left alone.
template <typename T>
void SortSlices(const int64_t* ptr, int64_t num_slices, int64_t* minor, T* values);

// --- Gathers ----------------------------------------------------------------------------------

// Rows perm[0], ..., perm[n-1] of host rows `idx` as a new [n, rank] tensor.
Tensor GatherRows(const int64_t* idx, int rank, const int64_t* perm, int64_t n);
// values[perm[i]] for i < n as a new [n] tensor; `values` is a CPU [nnz] tensor of any strides
// and dtype; strings are moved when `may_move`.
Tensor GatherValues(const Tensor& values, const int64_t* perm, int64_t n, bool may_move = false);

// Positions i in [0, n) with pred(i), ascending; parallel and deterministic.
template <typename Pred>
std::vector<int64_t> SelectPositions(int64_t n, const Pred& pred);

// Calls f(position, memory_index, index) for the elements at C-order positions [begin, end) of
// a pattern with public dims/strides; `index` is the public index tuple of the element.
template <typename F>
void ForEachPosition(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides,
                     int64_t offset, int64_t begin, int64_t end, F&& f);

// --- Compression (CSR/CSC, grouping by output position) --------------------------------------

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
// values are shared. Without `sort_minor` the slices keep their entries in input order (for a
// caller that orders them itself).
Compressed Compress(KeyView major, KeyView minor, int64_t nnz, int64_t num_major,
                    const Tensor& values, bool sort_minor = true);
// ptr[r] = the first position whose major key is >= r (ptr[num_major] = nnz), for entries
// sorted by major key, every key in [0, num_major): Compress's fast path, JaggedTensor::FromSparse.
void FillPtrFromSorted(KeyView major, int64_t nnz, int64_t num_major, int64_t* ptr);
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

template <typename Bad>
int64_t FirstWhere(int64_t n, const Bad& bad, int64_t chunk) {
  chunk = std::max<int64_t>(chunk, 1);
  const int64_t block = std::max<int64_t>(chunk / 64, 1);  // tests between looks at the exit
  const int64_t num_chunks = NumChunks(n, chunk);
  std::atomic<int64_t> first_bad_chunk{num_chunks};
  ParallelChunks(n, chunk, [&](int64_t c, int64_t b, int64_t e) {
    for (int64_t s = b; s < e; s += block) {
      if (first_bad_chunk.load(std::memory_order_relaxed) < c) return;  // an earlier one failed
      bool any = false;
      for (int64_t i = s; i < std::min(e, s + block); ++i) any |= bad(i);
      if (!any) continue;
      int64_t seen = first_bad_chunk.load(std::memory_order_relaxed);
      while (c < seen && !first_bad_chunk.compare_exchange_weak(seen, c)) {
      }
      return;
    }
  });
  const int64_t c = first_bad_chunk.load();
  for (int64_t i = c * chunk; i < std::min(n, (c + 1) * chunk); ++i) {
    if (bad(i)) return i;
  }
  return -1;
}

template <typename ChunkOk, typename Bad>
int64_t FirstFailure(int64_t n, const ChunkOk& chunk_ok, const Bad& bad) {
  const int64_t num_chunks = NumChunks(n, kChunk);
  std::unique_ptr<uint8_t[]> failed(new uint8_t[static_cast<size_t>(num_chunks) + 1]);
  ParallelChunks(n, kChunk,
                 [&](int64_t c, int64_t b, int64_t e) { failed[c] = chunk_ok(b, e) ? 0 : 1; });
  for (int64_t c = 0; c < num_chunks; ++c) {
    if (!failed[c]) continue;
    for (int64_t i = c * kChunk; i < std::min(n, (c + 1) * kChunk); ++i) {
      if (bad(i)) return i;
    }
  }
  return -1;
}

inline int CompareRows(const int64_t* x, const int64_t* y, const std::vector<int>& order) {
  return sparse_keys::CompareRowsIn(x, y, order.data(), static_cast<int>(order.size()));
}

template <typename Pred>
std::vector<int64_t> SelectPositions(int64_t n, const Pred& pred) {
  // pred runs once per position: its verdicts go to a byte array that the fill pass rereads.
  const int64_t num_chunks = NumChunks(n, kChunk);
  std::unique_ptr<uint8_t[]> keep(new uint8_t[static_cast<size_t>(std::max<int64_t>(n, 1))]);
  std::vector<int64_t> starts(static_cast<size_t>(num_chunks) + 1, 0);
  ParallelChunks(n, kChunk, [&](int64_t c, int64_t b, int64_t e) {
    int64_t k = 0;
    for (int64_t i = b; i < e; ++i) {
      const bool p = pred(i);
      keep[i] = p;
      k += p;
    }
    starts[c + 1] = k;
  });
  for (int64_t c = 0; c < num_chunks; ++c) starts[c + 1] += starts[c];
  std::vector<int64_t> out(static_cast<size_t>(starts[num_chunks]));
  ParallelChunks(n, kChunk, [&](int64_t c, int64_t b, int64_t e) {
    int64_t k = starts[c];
    for (int64_t i = b; i < e; ++i) {
      if (keep[i]) out[k++] = i;
    }
  });
  return out;
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

template <typename F>
decltype(auto) WithRank(int rank, const F& f) {
  switch (rank) {
    case 1:
      return f.template operator()<1>();
    case 2:
      return f.template operator()<2>();
    case 3:
      return f.template operator()<3>();
    default:
      return f.template operator()<0>();
  }
}

}  // namespace tensorkit::sparse_internal

#endif  // TENSORKIT_SPARSE_INTERNAL_H_
