// JaggedTensor and KeyedJaggedTensor: construction, validation, accessors and views.
#include "tensorkit/features/jagged.h"

#include <gtest/gtest.h>

#include "tensorkit/dense/views.h"
#include "test_util.h"

namespace tensorkit {
namespace {

using testing::ExpectError;

TEST(JaggedTensor, FromOffsetsKeepsTheValuesAndViewsRows) {
  Tensor values = Tensor::FromVector<float>({1, 2, 3, 4, 5});
  JaggedTensor jt = JaggedTensor::FromOffsets(values, Tensor::FromVector<int64_t>({0, 2, 2, 5}));
  EXPECT_EQ(jt.batch_size(), 3);
  EXPECT_EQ(jt.num_values(), 5);
  EXPECT_TRUE(SharesStorage(jt.values(), values));
  EXPECT_EQ(jt.lengths().ToVector<int64_t>(), (std::vector<int64_t>{2, 0, 3}));
  EXPECT_EQ(jt.Row(0).ToVector<float>(), (std::vector<float>{1, 2}));
  EXPECT_EQ(jt.Row(1).NumElements(), 0);
  EXPECT_EQ(jt.Row(2).ToVector<float>(), (std::vector<float>{3, 4, 5}));
  EXPECT_TRUE(SharesStorage(jt.Row(2), values));
  EXPECT_FALSE(jt.has_weights());
  ExpectError([&] { jt.Row(3); }, ErrorCode::kOutOfRange, {"JaggedTensor::Row", "3"});
  ExpectError([&] { jt.Row(-1); }, ErrorCode::kOutOfRange, {"JaggedTensor::Row", "-1"});
}

TEST(JaggedTensor, FromLengthsTakesInt32AndInt64) {
  Tensor values = Tensor::FromVector<int64_t>({7, 8, 9}, {3, 1});
  for (JaggedTensor jt :
       {JaggedTensor::FromLengths(values, Tensor::FromVector<int32_t>({1, 0, 2})),
        JaggedTensor::FromLengths(values, Tensor::FromVector<int64_t>({1, 0, 2}))}) {
    EXPECT_EQ(jt.offsets().ToVector<int64_t>(), (std::vector<int64_t>{0, 1, 1, 3}));
    EXPECT_EQ(jt.Row(2).Dims(), (std::vector<int64_t>{2, 1}));
    EXPECT_EQ(jt.Row(2).ToVector<int64_t>(), (std::vector<int64_t>{8, 9}));
  }
}

TEST(JaggedTensor, EmptyBatch) {
  JaggedTensor jt = JaggedTensor::FromOffsets(Tensor::Zeros({0}, DType::kFloat32),
                                              Tensor::FromVector<int64_t>({0}));
  EXPECT_EQ(jt.batch_size(), 0);
  EXPECT_EQ(jt.lengths().NumElements(), 0);
  JaggedTensor jl = JaggedTensor::FromLengths(Tensor::Zeros({0}, DType::kFloat32),
                                              Tensor::Zeros({0}, DType::kInt64));
  EXPECT_EQ(jl.batch_size(), 0);
  EXPECT_EQ(jl.offsets().ToVector<int64_t>(), (std::vector<int64_t>{0}));
}

TEST(JaggedTensor, BadOffsetsNameTheFirstBadOne) {
  Tensor values = Tensor::FromVector<float>({1, 2, 3});
  auto from = [&](std::vector<int64_t> off) {
    return [=] { JaggedTensor::FromOffsets(values, Tensor::FromVector<int64_t>(off)); };
  };
  ExpectError(from({1, 2, 3}), ErrorCode::kInvalidArgument, {"offsets[0] is 1"});
  ExpectError(from({0, 2, 1, 3}), ErrorCode::kInvalidArgument,
              {"offsets[2] = 1 is less than offsets[1] = 2"});
  ExpectError(from({0, 2, 4}), ErrorCode::kShapeMismatch, {"offsets[2] = 4", "3"});
  ExpectError(from({0, 2}), ErrorCode::kShapeMismatch, {"must equal the number of values, 3"});
  ExpectError(
      [&] {
        JaggedTensor::FromOffsets(values, Tensor::FromVector<int32_t>({0, 3}));
      },
      ErrorCode::kDTypeMismatch, {"int64"});
  ExpectError([&] { JaggedTensor::FromOffsets(values, Tensor::Zeros({0}, DType::kInt64)); },
              ErrorCode::kShapeMismatch, {"[B + 1]"});
  ExpectError(
      [&] {
        JaggedTensor::FromOffsets(Tensor::FromScalar<float>(1),
                                  Tensor::FromVector<int64_t>({0, 1}));
      },
      ErrorCode::kShapeMismatch, {"at least one axis"});
}

TEST(JaggedTensor, BadLengthsNameTheFirstBadOne) {
  Tensor values = Tensor::FromVector<float>({1, 2, 3});
  ExpectError(
      [&] {
        JaggedTensor::FromLengths(values, Tensor::FromVector<int64_t>({2, -1, 2}));
      },
      ErrorCode::kInvalidArgument, {"lengths[1] = -1"});
  ExpectError(
      [&] {
        JaggedTensor::FromLengths(values, Tensor::FromVector<int64_t>({2, 2}));
      },
      ErrorCode::kShapeMismatch, {"lengths[1]", "3"});
  ExpectError(
      [&] {
        JaggedTensor::FromLengths(values, Tensor::FromVector<int64_t>({1, 1}));
      },
      ErrorCode::kShapeMismatch, {"add up to 2", "3"});
  // A sum that would overflow int64 is caught before it wraps.
  ExpectError(
      [&] {
        JaggedTensor::FromLengths(values, Tensor::FromVector<int64_t>({INT64_MAX, INT64_MAX, 3}));
      },
      ErrorCode::kShapeMismatch, {"lengths[0]"});
}

TEST(JaggedTensor, WeightsAreCheckedAndViewed) {
  Tensor values = Tensor::FromVector<int64_t>({4, 5, 6});
  Tensor w = Tensor::FromVector<float>({0.5f, 1, 2});
  JaggedTensor jt = JaggedTensor::FromLengths(values, Tensor::FromVector<int64_t>({1, 2}), w);
  ASSERT_TRUE(jt.has_weights());
  EXPECT_EQ(jt.RowWeights(1).ToVector<float>(), (std::vector<float>{1, 2}));
  EXPECT_TRUE(SharesStorage(jt.RowWeights(1), w));
  ExpectError(
      [&] {
        jt.WithWeights(Tensor::FromVector<float>({1, 2}));
      },
      ErrorCode::kShapeMismatch, {"weights must be [3]"});
  ExpectError(
      [&] {
        jt.WithWeights(Tensor::FromVector<int32_t>({1, 2, 3}));
      },
      ErrorCode::kDTypeMismatch, {"float"});
  ExpectError([&] { JaggedTensor().WithWeights(w); }, ErrorCode::kInvalidArgument,
              {"default-constructed"});
}

TEST(KeyedJaggedTensor, GetViewsOneFeature) {
  // Two features, batch of 3: "a" has rows {1}, {}, {2 3}; "b" has {4 5}, {6}, {}.
  Tensor values = Tensor::FromVector<int64_t>({1, 2, 3, 4, 5, 6});
  Tensor weights = Tensor::FromVector<float>({.1f, .2f, .3f, .4f, .5f, .6f});
  KeyedJaggedTensor kjt({"a", "b"}, values, Tensor::FromVector<int32_t>({1, 0, 2, 2, 1, 0}, {2, 3}),
                        weights);
  EXPECT_EQ(kjt.num_keys(), 2);
  EXPECT_EQ(kjt.batch_size(), 3);
  EXPECT_EQ(kjt.lengths().dtype(), DType::kInt64);
  EXPECT_EQ(kjt.offsets().ToVector<int64_t>(), (std::vector<int64_t>{0, 1, 1, 3, 5, 6, 6}));
  EXPECT_EQ(kjt.KeyOffsets(), (std::vector<int64_t>{0, 3, 6}));
  JaggedTensor b = kjt.Get("b");
  EXPECT_TRUE(SharesStorage(b.values(), values));
  EXPECT_EQ(b.offsets().ToVector<int64_t>(), (std::vector<int64_t>{0, 2, 3, 3}));
  EXPECT_EQ(b.Row(0).ToVector<int64_t>(), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(b.RowWeights(1).ToVector<float>(), (std::vector<float>{.6f}));
  EXPECT_EQ(kjt.Get("a").Row(2).ToVector<int64_t>(), (std::vector<int64_t>{2, 3}));
  ExpectError([&] { kjt.Get("c"); }, ErrorCode::kInvalidArgument, {"\"c\"", "\"a\", \"b\""});
}

TEST(KeyedJaggedTensor, BadInputsAreErrors) {
  Tensor values = Tensor::FromVector<int64_t>({1, 2, 3});
  Tensor lengths = Tensor::FromVector<int64_t>({1, 2}, {2, 1});
  ExpectError(
      [&] {
        KeyedJaggedTensor({"a", "a"}, values, lengths);
      },
      ErrorCode::kInvalidArgument, {"\"a\" appears twice"});
  ExpectError(
      [&] {
        KeyedJaggedTensor({"a", ""}, values, lengths);
      },
      ErrorCode::kInvalidArgument, {"key 1"});
  ExpectError([&] { KeyedJaggedTensor({"a"}, values, lengths); }, ErrorCode::kShapeMismatch,
              {"F = 1"});
  ExpectError(
      [&] {
        KeyedJaggedTensor({"a", "b"}, values, Tensor::FromVector<int64_t>({1, 1}, {2, 1}));
      },
      ErrorCode::kShapeMismatch, {"add up to 2"});
}

}  // namespace
}  // namespace tensorkit
