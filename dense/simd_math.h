// tensorkit/dense/simd_math.h: exp and log without calls or data-dependent branches, so that
// loops over them vectorise at any instruction-set width (not a public header).
//
// Glossary
//   range reduction  x = n*ln2 + r with integer n and |r| <= ln2/2 (exp), or x = 2^e * m with
//                    m in [sqrt(1/2), sqrt(2)) (log); the polynomial only sees r or m.
//   Cody-Waite       ln2 split into a head with trailing zero bits (so n*head is exact) and a
//                    tail, so r keeps full precision even for large n.
//   two-step scale   2^n applied as 2^h * 2^(n-h): each factor is a normal number, and the
//                    product rounds once, so results below the normal range come out correctly
//                    subnormal and results above it overflow to inf.
//   ulp              unit in the last place of the exact result.
//   Select           c ? a : b by bit masks. With a conditional expression GCC may move the
//                    computation of a or b under a branch, and since floating-point operations
//                    may trap (-ftrapping-math) it then does not turn that branch back into a
//                    vector blend: the loop stays scalar.
//
// Every function here (usable in CUDA device code too) uses only +, -, *, /, comparisons, selects
// and bit casts, with no fused multiply-add (the build uses ISO C++, where GCC does not contract),
// so the vectorised loops of every instruction-set path give bit-identical results to the scalar
// code. Special values follow std::exp / std::log: NaN in, NaN out; exp(-inf) = 0, exp(+inf) = inf,
// overflow gives inf, underflow gives subnormals then 0; log(0) = -inf, log(x < 0) = NaN,
// log(+inf) = inf.
#ifndef TENSORKIT_DENSE_SIMD_MATH_H_
#define TENSORKIT_DENSE_SIMD_MATH_H_

#include <bit>
#include <cstdint>
#include <limits>
#include <utility>

#include "tensorkit/common/host_device.h"

// clang contracts a*b+c within an expression by default; GCC is told per function (the
// instruction-set copies in cpu/unary.cc carry optimize("fp-contract=off")).
#if defined(__clang__)
#pragma float_control(push)
#pragma clang fp contract(off)
#endif

namespace tensorkit::simd_math {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// c ? a : b without a branch (see glossary).
TK_HOST_DEVICE inline float Select(bool c, float a, float b);
TK_HOST_DEVICE inline double Select(bool c, double a, double b);

// e^x in float: degree-6 polynomial, within 1 ulp of the exact result.
TK_HOST_DEVICE inline float ExpF32(float x);
// e^x in double: Taylor polynomial of degree kDegree on |r| <= ln2/2; 13 reaches double
// precision (about 1 ulp), 8 is ample for results rounded to float (error below 2^-32).
// ExpF64<kDegree = 13>(double x), defined below (nvcc rejects a default template argument on
// a separate declaration of a __host__ __device__ template).
// Natural log in double: log(1+f) = f - s*(f - R(s^2)), s = f/(2+f), R with kTerms terms; 10
// reach double precision (about 1 ulp), 4 are ample for results rounded to float.
// LogF64<kTerms = 10>(double x), defined below.
// Natural log of a float: reduced in float, evaluated in double, rounded once (within 1 ulp,
// almost always correctly rounded).
TK_HOST_DEVICE inline float LogF32(float x);
// tanh of a float, in float: x + x^3 P(x^2) below |x| = 0.55, 1 - 2/(e^(2|x|) + 1) from there
// on; |x| < 2^-12 returns x, where tanh(x) = x to within half an ulp. Within 1 ulp of the
// correctly rounded result on every float (scripts/fit_tanh.py fits P and checks that).
TK_HOST_DEVICE inline float TanhF32(float x);

// ---------------------------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------------------------

TK_HOST_DEVICE inline float Select(bool c, float a, float b) {
  const uint32_t m = 0u - static_cast<uint32_t>(c);
  return std::bit_cast<float>((std::bit_cast<uint32_t>(a) & m) | (std::bit_cast<uint32_t>(b) & ~m));
}

TK_HOST_DEVICE inline double Select(bool c, double a, double b) {
  const uint64_t m = uint64_t{0} - static_cast<uint64_t>(c);
  return std::bit_cast<double>((std::bit_cast<uint64_t>(a) & m) |
                               (std::bit_cast<uint64_t>(b) & ~m));
}

TK_HOST_DEVICE inline float ExpF32(float x) {
  const float xc = x > 89.0f ? 89.0f : (x < -104.0f ? -104.0f : x);  // NaN -> -104 here
  const float kShift = 12582912.0f;                                  // 1.5 * 2^23
  const float n = (xc * 1.44269504088896341f + kShift) - kShift;     // round to nearest
  float r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const int32_t ni = static_cast<int32_t>(n);  // in [-150, 129]: always representable
  const int32_t h = ni / 2;
  const float s1 = std::bit_cast<float>((h + 127) << 23);
  const float s2 = std::bit_cast<float>((ni - h + 127) << 23);
  const float result = p * s1 * s2;
  return Select(x != x, x, result);
}

namespace detail {

// 1/k! and 2/(2k+1) as compile-time constants.
constexpr double InvFactorial(int k) { return k <= 1 ? 1.0 : InvFactorial(k - 1) / k; }
constexpr double OddCoeff(int k) { return 2.0 / (2 * k + 1); }

}  // namespace detail

template <int kDegree = 13>
TK_HOST_DEVICE double ExpF64(double x) {
  static_assert(kDegree >= 3 && kDegree <= 13);
  // Beyond these e^x is inf or rounds to 0; NaN compares false and lands on the low clamp.
  const double xc = x > 710.0 ? 710.0 : (x < -746.0 ? -746.0 : x);
  const double kShift = 6755399441055744.0;  // 1.5 * 2^52: adding it rounds to an integer
  const double n = (xc * 1.4426950408889634 + kShift) - kShift;
  const double kLn2Hi = 0.6931467056274414;  // ln2 with the low 32 mantissa bits cleared
  const double kLn2Lo = 4.7493250390316726e-07;
  const double r = (xc - n * kLn2Hi) - n * kLn2Lo;
  // Horner on the Taylor coefficients 1/k!, k = kDegree down to 2, then 1 + r + r^2 * p. At
  // degree 13 the first omitted term is below 2^-60.
  double p = detail::InvFactorial(kDegree);
  [&]<int... kI>(std::integer_sequence<int, kI...>) {
    ((p = p * r + detail::InvFactorial(kDegree - 1 - kI)), ...);
  }
  (std::make_integer_sequence<int, kDegree - 2>{});
  p = p * r * r + r + 1.0;
  const int32_t ni = static_cast<int32_t>(n);  // in [-1077, 1025]: always representable
  const int32_t h = ni / 2;
  const double s1 = std::bit_cast<double>(static_cast<int64_t>(h + 1023) << 52);
  const double s2 = std::bit_cast<double>(static_cast<int64_t>(ni - h + 1023) << 52);
  const double result = p * s1 * s2;
  return Select(x != x, x, result);
}

template <int kTerms = 10>
TK_HOST_DEVICE double LogF64(double x) {
  static_assert(kTerms >= 2 && kTerms <= 10);
  constexpr double kInf = std::numeric_limits<double>::infinity();
  // Subnormals: scale into the normal range first (2^54), undo through the exponent.
  const bool sub = x < std::numeric_limits<double>::min();
  const double xs = x * (sub ? 18014398509481984.0 : 1.0);
  const uint64_t bits = std::bit_cast<uint64_t>(xs);
  int32_t e = static_cast<int32_t>((bits >> 52) & 0x7ff) - 1023 - (sub ? 54 : 0);
  double m = std::bit_cast<double>((bits & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL);
  const bool high = m > 1.4142135623730951;  // m in [1, 2): bring it to [sqrt(1/2), sqrt(2))
  m *= high ? 0.5 : 1.0;
  e += high ? 1 : 0;
  const double f = m - 1.0;  // exact (Sterbenz)
  const double s = f / (2.0 + f);
  const double z = s * s;
  // R(z) = sum 2 z^k / (2k + 1), k = 1..kTerms (Horner); with 10 terms the first omitted one
  // is below 2^-60 of f.
  double q = detail::OddCoeff(kTerms);
  [&]<int... kI>(std::integer_sequence<int, kI...>) {
    ((q = q * z + detail::OddCoeff(kTerms - 1 - kI)), ...);
  }
  (std::make_integer_sequence<int, kTerms - 1>{});
  const double r = q * z;
  const double de = static_cast<double>(e);
  const double kLn2Hi = 0.6931467056274414;  // e * kLn2Hi is exact for |e| < 2^20
  const double kLn2Lo = 4.7493250390316726e-07;
  const double result = de * kLn2Hi + ((f - s * (f - r)) + de * kLn2Lo);
  // Special values, in the order that lets the later ones win.
  double out = Select(x == kInf, kInf, result);
  out = Select(x == 0.0, -kInf, out);
  out = Select(x < 0.0, std::numeric_limits<double>::quiet_NaN(), out);
  return Select(x != x, x, out);
}

TK_HOST_DEVICE inline float LogF32(float x) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  // Range reduction on the float's bits (16 lanes per AVX-512 vector), subnormals scaled by
  // 2^25 first.
  const bool sub = x < std::numeric_limits<float>::min();
  const float xs = x * (sub ? 33554432.0f : 1.0f);
  const uint32_t bits = std::bit_cast<uint32_t>(xs);
  int32_t e = static_cast<int32_t>((bits >> 23) & 0xff) - 127 - (sub ? 25 : 0);
  float m = std::bit_cast<float>((bits & 0x007fffffu) | 0x3f800000u);
  const bool high = m > 1.41421356f;
  m *= high ? 0.5f : 1.0f;
  e += high ? 1 : 0;
  // The rest in double, where f and 2 + f are exact.
  const double f = static_cast<double>(m) - 1.0;
  const double s = f / (2.0 + f);
  const double z = s * s;
  // R(z) = sum 2 z^k / (2k + 1), k = 1..4: the first omitted term is below 2^-32 of f.
  const double r =
      (((detail::OddCoeff(4) * z + detail::OddCoeff(3)) * z + detail::OddCoeff(2)) * z +
       detail::OddCoeff(1)) *
      z;
  const double de = static_cast<double>(e);
  const double result = de * 0.6931471805599453 + (f - s * (f - r));
  float out = Select(x == kInf, kInf, static_cast<float>(result));
  out = Select(x == 0.0f, -kInf, out);
  out = Select(x < 0.0f, std::numeric_limits<float>::quiet_NaN(), out);
  return Select(x != x, x, out);
}

TK_HOST_DEVICE inline float TanhF32(float x) {
  const float ax = std::bit_cast<float>(std::bit_cast<uint32_t>(x) & 0x7fffffffu);
  // tanh is 1 in float from 9.1 on; NaN -> 20. A Select, not ?:, or GCC specialises the whole
  // computation for the constant 20 behind a branch.
  const float ac = Select(ax < 20.0f, ax, 20.0f);
  // Both halves are computed for every lane (no branch, so the loop vectorises). Below 0.55 the
  // exponential form would lose bits to cancellation in 1 - 2/(e + 1); above it the odd
  // polynomial would need more terms. P is a Chebyshev interpolant of (tanh(x)/x - 1)/x^2 in
  // z = x^2 on [0, 0.55^2], its coefficients rounded to float.
  const float z = ac * ac;
  float p = 2.526390599e-03f;
  p = p * z + -8.526332676e-03f;
  p = p * z + 2.181844972e-02f;
  p = p * z + -5.396470055e-02f;
  p = p * z + 1.333332360e-01f;
  p = p * z + -3.333333433e-01f;
  const float near_zero = ac + ac * (z * p);
  const float far = 1.0f - 2.0f / (ExpF32(2.0f * ac) + 1.0f);
  const float t = Select(ac < 0.55f, near_zero, far);
  const float r = Select(ac < 0.000244140625f, ac, t);  // 2^-12
  // x's sign on r (r >= 0), so that tanh(-0) = -0.
  const float signed_r =
      std::bit_cast<float>(std::bit_cast<uint32_t>(r) | (std::bit_cast<uint32_t>(x) & 0x80000000u));
  return Select(x != x, x, signed_r);
}

}  // namespace tensorkit::simd_math

#if defined(__clang__)
#pragma float_control(pop)
#endif

#endif  // TENSORKIT_DENSE_SIMD_MATH_H_
