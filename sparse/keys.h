// tensorkit/sparse/keys.h: index-row arithmetic written once for the CPU and for the CUDA
// structural kernels (sparse/cuda/structure.cu); not part of the public API. Includes no CUDA
// header: every function is TK_HOST_DEVICE, so tests/sparse/keys_test.cc runs on the host the
// very arithmetic the kernels run.
//
// Glossary
//   field      the bits of one axis's index in a sort key: BitsBelow(shape[axis]) bits (an axis
//              of dim 1 has none: its index is always 0).
//   key word   a 64-bit word holding whole fields. KeyWords packs the fields from the last order
//              axis upwards into word 0, opening the next word when a field would not fit, so
//              word w + 1 is more significant than word w, and within a word order[0]'s field
//              is the highest. Comparing (word n-1, ..., word 0) compares rows in `order`.
//   head       an entry that differs from its predecessor (entry 0 always is one).
//   position   the C-order number of an element: row (i0, i1, ..) of dims (d0, d1, ..) is at
//              (i0 * d1 + i1) * d2 + ...
#ifndef TENSORKIT_SPARSE_KEYS_H_
#define TENSORKIT_SPARSE_KEYS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tensorkit/common/host_device.h"

namespace tensorkit::sparse_keys {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// True when some axis of `row` lies outside `shape` (unsigned compares, no branches).
TK_HOST_DEVICE inline bool OutOfBounds(const int64_t* row, const int64_t* shape, int rank);
// True when rows a and b agree on every axis.
TK_HOST_DEVICE inline bool SameRow(const int64_t* a, const int64_t* b, int rank);
// Sign of row x minus row y compared along order[0..n): -1, 0 or 1, without branches.
TK_HOST_DEVICE inline int CompareRowsIn(const int64_t* x, const int64_t* y, const int* order,
                                        int n);
// Bits needed to write every number below n (0 for n <= 1).
TK_HOST_DEVICE inline int BitsBelow(uint64_t n);

// Where each axis's field sits among the key words (the Glossary's layout), by axis.
struct KeyWords {
  std::vector<int> word;   // the word holding the axis's field, -1 for a field of no bits
  std::vector<int> shift;  // its lowest bit in that word
  std::vector<int> bits;   // by word: bits in use (a radix sort of word w needs only these)
  int num_words() const { return static_cast<int>(bits.size()); }
};
// The layout for rows inside `shape` sorted by `order` (a permutation of all axes).
inline KeyWords MakeKeyWords(const std::vector<int64_t>& shape, const std::vector<int>& order);
// Key word w of `row` (in bounds); word[a] and shift[a] as in KeyWords.
TK_HOST_DEVICE inline uint64_t PackWord(const int64_t* row, int rank, const int* word,
                                        const int* shift, int w);
// The index of axis a decoded from its word (mask = 2^bits - 1 of the field).
TK_HOST_DEVICE inline int64_t FieldOf(uint64_t word, int shift, uint64_t mask);

// C-order position of `row` (in bounds) in `dims`.
TK_HOST_DEVICE inline int64_t PositionOf(const int64_t* row, const int64_t* dims, int rank);
// The row at C-order position `pos` of `dims` (last axis fastest).
TK_HOST_DEVICE inline void RowAt(int64_t pos, const int64_t* dims, int rank, int64_t* row);
// Memory index of position `pos` in a pattern with public dims/strides and `offset`.
TK_HOST_DEVICE inline int64_t MemoryIndexAt(int64_t pos, const int64_t* dims,
                                            const int64_t* strides, int rank, int64_t offset);
// Whether entry i of n sorted rows starts a run of at least min_run equal rows (min_run <= 1:
// any run), the runs MergeRuns keeps.
TK_HOST_DEVICE inline bool StartsRun(const int64_t* rows, int64_t i, int64_t n, int rank,
                                     int64_t min_run);
// The slice r of compressed pointers ptr [num + 1] (valid: ptr[0] == 0, non-decreasing) that
// holds entry p < ptr[num]: ptr[r] <= p < ptr[r + 1], so empty slices are never the answer.
TK_HOST_DEVICE inline int64_t SliceOf(int64_t p, const int64_t* ptr, int64_t num);

// Blocks for a grid-stride loop (common/host_device.h).
using ::tensorkit::BlocksFor;

// Whether bytes `x` of `size` bytes are zero as the value of a dtype: for floating dtypes
// (`is_float`) +0 and -0 (every bit but the sign clear), else all bits clear. NaN is nonzero.
TK_HOST_DEVICE inline bool BytesAreZero(uint64_t x, int size, bool is_float);

// ---------------------------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------------------------

TK_HOST_DEVICE inline bool OutOfBounds(const int64_t* row, const int64_t* shape, int rank) {
  bool out = false;
  for (int k = 0; k < rank; ++k) {
    out |= static_cast<uint64_t>(row[k]) >= static_cast<uint64_t>(shape[k]);
  }
  return out;
}

TK_HOST_DEVICE inline bool SameRow(const int64_t* a, const int64_t* b, int rank) {
  bool same = true;
  for (int k = 0; k < rank; ++k) same &= a[k] == b[k];
  return same;
}

TK_HOST_DEVICE inline int CompareRowsIn(const int64_t* x, const int64_t* y, const int* order,
                                        int n) {
  int cmp = 0;
  for (int k = 0; k < n; ++k) {
    const int a = order[k];
    const int here = (x[a] > y[a]) - (x[a] < y[a]);
    cmp = cmp != 0 ? cmp : here;
  }
  return cmp;
}

TK_HOST_DEVICE inline int BitsBelow(uint64_t n) {
  int bits = 0;
  while (bits < 64 && (uint64_t{1} << bits) < n) ++bits;
  return bits;
}

inline KeyWords MakeKeyWords(const std::vector<int64_t>& shape, const std::vector<int>& order) {
  const int rank = static_cast<int>(shape.size());
  KeyWords k;
  k.word.assign(static_cast<size_t>(rank), -1);
  k.shift.assign(static_cast<size_t>(rank), 0);
  int used = 64;  // no word is open yet
  for (int j = rank - 1; j >= 0; --j) {
    const int a = order[j];
    const int w = BitsBelow(static_cast<uint64_t>(shape[a] > 0 ? shape[a] : 0));
    if (w == 0) continue;
    if (used + w > 64) {  // fields never straddle words, so each decodes from one word
      k.bits.push_back(0);
      used = 0;
    }
    k.word[a] = k.num_words() - 1;
    k.shift[a] = used;
    used += w;
    k.bits.back() = used;
  }
  return k;
}

TK_HOST_DEVICE inline uint64_t PackWord(const int64_t* row, int rank, const int* word,
                                        const int* shift, int w) {
  uint64_t key = 0;
  for (int a = 0; a < rank; ++a) {
    if (word[a] == w) key |= static_cast<uint64_t>(row[a]) << shift[a];
  }
  return key;
}

TK_HOST_DEVICE inline int64_t FieldOf(uint64_t word, int shift, uint64_t mask) {
  return static_cast<int64_t>((word >> shift) & mask);
}

TK_HOST_DEVICE inline int64_t PositionOf(const int64_t* row, const int64_t* dims, int rank) {
  int64_t pos = 0;
  for (int a = 0; a < rank; ++a) pos = pos * dims[a] + row[a];
  return pos;
}

TK_HOST_DEVICE inline void RowAt(int64_t pos, const int64_t* dims, int rank, int64_t* row) {
  for (int a = rank - 1; a >= 0; --a) {
    const int64_t q = pos / dims[a];
    row[a] = pos - q * dims[a];
    pos = q;
  }
}

TK_HOST_DEVICE inline int64_t MemoryIndexAt(int64_t pos, const int64_t* dims,
                                            const int64_t* strides, int rank, int64_t offset) {
  int64_t mem = offset;
  for (int a = rank - 1; a >= 0; --a) {
    const int64_t q = pos / dims[a];
    mem += (pos - q * dims[a]) * strides[a];
    pos = q;
  }
  return mem;
}

TK_HOST_DEVICE inline bool StartsRun(const int64_t* rows, int64_t i, int64_t n, int rank,
                                     int64_t min_run) {
  if (i > 0 && SameRow(rows + i * rank, rows + (i - 1) * rank, rank)) return false;
  const int64_t last = i + min_run - 1;  // sorted: the run reaches `last` if that row is equal
  return min_run <= 1 || (last < n && SameRow(rows + last * rank, rows + i * rank, rank));
}

TK_HOST_DEVICE inline int64_t SliceOf(int64_t p, const int64_t* ptr, int64_t num) {
  int64_t lo = 0, hi = num;  // ptr[lo] <= p < ptr[hi]
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (ptr[mid] <= p) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

TK_HOST_DEVICE inline bool BytesAreZero(uint64_t x, int size, bool is_float) {
  const uint64_t sign = is_float ? uint64_t{1} << (8 * size - 1) : 0;
  const uint64_t all = size == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * size)) - 1;
  return (x & all & ~sign) == 0;
}

}  // namespace tensorkit::sparse_keys

#endif  // TENSORKIT_SPARSE_KEYS_H_
