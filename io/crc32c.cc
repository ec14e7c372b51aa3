// CRC-32C: slicing-by-8 tables, and SSE4.2 with three interleaved streams where the CPU has it.
#include "tensorkit/io/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace tensorkit::io {
namespace {

constexpr uint32_t kPoly = 0x82f63b78u;  // reflected 0x1EDC6F41

// Table k maps a byte to its CRC contribution k bytes further on (slicing-by-8).
struct Tables {
  uint32_t t[8][256];
  Tables() {
    for (uint32_t b = 0; b < 256; ++b) {
      uint32_t c = b;
      for (int i = 0; i < 8; ++i) c = (c >> 1) ^ ((c & 1) ? kPoly : 0);
      t[0][b] = c;
    }
    for (int k = 1; k < 8; ++k) {
      for (uint32_t b = 0; b < 256; ++b) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xff];
    }
  }
};
const Tables& T() {
  static const Tables tables;
  return tables;
}

uint64_t Load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;  // little-endian targets only (file_util.h's kLittleEndian)
}

// The register after [p, p + n) from register `state` (no pre or post inversion).
uint32_t PortableState(uint32_t state, const uint8_t* p, size_t n) {
  const Tables& tb = T();
  while (n >= 8) {
    const uint64_t v = Load64(p) ^ state;
    state = tb.t[7][v & 0xff] ^ tb.t[6][(v >> 8) & 0xff] ^ tb.t[5][(v >> 16) & 0xff] ^
            tb.t[4][(v >> 24) & 0xff] ^ tb.t[3][(v >> 32) & 0xff] ^ tb.t[2][(v >> 40) & 0xff] ^
            tb.t[1][(v >> 48) & 0xff] ^ tb.t[0][v >> 56];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) state = (state >> 8) ^ tb.t[0][(state ^ *p++) & 0xff];
  return state;
}

#if defined(__x86_64__)
// The register after L zero bytes is a linear function of the register before: a table per
// byte of the register gives it in four lookups, which joins the interleaved streams
// (crc(a || b) == Shift(crc(a), |b|) ^ crc0(b)).
struct ShiftTable {
  uint32_t t[4][256];
  explicit ShiftTable(size_t zeros) {
    static const std::array<uint8_t, 8192> kZeros{};
    uint32_t bit[32];
    for (int b = 0; b < 32; ++b) {
      uint32_t s = 1u << b;
      for (size_t left = zeros; left > 0;) {
        const size_t k = left < kZeros.size() ? left : kZeros.size();
        s = PortableState(s, kZeros.data(), k);
        left -= k;
      }
      bit[b] = s;
    }
    for (int k = 0; k < 4; ++k) {
      for (uint32_t v = 0; v < 256; ++v) {
        uint32_t s = 0;
        for (int b = 0; b < 8; ++b) {
          if (v & (1u << b)) s ^= bit[8 * k + b];
        }
        t[k][v] = s;
      }
    }
  }
  uint32_t operator()(uint32_t s) const {
    return t[0][s & 0xff] ^ t[1][(s >> 8) & 0xff] ^ t[2][(s >> 16) & 0xff] ^ t[3][s >> 24];
  }
};

// Block sizes of the three streams: long buffers use the large one, records of a few KB the
// small one; below 3 small blocks the single stream is as fast as the join costs.
constexpr size_t kLongBlock = 8192, kShortBlock = 256;

const ShiftTable& LongShift() {
  static const ShiftTable table(kLongBlock);
  return table;
}
const ShiftTable& ShortShift() {
  static const ShiftTable table(kShortBlock);
  return table;
}

// Three streams of `block` bytes each, as many rounds as fit.
__attribute__((target("sse4.2"))) uint32_t HardwareRounds(uint32_t state, const uint8_t** p,
                                                          size_t* n, size_t block,
                                                          const ShiftTable& shift) {
  while (*n >= 3 * block) {
    const uint8_t* a = *p;
    const uint8_t* b = a + block;
    const uint8_t* c = b + block;
    uint64_t sa = state, sb = 0, sc = 0;
    for (size_t i = 0; i < block; i += 8) {
      sa = _mm_crc32_u64(sa, Load64(a + i));
      sb = _mm_crc32_u64(sb, Load64(b + i));
      sc = _mm_crc32_u64(sc, Load64(c + i));
    }
    state = shift(shift(static_cast<uint32_t>(sa)) ^ static_cast<uint32_t>(sb)) ^
            static_cast<uint32_t>(sc);
    *p += 3 * block;
    *n -= 3 * block;
  }
  return state;
}

__attribute__((target("sse4.2"))) uint32_t HardwareState(uint32_t state, const uint8_t* p,
                                                         size_t n) {
  if (n >= 3 * kLongBlock) state = HardwareRounds(state, &p, &n, kLongBlock, LongShift());
  if (n >= 3 * kShortBlock) state = HardwareRounds(state, &p, &n, kShortBlock, ShortShift());
  uint64_t s = state;
  for (; n >= 8; p += 8, n -= 8) s = _mm_crc32_u64(s, Load64(p));
  state = static_cast<uint32_t>(s);
  for (; n > 0; ++p, --n) state = _mm_crc32_u8(state, *p);
  return state;
}

bool DetectHardware() {
  if (!__builtin_cpu_supports("sse4.2")) return false;
  LongShift();  // build the tables once, before any concurrent use
  ShortShift();
  return true;
}
#endif

const bool kHardware =
#if defined(__x86_64__)
    DetectHardware();
#else
    false;
#endif

}  // namespace

uint32_t Crc32cPortable(uint32_t crc, const void* data, size_t n) {
  return ~PortableState(~crc, static_cast<const uint8_t*>(data), n);
}

uint32_t Crc32cExtend(uint32_t crc, const void* data, size_t n) {
#if defined(__x86_64__)
  if (kHardware) return ~HardwareState(~crc, static_cast<const uint8_t*>(data), n);
#endif
  return Crc32cPortable(crc, data, n);
}

uint32_t Crc32c(const void* data, size_t n) { return Crc32cExtend(0, data, n); }

bool Crc32cIsHardware() { return kHardware; }

}  // namespace tensorkit::io
