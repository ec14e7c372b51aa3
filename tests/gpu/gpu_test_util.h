// Helpers of the GPU tests: the skip when no device is visible, tensors that keep their strided
// pattern on the device, and comparison of device results with the CPU engine's.
#ifndef TENSORKIT_TESTS_GPU_GPU_TEST_UTIL_H_
#define TENSORKIT_TESTS_GPU_GPU_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "reference/reference.h"
#include "tensorkit/common/device.h"
#include "tensorkit/common/storage.h"
#include "tensorkit/dense/tensor.h"

#define TK_REQUIRE_GPU()                   \
  if (::tensorkit::CudaDeviceCount() == 0) \
  GTEST_SKIP() << "no CUDA device visible; GPU test skipped"

namespace tensorkit::gpu_testing {

// A tensor on `device` with t's pattern over a copy of t's whole storage (so strides, offsets
// and negative steps survive, unlike Tensor::To, which packs).
inline Tensor SamePatternOn(const Tensor& t, Device device) {
  const int64_t bytes = t.storage()->size_bytes();
  auto s = Storage::Allocate(t.dtype(), bytes / DTypeSize(t.dtype()), device);
  CopyBytes(s->data(), device, t.storage()->data(), t.device(), bytes);
  return Tensor(s, t.pattern(), t.dtype());
}

// Some axes of `space` set to 1 and up to `drop` leading axes dropped: an operand that
// broadcasts into (or, as an output, sums over) the iteration space.
inline std::vector<int64_t> SubDims(ref::Rng& rng, const std::vector<int64_t>& space, int odds) {
  std::vector<int64_t> d = space;
  for (int64_t& x : d) {
    if (ref::internal::Uniform(rng, 0, odds) == 0) x = 1;
  }
  const int64_t drop = ref::internal::Uniform(rng, 0, static_cast<int64_t>(d.size()));
  if (ref::internal::Uniform(rng, 0, 2) == 0) d.erase(d.begin(), d.begin() + drop);
  return d;
}

// Expects the device result `got` to equal the CPU result `want` element by element; NaN
// equals NaN. `rel` > 0 allows that relative difference (for libm functions, whose last bit
// may differ between the host's and CUDA's).
template <typename T>
void ExpectSame(const Tensor& got, const Tensor& want, const std::string& what, double rel = 0) {
  ASSERT_EQ(got.Dims(), want.Dims()) << what;
  const std::vector<T> g = got.ToVector<T>(), w = want.ToVector<T>();
  for (size_t i = 0; i < g.size(); ++i) {
    const double x = static_cast<double>(g[i]), y = static_cast<double>(w[i]);
    if (std::isnan(x) && std::isnan(y)) continue;
    if (rel == 0 || std::isinf(y)) {
      ASSERT_EQ(x, y) << what << " at element " << i;
    } else {
      ASSERT_NEAR(x, y, rel * std::max(1.0, std::abs(y))) << what << " at element " << i;
    }
  }
}

}  // namespace tensorkit::gpu_testing

#endif  // TENSORKIT_TESTS_GPU_GPU_TEST_UTIL_H_
