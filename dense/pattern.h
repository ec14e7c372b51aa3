// tensorkit/dense/pattern.h: the dims, strides and offset of a dense tensor.
//
// Glossary
//   axis            an integer naming one (dim, stride) pair in the PUBLIC numbering: axis 0 is
//                   the outermost (C order). Negative axis arguments count from the end.
//   raxis           the same axis in the PRIVATE, reversed numbering (raxis = num_axes-1-axis)
//                   in which Pattern stores dims and strides, so broadcasting pads on the left
//                   for free: a Pattern with fewer axes simply has dim 1 / stride 0 above them.
//   memory-index    offset + sum(index[i] * stride[i]), in elements of the storage.
//   trivial axis    an axis with dim 1; its stride is always 0.
//   valid           num_axes <= kMaxAxes; dims >= 0; stride 0 exactly for dim 1 (dims > 1 have a
//                   nonzero stride); no reachable memory-index is negative; and the
//                   axis-dominance property: sorted by |stride|, each |stride| exceeds the sum of
//                   (dim-1)*|stride| over the axes below it, which guarantees uniqueness (no two
//                   index tuples share a memory-index) and is kept by every view, including
//                   slices with steps.
//                   A pattern with a dim 0 has no elements; it is valid whatever its strides.
//   compact         the memory-index set is a contiguous range without gaps.
//   default strides C-order strides (stride 0 for dim 1): what new tensors get.
//   canonical form  trivial axes dropped, strides made positive (moving the offset), mergeable
//                   axes merged, sorted by stride: two patterns with the same memory-index set
//                   have the same canonical form.
//   broadcastable   after padding with 1 on the left, each axis has equal dims or a dim of 1.
#ifndef TENSORKIT_DENSE_PATTERN_H_
#define TENSORKIT_DENSE_PATTERN_H_

#include <array>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace tensorkit {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

inline constexpr int kMaxAxes = 8;

struct Pattern {
  int num_axes = 0;
  std::array<int64_t, kMaxAxes> dims{1, 1, 1, 1, 1, 1, 1, 1};  // by raxis; 1 beyond num_axes
  std::array<int64_t, kMaxAxes> strides{};                     // by raxis; 0 beyond num_axes
  int64_t offset = 0;

  // Public-numbering accessors (axis in [0, num_axes)).
  int64_t Dim(int axis) const { return dims[num_axes - 1 - axis]; }
  int64_t Stride(int axis) const { return strides[num_axes - 1 - axis]; }
  std::vector<int64_t> Dims() const;
  std::vector<int64_t> Strides() const;
  int64_t NumElements() const;

  bool operator==(const Pattern& o) const;
  // "offset=0 dims=[2 3] strides=[3 1]".
  std::string ToString() const;
};

std::ostream& operator<<(std::ostream& os, const Pattern& p);
size_t Hash(const Pattern& p);
struct PatternHash {
  size_t operator()(const Pattern& p) const { return Hash(p); }
};

// Maps an axis in [-num_axes, num_axes) to [0, num_axes); throws Error naming `op` otherwise.
int NormalizeAxis(int axis, int num_axes, const char* op);

// A pattern from public dims and strides (same length <= kMaxAxes). Throws Error naming `op` if
// the result would be invalid.
Pattern MakePattern(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides,
                    int64_t offset = 0, const char* op = "MakePattern");
// C-order strides for `dims` (stride 0 on dim-1 axes), offset 0. Throws Error for negative
// dims, more than kMaxAxes axes or an element count that overflows int64 (a zero dim makes the
// count 0, however large the other dims).
Pattern DefaultPattern(const std::vector<int64_t>& dims, const char* op = "DefaultPattern");

// The element count of `dims` (each >= 0) in *count: 0 when some dim is 0, however large the
// others, else their product. False (and *count unchanged) when the product overflows int64.
bool ElementCount(const std::vector<int64_t>& dims, int64_t* count);

// Smallest and largest memory-index reached (both = offset when there are no elements, with
// empty set signalled by NumElements() == 0).
int64_t MinMemoryIndex(const Pattern& p);
int64_t MaxMemoryIndex(const Pattern& p);

// All properties of a valid pattern (see the glossary).
bool IsValid(const Pattern& p);
// Why `p` is invalid, or "" when it is valid.
std::string WhyInvalid(const Pattern& p);
bool IsCompact(const Pattern& p);
bool HasDefaultStrides(const Pattern& p);
// The canonical form (see the glossary); its offset is the smallest memory-index.
Pattern Canonicalize(const Pattern& p);

bool Broadcastable(const Pattern& a, const Pattern& b);
bool Broadcastable(const Pattern& a, const Pattern& b, const Pattern& c);
// Public dims of a broadcast pair/triple (each axis: the dim that is not 1).
std::vector<int64_t> BroadcastDims(const std::vector<std::vector<int64_t>>& dims);

// True when the memory-index sets of a and b intersect (exact for valid patterns).
bool Overlap(const Pattern& a, const Pattern& b);

}  // namespace tensorkit

#endif  // TENSORKIT_DENSE_PATTERN_H_
