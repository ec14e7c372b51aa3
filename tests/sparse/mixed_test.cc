#include "tensorkit/sparse/mixed.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "spcompute_test_util.h"
#include "test_util.h"

namespace tensorkit {
namespace {

using spcompute_testing::AsDoubles;
using spcompute_testing::DenseOracle;
using spcompute_testing::RandomCoo;
using spcompute_testing::RandomDense;

// The dense operand broadcast to `shape` (right-aligned), as doubles in C order.
std::vector<double> Broadcast(const Tensor& b, const std::vector<int64_t>& shape) {
  const std::vector<double> bv = AsDoubles(b);
  const std::vector<int64_t> bd = b.Dims();
  const int rank = static_cast<int>(shape.size()), brank = static_cast<int>(bd.size());
  std::vector<double> out(static_cast<size_t>(spcompute_testing::Product(shape)));
  for (int64_t lin = 0; lin < static_cast<int64_t>(out.size()); ++lin) {
    int64_t rest = lin, off = 0, mul = 1;
    for (int a = rank - 1; a >= 0; --a) {
      const int64_t i = rest % shape[a];
      rest /= shape[a];
      const int j = a - (rank - brank);
      if (j >= 0) {
        off += (bd[j] == 1 ? 0 : i) * mul;
        mul *= bd[j];
      }
    }
    out[lin] = bv[off];
  }
  return out;
}

const std::vector<std::vector<int64_t>> kDenseDims = {{4, 5, 6}, {6}, {5, 1}, {1, 5, 6}, {}};

TEST(MixedTest, AddSparseDenseMatchesOracle) {
  std::mt19937 rng(41);
  for (const std::vector<int64_t>& dims : kDenseDims) {
    SparseTensor a = RandomCoo<double>(rng, {4, 5, 6}, 50);
    Tensor b = RandomDense<double>(rng, dims);
    const std::vector<double> da = DenseOracle(a), db = Broadcast(b, a.shape());
    std::vector<double> want(da.size());
    for (size_t i = 0; i < da.size(); ++i) want[i] = da[i] + db[i];
    Tensor sum = Add(a, b);
    EXPECT_EQ(sum.Dims(), a.shape());
    EXPECT_EQ(AsDoubles(sum), want) << ShapeString(dims);
  }
  // Strided dense operand (a transposed view) and int32 values.
  SparseTensor a = RandomCoo<int32_t>(rng, {3, 4}, 7);
  Tensor bt = RandomDense<int32_t>(rng, {4, 3});
  Tensor b = spcompute_testing::TransposedView(bt);
  const std::vector<double> da = DenseOracle(a), db = AsDoubles(b);
  std::vector<double> want(da.size());
  for (size_t i = 0; i < da.size(); ++i) want[i] = da[i] + db[i];
  EXPECT_EQ(AsDoubles(Add(a, b)), want);
}

TEST(MixedTest, MulKeepsSparsityAndBroadcasts) {
  std::mt19937 rng(42);
  for (const std::vector<int64_t>& dims : kDenseDims) {
    SparseTensor a = RandomCoo<float>(rng, {4, 5, 6}, 50, true, {});
    Tensor b = RandomDense<float>(rng, dims);
    SparseTensor prod = Mul(a, b);
    EXPECT_TRUE(SharesStorage(prod.indices(), a.indices()));
    EXPECT_EQ(prod.nnz(), a.nnz());
    const std::vector<double> da = DenseOracle(a), db = Broadcast(b, a.shape());
    std::vector<double> want(da.size());
    for (size_t i = 0; i < da.size(); ++i) want[i] = da[i] * db[i];
    EXPECT_EQ(DenseOracle(prod), want) << ShapeString(dims);
  }
}

TEST(MixedTest, AddSparseSparseIsTheUnion) {
  std::mt19937 rng(43);
  SparseTensor a = RandomCoo<int64_t>(rng, {5, 4, 3}, 20);
  SparseTensor b = RandomCoo<int64_t>(rng, {5, 4, 3}, 25);
  SparseTensor sum = Add(a, b);
  const std::vector<double> da = DenseOracle(a), db = DenseOracle(b);
  std::vector<double> want(da.size());
  for (size_t i = 0; i < da.size(); ++i) want[i] = da[i] + db[i];
  EXPECT_EQ(DenseOracle(sum), want);
  EXPECT_EQ(sum.order(), (std::vector<int>{0, 1, 2}));
  EXPECT_TRUE(sum.IndicesValid());
}

using ::tensorkit::testing::ErrorOf;

TEST(MixedTest, RejectsBadInput) {
  std::mt19937 rng(44);
  SparseTensor a = RandomCoo<float>(rng, {4, 5}, 6);
  Tensor wrong_dims = Tensor::Zeros({4}, DType::kFloat32);
  Tensor too_big = Tensor::Zeros({2, 4, 5}, DType::kFloat32);
  Tensor f64 = Tensor::Zeros({4, 5}, DType::kFloat64);
  EXPECT_NE(ErrorOf([&] { Add(a, wrong_dims); }).find("do not broadcast"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { Mul(a, too_big); }).find("do not broadcast"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { Mul(a, f64); }).find("dtypes differ"), std::string::npos);
  SparseTensor b = RandomCoo<double>(rng, {4, 5}, 6);
  EXPECT_NE(ErrorOf([&] { Add(a, b); }).find("dtypes differ"), std::string::npos);
}

}  // namespace
}  // namespace tensorkit
