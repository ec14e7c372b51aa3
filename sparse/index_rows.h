// tensorkit/sparse/index_rows.h: the index-row primitives sparse/ offers its sibling modules
// (features/ builds its COO inputs and outputs on them); not part of the public API, but a
// declared interface: sparse/ may change anything behind it, nothing in it without its users.
// sparse/'s own sources reach the same functions through internal.h.
//
// Glossary
//   rows        an int64 [n, rank] Tensor, on the CPU or a CUDA device: row i is the index tuple
//               of entry i. The functions taking such a Tensor choose the device themselves
//               (OnCuda of common/device.h) and give the same answers and messages on both.
//   host rows   indices as a contiguous int64 array on the CPU: row i is idx[i*rank .. +rank).
//   order       a permutation of all axes: rows sorted by order[0] first, then order[1], ...
//   key view    one int64 key per entry read through a stride (KeyView).
//   pointers    ptr [num + 1] of entries sorted by a key in [0, num): ptr[k] = the first entry
//               whose key is >= k (ptr[num] = n), as a compressed matrix's row pointers.
//
// Messages: bounds, order and repeat errors are written here once, for the CPU and the device,
// and name `op` (the caller's operation), the entry and its index tuple.
#ifndef TENSORKIT_SPARSE_INDEX_ROWS_H_
#define TENSORKIT_SPARSE_INDEX_ROWS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tensorkit/common/parallel.h"
#include "tensorkit/dense/tensor.h"
#include "tensorkit/sparse/keys.h"
#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit::sparse_rows {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// --- Index tuples -----------------------------------------------------------------------------

// "[3 7]": an index tuple as it appears in messages.
std::string RowString(const int64_t* row, int rank);
// 0..n-1.
std::vector<int> Iota(int n);
// Calls f.template operator()<R>() with R the rank when it is 1, 2 or 3 (loops over the axes
// then unroll into branch-free code), else with R = 0 (any rank); returns what f returns.
template <typename F>
decltype(auto) WithRank(int rank, const F& f);
// True when rows a and b agree on every axis (keys.h, shared with the CUDA kernels).
using sparse_keys::SameRow;
// Throws Error naming `op` for a default-constructed SparseTensor.
void CheckCreated(const SparseTensor& st, const char* op);

// --- Bounds: the one check and the one message for an entry outside the shape ---------------

// True when some axis of `row` lies outside `shape` (keys.h, shared with the CUDA kernels).
using sparse_keys::OutOfBounds;
// Position of the first entry of host rows `idx` outside `shape`, or -1.
int64_t FirstOutOfBounds(const int64_t* idx, int64_t nnz, const std::vector<int64_t>& shape);
// The same for rows on any device; the entry's row is fetched into *row.
int64_t FirstOutOfBounds(const Tensor& idx, const std::vector<int64_t>& shape,
                         std::vector<int64_t>* row);
// Throws Error(kOutOfRange): "op: entry i at [..] is out of bounds for shape [..] (axis a: ..)".
[[noreturn]] void ThrowOutOfBounds(const char* op, const int64_t* idx, int64_t entry,
                                   const std::vector<int64_t>& shape);
// The same message for entry `entry` whose index tuple is `row` (fetched from a device).
[[noreturn]] void ThrowOutOfBoundsRow(const char* op, const int64_t* row, int64_t entry,
                                      const std::vector<int64_t>& shape);
// Throws the message above for the first entry outside `shape`, if any.
void CheckBounds(const char* op, const int64_t* idx, int64_t nnz,
                 const std::vector<int64_t>& shape);
// The same for rows on any device (on a CUDA device only the bad entry is fetched).
void CheckBounds(const char* op, const Tensor& idx, const std::vector<int64_t>& shape);
// CheckCreated, then CheckBounds on st's (CPU) indices (any strides).
void CheckIndexBounds(const SparseTensor& st, const char* op);

// --- Order and repeats ------------------------------------------------------------------------

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
// The same for rows on any device; rows i - 1 and i are fetched into *rows (2 * rank numbers).
int64_t FirstUnordered(const Tensor& idx, const std::vector<int>& order, bool strict,
                       std::vector<int64_t>* rows);
// Bounds and sortedness in one pass: the first entry i of host rows that lies outside `shape`
// or (i > 0) is not after entry i - 1 in `order` (strictly when `strict`), or -1. Entries are
// judged in sequence, as TensorFlow's IndicesValid judges them.
int64_t FirstInvalid(const int64_t* rows, int64_t n, const std::vector<int64_t>& shape,
                     const std::vector<int>& order, bool strict);

// --- Sorting ----------------------------------------------------------------------------------

// The one stable sort of entries: the permutation that sorts host rows lexicographically by the
// axes in `order`. Every index must be within `shape` (check first). Packs each row's key with
// its position into 64 or 128 bits and radix-sorts when they fit; otherwise a parallel stable
// merge sort compares rows. When `sorted_rows` is given (nnz * rank numbers) it receives the rows
// in sorted sequence.
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
// The stable sort of rows inside `shape` (checked) by `order` on their device: new rows and
// contiguous values (`values` [n], any dtype the device sorts: numeric on a CUDA device).
void SortEntries(const Tensor& idx, const Tensor& values, const std::vector<int64_t>& shape,
                 const std::vector<int>& order, Tensor* sorted_idx, Tensor* sorted_values);
// Sorts the minor keys of every slice [ptr[r], ptr[r+1]) stably, moving the values along (T the
// values' CType); slices already sorted are left alone.
template <typename T>
void SortSlices(const int64_t* ptr, int64_t num_slices, int64_t* minor, T* values);

// --- Selection and compression ----------------------------------------------------------------

// Positions i in [0, n) with pred(i), ascending; parallel and deterministic.
template <typename Pred>
std::vector<int64_t> SelectPositions(int64_t n, const Pred& pred);

// A strided view of one int64 key per entry: key of entry e is data[e * stride].
struct KeyView {
  const int64_t* data = nullptr;
  int64_t stride = 1;
  int64_t operator[](int64_t e) const { return data[e * stride]; }
};
// The arrays of a compressed matrix: ptr [num_major+1], minor [nnz], values [nnz].
struct Compressed {
  Tensor ptr, minor, values;
};
// Compresses nnz entries by major key (in [0, num_major)), minor keys sorted within each major
// slice, stable. Keys must already be in range. `values` is [nnz] of any dtype and strides.
// When the entries are already sorted by (major, minor), no sorting happens and contiguous
// values are shared. Without `sort_minor` the slices keep their entries in input order (for a
// caller that orders them itself).
Compressed Compress(KeyView major, KeyView minor, int64_t nnz, int64_t num_major,
                    const Tensor& values, bool sort_minor = true);
// The pointers of host entries sorted by major key, every key in [0, num_major), into
// ptr [num_major + 1]: Compress's fast path, JaggedTensor::FromSparse.
void FillPtrFromSorted(KeyView major, int64_t nnz, int64_t num_major, int64_t* ptr);
// The pointers of rows (any device) sorted by column `axis`, indices on it in [0, num): a new
// int64 [num + 1] tensor on the rows' device.
Tensor RunPointers(const Tensor& idx, int axis, int64_t num);

// ---------------------------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------------------------

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

}  // namespace tensorkit::sparse_rows

#endif  // TENSORKIT_SPARSE_INDEX_ROWS_H_
