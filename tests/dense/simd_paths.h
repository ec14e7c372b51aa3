// Helpers of the dense tests that run a computation on every SIMD path (ops_internal.h
// SimdPath) this CPU supports.
#ifndef TENSORKIT_TESTS_DENSE_SIMD_PATHS_H_
#define TENSORKIT_TESTS_DENSE_SIMD_PATHS_H_

#include <vector>

#include "tensorkit/dense/ops_internal.h"

namespace tensorkit::testing {

// The paths this CPU can run, narrowest first: a path the CPU lacks is left out (its tests are
// skipped there, which the CPU's flags make visible in the log).
inline std::vector<ops_internal::SimdPath> SupportedPaths() {
  std::vector<ops_internal::SimdPath> paths;
  for (ops_internal::SimdPath p : {ops_internal::SimdPath::kDefault, ops_internal::SimdPath::kAvx2,
                                   ops_internal::SimdPath::kAvx512}) {
    if (ops_internal::SimdPathSupported(p)) paths.push_back(p);
  }
  return paths;
}

inline const char* PathName(ops_internal::SimdPath p) {
  return p == ops_internal::SimdPath::kAvx512 ? "avx512"
         : p == ops_internal::SimdPath::kAvx2 ? "avx2"
                                              : "default";
}

// Restores automatic path choice when a test ends, whatever it forced.
struct PathGuard {
  ~PathGuard() { ops_internal::SetSimdPathForTesting(ops_internal::BestSimdPath()); }
};

}  // namespace tensorkit::testing

#endif  // TENSORKIT_TESTS_DENSE_SIMD_PATHS_H_
