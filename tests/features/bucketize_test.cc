// Bucketize against TensorFlow's kernel tests (bucketize_op_test.py), the naive reference
// (a linear scan) and TensorFlow's edge cases (NaN, -0.0, infinities, float rounding of ints).
#include "tensorkit/features/bucketize.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "reference/features_reference.h"
#include "tensorkit/dense/views.h"
#include "test_util.h"

namespace tensorkit {
namespace {

using testing::AtThreadCounts;
using testing::ExpectError;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// The reference's ids of `values` (C order).
template <typename T, typename B>
std::vector<int32_t> RefIds(const std::vector<T>& values, const std::vector<B>& boundaries) {
  std::vector<int32_t> out;
  for (T v : values) out.push_back(ref::Bucketize(v, boundaries));
  return out;
}

TEST(Bucketize, TensorFlowKernelCases) {
  // bucketize_op_test.py's int, float and 2-D inputs over boundaries [0, 3, 8, 11].
  const std::vector<float> b = {0, 3, 8, 11};
  const std::vector<int32_t> expect = {0, 1, 1, 2, 2, 3, 3, 4, 4};
  const std::vector<int32_t> ints = {-5, 0, 2, 3, 5, 8, 10, 11, 12};
  EXPECT_EQ(Bucketize(Tensor::FromVector(ints), b).ToVector<int32_t>(), expect);
  const std::vector<float> floats = {-5, 0, 2, 3, 5, 8, 10, 11, 12};
  EXPECT_EQ(Bucketize(Tensor::FromVector(floats), b).ToVector<int32_t>(), expect);
  const Tensor two_d =
      Bucketize(Tensor::FromVector<int64_t>({-5, 0, 2, 3, 5, 8, 10, 11, 12, 0}, {2, 5}), b);
  EXPECT_EQ(two_d.Dims(), (std::vector<int64_t>{2, 5}));
  EXPECT_EQ(two_d.dtype(), DType::kInt32);
  EXPECT_EQ(two_d.ToVector<int32_t>(), (std::vector<int32_t>{0, 1, 1, 2, 2, 3, 3, 4, 4, 1}));
  const Tensor empty = Bucketize(Tensor::Empty({0}, DType::kFloat32), b);
  EXPECT_EQ(empty.Dims(), (std::vector<int64_t>{0}));
  ExpectError(
      [&] {
        Bucketize(Tensor::FromVector(floats), {0, 8, 3, 11});
      },
      ErrorCode::kInvalidArgument,
      {"Bucketize: boundaries[2] = 3 is below boundaries[1] = 8", "must be sorted"});
}

TEST(Bucketize, EdgeValuesFollowTensorFlow) {
  const std::vector<float> b = {-1, 0, 1, 5};
  // NaN is below no boundary: the last bucket, as TensorFlow's upper_bound gives. -0.0 equals 0.
  const std::vector<float> v = {kNaN, -0.0f, 0.0f, kInf, -kInf, 5.0f, -1.0f, 4.99f};
  const std::vector<int32_t> got = Bucketize(Tensor::FromVector(v), b).ToVector<int32_t>();
  EXPECT_EQ(got, RefIds(v, b));
  EXPECT_EQ(got, (std::vector<int32_t>{4, 2, 2, 4, 0, 4, 1, 3}));
  // Infinite boundaries and repeated ones (TensorFlow accepts both).
  const std::vector<float> inf_b = {-kInf, 0, 0, kInf};
  EXPECT_EQ(Bucketize(Tensor::FromVector(v), inf_b).ToVector<int32_t>(), RefIds(v, inf_b));
  // Integers compare as float against float boundaries: 16777219 rounds to 16777220.
  const std::vector<int32_t> ints = {16777219, std::numeric_limits<int32_t>::max(),
                                     std::numeric_limits<int32_t>::min()};
  const std::vector<float> fb = {16777220.0f, 2147483648.0f};
  EXPECT_EQ(Bucketize(Tensor::FromVector(ints), fb).ToVector<int32_t>(),
            (std::vector<int32_t>{1, 2, 0}));
  // ... and as double against double boundaries.
  const std::vector<double> db = {16777220.0, 2147483648.0};
  EXPECT_EQ(Bucketize(Tensor::FromVector(ints), db).ToVector<int32_t>(),
            (std::vector<int32_t>{0, 1, 0}));
  const std::vector<int64_t> big = {std::numeric_limits<int64_t>::max(),
                                    std::numeric_limits<int64_t>::min(), 0};
  const std::vector<float> bb = {-9.3e18f, 0.0f, 9.2e18f, 9.3e18f};
  EXPECT_EQ(Bucketize(Tensor::FromVector(big), bb).ToVector<int32_t>(), RefIds(big, bb));
  // No boundaries: one bucket.
  EXPECT_EQ(Bucketize(Tensor::FromVector(v), std::vector<float>{}).ToVector<int32_t>(),
            std::vector<int32_t>(v.size(), 0));
  // A scalar keeps its rank 0.
  EXPECT_EQ(Bucketize(Tensor::FromScalar(3.0), {1.0f}).Dims(), std::vector<int64_t>{});
}

// Every dtype against the reference on random values, boundaries of several sizes (the padding
// to a power of two and the tail of the lanes), and a strided view.
template <typename T>
void CheckRandom(std::mt19937_64& rng, size_t num_boundaries, int64_t n) {
  std::uniform_real_distribution<double> u(-1000, 1000);
  std::vector<float> b;
  for (size_t i = 0; i < num_boundaries; ++i) b.push_back(static_cast<float>(std::round(u(rng))));
  std::sort(b.begin(), b.end());
  std::vector<T> v;
  for (int64_t i = 0; i < n; ++i) {
    const double x = u(rng) * 1.1;
    // Integers, and floats that often hit a boundary exactly.
    v.push_back(static_cast<T>(i % 3 == 0 ? std::round(x) : x));
  }
  const Tensor t = Tensor::FromVector(v, {n / 2, 2});
  EXPECT_EQ(Bucketize(t, b).ToVector<int32_t>(), RefIds(v, b)) << num_boundaries;
  std::vector<double> bd(b.begin(), b.end());
  bd.push_back(2000.5);
  EXPECT_EQ(Bucketize(t, bd).ToVector<int32_t>(), RefIds(v, bd)) << num_boundaries;
  const Tensor tt = Transpose(t, 0, 1);
  EXPECT_EQ(Bucketize(tt, b).ToVector<int32_t>(), RefIds(tt.ToVector<T>(), b));
}

TEST(Bucketize, RandomAgainstReference) {
  std::mt19937_64 rng(7);
  for (size_t nb :
       {size_t{0}, size_t{1}, size_t{2}, size_t{3}, size_t{7}, size_t{64}, size_t{1000}}) {
    CheckRandom<int32_t>(rng, nb, 1002);
    CheckRandom<int64_t>(rng, nb, 1002);
    CheckRandom<float>(rng, nb, 1002);
    CheckRandom<double>(rng, nb, 1002);
  }
}

TEST(Bucketize, SameAtAnyThreadCount) {
  std::mt19937_64 rng(3);
  std::normal_distribution<float> g(0, 100);
  std::vector<float> v(300001), b(1000);
  for (float& x : v) x = g(rng);
  for (float& x : b) x = g(rng);
  std::sort(b.begin(), b.end());
  const Tensor t = Tensor::FromVector(v);
  const auto runs = AtThreadCounts({1, 2}, [&] { return Bucketize(t, b).ToVector<int32_t>(); });
  EXPECT_EQ(runs[0], runs[1]);
  EXPECT_EQ(runs[0], RefIds(v, b));
}

TEST(Bucketize, JaggedAndSparseKeepTheirStructure) {
  const Tensor values = Tensor::FromVector<double>({0.5, 3, -1, 9});
  const JaggedTensor jt = JaggedTensor::FromLengths(values, Tensor::FromVector<int64_t>({1, 0, 3}),
                                                    Tensor::FromVector<float>({1, 2, 3, 4}));
  const JaggedTensor jb = Bucketize(jt, std::vector<float>{0, 1, 5});
  EXPECT_EQ(jb.values().ToVector<int32_t>(), (std::vector<int32_t>{1, 2, 0, 3}));
  EXPECT_TRUE(SharesStorage(jb.offsets(), jt.offsets()));
  EXPECT_TRUE(SharesStorage(jb.weights(), jt.weights()));
  const SparseTensor st = SparseTensor::Create(Tensor::FromVector<int64_t>({0, 1, 2, 0}, {2, 2}),
                                               Tensor::FromVector<int64_t>({4, -4}), {3, 2});
  const SparseTensor sb = Bucketize(st, std::vector<double>{0});
  EXPECT_EQ(sb.values().ToVector<int32_t>(), (std::vector<int32_t>{1, 0}));
  EXPECT_TRUE(SharesStorage(sb.indices(), st.indices()));
  EXPECT_EQ(sb.shape(), st.shape());
}

TEST(Bucketize, IntoAGivenOutput) {
  const Tensor v = Tensor::FromVector<double>({-1, 0.5, 7}, {3, 1});
  Tensor out = Tensor::Zeros({3, 1}, DType::kInt32);
  Bucketize(v, std::vector<float>{0, 1}, &out);
  EXPECT_EQ(out.ToVector<int32_t>(), (std::vector<int32_t>{0, 1, 2}));
  Tensor flat = Tensor::Zeros({3}, DType::kInt32);
  ExpectError([&] { Bucketize(v, std::vector<float>{0}, &flat); }, ErrorCode::kInvalidArgument,
              {"contiguous CPU int32 tensor of dims [3 1]"});
  Tensor wide = Tensor::Zeros({3, 1}, DType::kInt64);
  ExpectError([&] { Bucketize(v, std::vector<double>{0}, &wide); }, {"int32"});
}

TEST(Bucketize, BadInputsAreErrors) {
  const Tensor v = Tensor::FromVector<float>({1, 2});
  ExpectError(
      [&] {
        Bucketize(v, {0, kNaN, 2});
      },
      ErrorCode::kInvalidArgument, {"Bucketize: boundaries[1] is NaN"});
  ExpectError(
      [&] {
        Bucketize(v, std::vector<double>{3, 2});
      },
      ErrorCode::kInvalidArgument, {"boundaries[1] = 2 is below boundaries[0] = 3"});
  ExpectError([&] { Bucketize(Tensor::FromVector<int8_t>({1}), {0}); }, ErrorCode::kUnsupported,
              {"Bucketize"});
  ExpectError([&] { Bucketize(Tensor(), {0}); }, ErrorCode::kInvalidArgument,
              {"Bucketize: values is an undefined tensor"});
}

TEST(Bucketize, BoundariesAsATensor) {
  const Tensor v = Tensor::FromVector(std::vector<double>{-1, 0.5, 2, 7});
  const std::vector<float> bf = {0, 1, 5};
  EXPECT_EQ(Bucketize(v, Tensor::FromVector(bf)).ToVector<int32_t>(),
            Bucketize(v, bf).ToVector<int32_t>());
  const std::vector<double> bd = {0, 1, 5};
  EXPECT_EQ(Bucketize(v, Tensor::FromVector(bd)).ToVector<int32_t>(),
            (std::vector<int32_t>{0, 1, 2, 3}));
  testing::ExpectError([&] { Bucketize(v, Tensor::FromVector(std::vector<int64_t>{1})); },
                       ErrorCode::kInvalidArgument, {"Bucketize", "1-D float32 or float64"});
}

}  // namespace
}  // namespace tensorkit
