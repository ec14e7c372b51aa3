// The zip CRC-32 kernels against zlib's crc32: every kernel the CPU has, at random lengths,
// alignments, starting values and cuts into pieces, and the kernel each SIMD path picks.
#include "tensorkit/io/crc32.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <random>
#include <string>
#include <vector>

#include "tensorkit/common/simd_path.h"

namespace tensorkit::io {
namespace {

uint32_t Zlib(uint32_t crc, const uint8_t* p, size_t n) {
  return static_cast<uint32_t>(crc32(crc, p, static_cast<uInt>(n)));
}

std::vector<Crc32Kernel> SupportedKernels() {
  std::vector<Crc32Kernel> out;
  for (Crc32Kernel k : {Crc32Kernel::kZlib, Crc32Kernel::kClmul, Crc32Kernel::kClmulAvx512}) {
    if (Crc32KernelSupported(k)) out.push_back(k);
  }
  return out;
}

std::vector<uint8_t> RandomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> b(n);
  for (uint8_t& x : b) x = static_cast<uint8_t>(rng());
  return b;
}

TEST(Crc32Test, CheckValueOfEveryKernel) {
  const std::string s = "123456789";
  for (Crc32Kernel k : SupportedKernels()) {
    SCOPED_TRACE(static_cast<int>(k));
    EXPECT_EQ(Crc32ExtendWith(k, 0, s.data(), s.size()), 0xcbf43926u);
    EXPECT_EQ(Crc32ExtendWith(k, 0, nullptr, 0), 0u);
    EXPECT_EQ(Crc32ExtendWith(k, 0x12345678u, nullptr, 0), 0x12345678u);
  }
}

TEST(Crc32Test, EveryLengthAndAlignmentMatchesZlib) {
  const std::vector<uint8_t> buf = RandomBytes(4096 + 64, 1);
  std::mt19937_64 rng(2);
  for (Crc32Kernel k : SupportedKernels()) {
    SCOPED_TRACE(static_cast<int>(k));
    // Every length through several rounds of the widest kernel's loop (256 bytes a round), at
    // every alignment modulo 64, from a zero and a random starting value.
    for (size_t n = 0; n <= 1100; ++n) {
      const size_t off = n % 64;
      const uint32_t init = (n % 3 == 0) ? 0u : static_cast<uint32_t>(rng());
      ASSERT_EQ(Crc32ExtendWith(k, init, buf.data() + off, n), Zlib(init, buf.data() + off, n))
          << "length " << n << " offset " << off;
    }
    for (int i = 0; i < 300; ++i) {
      const size_t off = rng() % 64, n = rng() % 4096;
      const uint32_t init = static_cast<uint32_t>(rng());
      ASSERT_EQ(Crc32ExtendWith(k, init, buf.data() + off, n), Zlib(init, buf.data() + off, n))
          << "length " << n << " offset " << off;
    }
  }
}

TEST(Crc32Test, PiecesExtendAndJoinToTheWhole) {
  const std::vector<uint8_t> buf = RandomBytes(3 << 20, 3);  // several MiB: long folding runs
  const uint32_t whole = Zlib(0, buf.data(), buf.size());
  std::mt19937_64 rng(4);
  for (Crc32Kernel k : SupportedKernels()) {
    SCOPED_TRACE(static_cast<int>(k));
    EXPECT_EQ(Crc32ExtendWith(k, 0, buf.data(), buf.size()), whole);
    for (int trial = 0; trial < 20; ++trial) {
      // Random cuts, small and large pieces: extending piece by piece and joining per-piece CRCs
      // both give the CRC of the whole.
      uint32_t extended = 0, joined = 0;
      for (size_t at = 0; at < buf.size();) {
        const size_t cap = trial % 2 == 0 ? 300 : (1 << 20);
        const size_t n = std::min<size_t>(buf.size() - at, 1 + rng() % cap);
        extended = Crc32ExtendWith(k, extended, buf.data() + at, n);
        joined = Crc32Join(joined, Crc32ExtendWith(k, 0, buf.data() + at, n), n);
        at += n;
      }
      ASSERT_EQ(extended, whole) << "trial " << trial;
      ASSERT_EQ(joined, whole) << "trial " << trial;
    }
  }
}

TEST(Crc32Test, AllOnesAndZerosMatchZlib) {
  // Bytes that make every product term take part (all ones) or none (zeros).
  for (uint8_t fill : {uint8_t{0}, uint8_t{0xff}}) {
    const std::vector<uint8_t> buf(70000, fill);
    for (Crc32Kernel k : SupportedKernels()) {
      for (uint32_t init : {0u, 0xffffffffu}) {
        EXPECT_EQ(Crc32ExtendWith(k, init, buf.data(), buf.size()),
                  Zlib(init, buf.data(), buf.size()))
            << static_cast<int>(k) << " fill " << int{fill};
      }
    }
  }
}

TEST(Crc32Test, EachSimdPathPicksItsKernel) {
  const SimdPath before = ActiveSimdPath();
  const std::vector<uint8_t> buf = RandomBytes(100000, 5);
  const uint32_t want = Zlib(7, buf.data(), buf.size());
  for (SimdPath path : {SimdPath::kDefault, SimdPath::kAvx2, SimdPath::kAvx512}) {
    if (!SimdPathSupported(path)) continue;
    SetSimdPathForTesting(path);
    const Crc32Kernel k = ActiveCrc32Kernel();
    EXPECT_TRUE(Crc32KernelSupported(k));
    if (path == SimdPath::kDefault) {
      EXPECT_EQ(k, Crc32Kernel::kZlib);
    }
    if (path == SimdPath::kAvx2 && Crc32KernelSupported(Crc32Kernel::kClmul)) {
      EXPECT_EQ(k, Crc32Kernel::kClmul);
    }
    if (path == SimdPath::kAvx512 && Crc32KernelSupported(Crc32Kernel::kClmulAvx512)) {
      EXPECT_EQ(k, Crc32Kernel::kClmulAvx512);
    }
    EXPECT_EQ(Crc32Extend(7, buf.data(), buf.size()), want) << static_cast<int>(path);
  }
  SetSimdPathForTesting(before);
}

}  // namespace
}  // namespace tensorkit::io
