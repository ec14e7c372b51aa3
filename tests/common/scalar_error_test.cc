#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "tensorkit/common/error.h"
#include "tensorkit/common/scalar.h"

namespace tensorkit {
namespace {

using ::testing::HasSubstr;

TEST(ScalarTest, KeepsIntegersExact) {
  Scalar big = std::numeric_limits<int64_t>::max();
  EXPECT_TRUE(big.is_integer());
  EXPECT_EQ(big.To<int64_t>(), std::numeric_limits<int64_t>::max());
  Scalar f = 2.5f;
  EXPECT_FALSE(f.is_integer());
  EXPECT_EQ(f.To<double>(), 2.5);
  EXPECT_EQ(f.To<int32_t>(), 2);
  EXPECT_EQ(Scalar(true).To<int>(), 1);
  EXPECT_TRUE(Scalar(0.5).To<bool>());
  EXPECT_EQ(static_cast<float>(Scalar(1.5).To<Half>()), 1.5f);
  EXPECT_EQ(Scalar(3), Scalar(3.0));
}

TEST(ErrorTest, CarriesCodeAndMessage) {
  try {
    TK_CHECK(1 + 1 == 3, kShapeMismatch, "Slice: end ", 12, " is out of range for dims ",
             ShapeString(std::vector<int64_t>{4, 10}));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kShapeMismatch);
    EXPECT_STREQ(e.what(), "Slice: end 12 is out of range for dims [4 10]");
    EXPECT_STREQ(ErrorCodeName(e.code()), "ShapeMismatch");
  }
  EXPECT_THROW(TK_INTERNAL_CHECK(false), std::runtime_error);
  EXPECT_EQ(ShapeString(std::vector<int8_t>{1, -2}), "[1 -2]");
}

}  // namespace
}  // namespace tensorkit
