// FastDivider and FastDivider32 (common/fast_div.h) against the hardware division: divisors at
// every power of two and its neighbours, dividends at the edges of their range and at random.
#include "tensorkit/common/fast_div.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

namespace tensorkit {
namespace {

// Divisors that stress the multiplier's rounding: 1, 2^k - 1, 2^k, 2^k + 1, and some primes.
std::vector<uint64_t> Divisors(int bits) {
  std::vector<uint64_t> d = {1, 3, 5, 7, 10, 11, 641, 1000003, 2147483647};
  for (int k = 1; k < bits; ++k) {
    const uint64_t p = uint64_t{1} << k;
    for (uint64_t v : {p - 1, p, p + 1}) {
      if (v >= 1 && v < (uint64_t{1} << bits)) d.push_back(v);
    }
  }
  return d;
}

TEST(FastDivTest, ThirtyTwoBitQuotientsMatchTheHardwareBelowTwoToThe31) {
  std::mt19937_64 rng(7);
  for (uint64_t d64 : Divisors(31)) {
    if (d64 >= FastDivider32::kLimit) continue;
    const uint32_t d = static_cast<uint32_t>(d64);
    const FastDivider32 div(d);
    ASSERT_EQ(div.divisor(), d);
    std::vector<uint32_t> ns = {0,
                                1,
                                d - 1,
                                d,
                                d + 1,
                                2 * d - 1,
                                FastDivider32::kLimit - 1,
                                FastDivider32::kLimit - 2,
                                FastDivider32::kLimit - d};
    for (int i = 0; i < 2000; ++i) ns.push_back(static_cast<uint32_t>(rng() >> 33));
    for (uint32_t n : ns) {
      if (n >= FastDivider32::kLimit) continue;
      ASSERT_EQ(div.Divide(n), n / d) << n << " / " << d;
    }
  }
}

TEST(FastDivTest, ThirtyTwoBitQuotientsAreExactForSmallOperandsExhaustively) {
  for (uint32_t d = 1; d <= 300; ++d) {
    const FastDivider32 div(d);
    for (uint32_t n = 0; n < 70000; ++n) ASSERT_EQ(div.Divide(n), n / d) << n << " / " << d;
  }
}

TEST(FastDivTest, SixtyFourBitQuotientsMatchTheHardware) {
  std::mt19937_64 rng(8);
  for (uint64_t d : Divisors(63)) {
    const FastDivider div(d);
    std::vector<uint64_t> ns = {0, 1, d - 1, d, d + 1, ~uint64_t{0}, ~uint64_t{0} - d};
    for (int i = 0; i < 500; ++i) ns.push_back(rng());
    for (uint64_t n : ns) ASSERT_EQ(div.Divide(n), n / d) << n << " / " << d;
  }
}

}  // namespace
}  // namespace tensorkit
