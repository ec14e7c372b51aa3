// CountSparse and ToIndicator against the cases of TensorFlow's bincount tests
// (bincount_ops_test.py, sparse inputs), the naive reference and the rules of
// SparseCountSparseOutput checked by hand in TensorFlow 2.21 (widths, maxlength 0, -0.0 sums).
#include "tensorkit/features/counts.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "reference/features_reference.h"
#include "staged_outputs.h"
#include "tensorkit/dense/outputs.h"
#include "test_util.h"

namespace tensorkit {
namespace {

using testing::AtThreadCounts;
using testing::ExpectError;

// The entries of a count as the reference's (row, id, value) list; rank-1 results have row 0.
template <typename W>
std::vector<ref::CountEntry<W>> Entries(const SparseTensor& st) {
  const std::vector<int64_t> idx = st.indices().ToVector<int64_t>();
  const std::vector<W> val = st.values().ToVector<W>();
  std::vector<ref::CountEntry<W>> out;
  for (int64_t i = 0; i < st.nnz(); ++i) {
    if (st.rank() == 2) {
      out.push_back({idx[2 * i], idx[2 * i + 1], val[i]});
    } else {
      out.push_back({0, idx[i], val[i]});
    }
  }
  return out;
}

// tf.sparse.from_dense of an int32 matrix: its nonzero entries in row-major order.
SparseTensor FromRows(const std::vector<std::vector<int32_t>>& rows) {
  std::vector<int32_t> flat;
  for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
  return SparseTensor::FromDense(Tensor::FromVector(
      flat, {static_cast<int64_t>(rows.size()), static_cast<int64_t>(rows[0].size())}));
}

void ExpectCount(const SparseTensor& got, const std::vector<int64_t>& indices,
                 const std::vector<double>& values, const std::vector<int64_t>& shape) {
  EXPECT_EQ(got.indices().ToVector<int64_t>(), indices);
  EXPECT_EQ(got.shape(), shape);
  const Tensor v = got.values();
  std::vector<double> as_double;
  if (v.dtype() == DType::kInt64) {
    for (int64_t x : v.ToVector<int64_t>()) as_double.push_back(static_cast<double>(x));
  } else {
    as_double = v.ToVector<double>();
  }
  EXPECT_EQ(as_double, values);
}

TEST(CountSparse, TensorFlowSparseInputCases) {
  const SparseTensor x = FromRows({{3, 0, 1, 0}, {0, 0, 0, 0}, {5, 0, 4, 4}});
  const SparseTensor x7 = FromRows({{3, 0, 1, 0}, {7, 0, 0, 0}, {5, 0, 4, 4}});
  ExpectCount(CountSparse(x), {0, 1, 0, 3, 2, 4, 2, 5}, {1, 1, 2, 1}, {3, 6});
  ExpectCount(CountSparse(x7, {}, false, -1, 7), {0, 1, 0, 3, 2, 4, 2, 5}, {1, 1, 2, 1}, {3, 7});
  ExpectCount(CountSparse(x7, {}, false, -1, 0), {}, {}, {3, 0});
  ExpectCount(CountSparse(x7, {}, false, 9), {0, 1, 0, 3, 1, 7, 2, 4, 2, 5}, {1, 1, 1, 2, 1},
              {3, 9});
  ExpectCount(CountSparse(x7, {}, false, 3), {0, 1, 0, 3, 1, 7, 2, 4, 2, 5}, {1, 1, 1, 2, 1},
              {3, 8});
  ExpectCount(CountSparse(x, {}, true), {0, 1, 0, 3, 2, 4, 2, 5}, {1, 1, 1, 1}, {3, 6});
  ExpectCount(CountSparse(x7, {}, true, 9), {0, 1, 0, 3, 1, 7, 2, 4, 2, 5}, {1, 1, 1, 1, 1},
              {3, 9});
  // Weights beside the nonzero ids: [[6, _, 2, _], [], [10, _, 3.5, 3.5]].
  const Tensor w = Tensor::FromVector<double>({6, 2, 10, 3.5, 3.5});
  const SparseTensor weighted = CountSparse(x, w);
  EXPECT_EQ(weighted.values().dtype(), DType::kFloat64);
  ExpectCount(weighted, {0, 1, 0, 3, 2, 4, 2, 5}, {2, 6, 7, 10}, {3, 6});
  const Tensor w7 = Tensor::FromVector<double>({6, 2, 14, 10, 3, 3.5});
  ExpectCount(CountSparse(x7, w7, false, 9), {0, 1, 0, 3, 1, 7, 2, 4, 2, 5}, {2, 6, 14, 6.5, 10},
              {3, 9});
  // One row (rank 1), and ids near 2^61 (the width follows the largest).
  const SparseTensor one = SparseTensor::FromDense(Tensor::FromVector<int32_t>({3, 0, 1, 1}));
  ExpectCount(CountSparse(one), {1, 3}, {2, 1}, {4});
  const SparseTensor large = SparseTensor::FromDense(Tensor::FromVector<int64_t>(
      {1941591354222760687, 0, 1241591354229760689, 0, 1241591354229760689, 1241591354229760687}));
  ExpectCount(CountSparse(large), {1241591354229760687, 1241591354229760689, 1941591354222760687},
              {1, 2, 1}, {1941591354222760688});
}

TEST(CountSparse, WidthRulesOfTensorFlow) {
  // No ids: one column (TensorFlow's largest id starts at 0), or min_length.
  const SparseTensor none = SparseTensor::Create(Tensor::Empty({0, 2}, DType::kInt64),
                                                 Tensor::Empty({0}, DType::kInt64), {2, 3});
  ExpectCount(CountSparse(none), {}, {}, {2, 1});
  ExpectCount(CountSparse(none, {}, false, 4), {}, {}, {2, 4});
  // max_length wins over a larger min_length.
  const SparseTensor x = FromRows({{1, 0}, {0, 9}});
  ExpectCount(CountSparse(x, {}, false, 5, 3), {0, 1}, {1}, {2, 3});
  // Empty weights: counts in the weights' dtype.
  const SparseTensor f = CountSparse(x, Tensor::Empty({0}, DType::kFloat32));
  EXPECT_EQ(f.values().dtype(), DType::kFloat32);
  EXPECT_EQ(f.values().ToVector<float>(), (std::vector<float>{1, 1}));
  // Binary ignores the weights, in their dtype.
  const SparseTensor b = CountSparse(x, Tensor::FromVector<int32_t>({5, 7}), true);
  EXPECT_EQ(b.values().ToVector<int32_t>(), (std::vector<int32_t>{1, 1}));
  // A lone -0.0 weight sums to +0.0 (from zero, as TensorFlow's map entries start).
  const SparseTensor z = CountSparse(x, Tensor::FromVector<float>({-0.0f, 1}));
  EXPECT_FALSE(std::signbit(z.values().ToVector<float>()[0]));
  // INT64_MAX: dropped under a max_length, else no width can hold it.
  const SparseTensor top = SparseTensor::FromDense(
      Tensor::FromVector<int64_t>({std::numeric_limits<int64_t>::max(), 2}));
  ExpectCount(CountSparse(top, {}, false, -1, 10), {2}, {1}, {10});
  ExpectError([&] { CountSparse(top); }, ErrorCode::kOutOfRange,
              {"CountSparse: id 9223372036854775807", "max_length"});
}

// Random entries (rows of 0..12 ids in [0, 40)), in row-major or shuffled order.
struct RandomIds {
  std::vector<int64_t> rows, cols, ids;
  int64_t num_rows;
};
RandomIds MakeIds(std::mt19937_64& rng, int64_t num_rows, bool shuffled) {
  RandomIds r{{}, {}, {}, num_rows};
  for (int64_t row = 0; row < num_rows; ++row) {
    const int64_t len = static_cast<int64_t>(rng() % 13);
    for (int64_t j = 0; j < len; ++j) {
      r.rows.push_back(row);
      r.cols.push_back(j);
      r.ids.push_back(static_cast<int64_t>(rng() % 40));
    }
  }
  if (shuffled) {
    std::vector<size_t> p(r.ids.size());
    for (size_t i = 0; i < p.size(); ++i) p[i] = i;
    std::shuffle(p.begin(), p.end(), rng);
    RandomIds s{{}, {}, {}, num_rows};
    for (size_t i : p) {
      s.rows.push_back(r.rows[i]);
      s.cols.push_back(r.cols[i]);
      s.ids.push_back(r.ids[i]);
    }
    return s;
  }
  return r;
}

SparseTensor ToSparse(const RandomIds& r, DType dt) {
  std::vector<int64_t> idx;
  for (size_t i = 0; i < r.ids.size(); ++i) {
    idx.push_back(r.rows[i]);
    idx.push_back(r.cols[i]);
  }
  const int64_t n = static_cast<int64_t>(r.ids.size());
  Tensor ids = Tensor::FromVector(r.ids);
  if (dt == DType::kInt32)
    ids = Tensor::FromVector(std::vector<int32_t>(r.ids.begin(), r.ids.end()));
  return SparseTensor::Create(Tensor::FromVector(idx, {n, 2}), ids, {r.num_rows, 12});
}

template <typename W>
void CheckWeighted(const RandomIds& r, std::mt19937_64& rng, bool binary, int64_t max_length) {
  std::vector<W> w;
  for (size_t i = 0; i < r.ids.size(); ++i) {
    w.push_back(std::is_integral_v<W> ? static_cast<W>(rng() % 7) - 3
                                      : static_cast<W>(static_cast<double>(rng() % 1000) / 7.0));
  }
  const Tensor wt = Tensor::FromVector(w);
  const int64_t limit = max_length >= 0 ? max_length : std::numeric_limits<int64_t>::max();
  const auto expect = ref::CountSparse<W>(r.rows, r.ids, w, binary, limit);
  const auto runs = AtThreadCounts({1, 2}, [&] {
    return Entries<W>(CountSparse(ToSparse(r, DType::kInt32), wt, binary, -1, max_length));
  });
  EXPECT_EQ(runs[0], expect);
  EXPECT_EQ(runs[1], expect);
}

TEST(CountSparse, RandomAgainstReference) {
  std::mt19937_64 rng(11);
  for (bool shuffled : {false, true}) {
    for (int64_t rows : {int64_t{1}, int64_t{17}, int64_t{700}}) {
      const RandomIds r = MakeIds(rng, rows, shuffled);
      for (bool binary : {false, true}) {
        for (int64_t max_length : {int64_t{-1}, int64_t{25}}) {
          const int64_t limit = max_length >= 0 ? max_length : std::numeric_limits<int64_t>::max();
          const auto expect = ref::CountSparse<int64_t>(r.rows, r.ids, {}, binary, limit);
          const auto runs = AtThreadCounts({1, 2}, [&] {
            return Entries<int64_t>(
                CountSparse(ToSparse(r, DType::kInt64), {}, binary, -1, max_length));
          });
          EXPECT_EQ(runs[0], expect) << rows << " " << shuffled;
          EXPECT_EQ(runs[1], expect);
          CheckWeighted<float>(r, rng, binary, max_length);
          CheckWeighted<double>(r, rng, binary, max_length);
          CheckWeighted<int32_t>(r, rng, binary, max_length);
          CheckWeighted<int64_t>(r, rng, binary, max_length);
        }
      }
      // The shape: the largest id + 1 (at least min_length).
      const SparseTensor st = CountSparse(ToSparse(r, DType::kInt64), {}, false, 45);
      EXPECT_EQ(st.shape(), (std::vector<int64_t>{rows, 45}));
      EXPECT_EQ(st.order(), (std::vector<int>{0, 1}));
    }
  }
}

TEST(CountSparse, LongRowsAndWideIds) {
  // Rows past the rank sort's 64 ids (a comparison sort) and up to it, with ids of every width
  // the rank sort distinguishes, weighted and not.
  std::mt19937_64 rng(21);
  std::vector<int64_t> rows, ids;
  std::vector<double> w;
  for (int64_t r = 0; r < 40; ++r) {
    const int64_t len = r % 8 == 5 ? 200 : r % 8 == 1 ? 64 : 30;
    for (int64_t j = 0; j < len; ++j) {
      rows.push_back(r);
      // Small ids, ids near 2^25 and 2^40 (packed with their index on 32 or 64 bits), near
      // 2^60 (too wide to pack).
      const int64_t base[] = {0, (int64_t{1} << 25) - 25, int64_t{1} << 40, int64_t{1} << 60};
      ids.push_back(base[r % 4] + static_cast<int64_t>(rng() % 50));
      w.push_back(static_cast<double>(rng() % 100) / 8);
    }
  }
  const int64_t n = static_cast<int64_t>(ids.size());
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < n; ++i) {
    idx.push_back(rows[i]);
    idx.push_back(0);
  }
  const SparseTensor st =
      SparseTensor::Create(Tensor::FromVector(idx, {n, 2}), Tensor::FromVector(ids), {40, 1});
  const int64_t none = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(Entries<double>(CountSparse(st, Tensor::FromVector(w))),
            ref::CountSparse<double>(rows, ids, w, false, none));
  EXPECT_EQ(Entries<int64_t>(CountSparse(st)),
            ref::CountSparse<int64_t>(rows, ids, {}, false, none));
}

TEST(CountSparse, IntoGivenOutputs) {
  const SparseTensor x = FromRows({{3, 0, 1, 0}, {5, 5, 4, 0}});
  std::vector<Tensor> given;
  CallbackOutputs allocate([&](int, const std::vector<int64_t>& dims, DType dt) {
    given.push_back(Tensor::Zeros(dims, dt));
    return given.back();
  });
  const SparseTensor r = CountSparse(x, {}, false, -1, -1, allocate);
  // Output 2 is the dense shape, as TensorFlow's op returns it.
  ASSERT_EQ(given.size(), 3u);
  EXPECT_TRUE(SharesStorage(r.indices(), given[0]));
  EXPECT_TRUE(SharesStorage(r.values(), given[1]));
  EXPECT_EQ(given[2].ToVector<int64_t>(), (std::vector<int64_t>{2, 6}));
  ExpectCount(r, {0, 1, 0, 3, 1, 4, 1, 5}, {1, 1, 1, 2}, {2, 6});
  CallbackOutputs wrong([](int, const std::vector<int64_t>& dims, DType) {
    return Tensor::Zeros(dims, DType::kInt32);
  });
  ExpectError([&] { CountSparse(x, {}, false, -1, -1, wrong); }, ErrorCode::kInvalidArgument,
              {"CountSparse: the allocator gave output 0"});
}

using testing::StagedOutputs;

TEST(CountSparse, AFailureAfterAnAllocationShowsNoOutput) {
  const SparseTensor x = FromRows({{3, 0, 1, 0}, {5, 5, 4, 0}});
  const Tensor w = Tensor::FromVector<float>({0.5f, 1, 2, 3, 4});
  for (int fail_at = 0; fail_at < 3; ++fail_at) {
    StagedOutputs out(fail_at);
    ExpectError([&] { CountSparse(x, w, false, -1, -1, out); }, ErrorCode::kResourceExhausted,
                {"output " + std::to_string(fail_at)});
    EXPECT_EQ(out.staged.size(), static_cast<size_t>(fail_at));
    EXPECT_EQ(out.commits, 0);
    EXPECT_TRUE(out.shown.empty());
  }
  StagedOutputs out(-1);
  const SparseTensor r = CountSparse(x, w, false, -1, -1, out);
  EXPECT_EQ(out.commits, 1);
  ASSERT_EQ(out.shown.size(), 3u);
  EXPECT_TRUE(SharesStorage(out.shown[0], r.indices()));
  EXPECT_TRUE(SharesStorage(out.shown[1], r.values()));
  EXPECT_EQ(out.shown[2].ToVector<int64_t>(), (std::vector<int64_t>{2, 6}));
  EXPECT_EQ(Entries<float>(r), Entries<float>(CountSparse(x, w)));
  // Rank-1 ids: a dense shape of one dim.
  const SparseTensor v = SparseTensor::FromDense(Tensor::FromVector<int64_t>({4, 0, 4}));
  StagedOutputs flat(-1);
  ExpectCount(CountSparse(v, {}, false, -1, -1, flat), {4}, {2}, {5});
  ASSERT_EQ(flat.shown.size(), 3u);
  EXPECT_EQ(flat.shown[2].ToVector<int64_t>(), (std::vector<int64_t>{5}));
  // An id that leaves no width is found after the indices and values are made: still no Commit.
  const SparseTensor top = SparseTensor::FromDense(
      Tensor::FromVector<int64_t>({std::numeric_limits<int64_t>::max(), 2}));
  StagedOutputs late(-1);
  ExpectError([&] { CountSparse(top, {}, false, -1, -1, late); }, ErrorCode::kOutOfRange,
              {"CountSparse: id 9223372036854775807", "max_length"});
  EXPECT_EQ(late.staged.size(), 2u);
  EXPECT_EQ(late.commits, 0);
  EXPECT_TRUE(late.shown.empty());
}

TEST(CountSparse, JaggedRowsAreTheBatch) {
  std::mt19937_64 rng(5);
  const RandomIds r = MakeIds(rng, 200, false);
  std::vector<int64_t> lengths(200, 0);
  for (int64_t row : r.rows) ++lengths[row];
  std::vector<float> w;
  for (size_t i = 0; i < r.ids.size(); ++i) w.push_back(static_cast<float>(i % 5) * 0.25f);
  const JaggedTensor jt = JaggedTensor::FromLengths(
      Tensor::FromVector(std::vector<int32_t>(r.ids.begin(), r.ids.end())),
      Tensor::FromVector(lengths), Tensor::FromVector(w));
  EXPECT_EQ(Entries<float>(CountSparse(jt, jt.weights())),
            ref::CountSparse<float>(r.rows, r.ids, w, false, std::numeric_limits<int64_t>::max()));
  const SparseTensor counts = CountSparse(jt);
  EXPECT_EQ(counts.shape()[0], 200);
  EXPECT_EQ(
      Entries<int64_t>(counts),
      ref::CountSparse<int64_t>(r.rows, r.ids, {}, false, std::numeric_limits<int64_t>::max()));
  // Empty rows only.
  const JaggedTensor empty = JaggedTensor::FromLengths(Tensor::Empty({0}, DType::kInt64),
                                                       Tensor::FromVector<int64_t>({0, 0, 0}));
  ExpectCount(CountSparse(empty), {}, {}, {3, 1});
}

TEST(CountSparse, BadInputsAreErrors) {
  const SparseTensor x = FromRows({{1, -2}, {0, 3}});
  ExpectError([&] { CountSparse(x); }, ErrorCode::kInvalidArgument,
              {"CountSparse: id -2 of entry 1 is negative"});
  const SparseTensor ok = FromRows({{1, 2}, {0, 3}});
  ExpectError(
      [&] {
        CountSparse(ok, Tensor::FromVector<float>({1, 2}));
      },
      ErrorCode::kShapeMismatch, {"weights must be [3]"});
  ExpectError(
      [&] {
        CountSparse(ok, Tensor::FromVector<int8_t>({1, 2, 3}));
      },
      ErrorCode::kDTypeMismatch, {"weights of dtype int8"});
  ExpectError([&] { CountSparse(ok, {}, false, -2); }, ErrorCode::kInvalidArgument,
              {"min_length -2"});
  ExpectError([&] { CountSparse(ok, {}, false, -1, -3); }, ErrorCode::kInvalidArgument,
              {"max_length -3"});
  const SparseTensor oob = SparseTensor::Create(Tensor::FromVector<int64_t>({0, 0, 2, 1}, {2, 2}),
                                                Tensor::FromVector<int64_t>({1, 1}), {2, 2});
  ExpectError([&] { CountSparse(oob); }, ErrorCode::kOutOfRange, {"CountSparse", "entry 1"});
  const SparseTensor rank0 = SparseTensor::Create(Tensor::Empty({1, 0}, DType::kInt64),
                                                  Tensor::FromVector<int64_t>({1}), {});
  ExpectError([&] { CountSparse(rank0); }, ErrorCode::kShapeMismatch, {"rank 1 ([L]) or more"});
  const SparseTensor rank3_oob =
      SparseTensor::Create(Tensor::FromVector<int64_t>({0, 0, 0, 1, 4, 0}, {2, 3}),
                           Tensor::FromVector<int64_t>({1, 2}), {2, 4, 3});
  ExpectError([&] { CountSparse(rank3_oob); }, ErrorCode::kOutOfRange, {"CountSparse", "entry 1"});
  // ToIndicator keeps rank 1 and 2 (tf.sparse.to_indicator of rank 3 is per last axis).
  const SparseTensor rank3 = SparseTensor::Create(Tensor::FromVector<int64_t>({0, 0, 0}, {1, 3}),
                                                  Tensor::FromVector<int64_t>({1}), {1, 1, 1});
  ExpectError([&] { ToIndicator(rank3, 4); }, ErrorCode::kShapeMismatch, {"rank 1 ([L]) or 2"});
  const SparseTensor floats = SparseTensor::FromDense(Tensor::FromVector<float>({1, 2}));
  ExpectError([&] { CountSparse(floats); }, ErrorCode::kDTypeMismatch, {"int32 or int64 ids"});
  ExpectError([&] { CountSparse(SparseTensor()); }, {"CountSparse"});
}

// Ids of rank 3 or more count as TensorFlow's kernel counts them: one row per index[0], every
// entry under it in that row, the output [B, width] of rank 2. The case of TensorFlow 2.21
// (dense_shape [6, 5, 4]) by hand, then random rank-3 and rank-4 ids, sorted and shuffled, against
// the reference on rows = index[0], at 1 and 2 threads.
TEST(CountSparse, HigherRanksCountByTheFirstAxis) {
  const SparseTensor ids = SparseTensor::Create(
      Tensor::FromVector<int64_t>({0, 0, 0, 0, 1, 2, 0, 4, 3, 2, 0, 1, 5, 4, 3, 2, 3, 3}, {6, 3}),
      Tensor::FromVector<int64_t>({3, 1, 3, 7, 2, 0}), {6, 5, 4});
  const Tensor w = Tensor::FromVector<double>({0.5, 1, 2, 3, 4, 5});
  ExpectCount(CountSparse(ids, w), {0, 1, 0, 3, 2, 0, 2, 7, 5, 2}, {1, 2.5, 5, 3, 4}, {6, 8});
  ExpectCount(CountSparse(ids, {}, true, 10), {0, 1, 0, 3, 2, 0, 2, 7, 5, 2}, {1, 1, 1, 1, 1},
              {6, 10});
  ExpectCount(CountSparse(ids, {}, false, -1, 3), {0, 1, 2, 0, 5, 2}, {1, 1, 1}, {6, 3});
  std::mt19937_64 rng(31);
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{7, 3, 5}, std::vector<int64_t>{4, 2, 3, 6}}) {
    const int rank = static_cast<int>(shape.size());
    for (bool shuffled : {false, true}) {
      const int64_t n = 50;
      std::vector<int64_t> idx, rows, ids_v;
      std::vector<double> weights;
      for (int64_t i = 0; i < n; ++i) {
        for (int a = 0; a < rank; ++a) {
          idx.push_back(static_cast<int64_t>(rng() % static_cast<uint64_t>(shape[a])));
        }
        ids_v.push_back(static_cast<int64_t>(rng() % 9));
        weights.push_back(static_cast<double>(rng() % 1000) / 8.0);
      }
      if (!shuffled) {  // rows in order: sort the entries by their first coordinate, stably
        std::vector<int64_t> perm(n);
        for (int64_t i = 0; i < n; ++i) perm[i] = i;
        std::stable_sort(perm.begin(), perm.end(),
                         [&](int64_t x, int64_t y) { return idx[x * rank] < idx[y * rank]; });
        std::vector<int64_t> idx2, ids2;
        std::vector<double> w2;
        for (int64_t p : perm) {
          idx2.insert(idx2.end(), idx.begin() + p * rank, idx.begin() + (p + 1) * rank);
          ids2.push_back(ids_v[p]);
          w2.push_back(weights[p]);
        }
        idx.swap(idx2);
        ids_v.swap(ids2);
        weights.swap(w2);
      }
      for (int64_t i = 0; i < n; ++i) rows.push_back(idx[i * rank]);
      const SparseTensor st = SparseTensor::Create(Tensor::FromVector(idx, {n, rank}),
                                                   Tensor::FromVector(ids_v), shape);
      const auto runs = AtThreadCounts(
          {1, 2}, [&] { return Entries<double>(CountSparse(st, Tensor::FromVector(weights))); });
      const auto want = ref::CountSparse<double>(rows, ids_v, weights, false, 1 << 20);
      EXPECT_EQ(runs[0], want);
      EXPECT_EQ(runs[1], want);
      const SparseTensor counted = CountSparse(st, {}, false, 12);
      EXPECT_EQ(counted.shape(), (std::vector<int64_t>{shape[0], 12}));
      EXPECT_EQ(counted.order(), (std::vector<int>{0, 1}));
    }
  }
}

TEST(ToIndicator, MultiHotRows) {
  std::mt19937_64 rng(9);
  const RandomIds r = MakeIds(rng, 300, true);
  const SparseTensor st = ToSparse(r, DType::kInt64);
  const auto expect = ref::CountSparse<float>(r.rows, r.ids, {}, true, 40);
  const auto runs = AtThreadCounts({1, 2}, [&] { return Entries<float>(ToIndicator(st, 40)); });
  EXPECT_EQ(runs[0], expect);
  EXPECT_EQ(runs[1], expect);
  const Tensor dense = ToIndicatorDense(st, 40, DType::kInt32);
  EXPECT_EQ(dense.Dims(), (std::vector<int64_t>{300, 40}));
  std::vector<int32_t> want(300 * 40, 0);
  for (size_t i = 0; i < r.ids.size(); ++i) want[r.rows[i] * 40 + r.ids[i]] = 1;
  EXPECT_EQ(dense.ToVector<int32_t>(), want);
  // Ids outside [0, depth): an Error, or dropped on request (-1 included).
  ExpectError([&] { ToIndicator(st, 30); }, ErrorCode::kOutOfRange,
              {"ToIndicator: id", "is outside [0, 30)", "kDrop"});
  EXPECT_EQ(Entries<float>(ToIndicator(st, 30, DType::kFloat32, OutOfRangeIds::kDrop)),
            ref::CountSparse<float>(r.rows, r.ids, {}, true, 30));
  const JaggedTensor jt = JaggedTensor::FromLengths(Tensor::FromVector<int32_t>({-1, 2, 2, 7, 0}),
                                                    Tensor::FromVector<int64_t>({3, 0, 2}));
  const Tensor jd = ToIndicatorDense(jt, 3, DType::kFloat32, OutOfRangeIds::kDrop);
  EXPECT_EQ(jd.ToVector<float>(), (std::vector<float>{0, 0, 1, 0, 0, 0, 1, 0, 0}));
  EXPECT_EQ(ToIndicator(jt, 0, DType::kFloat32, OutOfRangeIds::kDrop).shape(),
            (std::vector<int64_t>{3, 0}));
  ExpectError([&] { ToIndicator(jt, -1); }, ErrorCode::kInvalidArgument, {"depth -1"});
}

}  // namespace
}  // namespace tensorkit
