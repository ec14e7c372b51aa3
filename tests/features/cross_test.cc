// Cross against values measured with TensorFlow 2.21 (tf.raw_ops.SparseCross, SparseCrossHashed)
// and against the naive reference (reference/cross_reference.h) over random features given as
// jagged, sparse (sorted and shuffled) and dense tensors.
#include "tensorkit/features/cross.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "reference/cross_reference.h"
#include "test_util.h"

namespace tensorkit {
namespace {

using reference::CrossItem;
using reference::RefFeature;
using testing::AtThreadCounts;
using testing::ExpectError;

std::vector<int64_t> Ints(const Tensor& t) {
  const Tensor c = t.HostContiguous();
  return std::vector<int64_t>(c.data<int64_t>(), c.data<int64_t>() + c.NumElements());
}
std::vector<std::string> Strs(const Tensor& t) {
  const Tensor c = t.HostContiguous();
  return std::vector<std::string>(c.data<std::string>(), c.data<std::string>() + c.NumElements());
}

// The features of TensorFlow's measured case: sparse int64 [[1, 2], [3]], sparse strings
// [["x", "y"], ["z"]] (both [2, 2]), dense int64 [[7], [8]].
std::vector<CrossFeature> MeasuredCase(bool with_dense = true) {
  const Tensor idx = Tensor::FromVector(std::vector<int64_t>{0, 0, 0, 1, 1, 0}, {3, 2});
  std::vector<CrossFeature> f = {
      SparseTensor::Create(idx, Tensor::FromVector(std::vector<int64_t>{1, 2, 3}), {2, 2}),
      SparseTensor::Create(idx, Tensor::FromVector(std::vector<std::string>{"x", "y", "z"}, {3}),
                           {2, 2})};
  if (with_dense) f.push_back(Tensor::FromVector(std::vector<int64_t>{7, 8}, {2, 1}));
  return f;
}

TEST(Cross, MatchesTensorFlowSparseCross) {
  CrossOptions o;  // kHashed, hash_key 0xDECAFCAFFE, num_buckets 0
  const SparseTensor h = Cross(MeasuredCase(), o);
  EXPECT_EQ(Ints(h.values()),
            (std::vector<int64_t>{6057862006044028238, 3091905844336419302, 1294816870528874566,
                                  5348077969633335562, 8306377568965326753}));
  EXPECT_EQ(h.shape(), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(Ints(h.indices()), (std::vector<int64_t>{0, 0, 0, 1, 0, 2, 0, 3, 1, 0}));
  o.num_buckets = 100;
  EXPECT_EQ(Ints(Cross(MeasuredCase(), o).values()), (std::vector<int64_t>{45, 9, 73, 69, 53}));
  o.output = CrossOutput::kStrings;
  EXPECT_EQ(
      Strs(Cross(MeasuredCase(), o).values()),
      (std::vector<std::string>{"1_X_x_X_7", "1_X_y_X_7", "2_X_x_X_7", "2_X_y_X_7", "3_X_z_X_8"}));
  o.separator = "|";
  EXPECT_EQ(Strs(Cross(MeasuredCase(), o).values())[4], "3|z|8");
}

TEST(Cross, MatchesTensorFlowSparseCrossHashed) {
  CrossOptions o;
  o.output = CrossOutput::kHashedKeyed;
  o.salt = {1, 2};
  EXPECT_EQ(Ints(Cross(MeasuredCase(), o).values()),
            (std::vector<int64_t>{5534936344351057053, 6016055607959883833, 2508324461802230564,
                                  178551075497878791, 544539173779094979}));
  o.strong_hash = true;
  o.num_buckets = 1000;
  EXPECT_EQ(Ints(Cross(MeasuredCase(false), o).values()),
            (std::vector<int64_t>{767, 253, 499, 664, 996}));
}

// Random features of B rows: strings of lengths 0..12 (NUL and high bytes included) or int64.
std::vector<RefFeature> RandomFeatures(std::mt19937_64& rng, int64_t batch, int num) {
  std::vector<RefFeature> fs(num);
  for (int f = 0; f < num; ++f) {
    const bool strings = rng() % 2 == 0;
    fs[f].dense = rng() % 4 == 0;
    const size_t width = rng() % 3 + 1;
    for (int64_t b = 0; b < batch; ++b) {
      const size_t len = fs[f].dense ? width : rng() % 4;
      std::vector<CrossItem> row;
      for (size_t k = 0; k < len; ++k) {
        if (strings) {
          std::string s(rng() % 13, '\0');
          for (char& c : s) c = static_cast<char>(rng() % 4 == 0 ? rng() : 'a' + rng() % 3);
          row.push_back(s);
        } else {
          row.push_back(static_cast<int64_t>(rng()) >> (rng() % 60));
        }
      }
      fs[f].rows.push_back(row);
    }
  }
  return fs;
}

Tensor ItemsTensor(const std::vector<CrossItem>& items, std::vector<int64_t> dims) {
  if (!items.empty() && std::holds_alternative<int64_t>(items[0])) {
    std::vector<int64_t> v;
    for (const auto& i : items) v.push_back(std::get<int64_t>(i));
    return Tensor::FromVector(std::move(v), dims);
  }
  std::vector<std::string> v;
  for (const auto& i : items) v.push_back(std::get<std::string>(i));
  return Tensor::FromVector(std::move(v), dims);
}

// A feature as tensorkit takes it: form 0 jagged, 1 sparse sorted, 2 sparse shuffled; dense
// features as [B, K].
CrossFeature ToFeature(const RefFeature& f, int form, std::mt19937_64& rng, bool ints) {
  std::vector<CrossItem> items;
  std::vector<int64_t> lengths, idx;
  int64_t width = 0;
  for (size_t b = 0; b < f.rows.size(); ++b) {
    lengths.push_back(static_cast<int64_t>(f.rows[b].size()));
    width = std::max(width, lengths.back());
    for (size_t k = 0; k < f.rows[b].size(); ++k) {
      items.push_back(f.rows[b][k]);
      idx.push_back(static_cast<int64_t>(b));
      idx.push_back(static_cast<int64_t>(k));
    }
  }
  const int64_t n = static_cast<int64_t>(items.size());
  if (n == 0) items.clear();
  auto typed = [&](std::vector<CrossItem> v, std::vector<int64_t> dims) {
    if (v.empty()) {
      return ints ? Tensor::Empty(dims, DType::kInt64) : Tensor::Empty(dims, DType::kString);
    }
    return ItemsTensor(v, dims);
  };
  const int64_t batch = static_cast<int64_t>(f.rows.size());
  if (f.dense) return typed(items, {batch, width});
  if (form == 0) {
    return JaggedTensor::FromLengths(typed(items, {n}), Tensor::FromVector(lengths));
  }
  if (form == 2) {  // shuffle whole entries: rows out of order, a row's items keep their order
    std::vector<int64_t> perm(static_cast<size_t>(n));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    std::stable_sort(perm.begin(), perm.end(),
                     [&](int64_t a, int64_t b) { return idx[2 * a] % 3 < idx[2 * b] % 3; });
    std::vector<CrossItem> it2;
    std::vector<int64_t> idx2;
    // Keep entry order within a row: sort each row's entries back by their position.
    std::vector<std::vector<int64_t>> by_row(static_cast<size_t>(batch));
    for (int64_t p : perm) by_row[idx[2 * p]].push_back(p);
    for (auto& r : by_row) std::sort(r.begin(), r.end());
    std::vector<size_t> next(static_cast<size_t>(batch), 0);
    for (int64_t p : perm) {
      const int64_t row = idx[2 * p];
      const int64_t q = by_row[row][next[row]++];
      it2.push_back(items[q]);
      idx2.push_back(row);
      idx2.push_back(idx[2 * q + 1]);
    }
    items = it2;
    idx = idx2;
  }
  return SparseTensor::Create(Tensor::FromVector(idx, {n, 2}), typed(items, {n}),
                              {batch, std::max<int64_t>(width, 1)});
}

TEST(Cross, RandomFeaturesMatchTheReference) {
  std::mt19937_64 rng(42);
  for (int trial = 0; trial < 60; ++trial) {
    const int64_t batch = static_cast<int64_t>(rng() % 20);
    const int num = static_cast<int>(rng() % 4) + 1;
    const std::vector<RefFeature> ref = RandomFeatures(rng, batch, num);
    std::vector<CrossFeature> fs;
    for (const RefFeature& f : ref) {
      bool ints = false;
      for (const auto& row : f.rows) {
        if (!row.empty()) ints = std::holds_alternative<int64_t>(row[0]);
      }
      fs.push_back(ToFeature(f, static_cast<int>(rng() % 3), rng, ints));
    }
    for (CrossOutput out :
         {CrossOutput::kHashed, CrossOutput::kHashedKeyed, CrossOutput::kStrings}) {
      CrossOptions o;
      o.output = out;
      o.num_buckets = static_cast<int64_t>(rng() % 3) * 1000;
      o.hash_key = rng();
      o.strong_hash = rng() % 2 == 0;
      o.salt = {rng(), rng()};
      const reference::RefCrosses want = reference::RefCross(ref, o);
      const SparseTensor got = Cross(fs, o);
      ASSERT_EQ(got.shape()[0], batch);
      const std::vector<int64_t> idx = Ints(got.indices());
      int64_t max_count = 0, p = 0;
      for (int64_t b = 0; b < batch; ++b) {
        const size_t count =
            out == CrossOutput::kStrings ? want.strings[b].size() : want.hashed[b].size();
        max_count = std::max<int64_t>(max_count, static_cast<int64_t>(count));
        for (size_t j = 0; j < count; ++j, ++p) {
          ASSERT_EQ(idx[2 * p], b);
          ASSERT_EQ(idx[2 * p + 1], static_cast<int64_t>(j));
        }
      }
      ASSERT_EQ(got.nnz(), p) << "trial " << trial;
      EXPECT_EQ(got.shape()[1], max_count);
      std::vector<int64_t> flat_h;
      std::vector<std::string> flat_s;
      for (int64_t b = 0; b < batch; ++b) {
        flat_h.insert(flat_h.end(), want.hashed[b].begin(), want.hashed[b].end());
        flat_s.insert(flat_s.end(), want.strings[b].begin(), want.strings[b].end());
      }
      if (out == CrossOutput::kStrings) {
        EXPECT_EQ(Strs(got.values()), flat_s) << "trial " << trial;
      } else {
        EXPECT_EQ(Ints(got.values()), flat_h) << "trial " << trial;
      }
    }
  }
}

TEST(Cross, EmptyFeatureRowsGiveNoCrosses) {
  const JaggedTensor a =
      JaggedTensor::FromLengths(Tensor::FromVector(std::vector<std::string>{"p", "q", "r"}, {3}),
                                Tensor::FromVector(std::vector<int64_t>{2, 0, 1}));
  const Tensor d = Tensor::FromVector(std::vector<int64_t>{5, 6, 7}, {3});  // [B]: one a row
  CrossOptions o;
  o.output = CrossOutput::kStrings;
  const SparseTensor s = Cross({a, d}, o);
  EXPECT_EQ(Strs(s.values()), (std::vector<std::string>{"p_X_5", "q_X_5", "r_X_7"}));
  EXPECT_EQ(Ints(s.indices()), (std::vector<int64_t>{0, 0, 0, 1, 2, 0}));
  EXPECT_EQ(s.shape(), (std::vector<int64_t>{3, 2}));
}

TEST(Cross, SameAtEveryThreadCount) {
  std::mt19937_64 rng(3);
  const int64_t batch = 20000;
  std::vector<CrossFeature> fs;
  for (int f = 0; f < 3; ++f) {
    std::vector<std::string> v;
    std::vector<int64_t> len;
    for (int64_t b = 0; b < batch; ++b) {
      len.push_back(static_cast<int64_t>(rng() % 5));
      for (int64_t k = 0; k < len.back(); ++k) v.push_back(std::to_string(rng() % 1000));
    }
    const int64_t n = static_cast<int64_t>(v.size());
    fs.push_back(JaggedTensor::FromLengths(Tensor::FromVector(v, {n}), Tensor::FromVector(len)));
  }
  CrossOptions o;
  o.num_buckets = 1 << 20;
  const auto h = AtThreadCounts({1, 2, 4}, [&] { return Ints(Cross(fs, o).values()); });
  EXPECT_EQ(h[0], h[1]);
  EXPECT_EQ(h[0], h[2]);
  o.output = CrossOutput::kStrings;
  const auto s = AtThreadCounts({1, 2}, [&] { return Strs(Cross(fs, o).values()); });
  EXPECT_EQ(s[0], s[1]);
}

TEST(Cross, BadInputsAreErrors) {
  const Tensor d3 = Tensor::FromVector(std::vector<int64_t>{1, 2, 3}, {3, 1});
  const Tensor d2 = Tensor::FromVector(std::vector<int64_t>{1, 2}, {2, 1});
  ExpectError(
      [&] {
        Cross({d3, d2});
      },
      ErrorCode::kShapeMismatch, {"Cross", "feature 1 has batch size 2", "feature 0 has 3"});
  ExpectError([] { Cross({}); }, ErrorCode::kInvalidArgument, {"Cross", "no features"});
  CrossOptions o;
  o.num_buckets = -1;
  ExpectError([&] { Cross({d3}, o); }, ErrorCode::kInvalidArgument, {"Cross", "num_buckets -1"});
  ExpectError(
      [] {
        Cross({Tensor::FromVector(std::vector<float>{1.f}, {1, 1})});
      },
      ErrorCode::kDTypeMismatch, {"Cross", "float32"});
  ExpectError(
      [] {
        Cross({Tensor::Zeros({2, 2, 2}, DType::kInt64)});
      },
      ErrorCode::kShapeMismatch, {"Cross", "dense feature 0", "[2 2 2]"});
  const SparseTensor out_of_shape =
      SparseTensor::Create(Tensor::FromVector(std::vector<int64_t>{0, 0, 3, 0}, {2, 2}),
                           Tensor::FromVector(std::vector<int64_t>{1, 2}), {3, 1});
  ExpectError([&] { Cross({out_of_shape}); }, ErrorCode::kOutOfRange,
              {"Cross", "entry 1 of feature 0", "(3, 0)", "[3 1]"});
  const SparseTensor rank3 = SparseTensor::Create(Tensor::Empty({0, 3}, DType::kInt64),
                                                  Tensor::Empty({0}, DType::kInt64), {1, 1, 1});
  ExpectError([&] { Cross({rank3}); }, ErrorCode::kShapeMismatch, {"Cross", "rank 3"});
  // 2^21 items in each of three rows-of-one-row features: 2^63 crosses in one row.
  const Tensor wide = Tensor::Zeros({1, int64_t{1} << 21}, DType::kInt64);
  ExpectError(
      [&] {
        Cross({wide, wide, wide});
      },
      ErrorCode::kResourceExhausted, {"Cross", "row 0", "more crosses than int64"});
}

}  // namespace
}  // namespace tensorkit
