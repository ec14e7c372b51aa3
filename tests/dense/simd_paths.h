// Helpers of the dense tests that run a computation on every SIMD path (common/simd_path.h
// SimdPath) this CPU supports.
#ifndef TENSORKIT_TESTS_DENSE_SIMD_PATHS_H_
#define TENSORKIT_TESTS_DENSE_SIMD_PATHS_H_

#include <vector>

#include "tensorkit/common/simd_path.h"

namespace tensorkit::testing {

// The paths this CPU can run, narrowest first: a path the CPU lacks is left out (its tests are
// skipped there, which the CPU's flags make visible in the log).
inline std::vector<SimdPath> SupportedPaths() {
  std::vector<SimdPath> paths;
  for (SimdPath p : {SimdPath::kDefault, SimdPath::kAvx2, SimdPath::kAvx512}) {
    if (SimdPathSupported(p)) paths.push_back(p);
  }
  return paths;
}

inline const char* PathName(SimdPath p) {
  return p == SimdPath::kAvx512 ? "avx512" : p == SimdPath::kAvx2 ? "avx2" : "default";
}

// Restores automatic path choice when a test ends, whatever it forced.
struct PathGuard {
  ~PathGuard() { SetSimdPathForTesting(BestSimdPath()); }
};

}  // namespace tensorkit::testing

#endif  // TENSORKIT_TESTS_DENSE_SIMD_PATHS_H_
