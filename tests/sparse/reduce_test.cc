#include "tensorkit/sparse/reduce.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>

#include "spcompute_test_util.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/dense/views.h"
#include "test_util.h"

namespace tensorkit {
namespace {

using spcompute_testing::AsDoubles;
using spcompute_testing::DenseOracle;
using spcompute_testing::RandomCoo;
using ::tensorkit::testing::AtThreadCounts;

// Reduces a dense C-order array of `shape` over `axes` with `combine`, starting each output at
// its first element (so max/min see every position, zeros included).
std::vector<double> DenseReduce(const std::vector<double>& dense, const std::vector<int64_t>& shape,
                                const std::vector<int>& axes,
                                const std::function<double(double, double)>& combine) {
  const int rank = static_cast<int>(shape.size());
  std::vector<bool> reduced(rank, false);
  for (int a : axes) reduced[a < 0 ? a + rank : a] = true;
  int64_t out_size = 1;
  for (int a = 0; a < rank; ++a) {
    if (!reduced[a]) out_size *= shape[a];
  }
  std::vector<double> out(static_cast<size_t>(out_size), 0.0);
  std::vector<bool> seen(out.size(), false);
  for (int64_t lin = 0; lin < static_cast<int64_t>(dense.size()); ++lin) {
    int64_t rest = lin, key = 0, mul = 1;
    for (int a = rank - 1; a >= 0; --a) {
      const int64_t i = rest % shape[a];
      rest /= shape[a];
      if (!reduced[a]) {
        key += i * mul;
        mul *= shape[a];
      }
    }
    out[key] = seen[key] ? combine(out[key], dense[lin]) : dense[lin];
    seen[key] = true;
  }
  return out;
}

const std::vector<std::vector<int>> kAxisSets = {{},     {0},    {1},     {2},       {-1},
                                                 {0, 1}, {0, 2}, {1, -1}, {0, 1, 2}, {2, 0}};

TEST(ReduceTest, SumMaxMinMatchDenseOracle) {
  std::mt19937 rng(31);
  for (std::vector<int64_t> shape :
       std::vector<std::vector<int64_t>>{{4, 5, 3}, {1, 7, 2}, {6, 1, 9}, {3, 0, 2}}) {
    for (int64_t nnz : {0, 5, 40}) {
      if (spcompute_testing::Product(shape) == 0 && nnz > 0) continue;
      SparseTensor st = RandomCoo<double>(rng, shape, nnz);
      SparseTensor sti = RandomCoo<int32_t>(rng, shape, nnz);
      const std::vector<double> dense = DenseOracle(st), densei = DenseOracle(sti);
      for (const std::vector<int>& axes : kAxisSets) {
        SCOPED_TRACE(ShapeString(shape) + " nnz " + std::to_string(nnz) + " axes " +
                     ShapeString(axes));
        auto plus = [](double x, double y) { return x + y; };
        auto mx = [](double x, double y) { return std::max(x, y); };
        auto mn = [](double x, double y) { return std::min(x, y); };
        EXPECT_EQ(AsDoubles(ReduceSum(st, axes)), DenseReduce(dense, shape, axes, plus));
        EXPECT_EQ(AsDoubles(ReduceSum(sti, axes)), DenseReduce(densei, shape, axes, plus));
        Tensor sparse_sum = ReduceSumSparse(st, axes).ToDense();
        EXPECT_EQ(AsDoubles(sparse_sum), DenseReduce(dense, shape, axes, plus));
        bool empty_slices = false;
        for (int a : axes) empty_slices |= shape[a < 0 ? a + 3 : a] == 0;
        if (empty_slices && axes.size() < 3) {
          EXPECT_THROW(ReduceMax(st, axes), Error);
          continue;
        }
        if (empty_slices) continue;
        EXPECT_EQ(AsDoubles(ReduceMax(st, axes)), DenseReduce(dense, shape, axes, mx));
        EXPECT_EQ(AsDoubles(ReduceMin(sti, axes)), DenseReduce(densei, shape, axes, mn));
        // Sparse extremes: entries where some entry is stored, values of the dense reduction.
        SparseTensor smax = ReduceMaxSparse(st, axes), smin = ReduceMinSparse(sti, axes);
        EXPECT_EQ(AsDoubles(smax.ToDense()), DenseReduce(dense, shape, axes, mx));
        EXPECT_EQ(AsDoubles(smin.ToDense()), DenseReduce(densei, shape, axes, mn));
        EXPECT_EQ(smax.indices().ToVector<int64_t>(),
                  ReduceSumSparse(st, axes).indices().ToVector<int64_t>());
        EXPECT_EQ(smin.indices().ToVector<int64_t>(),
                  ReduceSumSparse(sti, axes).indices().ToVector<int64_t>());
      }
    }
  }
}

TEST(ReduceTest, OutputDims) {
  std::mt19937 rng(32);
  SparseTensor st = RandomCoo<float>(rng, {4, 5, 3}, 10);
  EXPECT_EQ(ReduceSum(st, {1}).Dims(), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(ReduceSum(st, {0, 1, 2}).NumAxes(), 0);
  EXPECT_EQ(ReduceSum(st, {}).Dims(), (std::vector<int64_t>{4, 5, 3}));
  SparseTensor s = ReduceSumSparse(st, {2});
  EXPECT_EQ(s.shape(), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(s.order(), (std::vector<int>{0, 1}));
  EXPECT_TRUE(s.IndicesValid());
}

TEST(ReduceTest, MaxOfNegativeEntriesIncludesImplicitZero) {
  // Row 0: stored -3 and -1 with one absent entry -> max 0; row 1: all three stored.
  SparseTensor st =
      SparseTensor::Create(Tensor::FromVector<int64_t>({0, 0, 0, 2, 1, 0, 1, 1, 1, 2}, {5, 2}),
                           Tensor::FromVector<double>({-3, -1, -5, -6, -7}), {2, 3});
  EXPECT_EQ(ReduceMax(st, {1}).ToVector<double>(), (std::vector<double>{0, -5}));
  EXPECT_EQ(ReduceMin(st, {1}).ToVector<double>(), (std::vector<double>{-3, -7}));
}

// NaN propagates wherever it stands among a slice's entries (NumPy's max / min, the dense Max /
// Min), and a NaN made by summing duplicates counts too.
TEST(ReduceTest, MaxAndMinPropagateNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  // Row 0: NaN first; row 1: NaN last; row 2: inf + -inf duplicates at (2, 1); row 3: no NaN.
  SparseTensor st = SparseTensor::Create(
      Tensor::FromVector<int64_t>({0, 0, 0, 1, 1, 0, 1, 1, 2, 1, 2, 1, 2, 0, 3, 0, 3, 1}, {9, 2}),
      Tensor::FromVector<double>({nan, 5, 7, nan, inf, -inf, 2, 4, -1}), {4, 2});
  for (const Tensor& r : {ReduceMax(st, {1}), ReduceMin(st, {1})}) {
    const std::vector<double> v = r.ToVector<double>();
    EXPECT_TRUE(std::isnan(v[0]) && std::isnan(v[1]) && std::isnan(v[2]));
  }
  EXPECT_EQ(ReduceMax(st, {1}).ToVector<double>()[3], 4);
  EXPECT_EQ(ReduceMin(st, {1}).ToVector<double>()[3], -1);
  const std::vector<double> sparse_max = ReduceMaxSparse(st, {1}).values().ToVector<double>();
  ASSERT_EQ(sparse_max.size(), 4u);
  EXPECT_TRUE(std::isnan(sparse_max[0]) && std::isnan(sparse_max[1]));
  // The same through the dense operations on the dense form.
  const Tensor dense = st.ToDense();
  EXPECT_TRUE(std::isnan(Max(Select(dense, 1, 0), Select(dense, 1, 1)).ToVector<double>()[1]));
}

TEST(ReduceTest, DuplicatesAreSummedBeforeMax) {
  // Two entries at (0, 0): 4 + 5 = 9 is the value there.
  SparseTensor st = SparseTensor::Create(Tensor::FromVector<int64_t>({0, 0, 0, 0, 0, 1}, {3, 2}),
                                         Tensor::FromVector<int64_t>({4, 5, 6}), {1, 2});
  EXPECT_EQ(ReduceMax(st, {1}).ToVector<int64_t>(), (std::vector<int64_t>{9}));
}

TEST(ReduceTest, SparseSumOverHugeShapeUsesSortPath) {
  std::mt19937 rng(33);
  SparseTensor st = RandomCoo<int64_t>(rng, {1000000, 1000000, 3}, 50);
  SparseTensor s = ReduceSumSparse(st, {2});
  SparseTensor by_rows = ReduceSumSparse(st, {1, 2});
  // Compare with the dense sum over the small axes after reducing the huge one away.
  EXPECT_EQ(AsDoubles(ReduceSum(s, {1})), AsDoubles(by_rows.ToDense()));
  EXPECT_TRUE(s.IndicesValid());
  int64_t total = 0;
  for (int64_t v : st.values().ToVector<int64_t>()) total += v;
  int64_t sum_s = 0;
  for (int64_t v : s.values().ToVector<int64_t>()) sum_s += v;
  EXPECT_EQ(sum_s, total);
  // Max and min take the same sort path; reducing in two steps gives the one-step result.
  for (bool is_max : {true, false}) {
    auto sparse = is_max ? ReduceMaxSparse : ReduceMinSparse;
    auto dense = is_max ? ReduceMax : ReduceMin;
    SparseTensor step = sparse(st, {2});
    EXPECT_EQ(step.indices().ToVector<int64_t>(), s.indices().ToVector<int64_t>());
    EXPECT_EQ(AsDoubles(dense(step, {1})), AsDoubles(sparse(st, {1, 2}).ToDense()));
  }
}

TEST(ReduceTest, SumDoesNotDependOnThreadCount) {
  std::mt19937 rng(34);
  SparseTensor st = RandomCoo<float>(rng, {300, 200}, 100000);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(100000);
  for (float& x : v) x = u(rng);
  SparseTensor sf = SparseTensor::Create(st.indices(), Tensor::FromVector(v), st.shape());
  const std::vector<std::vector<float>> sums =
      AtThreadCounts({1, 4}, [&] { return ReduceSum(sf, {1}).ToVector<float>(); });
  EXPECT_EQ(sums[0], sums[1]);
}

TEST(ReduceTest, RowNnzCountsStoredEntries) {
  std::mt19937 rng(35);
  SparseTensor st = RandomCoo<double>(rng, {6, 4, 5}, 60);
  const std::vector<int64_t> idx = st.indices().ToVector<int64_t>();
  for (int axis : {0, 1, 2, -1}) {
    const int a = axis < 0 ? axis + 3 : axis;
    std::vector<int64_t> want(static_cast<size_t>(st.shape()[a]), 0);
    for (int64_t e = 0; e < st.nnz(); ++e) ++want[idx[e * 3 + a]];
    EXPECT_EQ(RowNnz(st, axis).ToVector<int64_t>(), want);
  }
}

TEST(ReduceTest, RejectsBadInput) {
  std::mt19937 rng(36);
  SparseTensor st = RandomCoo<double>(rng, {3, 4}, 5);
  EXPECT_THROW(ReduceSum(st, {2}), Error);
  EXPECT_THROW(ReduceSum(st, {0, -2}), Error);
  EXPECT_THROW(RowNnz(st, 5), Error);
  SparseTensor bools = SparseTensor::Create(Tensor::Zeros({1, 2}, DType::kInt64),
                                            Tensor::Zeros({1}, DType::kBool), {3, 4});
  EXPECT_THROW(ReduceSum(bools, {0}), Error);
  SparseTensor bad = SparseTensor::Create(Tensor::FromVector<int64_t>({0, 9}, {1, 2}),
                                          Tensor::Zeros({1}, DType::kFloat64), {3, 4});
  try {
    ReduceSum(bad, {0});
    ADD_FAILURE() << "no Error";
  } catch (const Error& e) {
    EXPECT_NE(
        std::string(e.what()).find("ReduceSum: entry 0 at [0 9] is out of bounds for shape [3 4]"),
        std::string::npos);
  }
}

}  // namespace
}  // namespace tensorkit
