// CRC-32 (zip's): carry-less multiply folding on x86-64 where the CPU has it, zlib elsewhere.
#include "tensorkit/io/crc32.h"

#include <zlib.h>

#include <algorithm>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#include "tensorkit/common/error.h"
#include "tensorkit/common/simd_path.h"

namespace tensorkit::io {
namespace {

// zlib's crc32 over any length (it counts in 32-bit units).
uint32_t ZlibCrc(uint32_t crc, const uint8_t* p, size_t n) {
  while (n > 0) {
    const uInt k = static_cast<uInt>(std::min<size_t>(n, size_t{1} << 30));
    crc = static_cast<uint32_t>(crc32(crc, p, k));
    p += k;
    n -= k;
  }
  return crc;
}

#if defined(__x86_64__)

// Note [CRC-32 folding]
// In the reflected bit order of this CRC, a little-endian 64-bit load of message bytes holds the
// coefficient of x^(63-i) in bit i, and a 128-bit block the coefficient of x^(127-i). Splitting a
// block's polynomial A = H * x^64 + L (H the low qword, which came first), moving it D bits on is
// A * x^D = H * x^(D+64) + L * x^D, and modulo P each factor x^k may be replaced by x^k mod P
// (degree < 32) without changing the final CRC. A carry-less product of two such reflected
// qwords lands one bit short of the 128-bit block's order (bit k holds x^(126-k)), which is a
// factor x: the constants are therefore x^(D+63) mod P for H and x^(D-1) mod P for L, placed in
// a qword's top 32 bits. The products have degree < 96, so a folded block is again a plain
// 128-bit block, to which the block D bits on is added. Once a single 128-bit block is left, its
// remainder is what a table CRC of its 16 bytes from a zero register gives.

// x^n mod P, bit d holding the coefficient of x^d.
constexpr uint32_t XPowMod(int n) {
  uint64_t r = 1;
  for (int i = 0; i < n; ++i) {
    r <<= 1;
    if (r & (uint64_t{1} << 32)) r ^= 0x104c11db7ull;
  }
  return static_cast<uint32_t>(r);
}

// x^n mod P as a reflected qword (the coefficient of x^d in bit 63 - d).
constexpr uint64_t Reflected(int n) {
  const uint32_t r = XPowMod(n);
  uint64_t q = 0;
  for (int d = 0; d < 32; ++d) {
    if (r & (1u << d)) q |= uint64_t{1} << (63 - d);
  }
  return q;
}

// The constants that fold a 128-bit block by `bits`: {for the low qword, for the high qword}.
struct FoldPair {
  uint64_t low, high;
};
constexpr FoldPair Fold(int bits) { return {Reflected(bits + 63), Reflected(bits - 1)}; }

constexpr FoldPair kFold128 = Fold(128);
constexpr FoldPair kFold512 = Fold(512);
constexpr FoldPair kFold2048 = Fold(2048);

// The CRC of the block `a` (16 bytes in register order) followed by [p, p + n).
uint32_t FinishBlock(const uint8_t* a, const uint8_t* p, size_t n) {
  // From a zero register the 16 bytes leave A * x^32 mod P; zlib's pre and post inversion
  // cancel when fed ~0.
  return ZlibCrc(ZlibCrc(0xffffffffu, a, 16), p, n);
}

__attribute__((target("pclmul,sse4.1"))) inline __m128i Fold128(__m128i x, __m128i k,
                                                                __m128i next) {
  const __m128i lo = _mm_clmulepi64_si128(x, k, 0x00);
  const __m128i hi = _mm_clmulepi64_si128(x, k, 0x11);
  return _mm_xor_si128(_mm_xor_si128(lo, hi), next);
}

__attribute__((target("pclmul,sse4.1"))) inline __m128i Load128(const uint8_t* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}

// Reduces the accumulator x (the block before p) and the whole 16-byte blocks from p on to one
// block, then finishes with the tail.
__attribute__((target("pclmul,sse4.1"))) uint32_t ReduceTail(__m128i x, const uint8_t* p,
                                                             size_t n) {
  const __m128i k128 =
      _mm_set_epi64x(static_cast<int64_t>(kFold128.high), static_cast<int64_t>(kFold128.low));
  for (; n >= 16; p += 16, n -= 16) x = Fold128(x, k128, Load128(p));
  alignas(16) uint8_t a[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(a), x);
  return FinishBlock(a, p, n);
}

// n >= 64.
__attribute__((target("pclmul,sse4.1"))) uint32_t ClmulCrc(uint32_t crc, const uint8_t* p,
                                                           size_t n) {
  __m128i x0 = _mm_xor_si128(Load128(p), _mm_cvtsi32_si128(static_cast<int>(~crc)));
  __m128i x1 = Load128(p + 16), x2 = Load128(p + 32), x3 = Load128(p + 48);
  p += 64;
  n -= 64;
  const __m128i k512 =
      _mm_set_epi64x(static_cast<int64_t>(kFold512.high), static_cast<int64_t>(kFold512.low));
  for (; n >= 64; p += 64, n -= 64) {
    x0 = Fold128(x0, k512, Load128(p));
    x1 = Fold128(x1, k512, Load128(p + 16));
    x2 = Fold128(x2, k512, Load128(p + 32));
    x3 = Fold128(x3, k512, Load128(p + 48));
  }
  const __m128i k128 =
      _mm_set_epi64x(static_cast<int64_t>(kFold128.high), static_cast<int64_t>(kFold128.low));
  x1 = Fold128(x0, k128, x1);
  x2 = Fold128(x1, k128, x2);
  x3 = Fold128(x2, k128, x3);
  return ReduceTail(x3, p, n);
}

#define TK_CRC_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,vpclmulqdq,pclmul,sse4.1")))

TK_CRC_AVX512 inline __m512i Fold512(__m512i x, __m512i k, __m512i next) {
  const __m512i lo = _mm512_clmulepi64_epi128(x, k, 0x00);
  const __m512i hi = _mm512_clmulepi64_epi128(x, k, 0x11);
  return _mm512_ternarylogic_epi64(lo, hi, next, 0x96);  // three-way xor
}

TK_CRC_AVX512 inline __m512i Load512(const uint8_t* p) { return _mm512_loadu_si512(p); }

TK_CRC_AVX512 inline __m512i Broadcast(FoldPair f) {
  const auto lo = static_cast<long long>(f.low), hi = static_cast<long long>(f.high);
  return _mm512_set_epi64(hi, lo, hi, lo, hi, lo, hi, lo);
}

// n >= 256: four registers of four 128-bit lanes each, 256 bytes a round.
TK_CRC_AVX512 uint32_t ClmulAvx512Crc(uint32_t crc, const uint8_t* p, size_t n) {
  __m512i z0 = _mm512_xor_si512(Load512(p), _mm512_maskz_set1_epi32(1, static_cast<int>(~crc)));
  __m512i z1 = Load512(p + 64), z2 = Load512(p + 128), z3 = Load512(p + 192);
  p += 256;
  n -= 256;
  const __m512i k2048 = Broadcast(kFold2048);
  for (; n >= 256; p += 256, n -= 256) {
    z0 = Fold512(z0, k2048, Load512(p));
    z1 = Fold512(z1, k2048, Load512(p + 64));
    z2 = Fold512(z2, k2048, Load512(p + 128));
    z3 = Fold512(z3, k2048, Load512(p + 192));
  }
  const __m512i k512 = Broadcast(kFold512);
  z1 = Fold512(z0, k512, z1);
  z2 = Fold512(z1, k512, z2);
  z3 = Fold512(z2, k512, z3);
  for (; n >= 64; p += 64, n -= 64) z3 = Fold512(z3, k512, Load512(p));
  // The four lanes are consecutive blocks: fold them as such.
  alignas(64) uint8_t lanes[64];
  _mm512_store_si512(lanes, z3);
  const __m128i k128 =
      _mm_set_epi64x(static_cast<int64_t>(kFold128.high), static_cast<int64_t>(kFold128.low));
  __m128i x = Load128(lanes);
  for (int lane = 1; lane < 4; ++lane) x = Fold128(x, k128, Load128(lanes + 16 * lane));
  return ReduceTail(x, p, n);
}

#undef TK_CRC_AVX512

// Whether cpuid leaf `leaf` (subleaf 0) sets ECX bit `bit`: leaf 1 bit 1 is PCLMULQDQ, leaf 7
// bit 10 VPCLMULQDQ.
bool CpuHas(unsigned leaf, unsigned bit) {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_count(leaf, 0, &eax, &ebx, &ecx, &edx) == 0) return false;
  return (ecx & (1u << bit)) != 0;
}

// Asked on first use, not during static initialisation (another file's static constructor may
// compute a CRC before libgcc has read the CPU's features).
bool HasClmul() {
  static const bool has = CpuHas(1, 1) && CpuHas(1, 19);  // ECX bit 19: SSE4.1
  return has;
}
bool HasVpclmul() {
  static const bool has = HasClmul() && CpuHas(7, 10);
  return has;
}

#endif  // __x86_64__

}  // namespace

bool Crc32KernelSupported(Crc32Kernel kernel) {
  switch (kernel) {
    case Crc32Kernel::kZlib:
      return true;
#if defined(__x86_64__)
    case Crc32Kernel::kClmul:
      return HasClmul();
    case Crc32Kernel::kClmulAvx512:
      return HasVpclmul() && SimdPathSupported(SimdPath::kAvx512);
#else
    default:
      return false;
#endif
  }
  return false;
}

Crc32Kernel ActiveCrc32Kernel() {
  switch (ActiveSimdPath()) {
    case SimdPath::kDefault:
      return Crc32Kernel::kZlib;
    case SimdPath::kAvx2:
      return Crc32KernelSupported(Crc32Kernel::kClmul) ? Crc32Kernel::kClmul : Crc32Kernel::kZlib;
    case SimdPath::kAvx512:
      if (Crc32KernelSupported(Crc32Kernel::kClmulAvx512)) return Crc32Kernel::kClmulAvx512;
      return Crc32KernelSupported(Crc32Kernel::kClmul) ? Crc32Kernel::kClmul : Crc32Kernel::kZlib;
  }
  return Crc32Kernel::kZlib;
}

uint32_t Crc32ExtendWith(Crc32Kernel kernel, uint32_t crc, const void* data, size_t n) {
  TK_INTERNAL_CHECK(Crc32KernelSupported(kernel));
  const auto* p = static_cast<const uint8_t*>(data);
#if defined(__x86_64__)
  // Below these sizes the folding setup costs more than the table loop.
  if (kernel == Crc32Kernel::kClmulAvx512 && n >= 256) return ClmulAvx512Crc(crc, p, n);
  if (kernel != Crc32Kernel::kZlib && n >= 64) return ClmulCrc(crc, p, n);
#endif
  return ZlibCrc(crc, p, n);
}

uint32_t Crc32Extend(uint32_t crc, const void* data, size_t n) {
  return Crc32ExtendWith(ActiveCrc32Kernel(), crc, data, n);
}

uint32_t Crc32Join(uint32_t crc_a, uint32_t crc_b, uint64_t bytes_b) {
  return static_cast<uint32_t>(crc32_combine64(crc_a, crc_b, static_cast<z_off64_t>(bytes_b)));
}

}  // namespace tensorkit::io
