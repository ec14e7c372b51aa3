// Launch shapes of features/' CUDA bodies that give one warp to each item (a bag, a segment):
// the lanes share the item's row, so its reads coalesce, and the item's reduction runs in one
// fixed sequence whatever the grid.
#ifndef TENSORKIT_FEATURES_CUDA_WARPS_CUH_
#define TENSORKIT_FEATURES_CUDA_WARPS_CUH_

#include <algorithm>
#include <cstdint>

#include "tensorkit/common/host_device.h"

namespace tensorkit::features_cuda {

inline constexpr int kWarpThreads = 256;  // threads per block
inline constexpr int kWarp = 32;
inline constexpr int64_t kWarpMaxBlocks = 1 << 16;  // grid-stride loops cover the rest

// Blocks for one warp per item of n (at least one block), or one thread per item with
// `per_thread`.
inline unsigned WarpGridFor(int64_t n, bool per_thread = false) {
  const int64_t per_block = per_thread ? kWarpThreads : kWarpThreads / kWarp;
  return static_cast<unsigned>(
      BlocksFor(std::max<int64_t>(n, 1), static_cast<int>(per_block), kWarpMaxBlocks));
}

// f(item, lane) for items [0, n), item i taken by one warp, lanes 0..31.
template <typename F>
__device__ void ForEachItemByWarp(int64_t n, F&& f) {
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  const int64_t warp = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * blockDim.x / kWarp;
  for (int64_t i = warp; i < n; i += warps) f(i, lane);
}

}  // namespace tensorkit::features_cuda

#endif  // TENSORKIT_FEATURES_CUDA_WARPS_CUH_
