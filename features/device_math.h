// tensorkit/features/device_math.h: arithmetic that must round the same on the host and a CUDA
// device (not a public header). nvcc contracts a multiply followed by an add into one fused
// multiply-add by default, which rounds once instead of twice; the CPU kernels never do, so the
// device bodies that must give the CPU's bits round each operation explicitly.
#ifndef TENSORKIT_FEATURES_DEVICE_MATH_H_
#define TENSORKIT_FEATURES_DEVICE_MATH_H_

#include <type_traits>

#include "tensorkit/common/host_device.h"

namespace tensorkit::features_internal {

// a * b (kMul) or a + b for C float or double, rounded as one IEEE operation: never contracted
// into a fused multiply-add.
template <bool kMul, typename C>
TK_HOST_DEVICE inline C Rounded(C a, C b) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<C, float>) {
    return kMul ? __fmul_rn(a, b) : __fadd_rn(a, b);
  } else {
    return kMul ? __dmul_rn(a, b) : __dadd_rn(a, b);
  }
#else
  return kMul ? a * b : a + b;
#endif
}

}  // namespace tensorkit::features_internal

#endif  // TENSORKIT_FEATURES_DEVICE_MATH_H_
