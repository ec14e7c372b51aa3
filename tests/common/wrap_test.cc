#include "tensorkit/common/wrap.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace tensorkit {
namespace {

// Exact a op b reduced modulo 2^bits of T, computed in 64-bit unsigned arithmetic (the naive
// reference of NumPy's wrap-around).
template <typename T>
T Reference(int64_t a, int64_t b, char op) {
  const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  const uint64_t r = op == '+' ? ua + ub : op == '-' ? ua - ub : ua * ub;
  return static_cast<T>(r);  // modulo 2^bits (C++20)
}

template <typename T>
void CheckType() {
  std::mt19937_64 rng(sizeof(T) * 7 + std::is_signed_v<T>);
  std::vector<int64_t> edge = {0,
                               1,
                               2,
                               -1,
                               static_cast<int64_t>(std::numeric_limits<T>::max()),
                               static_cast<int64_t>(std::numeric_limits<T>::min())};
  for (int i = 0; i < 200; ++i) edge.push_back(static_cast<int64_t>(static_cast<T>(rng())));
  for (int64_t x : edge) {
    for (int64_t y : edge) {
      const T a = static_cast<T>(x), b = static_cast<T>(y);
      ASSERT_EQ(AddW(a, b), Reference<T>(a, b, '+')) << +a << " + " << +b;
      ASSERT_EQ(SubW(a, b), Reference<T>(a, b, '-')) << +a << " - " << +b;
      ASSERT_EQ(MulW(a, b), Reference<T>(a, b, '*')) << +a << " * " << +b;
    }
  }
}

TEST(WrapTest, IntegersWrapModuloTheirWidth) {
  CheckType<int8_t>();
  CheckType<uint8_t>();
  CheckType<int16_t>();
  CheckType<uint16_t>();  // uint16 * uint16 would overflow int without the unsigned widening
  CheckType<int32_t>();
  CheckType<uint32_t>();
  CheckType<int64_t>();
  CheckType<uint64_t>();
}

TEST(WrapTest, BoolIsOrAndAndXor) {
  for (bool a : {false, true}) {
    for (bool b : {false, true}) {
      EXPECT_EQ(AddW(a, b), a || b);
      EXPECT_EQ(MulW(a, b), a && b);
      EXPECT_EQ(SubW(a, b), a != b);
    }
  }
}

TEST(WrapTest, FloatsArePlainArithmetic) {
  EXPECT_EQ(AddW(0.1, 0.2), 0.1 + 0.2);
  EXPECT_EQ(MulW(3.0f, 1e38f), 3.0f * 1e38f);  // inf, as in plain arithmetic
  EXPECT_EQ(SubW(1.0, 3.0), -2.0);
}

}  // namespace
}  // namespace tensorkit
