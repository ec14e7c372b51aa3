// tensorkit/sparse/internal.h: helpers shared by the sparse sources (not part of the public API).
//
// Glossary
//   host rows   indices as a contiguous int64 array on the CPU: row i is idx[i*rank .. +rank).
//   permutation positions of entries in their new sequence: entry perm[i] moves to slot i.
//   head        an entry that starts a run of equal index tuples (or of equal group coordinates).
//   position    the C-order number of an element of a dense pattern.
#ifndef TENSORKIT_SPARSE_INTERNAL_H_
#define TENSORKIT_SPARSE_INTERNAL_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tensorkit/common/parallel.h"
#include "tensorkit/dense/tensor.h"

namespace tensorkit::sparse_internal {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// Fixed chunk size for per-chunk counting passes (independent of the thread count).
inline constexpr int64_t kChunk = 1 << 16;

// A CPU tensor with default strides holding t's elements: t itself when it already is one.
Tensor HostContiguous(const Tensor& t);
// `host` moved to `device` (returned as is for the CPU).
Tensor OnDevice(const Tensor& host, Device device);

// "[3 7]": an index tuple as it appears in messages.
std::string RowString(const int64_t* row, int rank);
// True when p holds every number of 0..n-1 exactly once.
bool IsPermutation(const std::vector<int>& p, int n);

// Position of the first entry outside `shape`, or -1 (a branch-free pass, then a search).
int64_t FirstOutOfBounds(const int64_t* idx, int64_t nnz, const std::vector<int64_t>& shape);
// Throws Error(kOutOfRange): "op: entry i at [..] is out of bounds for shape [..] (axis a: ..)".
[[noreturn]] void ThrowOutOfBounds(const char* op, const int64_t* idx, int64_t entry,
                                   const std::vector<int64_t>& shape);
// Throws the message above for the first entry outside `shape`, if any.
void CheckBounds(const char* op, const int64_t* idx, int64_t nnz,
                 const std::vector<int64_t>& shape);

// The stable permutation that sorts rows lexicographically by the axes in `order` (a
// permutation of all axes). Every index must be within `shape` (check first). Packs each row's
// key with its position into 64 or 128 bits and radix-sorts when they fit; otherwise a parallel
// stable merge sort compares rows. When `sorted_rows` is given (nnz * rank numbers) it receives
// the rows in sorted sequence (decoded from the 64-bit keys, which beats gathering them).
std::vector<int64_t> SortPermutation(const int64_t* idx, int64_t nnz,
                                     const std::vector<int64_t>& shape,
                                     const std::vector<int>& order, int64_t* sorted_rows = nullptr);

// Reorder's and Coalesce's sort: throws Error(kOutOfRange) naming `op` and the first entry
// outside `shape`, else writes the rows sorted stably by `order` to `sorted_rows` (nnz * rank
// numbers, also used as scratch) and returns the contiguous host `values` in the same sequence
// (strings moved when `may_move`). Packs fields into 64-bit words when they fit, else falls back
// to SortPermutation and a gather.
Tensor SortEntries(const char* op, const int64_t* idx, int64_t nnz,
                   const std::vector<int64_t>& shape, const std::vector<int>& order,
                   const Tensor& values, bool may_move, int64_t* sorted_rows);

// Rows perm[0], perm[1], ... of host rows `idx` as a new [perm.size(), rank] tensor.
Tensor GatherRows(const int64_t* idx, int rank, const std::vector<int64_t>& perm);
// Values perm[i] of the contiguous host tensor `values`; strings are moved when `may_move`.
Tensor GatherValues(const Tensor& values, const std::vector<int64_t>& perm, bool may_move);

// True when rows a and b agree on every axis.
inline bool SameRow(const int64_t* a, const int64_t* b, int rank);
// Sign of row x minus row y compared along `order`: -1, 0 or 1, without branches.
inline int CompareRows(const int64_t* x, const int64_t* y, const std::vector<int>& order);

// Positions i in [0, n) with pred(i), ascending; parallel and deterministic.
template <typename Pred>
std::vector<int64_t> SelectPositions(int64_t n, const Pred& pred);

// Calls f(position, memory_index, index) for the elements at C-order positions [begin, end) of
// a pattern with public dims/strides; `index` is the public index tuple of the element.
template <typename F>
void ForEachPosition(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides,
                     int64_t offset, int64_t begin, int64_t end, F&& f);

// ---------------------------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------------------------

inline bool SameRow(const int64_t* a, const int64_t* b, int rank) {
  bool same = true;
  for (int k = 0; k < rank; ++k) same &= a[k] == b[k];
  return same;
}

inline int CompareRows(const int64_t* x, const int64_t* y, const std::vector<int>& order) {
  int cmp = 0;
  for (int a : order) {
    const int here = (x[a] > y[a]) - (x[a] < y[a]);
    cmp = cmp != 0 ? cmp : here;
  }
  return cmp;
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

}  // namespace tensorkit::sparse_internal

#endif  // TENSORKIT_SPARSE_INTERNAL_H_
