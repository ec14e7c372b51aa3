// tensorkit/common/fast_div.h: unsigned 64-bit division by a divisor fixed ahead of time.
//
// Glossary
//   FastDivider  precomputes, for a divisor d >= 1, a 64-bit multiplier and a shift so that
//                n / d is one high multiply, a subtract, an add and a shift (Granlund and
//                Montgomery's round-up method, the 65-bit multiplier kept as 64 bits plus an
//                implicit top bit). A hardware 64-bit divide costs 10-40 times as much, and index
//                arithmetic (linear position to coordinates) divides by the same dims millions
//                of times.
//   FastDivider32  the same for 32-bit operands: dividend and divisor below 2^31, so the
//                multiplier has 32 bits and the quotient is one 32x32->64 multiply, an add and
//                a shift. GPUs have no integer divide instruction (a 64-bit division is a long
//                software routine, a 32-bit one still about 20 instructions), so offset
//                arithmetic takes this form whenever every position fits.
#ifndef TENSORKIT_COMMON_FAST_DIV_H_
#define TENSORKIT_COMMON_FAST_DIV_H_

#include <cstdint>

#include "tensorkit/common/host_device.h"

namespace tensorkit {

class FastDivider {
 public:
  FastDivider() = default;
  // d >= 1 (0, which has no quotient, is taken as 1 so that nothing traps).
  explicit FastDivider(uint64_t d) : d_(d == 0 ? 1 : d) {
    d = d_;
    // shift_ = ceil(log2(d)); for d == 1 the quotient is n itself (multiplier 0, shift 0 below).
    int l = 0;
    while (l < 64 && (uint64_t{1} << l) < d) ++l;
    shift_ = l;
    // magic = floor(2^64 * (2^l - d) / d) + 1, which fits 64 bits for l <= 64.
    if (d == 1) return;
    const unsigned __int128 two_l = static_cast<unsigned __int128>(1) << l;
    magic_ = static_cast<uint64_t>(((two_l - d) << 64) / d) + 1;
  }

  uint64_t divisor() const { return d_; }

  TK_HOST_DEVICE uint64_t Divide(uint64_t n) const {
    if (shift_ == 0) return n;  // d == 1
    const uint64_t hi = MulHi(magic_, n);
    const uint64_t t = ((n - hi) >> 1) + hi;  // (n + hi) / 2 without overflow
    return t >> (shift_ - 1);
  }

 private:
  TK_HOST_DEVICE static uint64_t MulHi(uint64_t a, uint64_t b) {
#if defined(__CUDA_ARCH__)
    return __umul64hi(a, b);
#else
    return static_cast<uint64_t>((static_cast<unsigned __int128>(a) * b) >> 64);
#endif
  }

  uint64_t d_ = 1;
  uint64_t magic_ = 0;
  int shift_ = 0;
};

class FastDivider32 {
 public:
  static constexpr uint32_t kLimit = uint32_t{1} << 31;  // dividends and divisors below this

  FastDivider32() = default;
  // 1 <= d < 2^31 (0 is taken as 1).
  explicit FastDivider32(uint32_t d) : d_(d == 0 ? 1 : d) {
    // shift_ = ceil(log2(d)) <= 31; magic = floor(2^32 * (2^shift - d) / d) + 1 < 2^32.
    while (shift_ < 32 && (uint64_t{1} << shift_) < d_) ++shift_;
    magic_ = static_cast<uint32_t>(((uint64_t{1} << shift_) - d_) * (uint64_t{1} << 32) / d_ + 1);
  }

  uint32_t divisor() const { return d_; }

  // n < 2^31.
  TK_HOST_DEVICE uint32_t Divide(uint32_t n) const {
#if defined(__CUDA_ARCH__)
    const uint32_t hi = __umulhi(n, magic_);
#else
    const uint32_t hi = static_cast<uint32_t>((static_cast<uint64_t>(n) * magic_) >> 32);
#endif
    return (hi + n) >> shift_;  // hi <= n < 2^31: the sum does not wrap
  }

 private:
  uint32_t d_ = 1;
  uint32_t magic_ = 1;
  uint32_t shift_ = 0;
};

}  // namespace tensorkit

#endif  // TENSORKIT_COMMON_FAST_DIV_H_
