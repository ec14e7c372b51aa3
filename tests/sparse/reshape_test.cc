// Reshape (TensorFlow's SparseReshape) against the naive row-major position arithmetic, and the
// fast divider its CPU pass uses.
#include <gtest/gtest.h>

#include <random>

#include "sparse/sparse_test_util.h"
#include "tensorkit/common/fast_div.h"
#include "tensorkit/sparse/reshape_internal.h"
#include "tensorkit/sparse/sparse_ops.h"

namespace tensorkit {
namespace {

using testing::ExpectError;
using testing::Linear;
using testing::MakeSparse;
using testing::Product;
using testing::RandomRows;
using testing::Rows;

// Coordinates of C-order position p in dims.
std::vector<int64_t> Coordinates(int64_t p, const std::vector<int64_t>& dims) {
  std::vector<int64_t> c(dims.size());
  for (int64_t a = static_cast<int64_t>(dims.size()) - 1; a >= 0; --a) {
    c[a] = p % dims[a];
    p /= dims[a];
  }
  return c;
}

TEST(FastDivider, EqualsHardwareDivision) {
  std::mt19937_64 rng(7);
  EXPECT_EQ(FastDivider(0).Divide(12), 12u);  // 0 has no quotient: taken as 1, never a trap
  std::vector<uint64_t> divisors = {1,
                                    2,
                                    3,
                                    5,
                                    7,
                                    10,
                                    641,
                                    1000000007,
                                    (1ull << 32) - 1,
                                    1ull << 32,
                                    (1ull << 32) + 1,
                                    (1ull << 63) - 1,
                                    1ull << 63,
                                    ~0ull};
  for (int i = 0; i < 2000; ++i) divisors.push_back((rng() >> (rng() % 64)) | 1);
  for (uint64_t d : divisors) {
    const FastDivider f(d);
    for (uint64_t n : std::vector<uint64_t>{0, 1, d - 1, d, d + 1, 2 * d, ~0ull, ~0ull - 1}) {
      ASSERT_EQ(f.Divide(n), n / d) << n << " / " << d;
    }
    for (int j = 0; j < 50; ++j) {
      const uint64_t n = rng() >> (rng() % 64);
      ASSERT_EQ(f.Divide(n), n / d) << n << " / " << d;
    }
  }
}

TEST(Reshape, RandomShapesKeepEveryRowMajorPosition) {
  std::mt19937_64 rng(3);
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{6, 4}, {24}},
      {{24}, {2, 3, 4}},
      {{2, 3, 4}, {4, -1}},
      {{5, 7, 3}, {7, 15}},
      {{1, 1, 9}, {3, 3, 1}},
      {{10}, {10}},
      {{4, 6}, {-1, 2, 2}},
      {{3, 0, 2}, {0, 5}},
      {{7, 11, 13}, {13, 11, 7}},
      {{}, {1, 1}},
      {{1}, {}},
      {{2, 3, 5, 7, 2, 3, 5, 7, 2}, {-1}}};
  for (const auto& [shape, new_shape] : cases) {
    const int64_t total = Product(shape);
    const int64_t nnz = total == 0 ? 0 : std::min<int64_t>(total, 300);
    const std::vector<int64_t> rows = RandomRows(rng, nnz, shape);
    std::vector<float> vals(static_cast<size_t>(nnz));
    for (int64_t i = 0; i < nnz; ++i) vals[i] = static_cast<float>(i);
    const SparseTensor st = MakeSparse(rows, vals, shape);
    const SparseTensor out = Reshape(st, new_shape);
    const std::vector<int64_t> dims = ReshapedDims(shape, new_shape);
    EXPECT_EQ(out.shape(), dims);
    EXPECT_EQ(Product(dims), total);
    EXPECT_TRUE(SharesStorage(out.values(), st.values()));
    const std::vector<int64_t> got = Rows(out);
    ASSERT_EQ(static_cast<int64_t>(got.size()), nnz * static_cast<int64_t>(dims.size()));
    for (int64_t i = 0; i < nnz; ++i) {
      const std::vector<int64_t> want = Coordinates(Linear(rows, i, shape), dims);
      for (size_t b = 0; b < dims.size(); ++b)
        ASSERT_EQ(got[i * dims.size() + b], want[b]) << "entry " << i;
    }
    // The engine's composition (the CUDA path) gives the same rows on the CPU.
    Tensor engine = Tensor::Empty({nnz, static_cast<int64_t>(dims.size())}, DType::kInt64);
    sparse_internal::ReshapeInEngine(st.indices(), shape, dims, &engine);
    if (nnz > 0 && !dims.empty()) {
      EXPECT_EQ(engine.ToVector<int64_t>(), got);
    }
  }
}

TEST(Reshape, LargeInputAtOneAndTwoThreads) {
  std::mt19937_64 rng(11);
  const std::vector<int64_t> shape = {1000, 999, 37};
  const std::vector<int64_t> rows = RandomRows(rng, 200000, shape);
  const SparseTensor st = MakeSparse(rows, std::vector<int32_t>(200000, 1), shape);
  const auto results = testing::AtThreadCounts({1, 2}, [&] {
    return Rows(Reshape(st, {37, -1, 27}));
  });
  EXPECT_EQ(results[0], results[1]);
}

TEST(Reshape, OrderCarriesOverOnlyWhenRowMajor) {
  SparseTensor st = MakeSparse<float>({0, 1, 1, 0}, {1, 2}, {2, 3});
  EXPECT_FALSE(Reshape(st, {6}).OrderKnown());
  st.Reorder({0, 1});
  EXPECT_EQ(Reshape(st, {3, 2}).order(), (std::vector<int>{0, 1}));
  st.Reorder({1, 0});
  EXPECT_FALSE(Reshape(st, {3, 2}).OrderKnown());
}

TEST(Reshape, BadShapesAndIndicesAreErrors) {
  const SparseTensor st = MakeSparse<float>({0, 1, 1, 2}, {1, 2}, {2, 3});
  ExpectError([&] { Reshape(st, {4}); }, ErrorCode::kInvalidArgument,
              {"Reshape", "[2 3]", "6 elements", "[4]", "has 4"});
  ExpectError([&] { Reshape(st, {-1, -1}); }, ErrorCode::kInvalidArgument, {"more than one -1"});
  ExpectError([&] { Reshape(st, {-2, -3}); }, ErrorCode::kInvalidArgument, {"dim -2 at axis 0"});
  ExpectError([&] { Reshape(st, {4, -1}); }, ErrorCode::kInvalidArgument, {"not a multiple of 4"});
  ExpectError([&] { Reshape(st, {0, -1}); }, ErrorCode::kInvalidArgument, {"cannot infer"});
  ExpectError(
      [&] {
        Reshape(st, {1ll << 40, 1ll << 40, -1});
      },
      ErrorCode::kInvalidArgument, {"more elements than int64"});
  const SparseTensor big = MakeSparse<float>({0, 0}, {1}, {1ll << 40, 1ll << 40});
  ExpectError([&] { Reshape(big, {-1}); }, ErrorCode::kInvalidArgument,
              {"input shape", "more elements than int64"});
  const SparseTensor bad = MakeSparse<float>({0, 1, 2, 0}, {1, 2}, {2, 3});
  ExpectError([&] { Reshape(bad, {6}); }, ErrorCode::kOutOfRange,
              {"Reshape: entry 1 at [2 0] is out of bounds for shape [2 3]"});
  const SparseTensor none = MakeSparse<float>({0, 0}, {1}, {0, 3});
  ExpectError([&] { Reshape(none, {3, 0}); }, ErrorCode::kOutOfRange, {"entry 0 at [0 0]"});
  EXPECT_EQ(Reshape(MakeSparse<float>({}, {}, {0, 3}), {3, 0}).shape(),
            (std::vector<int64_t>{3, 0}));
  const SparseTensor neg = MakeSparse<float>({0, -1}, {1}, {2, 3});
  ExpectError([&] { Reshape(neg, {6}); }, ErrorCode::kOutOfRange, {"entry 0 at [0 -1]"});
}

}  // namespace
}  // namespace tensorkit
