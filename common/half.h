// tensorkit/common/half.h: 16-bit floating-point storage types.
//
// Glossary
//   Half      IEEE 754 binary16 (NumPy float16); stored as bits, computes in float.
//   BFloat16  the upper 16 bits of a float32; stored as bits, computes in float.
// Conversions from float round to nearest even; NaN stays NaN. Usable in CUDA device code, where
// float16 converts with the hardware's cvt instruction (one instruction instead of the bit
// arithmetic below); NaN keeps the bit arithmetic there too, so both sides give the same bits.
#ifndef TENSORKIT_COMMON_HALF_H_
#define TENSORKIT_COMMON_HALF_H_

#include <bit>
#include <cstdint>

#include "tensorkit/common/host_device.h"

namespace tensorkit {

struct Half {
  uint16_t bits = 0;
  Half() = default;
  TK_HOST_DEVICE Half(float f)
      : bits(FromFloat(f)) {}  // NOLINT: implicit, like a built-in float type
  TK_HOST_DEVICE operator float() const { return ToFloat(bits); }
  TK_HOST_DEVICE static Half FromBits(uint16_t b) {
    Half h;
    h.bits = b;
    return h;
  }
  TK_HOST_DEVICE static uint16_t FromFloat(float f);
  TK_HOST_DEVICE static float ToFloat(uint16_t h);
};

struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  TK_HOST_DEVICE BFloat16(float f)
      : bits(FromFloat(f)) {}  // NOLINT: implicit, like a built-in float type
  TK_HOST_DEVICE operator float() const {
    return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
  }
  TK_HOST_DEVICE static BFloat16 FromBits(uint16_t b) {
    BFloat16 h;
    h.bits = b;
    return h;
  }
  TK_HOST_DEVICE static uint16_t FromFloat(float f) {
    uint32_t u = std::bit_cast<uint32_t>(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // NaN
    u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even
    return static_cast<uint16_t>(u >> 16);
  }
};

TK_HOST_DEVICE inline uint16_t Half::FromFloat(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);  // NaN
#if defined(__CUDA_ARCH__)
  // Round to nearest even, overflow to inf and subnormals exactly as the code below.
  uint16_t r;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r) : "f"(f));
  return r;
#else
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow -> inf
  if (abs < 0x38800000u) {                                               // subnormal or zero
    // Scale so that the half subnormal unit becomes 1.0, then round with float arithmetic.
    float scaled = std::bit_cast<float>(abs) * 16777216.0f;  // 2^24
    uint32_t r = static_cast<uint32_t>(scaled);
    float frac = scaled - static_cast<float>(r);
    if (frac > 0.5f || (frac == 0.5f && (r & 1u))) ++r;
    return static_cast<uint16_t>(sign | r);
  }
  uint32_t mant = abs & 0x7fffffu;
  uint32_t exp = (abs >> 23) - 127 + 15;
  uint32_t h = (exp << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // may carry into the exponent
  return static_cast<uint16_t>(sign | h);
#endif
}

TK_HOST_DEVICE inline float Half::ToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
#if defined(__CUDA_ARCH__)
  if (exp != 31) {  // exact, subnormals included; inf and NaN (payload kept) below
    float r;
    asm("cvt.f32.f16 %0, %1;" : "=f"(r) : "h"(h));
    return r;
  }
#endif
  if (exp == 0) {
    float v = static_cast<float>(mant) * 5.9604644775390625e-8f;  // 2^-24
    return sign ? -v : v;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  return std::bit_cast<float>(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

}  // namespace tensorkit

#endif  // TENSORKIT_COMMON_HALF_H_
