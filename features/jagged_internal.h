// tensorkit/features/jagged_internal.h: the pieces that the jagged conversions and the keyed
// jagged operations share (not a public header).
//
// Glossary
//   block   one contiguous run of `count` elements copied from `src` to `dst`; a gather is a list
//           of blocks (one per feature, per row, per part ...).
//   piece   a fixed slice of about kPieceBytes of a gather's total bytes: the unit of parallel
//           work, so that one huge block and many tiny ones spread alike over the threads.
#ifndef TENSORKIT_FEATURES_JAGGED_INTERNAL_H_
#define TENSORKIT_FEATURES_JAGGED_INTERNAL_H_

#include <cstdint>
#include <vector>

#include "tensorkit/common/device.h"
#include "tensorkit/common/dtype.h"

namespace tensorkit::jagged_internal {

// One contiguous copy of a gather.
struct CopyBlock {
  const void* src = nullptr;
  void* dst = nullptr;
  int64_t count = 0;  // elements of `dtype`
  DType dtype = DType::kFloat32;
};

// Bytes of one piece of CopyBlocks.
inline constexpr int64_t kPieceBytes = int64_t{64} << 10;

// Copies every block (blocks must not overlap each other's destinations or their sources'
// destinations) in one parallel pass over fixed pieces of their concatenated bytes. Strings are
// assigned; everything else is memcpy, written past the caches when the gather is large.
void CopyBlocks(const std::vector<CopyBlock>& blocks);

// The longest row of host offsets off [b + 1] (0 when b == 0), in one parallel pass.
int64_t MaxLength(const int64_t* off, int64_t b);

// The COO indices of entries [lo, hi) of host offsets off [b + 1]: (row, position in the row)
// per entry, or the position alone with rank 1 (TensorFlow's form for one record).
void WriteIndices(const int64_t* off, int64_t b, int64_t lo, int64_t hi, int rank, int64_t* idx);

}  // namespace tensorkit::jagged_internal

#endif  // TENSORKIT_FEATURES_JAGGED_INTERNAL_H_
