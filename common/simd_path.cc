#include "tensorkit/common/simd_path.h"

#include <atomic>

#include "tensorkit/common/error.h"

namespace tensorkit {
namespace {

// The path in use: -1 until first use, then BestSimdPath() or a forced one.
std::atomic<int> active_path{-1};

}  // namespace

bool SimdPathSupported(SimdPath path) {
  switch (path) {
    case SimdPath::kDefault:
      return true;
    case SimdPath::kAvx2:
      return __builtin_cpu_supports("avx2");
    case SimdPath::kAvx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
  }
  return false;
}

SimdPath BestSimdPath() {
  if (SimdPathSupported(SimdPath::kAvx512)) return SimdPath::kAvx512;
  if (SimdPathSupported(SimdPath::kAvx2)) return SimdPath::kAvx2;
  return SimdPath::kDefault;
}

SimdPath ActiveSimdPath() {
  int p = active_path.load(std::memory_order_relaxed);
  if (p < 0) {
    p = static_cast<int>(BestSimdPath());
    active_path.store(p, std::memory_order_relaxed);
  }
  return static_cast<SimdPath>(p);
}

void SetSimdPathForTesting(SimdPath path) {
  TK_INTERNAL_CHECK(SimdPathSupported(path));
  active_path.store(static_cast<int>(path), std::memory_order_relaxed);
}

}  // namespace tensorkit
