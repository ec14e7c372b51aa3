// tensorkit/features/bucketize_device.h: the bucket search written once for the host and a CUDA
// device (not a public header; Note [fixed-step search] in bucketize.cc).
#ifndef TENSORKIT_FEATURES_BUCKETIZE_DEVICE_H_
#define TENSORKIT_FEATURES_BUCKETIZE_DEVICE_H_

#include <cstdint>

#include "tensorkit/common/host_device.h"

namespace tensorkit::features_internal {

// The bucket id of x: slots are the boundaries (in the comparison type C) padded with +inf to a
// power of two 2 * top, and the search takes the same log2(2 * top) steps for every value; a
// position past the last boundary (+inf and NaN values land there) is num_boundaries.
template <typename C>
TK_HOST_DEVICE inline int32_t FixedStepBucket(const C* slots, uint32_t top, C x,
                                              int32_t num_boundaries) {
  uint32_t pos = 0;
  for (uint32_t step = top; step >= 1; step >>= 1) {
    pos += static_cast<uint32_t>(!(x < slots[pos + step - 1])) * step;
  }
  const int32_t p = static_cast<int32_t>(pos);
  return p < num_boundaries ? p : num_boundaries;
}

}  // namespace tensorkit::features_internal

#endif  // TENSORKIT_FEATURES_BUCKETIZE_DEVICE_H_
