// tensorkit/features/jagged_device.h: where each element of a jagged conversion or a keyed
// jagged gather comes from, written once for the host and a CUDA device (not a public header).
// The CUDA bodies of ToPadded, FromPadded, ToSparse and of KeyedJaggedTensor's Permute, Concat
// and Split give each output element a thread that asks these functions; host tests check them
// against the CPU bodies of jagged_convert.cc and jagged_keyed.cc.
//
// Glossary
//   item block  a run of consecutive output items copied from one source: block k fills items
//               [starts[k], starts[k + 1]) of the output (a gather's blocks tile its items in
//               output order; none is empty).
#ifndef TENSORKIT_FEATURES_JAGGED_DEVICE_H_
#define TENSORKIT_FEATURES_JAGGED_DEVICE_H_

#include <cstdint>

#include "tensorkit/common/host_device.h"
#include "tensorkit/sparse/keys.h"

namespace tensorkit::jagged_internal {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// The row holding item i of offsets off [b + 1] (0 <= i < off[b]): the last r with off[r] <= i,
// found by binary search (empty rows are skipped). Also the bag of a position for CountSparse
// and the embedding gradient.
TK_HOST_DEVICE int64_t RowOfItem(const int64_t* off, int64_t b, int64_t i);

// ToPadded: the values element that padded element e of [B, len, inner] holds, or -1 for the
// padding (rows longer than len are truncated).
TK_HOST_DEVICE int64_t PaddedSource(const int64_t* off, int64_t len, int64_t inner, int64_t e);

// FromPadded: the element of dense [B, len, inner] that values element e of [N, inner] comes
// from.
TK_HOST_DEVICE int64_t UnpaddedSource(const int64_t* off, int64_t b, int64_t len, int64_t inner,
                                      int64_t e);

// A gather of item blocks (starts [num_blocks + 1]) of `inner` elements per item: the block that
// output element e belongs to, and in *at the element of that block's source run (counted from
// the run's first element) that e copies.
TK_HOST_DEVICE int64_t GatheredElement(const int64_t* starts, int64_t num_blocks, int64_t inner,
                                       int64_t e, int64_t* at);

// ---------------------------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------------------------

TK_HOST_DEVICE inline int64_t RowOfItem(const int64_t* off, int64_t b, int64_t i) {
  return sparse_keys::SliceOf(i, off, b);  // the search of CSR row pointers
}

TK_HOST_DEVICE inline int64_t PaddedSource(const int64_t* off, int64_t len, int64_t inner,
                                           int64_t e) {
  const int64_t row_elems = len * inner;
  const int64_t r = e / row_elems, rem = e - r * row_elems;
  const int64_t j = rem / inner, k = rem - j * inner;
  return j < off[r + 1] - off[r] ? (off[r] + j) * inner + k : -1;
}

TK_HOST_DEVICE inline int64_t UnpaddedSource(const int64_t* off, int64_t b, int64_t len,
                                             int64_t inner, int64_t e) {
  const int64_t i = e / inner, k = e - i * inner;
  const int64_t r = RowOfItem(off, b, i);
  return (r * len + (i - off[r])) * inner + k;
}

TK_HOST_DEVICE inline int64_t GatheredElement(const int64_t* starts, int64_t num_blocks,
                                              int64_t inner, int64_t e, int64_t* at) {
  const int64_t i = e / inner;
  const int64_t k = RowOfItem(starts, num_blocks, i);
  *at = (i - starts[k]) * inner + (e - i * inner);
  return k;
}

}  // namespace tensorkit::jagged_internal

#endif  // TENSORKIT_FEATURES_JAGGED_DEVICE_H_
