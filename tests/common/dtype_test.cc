#include "tensorkit/common/dtype.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace tensorkit {
namespace {

using ::testing::HasSubstr;

TEST(DTypeTest, NamesAndSizesRoundTrip) {
  for (int i = 0; i < kNumDTypes; ++i) {
    DType d = static_cast<DType>(i);
    EXPECT_EQ(DTypeFromName(DTypeName(d)), d);
    int64_t size = Dispatch(d, "test", [&]<typename T>() { return int64_t{sizeof(T)}; });
    EXPECT_EQ(DTypeSize(d), size);
  }
  EXPECT_EQ(DTypeSize(DType::kFloat16), 2);
  EXPECT_EQ(DTypeSize(DType::kBFloat16), 2);
  EXPECT_EQ(DTypeSize(DType::kInt64), 8);
  EXPECT_EQ(DTypeFromName("f4"), DType::kFloat32);
  EXPECT_EQ(DTypeFromName("double"), DType::kFloat64);
}

TEST(DTypeTest, UnknownNameThrowsWithKnownNames) {
  try {
    DTypeFromName("float33");
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_THAT(e.what(), HasSubstr("float33"));
    EXPECT_THAT(e.what(), HasSubstr("float32"));
  }
}

TEST(DTypeTest, InvalidEnumValueThrows) {
  DType bogus = static_cast<DType>(200);
  EXPECT_THROW(DTypeSize(bogus), Error);
  EXPECT_THROW(DTypeName(bogus), Error);
  EXPECT_THROW(Dispatch(bogus, "Op", [&]<typename T>() { return 0; }), Error);
}

TEST(DTypeTest, DispatchRejectsDTypeOutsideSetNamingOp) {
  try {
    Dispatch<kNumericDTypes>(DType::kString, "Exp", [&]<typename T>() { return 0; });
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    EXPECT_THAT(e.what(), HasSubstr("Exp"));
    EXPECT_THAT(e.what(), HasSubstr("string"));
  }
}

// CheckDType throws exactly what Dispatch of the same set throws, and nothing inside the set.
TEST(DTypeTest, CheckDTypeMatchesDispatch) {
  EXPECT_NO_THROW(CheckDType<kNumericDTypes>(DType::kInt8, "Exp"));
  EXPECT_NO_THROW(CheckDType<kAllDTypes>(DType::kString, "Copy"));
  std::string dispatched;
  try {
    Dispatch<kFloatDTypes>(DType::kInt32, "Exp", [&]<typename T>() {});
  } catch (const Error& e) {
    dispatched = e.what();
  }
  try {
    CheckDType<kFloatDTypes>(DType::kInt32, "Exp");
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    EXPECT_EQ(e.what(), dispatched);
  }
  EXPECT_THROW(CheckDType<kAllDTypes>(static_cast<DType>(200), "Op"), Error);
}

TEST(DTypeTest, BySizePicksTheUnsignedOfThatWidth) {
  for (int64_t bytes : {1, 2, 4, 8}) {
    int64_t got = 0;
    BySize(bytes, [&]<typename U>() {
      static_assert(std::is_unsigned_v<U>);
      got = sizeof(U);
    });
    EXPECT_EQ(got, bytes);
  }
  EXPECT_THROW(BySize(3, [&]<typename U>() {}), Error);
}

TEST(DTypeTest, ComputeDTypesAreTheNumericOnes) {
  EXPECT_EQ(kComputeDTypes, kNumericDTypes);
  EXPECT_EQ(kComputeDTypes & Bit(DType::kString), 0u);
}

TEST(DTypeTest, DispatchPicksTheCType) {
  EXPECT_TRUE(
      (Dispatch(DType::kFloat16, "t", [&]<typename T>() { return std::is_same_v<T, Half>; })));
  EXPECT_TRUE((
      Dispatch(DType::kString, "t", [&]<typename T>() { return std::is_same_v<T, std::string>; })));
  EXPECT_EQ(DTypeOf<int16_t>, DType::kInt16);
  EXPECT_TRUE((std::is_same_v<CType<DType::kUInt8>, uint8_t>));
  EXPECT_TRUE((std::is_same_v<ComputeType<BFloat16>, float>));
  EXPECT_TRUE(IsFloat(DType::kBFloat16));
  EXPECT_TRUE(IsInteger(DType::kUInt8));
  EXPECT_FALSE(IsInteger(DType::kBool));
}

TEST(HalfTest, ExactValuesRoundTrip) {
  for (float f : {0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 6.103515625e-05f, 5.960464477539063e-08f,
                  1024.0f, 0.333251953125f}) {
    EXPECT_EQ(static_cast<float>(Half(f)), f) << f;
  }
  for (float f : {0.0f, 1.0f, -3.0f, 1.5f, 256.0f}) EXPECT_EQ(static_cast<float>(BFloat16(f)), f);
}

TEST(HalfTest, RoundsToNearestEvenAndSaturatesToInf) {
  EXPECT_EQ(Half(1.0f + 1.0f / 2048).bits, Half(1.0f).bits);  // tie -> even
  EXPECT_EQ(Half(1.0f + 3.0f / 2048).bits, Half(1.0f + 2.0f / 1024).bits);
  EXPECT_TRUE(std::isinf(static_cast<float>(Half(1e6f))));
  EXPECT_TRUE(std::isnan(static_cast<float>(Half(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isnan(static_cast<float>(BFloat16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(Half(1e-10f).bits, 0);
  // Every half bit pattern that is not NaN survives float and back.
  for (uint32_t b = 0; b < 65536; ++b) {
    Half h = Half::FromBits(static_cast<uint16_t>(b));
    float f = h;
    if (std::isnan(f)) continue;
    ASSERT_EQ(Half(f).bits, b);
  }
}

}  // namespace
}  // namespace tensorkit
