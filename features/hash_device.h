// tensorkit/features/hash_device.h: the hashes written once for the host and a CUDA device
// (not a public header): SipHash-2-4, farmhash's Fingerprint64 of short byte strings, and the
// decimal form of an integer that TensorFlow's feature columns hash.
//
// Fingerprint64 of strings of any length is farmhash's own (Debian's libfarmhash); the short
// form here covers 0..32 bytes (every int64's decimal string has at most 20), so that integer ids
// hash on a device without a string in memory. hash_test.cc checks it against farmhash at every
// length it covers.
#ifndef TENSORKIT_FEATURES_HASH_DEVICE_H_
#define TENSORKIT_FEATURES_HASH_DEVICE_H_

#include <cstdint>

#include "tensorkit/common/host_device.h"

namespace tensorkit::features_internal {

TK_HOST_DEVICE inline uint64_t RotL(uint64_t v, int b) { return (v << b) | (v >> (64 - b)); }
TK_HOST_DEVICE inline uint64_t RotR(uint64_t v, int b) { return (v >> b) | (v << (64 - b)); }

// Little-endian loads byte by byte: no alignment is assumed (x86-64 and CUDA are little-endian).
TK_HOST_DEVICE inline uint64_t LoadLe(const char* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i)
    v |= static_cast<uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

// --- SipHash-2-4 (Aumasson and Bernstein), TensorFlow's StrongKeyedHash ----------------------

struct SipState {
  uint64_t v0, v1, v2, v3;
  TK_HOST_DEVICE void Round() {
    v0 += v1;
    v1 = RotL(v1, 13) ^ v0;
    v0 = RotL(v0, 32);
    v2 += v3;
    v3 = RotL(v3, 16) ^ v2;
    v0 += v3;
    v3 = RotL(v3, 21) ^ v0;
    v2 += v1;
    v1 = RotL(v1, 17) ^ v2;
    v2 = RotL(v2, 32);
  }
  TK_HOST_DEVICE void Absorb(uint64_t m) {  // two compression rounds per 8-byte word
    v3 ^= m;
    Round();
    Round();
    v0 ^= m;
  }
};

TK_HOST_DEVICE inline uint64_t SipHash24(uint64_t key0, uint64_t key1, const char* s, int64_t n) {
  // The initial constants spell "somepseudorandomlygeneratedbytes"; the last word carries the
  // length's low byte in its top byte.
  SipState st{key0 ^ 0x736f6d6570736575ULL, key1 ^ 0x646f72616e646f6dULL,
              key0 ^ 0x6c7967656e657261ULL, key1 ^ 0x7465646279746573ULL};
  const int64_t full = n & ~int64_t{7};
  for (int64_t i = 0; i < full; i += 8) st.Absorb(LoadLe(s + i, 8));
  st.Absorb(LoadLe(s + full, static_cast<int>(n - full)) | (static_cast<uint64_t>(n & 0xff) << 56));
  st.v2 ^= 0xff;
  for (int r = 0; r < 4; ++r) st.Round();
  return st.v0 ^ st.v1 ^ st.v2 ^ st.v3;
}

// --- Fingerprint64 of 0..32 bytes -------------------------------------------------------------

// farmhash's multipliers.
inline constexpr uint64_t kFarmK0 = 0xc3a5c85c97cb3127ULL;
inline constexpr uint64_t kFarmK1 = 0xb492b66fbe98f273ULL;
inline constexpr uint64_t kFarmK2 = 0x9ae16a3b2f90404fULL;

TK_HOST_DEVICE inline uint64_t FarmMix(uint64_t v) { return v ^ (v >> 47); }

// Two words folded under a multiplier (farmhash's 16-byte step).
TK_HOST_DEVICE inline uint64_t FarmFold(uint64_t u, uint64_t v, uint64_t mul) {
  const uint64_t a = FarmMix((u ^ v) * mul);
  return FarmMix((v ^ a) * mul) * mul;
}

// Fingerprint64 of n <= 32 bytes (the caller keeps n in range).
TK_HOST_DEVICE inline uint64_t ShortFingerprint64(const char* s, int n) {
  const uint64_t mul = kFarmK2 + static_cast<uint64_t>(n) * 2;
  if (n > 16) {
    const uint64_t a = LoadLe(s, 8) * kFarmK1;
    const uint64_t b = LoadLe(s + 8, 8);
    const uint64_t c = LoadLe(s + n - 8, 8) * mul;
    const uint64_t d = LoadLe(s + n - 16, 8) * kFarmK2;
    return FarmFold(RotR(a + b, 43) + RotR(c, 30) + d, a + RotR(b + kFarmK2, 18) + c, mul);
  }
  if (n >= 8) {
    const uint64_t a = LoadLe(s, 8) + kFarmK2;
    const uint64_t b = LoadLe(s + n - 8, 8);
    return FarmFold(RotR(b, 37) * mul + a, (RotR(a, 25) + b) * mul, mul);
  }
  if (n >= 4) {
    return FarmFold(static_cast<uint64_t>(n) + (LoadLe(s, 4) << 3), LoadLe(s + n - 4, 4), mul);
  }
  if (n == 0) return kFarmK2;
  const uint32_t first = static_cast<unsigned char>(s[0]);
  const uint32_t middle = static_cast<unsigned char>(s[n >> 1]);
  const uint32_t last = static_cast<unsigned char>(s[n - 1]);
  const uint32_t y = first + (middle << 8);
  const uint32_t z = static_cast<uint32_t>(n) + (last << 2);
  return FarmMix(y * kFarmK2 ^ z * kFarmK0) * kFarmK2;
}

// --- integers through their decimal string ----------------------------------------------------

// Writes v in decimal ("-12") into out (room for 20 bytes) and returns the length.
TK_HOST_DEVICE inline int WriteDecimal(int64_t v, char* out) {
  // The magnitude as unsigned, so INT64_MIN has one too.
  uint64_t m = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  char rev[20];
  int n = 0;
  do {
    rev[n++] = static_cast<char>('0' + m % 10);
    m /= 10;
  } while (m != 0);
  int len = 0;
  if (v < 0) out[len++] = '-';
  while (n > 0) out[len++] = rev[--n];
  return len;
}

// The hash of an integer id, as TensorFlow's feature columns hash it: of its decimal string,
// by Fingerprint64 or (strong) by SipHash-2-4 under {key0, key1}.
TK_HOST_DEVICE inline uint64_t IntegerHash(int64_t v, bool strong, uint64_t key0, uint64_t key1) {
  char dec[20];
  const int n = WriteDecimal(v, dec);
  return strong ? SipHash24(key0, key1, dec, n) : ShortFingerprint64(dec, n);
}

}  // namespace tensorkit::features_internal

#endif  // TENSORKIT_FEATURES_HASH_DEVICE_H_
