#include "tensorkit/common/simd_path.h"

#include <atomic>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

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
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
             __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt");
    case SimdPath::kAvx512:
      return SimdPathSupported(SimdPath::kAvx2) && __builtin_cpu_supports("avx512f") &&
             __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
             __builtin_cpu_supports("avx512bw");
  }
  return false;
}

bool CpuHasF16c() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) return false;
  return (ecx & (1u << 29)) != 0;  // leaf 1, ECX bit 29: F16C
#else
  return false;
#endif
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
