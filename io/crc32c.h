// tensorkit/io/crc32c.h: CRC-32C (Castagnoli), the checksum of TFRecord framing (internal to
// io/ and its tests).
//
// Glossary
//   CRC-32C   the reflected CRC with polynomial 0x1EDC6F41 (0x82F63B78 reversed), initial value
//             and final xor 0xFFFFFFFF: Crc32c("123456789") == 0xE3069283.
//   extend    Crc32cExtend(Crc32c(a), b) == Crc32c(a + b), for checksums of pieces.
//   hardware  x86-64 SSE4.2's crc32 instruction, chosen at run time (the build needs no
//             -msse4.2); three independent streams over fixed blocks hide the instruction's
//             latency and are joined with a precomputed shift table. Elsewhere a portable
//             slicing-by-8 table; both give the same bits (tested at every length).
//   masked    TFRecord stores ((crc >> 15) | (crc << 17)) + 0xA282EAD8, so that a CRC of bytes
//             that themselves hold CRCs stays well distributed.
#ifndef TENSORKIT_IO_CRC32C_H_
#define TENSORKIT_IO_CRC32C_H_

#include <cstddef>
#include <cstdint>

namespace tensorkit::io {

// CRC-32C of [data, data + n).
uint32_t Crc32c(const void* data, size_t n);
// CRC-32C of the bytes whose CRC-32C is `crc`, followed by [data, data + n).
uint32_t Crc32cExtend(uint32_t crc, const void* data, size_t n);
// The portable table version, whatever the CPU (for tests and the benchmark).
uint32_t Crc32cPortable(uint32_t crc, const void* data, size_t n);
// Whether Crc32c uses the SSE4.2 instruction on this machine.
bool Crc32cIsHardware();

inline constexpr uint32_t kCrcMaskDelta = 0xa282ead8u;
inline uint32_t MaskCrc(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kCrcMaskDelta; }
inline uint32_t UnmaskCrc(uint32_t masked) {
  const uint32_t rot = masked - kCrcMaskDelta;
  return (rot >> 17) | (rot << 15);
}

}  // namespace tensorkit::io

#endif  // TENSORKIT_IO_CRC32C_H_
