// tensorkit/io/crc32.h: CRC-32 as zip, gzip and PNG use it (internal to io/ and its tests).
//
// Glossary
//   CRC-32    the reflected CRC with polynomial 0x04C11DB7 (0xEDB88320 reversed), initial value
//             and final xor 0xFFFFFFFF: Crc32Extend(0, "123456789", 9) == 0xCBF43926. The same
//             function as zlib's crc32(crc, data, n), which is the reference in the tests.
//   folding   the carry-less multiply way: the message is cut into 128-bit blocks, and a block's
//             remainder is moved D bits further on by multiplying its two halves by x^(D+63)
//             and x^(D-1) mod P (PCLMULQDQ) and adding the block found there, with several
//             independent accumulators in flight; the last 16 bytes left are reduced with a
//             table. No per-byte table lookups in the loop, so it runs at memory speed.
//   kernel    kZlib (zlib's tables, any CPU), kClmul (128-bit PCLMULQDQ, four accumulators),
//             kClmulAvx512 (VPCLMULQDQ on 512-bit registers, sixteen 128-bit lanes). The
//             default follows ActiveSimdPath() (common/simd_path.h): kDefault runs kZlib, kAvx2
//             kClmul, kAvx512 kClmulAvx512 where the CPU has VPCLMULQDQ (else kClmul). Every
//             kernel gives the same bits.
#ifndef TENSORKIT_IO_CRC32_H_
#define TENSORKIT_IO_CRC32_H_

#include <cstddef>
#include <cstdint>

namespace tensorkit::io {

enum class Crc32Kernel { kZlib, kClmul, kClmulAvx512 };

// CRC-32 of the bytes whose CRC-32 is `crc` (0 for none) followed by [data, data + n).
uint32_t Crc32Extend(uint32_t crc, const void* data, size_t n);
// The same with a given kernel, which must be supported (tests and the benchmark).
uint32_t Crc32ExtendWith(Crc32Kernel kernel, uint32_t crc, const void* data, size_t n);
// Whether this CPU can run `kernel`.
bool Crc32KernelSupported(Crc32Kernel kernel);
// The kernel Crc32Extend uses now.
Crc32Kernel ActiveCrc32Kernel();
// CRC-32 of a || b from crc(a), crc(b) and the length of b (zlib's crc32_combine).
uint32_t Crc32Join(uint32_t crc_a, uint32_t crc_b, uint64_t bytes_b);

}  // namespace tensorkit::io

#endif  // TENSORKIT_IO_CRC32_H_
