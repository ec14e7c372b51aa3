// SparseTensor: validation, Reorder, group and Coalesce.
#include "tensorkit/sparse/sparse_tensor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>

#include "sparse/sparse_test_util.h"

namespace tensorkit {
namespace {

using testing::ExpectError;
using testing::Linear;
using testing::MakeSparse;
using testing::RandomRows;
using testing::RandomUniqueRows;
using testing::RandomValues;
using testing::Rows;

// Indices stored transposed ([rank, n] storage viewed as [n, rank]): a non-contiguous view.
Tensor StridedIndices(const std::vector<int64_t>& rows, int64_t n, int64_t rank) {
  std::vector<int64_t> t(static_cast<size_t>(n * rank));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t a = 0; a < rank; ++a) t[a * n + i] = rows[i * rank + a];
  }
  Tensor base = Tensor::FromVector(t, {rank, n});
  return base.WithPattern(MakePattern({n, rank}, {1, n}));
}

// ----- validation ---------------------------------------------------------------------------

TEST(SparseValidate, AcceptsSortedUniqueIndices) {
  SparseTensor st = MakeSparse<float>({0, 1, 1, 0, 2, 3}, {1, 2, 3}, {3, 4}, {0, 1});
  EXPECT_TRUE(st.IndicesValid());
  EXPECT_NO_THROW(st.ValidateIndices());
}

TEST(SparseValidate, OutOfBoundsNamesEntryCoordinatesAndAxis) {
  SparseTensor st = MakeSparse<float>({0, 1, 1, 2, 2, 9, 3, 7}, {1, 2, 3, 4}, {3, 10}, {0, 1});
  EXPECT_FALSE(st.IndicesValid());
  ExpectError([&] { st.ValidateIndices(); },
              {"ValidateIndices", "entry 3", "[3 7]", "out of bounds", "[3 10]", "axis 0: 3 >= 3"});
}

TEST(SparseValidate, NegativeIndexIsOutOfBounds) {
  SparseTensor st = MakeSparse<float>({0, 1, 1, -1}, {1, 2}, {3, 10});
  EXPECT_FALSE(st.IndicesValid());
  ExpectError([&] { st.ValidateIndices(); }, {"entry 1", "[1 -1]", "axis 1: -1 < 0"});
}

TEST(SparseValidate, NamesTheFirstBadEntryInSequence) {
  // Bounds and order are judged entry by entry (as TensorFlow's IndicesValid): an unordered
  // entry before an out-of-bounds one is the one named, and the other way round.
  SparseTensor unordered_first = MakeSparse<float>({2, 0, 1, 0, 9, 9}, {1, 2, 3}, {3, 3}, {0, 1});
  ExpectError([&] { unordered_first.ValidateIndices(); },
              {"entry 1 at [1 0]", "not after entry 0 at [2 0]"});
  SparseTensor out_first = MakeSparse<float>({0, 0, 5, 0, 1, 0}, {1, 2, 3}, {3, 3}, {0, 1});
  ExpectError([&] { out_first.ValidateIndices(); }, {"entry 1 at [5 0]", "axis 0: 5 >= 3"});
  // Ranks past the specialised ones, and a non-identity order.
  std::vector<int64_t> rows;
  for (int64_t i = 0; i < 6; ++i) {
    for (int64_t a = 0; a < 6; ++a) rows.push_back(a == 5 ? i : 0);  // sorted by the last axis
  }
  SparseTensor rank6 =
      MakeSparse<float>(rows, std::vector<float>(6, 1), {1, 1, 1, 1, 1, 6}, {5, 0, 1, 2, 3, 4});
  EXPECT_TRUE(rank6.IndicesValid());
  rows[3 * 6 + 5] = 2;  // entry 3 repeats entry 2
  SparseTensor repeat6 =
      MakeSparse<float>(rows, std::vector<float>(6, 1), {1, 1, 1, 1, 1, 6}, {5, 0, 1, 2, 3, 4});
  ExpectError([&] { repeat6.ValidateIndices(); }, {"entry 3 at [0 0 0 0 0 2]", "repeats entry 2"});
}

TEST(SparseValidate, KnownOrderRequiresStrictIncrease) {
  SparseTensor unsorted = MakeSparse<float>({0, 1, 2, 0, 1, 3}, {1, 2, 3}, {3, 4}, {0, 1});
  EXPECT_FALSE(unsorted.IndicesValid());
  ExpectError([&] { unsorted.ValidateIndices(); },
              {"entry 2 at [1 3]", "not after entry 1 at [2 0]", "order [0 1]", "Reorder"});
  SparseTensor repeated = MakeSparse<float>({0, 1, 1, 0, 1, 0}, {1, 2, 3}, {3, 4}, {0, 1});
  EXPECT_FALSE(repeated.IndicesValid());
  ExpectError([&] { repeated.ValidateIndices(); }, {"entry 2 at [1 0]", "repeats entry 1"});
  // The same entries are sorted in order {1, 0}.
  SparseTensor by_column = MakeSparse<float>({1, 0, 0, 1, 2, 1}, {1, 2, 3}, {3, 4}, {1, 0});
  EXPECT_TRUE(by_column.IndicesValid());
}

// SortedIn reads the entries, whatever order() claims; repeats count as sorted.
TEST(SparseValidate, SortedInChecksTheEntries) {
  SparseTensor st = MakeSparse<float>({0, 1, 0, 1, 0, 3, 2, 0}, {1, 2, 3, 4}, {3, 4});
  EXPECT_TRUE(st.SortedIn({0, 1}));  // (0,1) (0,1) (0,3) (2,0)
  EXPECT_FALSE(st.SortedIn({1, 0}));
  SparseTensor claimed = MakeSparse<float>({2, 0, 0, 1}, {1, 2}, {3, 4}, {0, 1});
  EXPECT_FALSE(claimed.SortedIn({0, 1}));  // the claim is not trusted
  EXPECT_TRUE(claimed.SortedIn({1, 0}));
  EXPECT_TRUE(MakeSparse<float>({}, {}, {3, 4}).SortedIn({1, 0}));
  ExpectError([&] { st.SortedIn({0}); }, ErrorCode::kInvalidArgument, {"SortedIn", "[0]"});
}

TEST(SparseValidate, UnknownOrderRejectsRepeatsWithoutModifying) {
  const std::vector<int64_t> rows = {2, 2, 0, 1, 1, 1, 0, 1, 2, 2};
  SparseTensor st = MakeSparse<float>(rows, {1, 2, 3, 4, 5}, {3, 3});
  EXPECT_FALSE(st.IndicesValid());
  ExpectError([&] { st.ValidateIndices(); }, {"entry 3 at [0 1]", "repeats entry 1"});
  EXPECT_EQ(Rows(st), rows);  // untouched
  SparseTensor unique = MakeSparse<float>({2, 2, 0, 1, 1, 1}, {1, 2, 3}, {3, 3});
  EXPECT_TRUE(unique.IndicesValid());
}

TEST(SparseValidate, StridedIndices) {
  const std::vector<int64_t> rows = {0, 1, 1, 0, 2, 3};
  SparseTensor st = SparseTensor::Create(StridedIndices(rows, 3, 2),
                                         Tensor::FromVector<float>({1, 2, 3}), {3, 4}, {0, 1});
  EXPECT_FALSE(st.indices().IsContiguous());
  EXPECT_TRUE(st.IndicesValid());
  SparseTensor bad = SparseTensor::Create(StridedIndices({0, 1, 1, 0, 2, 4}, 3, 2),
                                          Tensor::FromVector<float>({1, 2, 3}), {3, 4}, {0, 1});
  ExpectError([&] { bad.ValidateIndices(); }, {"entry 2 at [2 4]", "axis 1: 4 >= 4"});
}

TEST(SparseValidate, RandomAgreesWithNaiveCheck) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    const std::vector<int64_t> shape = {5, 4, 3};
    const int64_t n = 1 + static_cast<int64_t>(rng() % 20);
    std::vector<int64_t> rows = RandomRows(rng, n, shape);
    if (trial % 4 == 0) rows[rng() % rows.size()] = 7;  // sometimes out of bounds
    const bool sorted_claim = trial % 2 == 1;
    if (sorted_claim && trial % 3 != 0) {  // usually give a sorted sequence
      std::vector<std::vector<int64_t>> r(n);
      for (int64_t i = 0; i < n; ++i) r[i].assign(rows.begin() + 3 * i, rows.begin() + 3 * i + 3);
      std::sort(r.begin(), r.end());
      rows.clear();
      for (auto& x : r) rows.insert(rows.end(), x.begin(), x.end());
    }
    SparseTensor st =
        MakeSparse<double>(rows, RandomValues(rng, n), shape,
                           sorted_claim ? std::vector<int>{0, 1, 2} : std::vector<int>{});
    bool expect = true;
    for (int64_t i = 0; i < n; ++i) {
      for (int a = 0; a < 3; ++a) expect &= rows[3 * i + a] >= 0 && rows[3 * i + a] < shape[a];
    }
    for (int64_t i = 0; i < n && expect; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        if (j == i) continue;
        std::vector<int64_t> ri(rows.begin() + 3 * i, rows.begin() + 3 * i + 3);
        std::vector<int64_t> rj(rows.begin() + 3 * j, rows.begin() + 3 * j + 3);
        if (ri == rj) expect = false;
        if (sorted_claim && j == i - 1 && !(rj < ri)) expect = false;
      }
    }
    EXPECT_EQ(st.IndicesValid(), expect) << "trial " << trial;
    if (expect) {
      EXPECT_NO_THROW(st.ValidateIndices());
    } else {
      EXPECT_THROW(st.ValidateIndices(), Error);
    }
  }
}

TEST(SparseValidate, DefaultConstructedIsAnError) {
  SparseTensor st;
  ExpectError([&] { st.IndicesValid(); }, {"IndicesValid", "default-constructed"});
  ExpectError([&] { st.Reorder({}); }, {"Reorder", "default-constructed"});
}

// ----- Reorder ------------------------------------------------------------------------------

// Checks that st's rows are sorted (non-decreasing) in `order`.
void ExpectSortedIn(const SparseTensor& st, const std::vector<int>& order) {
  const std::vector<int64_t> rows = Rows(st);
  const int r = st.rank();
  for (int64_t i = 1; i < st.nnz(); ++i) {
    std::vector<int64_t> a, b;
    for (int o : order) {
      a.push_back(rows[(i - 1) * r + o]);
      b.push_back(rows[i * r + o]);
    }
    ASSERT_LE(a, b) << "entry " << i;
  }
}

TEST(SparseReorder, SortsStablyAndKeepsValues) {
  std::mt19937_64 rng(1);
  const std::vector<int64_t> shape = {6, 5, 4};
  const int64_t n = 200;  // many repeats of each index
  std::vector<int64_t> rows = RandomRows(rng, n, shape);
  std::vector<double> vals(n);
  std::iota(vals.begin(), vals.end(), 0.0);  // value = original position
  for (std::vector<int> order : {std::vector<int>{0, 1, 2}, {2, 0, 1}, {1, 2, 0}}) {
    SparseTensor st = MakeSparse<double>(rows, vals, shape);
    st.Reorder(order);
    EXPECT_EQ(st.order(), order);
    ExpectSortedIn(st, order);
    const std::vector<int64_t> out = Rows(st);
    const std::vector<double> v = st.values().ToVector<double>();
    for (int64_t i = 0; i < n; ++i) {
      const int64_t from = static_cast<int64_t>(v[i]);
      for (int a = 0; a < 3; ++a) ASSERT_EQ(out[3 * i + a], rows[3 * from + a]);
      if (i > 0) {
        bool same_key = true;
        for (int o : order) same_key &= out[3 * i + o] == out[3 * (i - 1) + o];
        if (same_key) {
          ASSERT_LT(v[i - 1], v[i]) << "unstable at " << i;
        }
      }
    }
  }
}

TEST(SparseReorder, MatchesStableSortOracle) {
  std::mt19937_64 rng(2);
  const std::vector<int64_t> shape = {7, 3, 11, 2};
  const int64_t n = 500;
  std::vector<int64_t> rows = RandomRows(rng, n, shape);
  const std::vector<int> order = {3, 1, 0, 2};
  std::vector<int64_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  std::stable_sort(perm.begin(), perm.end(), [&](int64_t x, int64_t y) {
    for (int o : order) {
      if (rows[4 * x + o] != rows[4 * y + o]) return rows[4 * x + o] < rows[4 * y + o];
    }
    return false;
  });
  std::vector<int32_t> vals(n);
  std::iota(vals.begin(), vals.end(), 0);
  SparseTensor st = MakeSparse<int32_t>(rows, vals, shape);
  st.Reorder(order);
  const std::vector<int32_t> got = st.values().ToVector<int32_t>();
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], perm[i]);
}

// The stable-sort oracle: positions of `rows` sorted by `order`.
std::vector<int64_t> OraclePermutation(const std::vector<int64_t>& rows, int64_t n, int rank,
                                       const std::vector<int>& order) {
  std::vector<int64_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  std::stable_sort(perm.begin(), perm.end(), [&](int64_t x, int64_t y) {
    for (int o : order) {
      if (rows[rank * x + o] != rows[rank * y + o]) return rows[rank * x + o] < rows[rank * y + o];
    }
    return false;
  });
  return perm;
}

// Reorder of rows with value = position must give the oracle's rows and positions.
void ExpectReorderMatchesOracle(const std::vector<int64_t>& rows, const std::vector<int64_t>& shape,
                                const std::vector<int>& order) {
  const int rank = static_cast<int>(shape.size());
  const int64_t n = rank > 0 ? static_cast<int64_t>(rows.size()) / rank : 0;
  std::vector<int64_t> vals(n);
  std::iota(vals.begin(), vals.end(), 0);
  SparseTensor st = MakeSparse<int64_t>(rows, vals, shape);
  st.Reorder(order);
  const std::vector<int64_t> perm = OraclePermutation(rows, n, rank, order);
  const std::vector<int64_t> got = st.values().ToVector<int64_t>();
  const std::vector<int64_t> out = Rows(st);
  ASSERT_EQ(got, perm);
  for (int64_t i = 0; i < n; ++i) {
    for (int a = 0; a < rank; ++a) ASSERT_EQ(out[rank * i + a], rows[rank * perm[i] + a]);
  }
}

TEST(SparseReorder, LargeInputsMatchOracleAtEveryRank) {
  // Sizes past the sequential decode tail (several parallel decode phases); ranks 1..5.
  std::mt19937_64 rng(7);
  const int64_t n = 30000;
  const std::vector<std::vector<int64_t>> shapes = {
      {5000}, {300, 70}, {1000, 9, 64}, {7, 3, 11, 2}, {3, 4, 5, 6, 7}};
  for (const std::vector<int64_t>& shape : shapes) {
    std::vector<int> order(shape.size());
    std::iota(order.begin(), order.end(), 0);
    std::reverse(order.begin(), order.end());
    ExpectReorderMatchesOracle(RandomRows(rng, n, shape), shape, order);
  }
}

TEST(SparseReorder, ConstantHighDigitsSkipPasses) {
  // Only the last axis varies: the passes over the other fields are skipped, which leaves the
  // sorted words in the other half of the scratch buffer.
  std::mt19937_64 rng(8);
  const std::vector<int64_t> shape = {int64_t{1} << 20, int64_t{1} << 20, 8};
  const int64_t n = 9000;
  std::vector<int64_t> rows;
  for (int64_t i = 0; i < n; ++i) {
    rows.insert(rows.end(), {3, 7, static_cast<int64_t>(rng() % 8)});
  }
  ExpectReorderMatchesOracle(rows, shape, {0, 1, 2});
  ExpectReorderMatchesOracle(rows, shape, {2, 1, 0});
}

TEST(SparseReorder, OutOfBoundsNamesFirstBadEntryAcrossChunks) {
  std::mt19937_64 rng(9);
  const std::vector<int64_t> shape = {50, 40};
  const int64_t n = 140000;  // several packing chunks
  std::vector<int64_t> rows = RandomRows(rng, n, shape);
  rows[2 * 139000 + 1] = 40;
  rows[2 * 70001] = -1;
  SparseTensor st = MakeSparse<float>(rows, std::vector<float>(n, 1.0f), shape);
  ExpectError([&] { st.Reorder({1, 0}); }, {"Reorder", "entry 70001 at [-1 ", "axis 0: -1 < 0"});
  ExpectError([&] { st.Coalesce(); }, {"Coalesce", "entry 70001"});
  EXPECT_EQ(st.order(), (std::vector<int>{-1, -1}));
}

TEST(SparseReorder, WideKeysUseTheFallbackCorrectly) {
  // prod(shape) needs 64 + 62 bits: neither packing fits, so rows are compared directly.
  std::mt19937_64 rng(3);
  const int64_t big = int64_t{1} << 62;
  const std::vector<int64_t> shape = {big, big, 3};
  const int64_t n = 300;
  std::vector<int64_t> rows;
  for (int64_t i = 0; i < n; ++i) {
    rows.push_back(static_cast<int64_t>(rng() % 4) * (big / 4));
    rows.push_back(static_cast<int64_t>(rng() % 3));
    rows.push_back(static_cast<int64_t>(rng() % 3));
  }
  std::vector<double> vals(n);
  std::iota(vals.begin(), vals.end(), 0.0);
  SparseTensor st = MakeSparse<double>(rows, vals, shape);
  st.Reorder({2, 0, 1});
  ExpectSortedIn(st, {2, 0, 1});
  const std::vector<int64_t> out = Rows(st);
  const std::vector<double> v = st.values().ToVector<double>();
  for (int64_t i = 1; i < n; ++i) {
    if (out[3 * i + 2] == out[3 * (i - 1) + 2] && out[3 * i] == out[3 * (i - 1)] &&
        out[3 * i + 1] == out[3 * (i - 1) + 1]) {
      ASSERT_LT(v[i - 1], v[i]);
    }
  }
}

TEST(SparseReorder, Packs128BitKeys) {
  // prod(shape) = 2^80: too wide for 64 bits with positions, fits 128.
  const int64_t d = int64_t{1} << 40;
  std::vector<int64_t> rows = {5, d - 1, 5, 0, 0, d - 1, d - 1, 0, 5, 0};
  SparseTensor st = MakeSparse<std::string>(rows, {"a", "b", "c", "d", "e"}, {d, d});
  st.Reorder({0, 1});
  EXPECT_EQ(Rows(st), (std::vector<int64_t>{0, d - 1, 5, 0, 5, 0, 5, d - 1, d - 1, 0}));
  EXPECT_EQ(st.values().ToVector<std::string>(),
            (std::vector<std::string>{"c", "b", "e", "a", "d"}));
}

TEST(SparseReorder, StridedInputsAndStrings) {
  const std::vector<int64_t> rows = {1, 0, 0, 2, 1, 1, 0, 0};
  // Values viewed with stride 2 from a longer buffer.
  Tensor base = Tensor::FromVector<std::string>({"w", "-", "x", "-", "y", "-", "z", "-"});
  Tensor vals = base.WithPattern(MakePattern({4}, {2}));
  SparseTensor st = SparseTensor::Create(StridedIndices(rows, 4, 2), vals, {2, 3});
  SparseTensor copy = st;  // shares the handles: must not see moved-from strings
  st.Reorder({0, 1});
  EXPECT_EQ(Rows(st), (std::vector<int64_t>{0, 0, 0, 2, 1, 0, 1, 1}));
  EXPECT_EQ(st.values().ToVector<std::string>(), (std::vector<std::string>{"z", "x", "w", "y"}));
  EXPECT_EQ(copy.values().ToVector<std::string>(), (std::vector<std::string>{"w", "x", "y", "z"}));
  EXPECT_EQ(copy.order(), (std::vector<int>{-1, -1}));
}

TEST(SparseReorder, AlwaysSortsEvenWhenOrderIsClaimed) {
  SparseTensor st = MakeSparse<float>({2, 0, 0, 1}, {1, 2}, {3, 2}, {0, 1});  // claim is false
  st.Reorder({0, 1});
  EXPECT_EQ(Rows(st), (std::vector<int64_t>{0, 1, 2, 0}));
}

TEST(SparseReorder, RejectsBadOrderAndOutOfBounds) {
  SparseTensor st = MakeSparse<float>({0, 1, 5, 0}, {1, 2}, {3, 2});
  ExpectError([&] { st.Reorder({0}); }, {"Reorder", "[0]", "permutation"});
  ExpectError([&] { st.Reorder({0, 0}); }, {"Reorder", "[0 0]", "permutation"});
  ExpectError([&] { st.Reorder({1, 2}); }, {"Reorder", "permutation"});
  ExpectError([&] { st.Reorder({0, 1}); }, {"Reorder", "entry 1 at [5 0]", "axis 0: 5 >= 3"});
  EXPECT_EQ(st.order(), (std::vector<int>{-1, -1}));  // untouched after the error
}

TEST(SparseReorder, EmptyAndRankZero) {
  SparseTensor empty = MakeSparse<float>({}, {}, {4, 5});
  empty.Reorder({1, 0});
  EXPECT_EQ(empty.nnz(), 0);
  EXPECT_EQ(empty.order(), (std::vector<int>{1, 0}));
  SparseTensor scalar = MakeSparse<float>({}, {3.5f}, {});
  scalar.Reorder({});
  EXPECT_EQ(scalar.values().ToVector<float>(), std::vector<float>{3.5f});
  EXPECT_TRUE(scalar.IndicesValid());
  SparseTensor twice = MakeSparse<float>({}, {1, 2}, {});
  EXPECT_FALSE(twice.IndicesValid());  // the only index, repeated
}

TEST(SparseReorder, SameResultAtAnyThreadCount) {
  std::mt19937_64 rng(4);
  const std::vector<int64_t> shape = {300, 200, 50};
  const int64_t n = 150000;  // several radix chunks
  std::vector<int64_t> rows = RandomRows(rng, n, shape);
  std::vector<double> vals = RandomValues(rng, n);
  std::vector<int64_t> first;
  std::vector<double> first_vals;
  for (int threads : {1, 2, 3}) {
    SetNumThreads(threads);
    SparseTensor st = MakeSparse<double>(rows, vals, shape);
    st.Reorder({2, 0, 1});
    if (first.empty()) {
      first = Rows(st);
      first_vals = st.values().ToVector<double>();
      ExpectSortedIn(st, {2, 0, 1});
    } else {
      EXPECT_EQ(Rows(st), first);
      EXPECT_EQ(st.values().ToVector<double>(), first_vals);
    }
  }
  SetNumThreads(2);
}

// ----- group --------------------------------------------------------------------------------

TEST(SparseGroup, SeedExampleGroupsByDims) {
  std::mt19937_64 rng(5);
  const std::vector<int64_t> shape = {4, 3, 2, 5};
  const int64_t n = 60;
  std::vector<int64_t> rows = RandomUniqueRows(rng, n, shape);
  std::vector<std::string> vals;
  for (int64_t i = 0; i < n; ++i) vals.push_back(std::to_string(100 + i));
  SparseTensor st = MakeSparse<std::string>(rows, vals, shape);
  st.Reorder({1, 2, 0, 3});
  // Oracle: entries per (dim1, dim2) pair.
  std::map<std::vector<int64_t>, std::vector<std::string>> expect;
  for (int64_t i = 0; i < n; ++i) expect[{rows[4 * i + 1], rows[4 * i + 2]}].push_back(vals[i]);
  int64_t groups = 0, seen = 0;
  std::vector<int64_t> previous;
  for (const auto& g : st.group({1, 2})) {
    ASSERT_EQ(g.group().size(), 2u);
    if (!previous.empty()) {
      EXPECT_LT(previous, g.group());
    }
    previous = g.group();
    const Tensor gi = g.indices(), gv = g.values();
    EXPECT_TRUE(SharesStorage(gi, st.indices()));
    EXPECT_TRUE(SharesStorage(gv, st.values()));
    ASSERT_EQ(gi.Dim(0), gv.Dim(0));
    ASSERT_EQ(gi.Dim(1), 4);
    const std::vector<int64_t> grows = gi.ToVector<int64_t>();
    for (int64_t i = 0; i < gi.Dim(0); ++i) {
      EXPECT_EQ(grows[4 * i + 1], g.group()[0]);
      EXPECT_EQ(grows[4 * i + 2], g.group()[1]);
    }
    std::vector<std::string> got = gv.ToVector<std::string>();
    const auto span = g.value_span<std::string>();
    EXPECT_EQ(std::vector<std::string>(span.begin(), span.end()), got);
    const auto ispan = g.index_span();
    EXPECT_EQ(std::vector<int64_t>(ispan.begin(), ispan.end()), grows);
    EXPECT_THROW(g.value_span<float>(), Error);
    std::vector<std::string> want = expect.at(g.group());
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    EXPECT_EQ(got, want);
    ++groups;
    seen += g.size();
  }
  EXPECT_EQ(groups, static_cast<int64_t>(expect.size()));
  EXPECT_EQ(seen, n);
}

TEST(SparseGroup, ManyChunksMatchOracleWithValidViews) {
  // group({0}) over more than one scan chunk, with groups of one entry and of many; rank 1 and 3
  // (indices with one column have a dim-1 axis, whose stride must be 0 in a valid pattern).
  std::mt19937_64 rng(6);
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{90000}, std::vector<int64_t>{40000, 5, 3}}) {
    const int r = static_cast<int>(shape.size());
    const int64_t n = 70000;  // two scan chunks
    std::vector<int64_t> rows = RandomRows(rng, n, shape);
    std::vector<double> vals = RandomValues(rng, n);
    SparseTensor st = MakeSparse<double>(rows, vals, shape);
    std::vector<int> order(shape.size());
    std::iota(order.begin(), order.end(), 0);
    st.Reorder(order);
    std::map<int64_t, std::vector<double>> expect;  // values per axis-0 coordinate, in order
    const std::vector<int64_t> srows = Rows(st);
    const std::vector<double> svals = st.values().ToVector<double>();
    for (int64_t i = 0; i < n; ++i) expect[srows[r * i]].push_back(svals[i]);
    auto want = expect.begin();
    int64_t groups = 0;
    for (const auto& g : st.group({0})) {
      ASSERT_NE(want, expect.end());
      ASSERT_EQ(g.group(), std::vector<int64_t>{want->first});
      const Tensor gv = g.values(), gi = g.indices();
      EXPECT_NO_THROW(gv.WithPattern(gv.pattern()));  // the unchecked views pass the checks
      EXPECT_NO_THROW(gi.WithPattern(gi.pattern()));
      EXPECT_EQ(gi.Dims(), (std::vector<int64_t>{g.size(), r}));
      EXPECT_EQ(gv.ToVector<double>(), want->second);
      const std::vector<int64_t> grows = gi.ToVector<int64_t>();
      EXPECT_EQ(grows,
                std::vector<int64_t>(srows.begin() + r * g.begin(), srows.begin() + r * g.end()));
      ++want;
      ++groups;
    }
    EXPECT_EQ(want, expect.end());
    EXPECT_EQ(groups, static_cast<int64_t>(expect.size()));
    EXPECT_EQ(st.group({0}).size(), groups);
  }
}

TEST(SparseGroup, DimsMayBeGivenInAnySequence) {
  // Sorted by axis 1, then 0, then 2.
  SparseTensor st =
      MakeSparse<int32_t>({1, 0, 0, 0, 1, 0, 0, 1, 2, 1, 1, 1}, {1, 2, 3, 4}, {2, 2, 3}, {1, 0, 2});
  ASSERT_TRUE(st.IndicesValid());
  std::vector<std::vector<int64_t>> coords;
  std::vector<int64_t> sizes;
  for (const auto& g : st.group({0, 1})) {  // order starts with {1, 0}: the same set
    coords.push_back(g.group());
    sizes.push_back(g.values().Dim(0));
  }
  EXPECT_EQ(coords, (std::vector<std::vector<int64_t>>{{1, 0}, {0, 1}, {1, 1}}));
  EXPECT_EQ(sizes, (std::vector<int64_t>{1, 2, 1}));
}

TEST(SparseGroup, NeedsMatchingOrder) {
  SparseTensor st = MakeSparse<float>({0, 1, 1, 0}, {1, 2}, {2, 2});
  ExpectError([&] { st.group({1}); }, {"group({1}) needs order starting with {1}", "unknown",
                                       "call Reorder({1, 0}) first"});
  st.Reorder({0, 1});
  ExpectError([&] { st.group({1}); },
              {"group({1}) needs order starting with {1}", "[0 1]", "Reorder({1, 0})"});
  ExpectError([&] { st.group({2}); }, {"group({2})", "not an axis"});
  ExpectError([&] { st.group({0, 0}); }, {"group({0, 0})", "repeated"});
}

TEST(SparseGroup, EmptyAndStridedInputs) {
  SparseTensor empty = MakeSparse<float>({}, {}, {3, 3}, {0, 1});
  int count = 0;
  for (const auto& g : empty.group({0})) count += static_cast<int>(g.size()) + 1;
  EXPECT_EQ(count, 0);
  // Non-contiguous indices are made contiguous once; views then share that copy.
  SparseTensor st = SparseTensor::Create(StridedIndices({0, 0, 0, 2, 1, 1}, 3, 2),
                                         Tensor::FromVector<float>({1, 2, 3}), {2, 3}, {0, 1});
  std::vector<float> sums;
  for (const auto& g : st.group({0})) {
    float s = 0;
    for (float v : g.values().ToVector<float>()) s += v;
    sums.push_back(s);
    EXPECT_EQ(g.indices().Dims(), (std::vector<int64_t>{g.size(), 2}));
  }
  EXPECT_EQ(sums, (std::vector<float>{3, 3}));
}

// ----- Coalesce -----------------------------------------------------------------------------

TEST(SparseCoalesce, SumsRepeatsLikeNaiveDenseSum) {
  std::mt19937_64 rng(6);
  const std::vector<int64_t> shape = {4, 6, 3};
  const int64_t n = 300;
  std::vector<int64_t> rows = RandomRows(rng, n, shape);
  std::vector<int64_t> vals(n);
  for (auto& v : vals) v = static_cast<int64_t>(rng() % 100) - 50;
  SparseTensor st = MakeSparse<int64_t>(rows, vals, shape);
  st.Coalesce();
  EXPECT_EQ(st.order(), (std::vector<int>{0, 1, 2}));
  EXPECT_TRUE(st.IndicesValid());
  std::vector<int64_t> dense(72, 0);
  std::vector<bool> present(72, false);
  for (int64_t i = 0; i < n; ++i) {
    dense[Linear(rows, i, shape)] += vals[i];
    present[Linear(rows, i, shape)] = true;
  }
  const std::vector<int64_t> out = Rows(st);
  const std::vector<int64_t> got = st.values().ToVector<int64_t>();
  int64_t expected_nnz = std::count(present.begin(), present.end(), true);
  ASSERT_EQ(st.nnz(), expected_nnz);
  for (int64_t i = 0; i < st.nnz(); ++i) EXPECT_EQ(got[i], dense[Linear(out, i, shape)]);
}

TEST(SparseCoalesce, SameResultAtAnyThreadCount) {
  std::mt19937_64 rng(8);
  const std::vector<int64_t> shape = {50, 40};  // 2000 cells, many repeats
  const int64_t n = 100000;
  std::vector<int64_t> rows = RandomRows(rng, n, shape);
  std::vector<float> vals(n);
  for (auto& v : vals) v = static_cast<float>(static_cast<int64_t>(rng() % 2001) - 1000) / 7.0f;
  std::vector<float> first;
  for (int threads : {1, 2, 3}) {
    SetNumThreads(threads);
    SparseTensor st = MakeSparse<float>(rows, vals, shape);
    st.Coalesce();
    const std::vector<float> got = st.values().ToVector<float>();
    if (first.empty()) {
      first = got;
      EXPECT_EQ(st.nnz(), 2000);
    } else {
      EXPECT_EQ(got, first) << threads << " threads";  // bit-identical sums
    }
  }
  SetNumThreads(2);
}

TEST(SparseCoalesce, BoolOrStringLastAndHalf) {
  const std::vector<int64_t> rows = {1, 1, 0, 0, 1, 1, 0, 0, 1, 1};
  SparseTensor b = MakeSparse<bool>(rows, {false, false, true, false, false}, {2, 2});
  b.Coalesce();
  EXPECT_EQ(Rows(b), (std::vector<int64_t>{0, 0, 1, 1}));
  EXPECT_EQ(b.values().ToVector<bool>(), (std::vector<bool>{false, true}));
  SparseTensor s = MakeSparse<std::string>(rows, {"a", "b", "c", "d", "e"}, {2, 2});
  s.Coalesce();
  EXPECT_EQ(s.values().ToVector<std::string>(), (std::vector<std::string>{"d", "e"}));
  SparseTensor h =
      MakeSparse<Half>(rows, {Half(1.5f), Half(2.f), Half(0.25f), Half(1.f), Half(-0.5f)}, {2, 2});
  h.Coalesce();
  const std::vector<Half> hv = h.values().ToVector<Half>();
  EXPECT_EQ(static_cast<float>(hv[0]), 3.0f);
  EXPECT_EQ(static_cast<float>(hv[1]), 1.25f);
}

TEST(SparseCoalesce, IntegerOverflowWrapsWithoutUB) {
  SparseTensor st = MakeSparse<int8_t>({0, 0, 0}, {100, 100, 100}, {1});
  st.Coalesce();
  EXPECT_EQ(st.values().ToVector<int8_t>()[0], static_cast<int8_t>(300 - 256));
}

TEST(SparseCoalesce, EmptyRankZeroAndBounds) {
  SparseTensor empty = MakeSparse<float>({}, {}, {2, 0});
  empty.Coalesce();
  EXPECT_EQ(empty.nnz(), 0);
  SparseTensor scalar = MakeSparse<float>({}, {1, 2, 3}, {});
  scalar.Coalesce();
  EXPECT_EQ(scalar.values().ToVector<float>(), std::vector<float>{6});
  SparseTensor bad = MakeSparse<float>({0, 3}, {1}, {2, 3});
  ExpectError([&] { bad.Coalesce(); }, {"Coalesce", "entry 0 at [0 3]", "axis 1: 3 >= 3"});
}

}  // namespace
}  // namespace tensorkit
