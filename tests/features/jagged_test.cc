// JaggedTensor and KeyedJaggedTensor: construction, validation, accessors and views.
#include "tensorkit/features/jagged.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "reference/features_reference.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/dense/transpose_internal.h"
#include "tensorkit/dense/views.h"
#include "tensorkit/features/jagged_device.h"
#include "tensorkit/sparse/sparse_tensor.h"
#include "test_util.h"

namespace tensorkit {
namespace {

using testing::AtThreadCounts;
using testing::ExpectError;
using Rng = std::mt19937_64;

// Every dtype, kString included.
std::vector<DType> AllDTypes() {
  std::vector<DType> out;
  for (int d = 0; d < kNumDTypes; ++d) out.push_back(static_cast<DType>(d));
  return out;
}

// Element v of a test tensor as T: strings long enough to live on the heap now and then.
template <typename T>
T ValueOf(int64_t v) {
  if constexpr (std::is_same_v<T, std::string>) {
    return v % 3 == 0 ? "a much longer string than fits inline #" + std::to_string(v)
                      : std::to_string(v);
  } else if constexpr (std::is_same_v<T, bool>) {
    return (v & 1) != 0;
  } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return T(static_cast<float>(v % 200));
  } else {
    return static_cast<T>(v % 100);
  }
}

// A C-order tensor of `dims` with random elements of `dtype`.
Tensor RandomTensor(DType dtype, const std::vector<int64_t>& dims, Rng& rng) {
  Tensor t = Tensor::Empty(dims, dtype);
  Dispatch(dtype, "RandomTensor", [&]<typename T>() {
    T* p = t.NumElements() > 0 ? t.data<T>() : nullptr;
    for (int64_t i = 0; i < t.NumElements(); ++i)
      p[i] = ValueOf<T>(static_cast<int64_t>(rng() % 1000) - 500);
  });
  return t;
}

// Expects a and b to hold the same dims, dtype and elements, bit for bit.
void ExpectSame(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.dtype(), b.dtype());
  ASSERT_EQ(a.Dims(), b.Dims());
  Dispatch(a.dtype(), "ExpectSame", [&]<typename T>() {
    const std::vector<T> x = a.ToVector<T>(), y = b.ToVector<T>();
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::string>) {
      EXPECT_EQ(x, y);
    } else {
      EXPECT_TRUE(x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(T)) == 0);
    }
  });
}

// The tensor [items.size(), item dims of srcs[0]...] whose item k is item items[k].item of
// srcs[items[k].part] (every src [N, D...]), or `pad` where the item is -1. `dims` overrides
// the result's dims (same element count).
Tensor Gathered(const std::vector<Tensor>& srcs, const std::vector<ref::ItemSource>& items,
                std::vector<int64_t> dims = {}, Scalar pad = 0) {
  std::vector<int64_t> item_dims = srcs.at(0).Dims();
  item_dims.erase(item_dims.begin());
  const int64_t inner =
      std::accumulate(item_dims.begin(), item_dims.end(), int64_t{1}, std::multiplies<>());
  if (dims.empty()) {
    dims = {static_cast<int64_t>(items.size())};
    dims.insert(dims.end(), item_dims.begin(), item_dims.end());
  }
  Tensor out = Tensor::Empty(dims, srcs[0].dtype());
  Dispatch(out.dtype(), "Gathered", [&]<typename T>() {
    std::vector<std::vector<T>> src;
    for (const Tensor& s : srcs) src.push_back(s.ToVector<T>());
    T* o = out.NumElements() > 0 ? out.data<T>() : nullptr;
    for (size_t k = 0; k < items.size(); ++k) {
      for (int64_t e = 0; e < inner; ++e) {
        T v{};
        if (items[k].item >= 0) {
          v = src[items[k].part][items[k].item * inner + e];
        } else if constexpr (!std::is_same_v<T, std::string>) {
          v = pad.To<T>();
        }
        o[static_cast<int64_t>(k) * inner + e] = v;
      }
    }
  });
  return out;
}

// Items of part 0 (a single-input item map).
std::vector<ref::ItemSource> FromPart0(const std::vector<int64_t>& items) {
  std::vector<ref::ItemSource> out;
  for (int64_t i : items) out.push_back({0, i});
  return out;
}

// Random lengths [b] in [0, max_len], about one in five rows empty.
std::vector<int64_t> RandomLengths(int64_t b, int64_t max_len, Rng& rng) {
  std::vector<int64_t> out(static_cast<size_t>(b));
  for (auto& l : out) l = rng() % 5 == 0 ? 0 : static_cast<int64_t>(rng() % (max_len + 1));
  return out;
}

std::vector<int64_t> OffsetsOf(const std::vector<int64_t>& lengths) {
  std::vector<int64_t> off(lengths.size() + 1, 0);
  for (size_t i = 0; i < lengths.size(); ++i) off[i + 1] = off[i] + lengths[i];
  return off;
}

// A random jagged tensor of b rows of at most max_len items [D...] of `dtype`.
JaggedTensor RandomJagged(DType dtype, int64_t b, int64_t max_len,
                          const std::vector<int64_t>& item_dims, Rng& rng) {
  const std::vector<int64_t> lengths = RandomLengths(b, max_len, rng);
  std::vector<int64_t> dims = {OffsetsOf(lengths).back()};
  dims.insert(dims.end(), item_dims.begin(), item_dims.end());
  return JaggedTensor::FromLengths(RandomTensor(dtype, dims, rng),
                                   Tensor::FromVector<int64_t>(lengths));
}

// A sparse tensor [b, max_len] with a random number of distinct columns per row: the columns
// 0..n-1 of VarLenFeature's layout when `positions`, else any. `sorted`: entries in order
// {0, 1}; otherwise shuffled (rows and columns mixed).
SparseTensor RandomVarLen(DType dtype, int64_t b, int64_t max_len, bool sorted, Rng& rng,
                          bool positions = false) {
  std::vector<int64_t> idx;
  for (int64_t r = 0; r < b; ++r) {
    std::vector<int64_t> cols(static_cast<size_t>(max_len));
    std::iota(cols.begin(), cols.end(), 0);
    const int64_t n = rng() % 5 == 0 ? 0 : static_cast<int64_t>(rng() % (max_len + 1));
    if (positions) {
      cols.resize(static_cast<size_t>(n));
      std::shuffle(cols.begin(), cols.end(), rng);
    } else {
      std::shuffle(cols.begin(), cols.end(), rng);
      cols.resize(static_cast<size_t>(n));
    }
    if (sorted) std::sort(cols.begin(), cols.end());
    for (int64_t c : cols) {
      idx.push_back(r);
      idx.push_back(c);
    }
  }
  const int64_t nnz = static_cast<int64_t>(idx.size()) / 2;
  if (!sorted) {  // shuffle whole entries
    std::vector<int64_t> perm(static_cast<size_t>(nnz));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    std::vector<int64_t> shuffled;
    for (int64_t e : perm) {
      shuffled.push_back(idx[2 * e]);
      shuffled.push_back(idx[2 * e + 1]);
    }
    idx = shuffled;
  }
  return SparseTensor::Create(Tensor::FromVector<int64_t>(idx, {nnz, 2}),
                              RandomTensor(dtype, {nnz}, rng), {b, max_len});
}

// A random keyed jagged tensor: keys "f0" ..., items [D...] of `dtype`, float weights if asked.
KeyedJaggedTensor RandomKjt(DType dtype, int num_keys, int64_t b, int64_t max_len,
                            const std::vector<int64_t>& item_dims, bool weighted, Rng& rng) {
  std::vector<std::string> keys;
  for (int f = 0; f < num_keys; ++f) keys.push_back("f" + std::to_string(f));
  const std::vector<int64_t> lengths = RandomLengths(num_keys * b, max_len, rng);
  const int64_t n = OffsetsOf(lengths).back();
  std::vector<int64_t> dims = {n};
  dims.insert(dims.end(), item_dims.begin(), item_dims.end());
  return KeyedJaggedTensor(keys, RandomTensor(dtype, dims, rng),
                           Tensor::FromVector<int64_t>(lengths, {num_keys, b}),
                           weighted ? RandomTensor(DType::kFloat32, {n}, rng) : Tensor());
}

ref::KjtLayout LayoutOf(const KeyedJaggedTensor& kjt) {
  return {kjt.keys(), kjt.batch_size(), kjt.lengths().ToVector<int64_t>()};
}

// out against the reference layout, its values and weights as the items gathered from srcs.
void ExpectKjtMatches(const KeyedJaggedTensor& out, const ref::KjtLayout& want,
                      const std::vector<const KeyedJaggedTensor*>& srcs,
                      const std::vector<ref::ItemSource>& items) {
  EXPECT_EQ(out.keys(), want.keys);
  EXPECT_EQ(out.batch_size(), want.batch);
  EXPECT_EQ(out.lengths().Dims(),
            (std::vector<int64_t>{static_cast<int64_t>(want.keys.size()), want.batch}));
  EXPECT_EQ(out.lengths().ToVector<int64_t>(), want.lengths);
  EXPECT_EQ(out.offsets().ToVector<int64_t>(), OffsetsOf(want.lengths));
  std::vector<Tensor> values, weights;
  for (const KeyedJaggedTensor* s : srcs) {
    values.push_back(s->values());
    weights.push_back(s->weights());
  }
  ExpectSame(out.values(), Gathered(values, items));
  ASSERT_EQ(out.has_weights(), srcs[0]->has_weights());
  if (out.has_weights()) ExpectSame(out.weights(), Gathered(weights, items));
}

// The reference Concat of parts: its layout, the parts as sources and the item map.
ref::KjtLayout ConcatReference(const std::vector<KeyedJaggedTensor>& parts,
                               std::vector<const KeyedJaggedTensor*>* srcs,
                               std::vector<ref::ItemSource>* items) {
  std::vector<ref::KjtLayout> layouts;
  for (const auto& p : parts) {
    layouts.push_back(LayoutOf(p));
    srcs->push_back(&p);
  }
  return ref::KjtConcat(layouts, items);
}

// Every field of a and b bit for bit.
void ExpectSameKjt(const KeyedJaggedTensor& a, const KeyedJaggedTensor& b) {
  EXPECT_EQ(a.keys(), b.keys());
  EXPECT_EQ(a.batch_size(), b.batch_size());
  ExpectSame(a.lengths(), b.lengths());
  ExpectSame(a.offsets(), b.offsets());
  ExpectSame(a.values(), b.values());
  ASSERT_EQ(a.has_weights(), b.has_weights());
  if (a.has_weights()) ExpectSame(a.weights(), b.weights());
}

// FromSparse against the reference: offsets, and the values as the entries gathered.
void ExpectFromSparseMatches(const SparseTensor& st, const JaggedTensor& jt) {
  std::vector<int64_t> offsets;
  const std::vector<int64_t> entries =
      ref::JaggedFromSparse(st.indices().ToVector<int64_t>(), st.shape()[0], &offsets);
  EXPECT_EQ(jt.offsets().ToVector<int64_t>(), offsets);
  ExpectSame(jt.values(), Gathered({st.values()}, FromPart0(entries)));
}

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

// On the CPU the host offsets are the offsets themselves, for every way of making a jagged tensor
// and for its copies: nothing is copied to give offsets_data().
TEST(JaggedTensor, CpuOffsetsAreTheirOwnHostCopy) {
  const Tensor values = Tensor::FromVector<float>({1, 2, 3, 4});
  const Tensor dense = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  const std::vector<JaggedTensor> all = {
      JaggedTensor::FromLengths(values, Tensor::FromVector<int32_t>({3, 0, 1})),
      JaggedTensor::FromOffsets(values, Tensor::FromVector<int64_t>({0, 1, 4})),
      JaggedTensor::FromSparse(
          SparseTensor::Create(Tensor::FromVector<int64_t>({0, 0, 2, 1}, {2, 2}),
                               Tensor::FromVector<float>({5, 6}), {3, 2})),
      JaggedTensor::FromPadded(dense, Tensor::FromVector<int64_t>({2, 3}))};
  for (const JaggedTensor& jt : all) {
    EXPECT_EQ(jt.offsets_data(), jt.offsets().data<int64_t>());
    const JaggedTensor copy = jt.WithWeights(Tensor::Zeros({jt.num_values()}, DType::kFloat32));
    EXPECT_EQ(copy.offsets_data(), jt.offsets().data<int64_t>());
  }
  EXPECT_EQ(all[0].offsets().ToVector<int64_t>(), (std::vector<int64_t>{0, 3, 3, 4}));
  EXPECT_EQ(all[2].offsets().ToVector<int64_t>(), (std::vector<int64_t>{0, 1, 1, 2}));
  EXPECT_EQ(all[3].offsets().ToVector<int64_t>(), (std::vector<int64_t>{0, 2, 5}));
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

// --- FromSparse ---------------------------------------------------------------------------

TEST(JaggedFromSparse, SortedEntriesShareTheValuesInEveryDType) {
  Rng rng(1);
  for (DType dtype : AllDTypes()) {
    SCOPED_TRACE(DTypeName(dtype));
    const SparseTensor st = RandomVarLen(dtype, 300, 12, /*sorted=*/true, rng);
    const JaggedTensor jt = JaggedTensor::FromSparse(st);
    ExpectFromSparseMatches(st, jt);
    EXPECT_TRUE(SharesStorage(jt.values(), st.values()));
    EXPECT_EQ(jt.batch_size(), 300);
  }
}

TEST(JaggedFromSparse, UnsortedEntriesInEveryDType) {
  Rng rng(2);
  for (DType dtype : AllDTypes()) {
    SCOPED_TRACE(DTypeName(dtype));
    for (bool positions : {false, true}) {
      const SparseTensor st = RandomVarLen(dtype, 257, 9, /*sorted=*/false, rng, positions);
      ExpectFromSparseMatches(st, JaggedTensor::FromSparse(st));
    }
  }
}

TEST(JaggedFromSparse, RowsInOrderWithSomeColumnsOutOfOrder) {
  // Sorted by row, but two rows have their columns swapped: only those need sorting.
  Tensor idx = Tensor::FromVector<int64_t>({0, 0, 0, 3, 1, 2, 1, 0, 1, 1, 3, 5, 3, 4}, {7, 2});
  Tensor values = Tensor::FromVector<float>({10, 11, 12, 13, 14, 15, 16});
  const SparseTensor st = SparseTensor::Create(idx, values, {4, 6}, {0, 1});  // a wrong claim
  const JaggedTensor jt = JaggedTensor::FromSparse(st);
  EXPECT_EQ(jt.offsets().ToVector<int64_t>(), (std::vector<int64_t>{0, 2, 5, 5, 7}));
  EXPECT_EQ(jt.values().ToVector<float>(), (std::vector<float>{10, 11, 13, 14, 12, 16, 15}));
  ExpectFromSparseMatches(st, jt);
}

TEST(JaggedFromSparse, LargeInputsAtOneAndTwoThreadsAreBitIdentical) {
  // Enough rows and entries for every Compress path (its buckets start past 2^18 rows and 2^20
  // entries) and many chunks of the sorted check.
  Rng rng(3);
  for (const auto& [b, max_len] : {std::pair<int64_t, int64_t>{300000, 8}, {20000, 60}}) {
    for (bool sorted : {true, false}) {
      const SparseTensor st = RandomVarLen(DType::kInt64, b, max_len, sorted, rng, !sorted);
      const auto out = AtThreadCounts({1, 2}, [&] { return JaggedTensor::FromSparse(st); });
      ExpectFromSparseMatches(st, out[0]);
      EXPECT_EQ(out[0].offsets().ToVector<int64_t>(), out[1].offsets().ToVector<int64_t>());
      ExpectSame(out[0].values(), out[1].values());
    }
  }
}

TEST(JaggedFromSparse, StridedIndicesAndValues) {
  Rng rng(4);
  for (bool sorted : {true, false}) {
    const SparseTensor dense_st = RandomVarLen(DType::kFloat64, 50, 7, sorted, rng);
    const int64_t nnz = dense_st.nnz();
    // Indices as the transpose of [2, nnz], values every other element of [2 * nnz].
    const Tensor idx_t = Transpose(dense_st.indices(), 0, 1).Clone();
    Tensor wide = Tensor::Zeros({2 * nnz}, DType::kFloat64);
    Tensor every_other = Slice(wide, 0, 0, 2 * nnz, 2);
    Copy(dense_st.values(), &every_other);
    const SparseTensor st =
        SparseTensor::Create(Transpose(idx_t, 0, 1), every_other, dense_st.shape());
    ASSERT_FALSE(st.indices().IsContiguous());
    ExpectFromSparseMatches(dense_st, JaggedTensor::FromSparse(st));
  }
}

TEST(JaggedFromSparse, EmptyBatchesAndEmptyRows) {
  for (int64_t b : {0, 1, 5}) {
    const SparseTensor st = SparseTensor::Create(Tensor::Zeros({0, 2}, DType::kInt64),
                                                 Tensor::Zeros({0}, DType::kString), {b, 3});
    const JaggedTensor jt = JaggedTensor::FromSparse(st);
    EXPECT_EQ(jt.batch_size(), b);
    EXPECT_EQ(jt.offsets().ToVector<int64_t>(), std::vector<int64_t>(b + 1, 0));
    EXPECT_EQ(jt.num_values(), 0);
    EXPECT_EQ(jt.dtype(), DType::kString);
  }
  // A zero-width shape holds no entries either.
  const SparseTensor st = SparseTensor::Create(Tensor::Zeros({0, 2}, DType::kInt64),
                                               Tensor::Zeros({0}, DType::kInt32), {4, 0});
  EXPECT_EQ(JaggedTensor::FromSparse(st).batch_size(), 4);
}

TEST(JaggedFromSparse, BadInputsAreErrorsNamingTheEntry) {
  auto make = [](std::vector<int64_t> idx, std::vector<int64_t> shape) {
    const int64_t nnz = static_cast<int64_t>(idx.size()) / 2;
    return SparseTensor::Create(Tensor::FromVector<int64_t>(idx, {nnz, 2}),
                                Tensor::Zeros({nnz}, DType::kFloat32), shape);
  };
  auto from = [](const SparseTensor& st) { return [st] { JaggedTensor::FromSparse(st); }; };
  // Out of bounds, in sorted and in unsorted input, on either axis and below 0.
  ExpectError(from(make({0, 0, 1, 1, 3, 0}, {3, 4})), ErrorCode::kOutOfRange,
              {"JaggedTensor::FromSparse", "entry 2 at [3 0]", "out of bounds", "[3 4]"});
  ExpectError(from(make({2, 0, 0, 4, 1, 1}, {3, 4})), ErrorCode::kOutOfRange,
              {"entry 1 at [0 4]", "axis 1: 4 >= 4"});
  ExpectError(from(make({1, 0, 0, 0, 0, -1}, {3, 4})), ErrorCode::kOutOfRange,
              {"entry 2 at [0 -1]", "axis 1: -1 < 0"});
  ExpectError(from(make({0, 0, -1, 2}, {3, 4})), ErrorCode::kOutOfRange, {"entry 1 at [-1 2]"});
  // Repeats, next to each other in sorted input and apart in unsorted input.
  ExpectError(from(make({0, 0, 1, 2, 1, 2, 2, 0}, {3, 4})), ErrorCode::kInvalidArgument,
              {"JaggedTensor::FromSparse", "entry 2 at [1 2] repeats entry 1"});
  ExpectError(from(make({2, 1, 1, 3, 0, 0, 1, 0, 1, 3, 2, 0}, {3, 4})), ErrorCode::kInvalidArgument,
              {"entry 4 at [1 3] repeats entry 1", "Coalesce"});
  // Columns 0..n-1 but one repeated (so one missing), and the first repeat of a row is named.
  ExpectError(from(make({1, 2, 0, 0, 1, 1, 1, 0, 1, 1, 1, 2}, {3, 4})), ErrorCode::kInvalidArgument,
              {"entry 4 at [1 1] repeats entry 2"});
  // Rank and creation.
  ExpectError(
      [] {
        JaggedTensor::FromSparse(SparseTensor::Create(
            Tensor::Zeros({0, 3}, DType::kInt64), Tensor::Zeros({0}, DType::kFloat32), {2, 2, 2}));
      },
      ErrorCode::kShapeMismatch, {"2-D", "[2 2 2]"});
  ExpectError(
      [] {
        JaggedTensor::FromSparse(SparseTensor::Create(Tensor::Zeros({0, 1}, DType::kInt64),
                                                      Tensor::Zeros({0}, DType::kFloat32), {2}));
      },
      ErrorCode::kShapeMismatch, {"2-D"});
  ExpectError([] { JaggedTensor::FromSparse(SparseTensor()); }, ErrorCode::kInvalidArgument,
              {"JaggedTensor::FromSparse", "default-constructed"});
}

// --- ToSparse -----------------------------------------------------------------------------

TEST(JaggedToSparse, MatchesTheReferenceAndRoundTripsInEveryDType) {
  Rng rng(5);
  for (DType dtype : AllDTypes()) {
    SCOPED_TRACE(DTypeName(dtype));
    const JaggedTensor jt = RandomJagged(dtype, 200, 9, {}, rng);
    const SparseTensor st = jt.ToSparse();
    int64_t max_len = 0;
    const std::vector<int64_t> idx =
        ref::JaggedSparseIndices(jt.offsets().ToVector<int64_t>(), &max_len);
    EXPECT_EQ(st.shape(), (std::vector<int64_t>{200, max_len}));
    EXPECT_EQ(st.order(), (std::vector<int>{0, 1}));
    EXPECT_EQ(st.indices().ToVector<int64_t>(), idx);
    EXPECT_TRUE(SharesStorage(st.values(), jt.values()));
    EXPECT_TRUE(st.IndicesValid());
    const JaggedTensor back = JaggedTensor::FromSparse(st);
    EXPECT_EQ(back.offsets().ToVector<int64_t>(), jt.offsets().ToVector<int64_t>());
    ExpectSame(back.values(), jt.values());
  }
}

TEST(JaggedToSparse, LargeBatchAtOneAndTwoThreads) {
  Rng rng(6);
  const JaggedTensor jt = RandomJagged(DType::kInt32, 40000, 20, {}, rng);
  const auto out = AtThreadCounts({1, 2}, [&] { return jt.ToSparse(); });
  int64_t max_len = 0;
  EXPECT_EQ(out[0].indices().ToVector<int64_t>(),
            ref::JaggedSparseIndices(jt.offsets().ToVector<int64_t>(), &max_len));
  ExpectSame(out[0].indices(), out[1].indices());
}

TEST(JaggedToSparse, StridedValuesEmptyBatchesAndErrors) {
  Tensor wide = Tensor::FromVector<int64_t>({1, 0, 2, 0, 3, 0});
  const JaggedTensor jt =
      JaggedTensor::FromLengths(Slice(wide, 0, 0, 6, 2), Tensor::FromVector<int64_t>({0, 3, 0}));
  const SparseTensor st = jt.ToSparse();
  EXPECT_EQ(st.values().ToVector<int64_t>(), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(st.indices().ToVector<int64_t>(), (std::vector<int64_t>{1, 0, 1, 1, 1, 2}));
  EXPECT_EQ(st.shape(), (std::vector<int64_t>{3, 3}));
  const JaggedTensor none = JaggedTensor::FromOffsets(Tensor::Zeros({0}, DType::kFloat32),
                                                      Tensor::FromVector<int64_t>({0}));
  EXPECT_EQ(none.ToSparse().shape(), (std::vector<int64_t>{0, 0}));
  const JaggedTensor empty_rows = JaggedTensor::FromOffsets(Tensor::Zeros({0}, DType::kFloat32),
                                                            Tensor::FromVector<int64_t>({0, 0, 0}));
  EXPECT_EQ(empty_rows.ToSparse().shape(), (std::vector<int64_t>{2, 0}));
  ExpectError(
      [] {
        JaggedTensor::FromLengths(Tensor::Zeros({3, 2}, DType::kFloat32),
                                  Tensor::FromVector<int64_t>({1, 2}))
            .ToSparse();
      },
      ErrorCode::kShapeMismatch, {"JaggedTensor::ToSparse", "1-D", "[3 2]", "ToPadded"});
  ExpectError([] { JaggedTensor().ToSparse(); }, ErrorCode::kInvalidArgument,
              {"JaggedTensor::ToSparse", "default-constructed"});
}

// --- ToPadded / FromPadded ----------------------------------------------------------------

TEST(JaggedToPadded, MatchesTheReferenceInEveryDType) {
  Rng rng(7);
  for (DType dtype : AllDTypes()) {
    SCOPED_TRACE(DTypeName(dtype));
    const Scalar pad = dtype == DType::kString ? Scalar(0) : Scalar(7);
    for (const std::vector<int64_t>& item : {std::vector<int64_t>{}, {3}, {2, 2}}) {
      const JaggedTensor jt = RandomJagged(dtype, 60, 10, item, rng);
      const std::vector<int64_t> off = jt.offsets().ToVector<int64_t>();
      for (int64_t len : {-1, 0, 1, 4, 10, 13}) {
        SCOPED_TRACE(len);
        const Tensor out = jt.ToPadded(len, pad);
        const std::vector<int64_t> items = ref::PaddedItems(off, len);
        std::vector<int64_t> dims = {60, static_cast<int64_t>(items.size()) / 60};
        dims.insert(dims.end(), item.begin(), item.end());
        ExpectSame(out, Gathered({jt.values()}, FromPart0(items), dims, pad));
      }
    }
  }
}

TEST(JaggedToPadded, PadIsConvertedAndStringsPadWithEmpty) {
  const JaggedTensor ints = JaggedTensor::FromLengths(Tensor::FromVector<int32_t>({1, 2, 3}),
                                                      Tensor::FromVector<int64_t>({1, 0, 2}));
  EXPECT_EQ(ints.ToPadded(-1, -1).ToVector<int32_t>(), (std::vector<int32_t>{1, -1, -1, -1, 2, 3}));
  EXPECT_EQ(ints.ToPadded(1, 9).ToVector<int32_t>(), (std::vector<int32_t>{1, 9, 2}));
  const JaggedTensor halves = JaggedTensor::FromLengths(Tensor::FromVector<Half>({Half(1.5f)}),
                                                        Tensor::FromVector<int64_t>({0, 1}));
  const std::vector<Half> h = halves.ToPadded(-1, 0.25).ToVector<Half>();
  EXPECT_EQ(static_cast<float>(h[0]), 0.25f);
  EXPECT_EQ(static_cast<float>(h[1]), 1.5f);
  const JaggedTensor strings = JaggedTensor::FromLengths(
      Tensor::FromVector<std::string>({"x", "y"}), Tensor::FromVector<int64_t>({2, 0}));
  EXPECT_EQ(strings.ToPadded(3, 0).ToVector<std::string>(),
            (std::vector<std::string>{"x", "y", "", "", "", ""}));
  ExpectError([&] { strings.ToPadded(3, 1); }, ErrorCode::kInvalidArgument,
              {"JaggedTensor::ToPadded", "\"\"", "pad 0"});
  ExpectError([&] { ints.ToPadded(-2, 0); }, ErrorCode::kInvalidArgument,
              {"JaggedTensor::ToPadded", "max_length is -2", "-1"});
  ExpectError([] { JaggedTensor().ToPadded(1, 0); }, ErrorCode::kInvalidArgument,
              {"default-constructed"});
  const JaggedTensor eight = JaggedTensor::FromLengths(
      Tensor::Zeros({1, 1, 1, 1, 1, 1, 1, 1}, DType::kFloat32), Tensor::FromVector<int64_t>({1}));
  ExpectError([&] { eight.ToPadded(1, 0); }, ErrorCode::kShapeMismatch, {"8 axes"});
  // An output too large to count is an Error from the allocation, not a wrapped size.
  EXPECT_NE(testing::ErrorOf([&] { ints.ToPadded(INT64_MAX, 0); }), "");
}

TEST(JaggedToPadded, EmptyBatchesAndLargeBatchAtOneAndTwoThreads) {
  const JaggedTensor none = JaggedTensor::FromOffsets(Tensor::Zeros({0, 3}, DType::kFloat32),
                                                      Tensor::FromVector<int64_t>({0}));
  EXPECT_EQ(none.ToPadded(-1, 1).Dims(), (std::vector<int64_t>{0, 0, 3}));
  EXPECT_EQ(none.ToPadded(5, 1).Dims(), (std::vector<int64_t>{0, 5, 3}));
  const JaggedTensor empty_rows = JaggedTensor::FromOffsets(Tensor::Zeros({0}, DType::kInt8),
                                                            Tensor::FromVector<int64_t>({0, 0}));
  EXPECT_EQ(empty_rows.ToPadded(-1, 1).Dims(), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(empty_rows.ToPadded(2, 1).ToVector<int8_t>(), (std::vector<int8_t>{1, 1}));
  Rng rng(8);
  for (DType dtype : {DType::kFloat32, DType::kString}) {
    const JaggedTensor jt = RandomJagged(dtype, 30000, 30, {}, rng);
    const auto out = AtThreadCounts({1, 2}, [&] { return jt.ToPadded(-1, 0); });
    ExpectSame(out[0], out[1]);
    const std::vector<int64_t> items = ref::PaddedItems(jt.offsets().ToVector<int64_t>(), -1);
    ExpectSame(out[0], Gathered({jt.values()}, FromPart0(items), out[0].Dims(), 0));
  }
}

TEST(JaggedFromPadded, MatchesTheReferenceInEveryDType) {
  Rng rng(9);
  for (DType dtype : AllDTypes()) {
    SCOPED_TRACE(DTypeName(dtype));
    for (const std::vector<int64_t>& item : {std::vector<int64_t>{}, {3}}) {
      const int64_t b = 40, len = 7;
      std::vector<int64_t> dims = {b, len};
      dims.insert(dims.end(), item.begin(), item.end());
      const Tensor dense = RandomTensor(dtype, dims, rng);
      const std::vector<int64_t> lengths = RandomLengths(b, len, rng);
      std::vector<int32_t> lengths32(lengths.begin(), lengths.end());
      for (const Tensor& l :
           {Tensor::FromVector<int64_t>(lengths), Tensor::FromVector<int32_t>(lengths32)}) {
        const JaggedTensor jt = JaggedTensor::FromPadded(dense, l);
        EXPECT_EQ(jt.offsets().ToVector<int64_t>(), OffsetsOf(lengths));
        std::vector<int64_t> flat = {b * len};
        flat.insert(flat.end(), item.begin(), item.end());
        ExpectSame(jt.values(),
                   Gathered({*View(dense, flat)}, FromPart0(ref::UnpaddedItems(lengths, len))));
        // And back.
        const Tensor again = jt.ToPadded(len, 0);
        const JaggedTensor twice = JaggedTensor::FromPadded(again, l);
        ExpectSame(twice.values(), jt.values());
      }
    }
  }
}

TEST(JaggedFromPadded, FullRowsAreSharedAndStridedInputsCopied) {
  Tensor dense = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {3, 2});
  const JaggedTensor full = JaggedTensor::FromPadded(dense, Tensor::FromVector<int64_t>({2, 2, 2}));
  EXPECT_TRUE(SharesStorage(full.values(), dense));
  EXPECT_EQ(full.values().ToVector<float>(), dense.ToVector<float>());
  const Tensor t = Transpose(dense, 0, 1);  // [2, 3]: rows {1 3 5}, {2 4 6}
  const JaggedTensor jt = JaggedTensor::FromPadded(t, Tensor::FromVector<int32_t>({1, 3}));
  EXPECT_EQ(jt.values().ToVector<float>(), (std::vector<float>{1, 2, 4, 6}));
  const JaggedTensor none = JaggedTensor::FromPadded(Tensor::Zeros({0, 4}, DType::kInt16),
                                                     Tensor::Zeros({0}, DType::kInt32));
  EXPECT_EQ(none.batch_size(), 0);
  const JaggedTensor empty_items = JaggedTensor::FromPadded(Tensor::Zeros({2, 3, 0}, DType::kInt16),
                                                            Tensor::FromVector<int64_t>({1, 2}));
  EXPECT_EQ(empty_items.values().Dims(), (std::vector<int64_t>{3, 0}));
  Rng rng(10);
  const Tensor big = RandomTensor(DType::kInt64, {20000, 16}, rng);
  const Tensor lens = Tensor::FromVector<int64_t>(RandomLengths(20000, 16, rng));
  const auto out = AtThreadCounts({1, 2}, [&] { return JaggedTensor::FromPadded(big, lens); });
  ExpectSame(out[0].values(), out[1].values());
}

TEST(JaggedFromPadded, BadInputsAreErrors) {
  const Tensor dense = Tensor::Zeros({3, 4}, DType::kFloat32);
  auto from = [&](Tensor lengths) { return [=] { JaggedTensor::FromPadded(dense, lengths); }; };
  ExpectError(from(Tensor::FromVector<int64_t>({1, -1, 2})), ErrorCode::kInvalidArgument,
              {"JaggedTensor::FromPadded", "lengths[1] = -1", "[0, 4]"});
  ExpectError(from(Tensor::FromVector<int32_t>({1, 2, 5})), ErrorCode::kInvalidArgument,
              {"lengths[2] = 5", "row 2"});
  ExpectError(from(Tensor::FromVector<int64_t>({1, 2})), ErrorCode::kShapeMismatch,
              {"[B] = [3]", "[2]"});
  ExpectError(from(Tensor::FromVector<int64_t>({1, 2, 3}, {3, 1})), ErrorCode::kShapeMismatch,
              {"[B] = [3]"});
  ExpectError(from(Tensor::FromVector<float>({1, 2, 3})), ErrorCode::kDTypeMismatch,
              {"int32 or int64", "float32"});
  ExpectError(from(Tensor()), ErrorCode::kInvalidArgument, {"undefined"});
  ExpectError(
      [] {
        JaggedTensor::FromPadded(Tensor::Zeros({3}, DType::kFloat32),
                                 Tensor::FromVector<int64_t>({1, 2, 3}));
      },
      ErrorCode::kShapeMismatch, {"[B, L, ...]", "[3]"});
  ExpectError(
      [] {
        const int64_t huge = INT64_C(1) << 62;
        JaggedTensor::FromPadded(Tensor::Zeros({2, huge, 0}, DType::kFloat32),
                                 Tensor::FromVector<int64_t>({huge, huge}));
      },
      ErrorCode::kShapeMismatch, {"int64"});
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

// --- KeyedJaggedTensor: Permute, Concat, Split, ToSparse -----------------------------------

TEST(KeyedJaggedPermute, MatchesTheReferenceInEveryDType) {
  Rng rng(11);
  const std::vector<std::vector<std::string>> orders = {
      {"f2", "f0", "f1"}, {"f1"}, {"f0", "f0", "f2", "f0"}, {}, {"f0", "f1", "f2"}};
  for (DType dtype : AllDTypes()) {
    SCOPED_TRACE(DTypeName(dtype));
    for (const std::vector<int64_t>& item : {std::vector<int64_t>{}, {2}}) {
      const KeyedJaggedTensor kjt = RandomKjt(dtype, 3, 25, 6, item, rng() % 2 == 0, rng);
      for (const auto& keys : orders) {
        std::vector<ref::ItemSource> items;
        const ref::KjtLayout want = ref::KjtPermute(LayoutOf(kjt), keys, &items);
        ExpectKjtMatches(kjt.Permute(keys), want, {&kjt}, items);
      }
    }
  }
}

TEST(KeyedJaggedPermute, LargeAtOneAndTwoThreadsAndPastTheCaches) {
  Rng rng(12);
  // 26 features of 2000 rows: many 64 KiB pieces, blocks starting and ending inside them.
  const KeyedJaggedTensor kjt = RandomKjt(DType::kInt64, 26, 2000, 40, {}, true, rng);
  std::vector<std::string> keys = kjt.keys();
  std::shuffle(keys.begin(), keys.end(), rng);
  keys.push_back(keys[3]);
  std::vector<ref::ItemSource> items;
  const ref::KjtLayout want = ref::KjtPermute(LayoutOf(kjt), keys, &items);
  const auto out = AtThreadCounts({1, 2}, [&] { return kjt.Permute(keys); });
  ExpectKjtMatches(out[0], want, {&kjt}, items);
  ExpectSameKjt(out[0], out[1]);
  // The same through the streaming copies (used for outputs of 8 MiB or more).
  transpose_internal::SetStreamingBytesForTesting(0);
  const KeyedJaggedTensor streamed = kjt.Permute(keys);
  transpose_internal::SetStreamingBytesForTesting(-1);
  ExpectSameKjt(out[0], streamed);
  // Strings in pieces too.
  const KeyedJaggedTensor strings = RandomKjt(DType::kString, 4, 3000, 20, {}, false, rng);
  const std::vector<std::string> rev = {"f3", "f2", "f1", "f0"};
  const ref::KjtLayout want_s = ref::KjtPermute(LayoutOf(strings), rev, &items);
  ExpectKjtMatches(strings.Permute(rev), want_s, {&strings}, items);
}

TEST(KeyedJaggedPermute, EmptyBatchesAndErrors) {
  Rng rng(13);
  const KeyedJaggedTensor none = RandomKjt(DType::kFloat32, 2, 0, 4, {}, true, rng);
  const KeyedJaggedTensor p = none.Permute({"f1", "f1"});
  EXPECT_EQ(p.batch_size(), 0);
  EXPECT_EQ(p.lengths().Dims(), (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(p.num_keys(), 2);
  EXPECT_EQ(p.KeyIndex("f1"), 0);
  const KeyedJaggedTensor kjt = RandomKjt(DType::kFloat32, 2, 3, 4, {}, false, rng);
  ExpectError(
      [&] {
        kjt.Permute({"f0", "g"});
      },
      ErrorCode::kInvalidArgument, {"KeyedJaggedTensor::Permute", "\"g\"", "\"f0\", \"f1\""});
  ExpectError([] { KeyedJaggedTensor().Permute({}); }, ErrorCode::kInvalidArgument,
              {"KeyedJaggedTensor::Permute", "default-constructed"});
}

TEST(KeyedJaggedConcat, MatchesTheReferenceInEveryDType) {
  Rng rng(14);
  for (DType dtype : AllDTypes()) {
    SCOPED_TRACE(DTypeName(dtype));
    const bool weighted = rng() % 2 == 0;
    std::vector<KeyedJaggedTensor> parts;
    for (int64_t b : {7, 0, 12, 1}) parts.push_back(RandomKjt(dtype, 3, b, 5, {2}, weighted, rng));
    std::vector<const KeyedJaggedTensor*> srcs;
    std::vector<ref::ItemSource> items;
    const ref::KjtLayout want = ConcatReference(parts, &srcs, &items);
    ExpectKjtMatches(KeyedJaggedTensor::Concat(parts), want, srcs, items);
    // One part is a copy of itself.
    const KeyedJaggedTensor one = KeyedJaggedTensor::Concat({parts[0]});
    ExpectSameKjt(one, parts[0]);
  }
}

TEST(KeyedJaggedConcat, LargeAtOneAndTwoThreads) {
  Rng rng(15);
  std::vector<KeyedJaggedTensor> parts;
  for (int64_t b : {1500, 700, 2100})
    parts.push_back(RandomKjt(DType::kFloat64, 8, b, 30, {}, true, rng));
  std::vector<const KeyedJaggedTensor*> srcs;
  std::vector<ref::ItemSource> items;
  const ref::KjtLayout want = ConcatReference(parts, &srcs, &items);
  const auto out = AtThreadCounts({1, 2}, [&] { return KeyedJaggedTensor::Concat(parts); });
  ExpectKjtMatches(out[0], want, srcs, items);
  ExpectSameKjt(out[0], out[1]);
}

// The same features under other keys.
KeyedJaggedTensor Renamed(const KeyedJaggedTensor& k, const std::string& prefix) {
  std::vector<std::string> keys;
  for (const std::string& key : k.keys()) keys.push_back(prefix + key);
  return KeyedJaggedTensor(keys, k.values(), k.lengths(), k.weights());
}

TEST(KeyedJaggedConcat, PartsOfOtherKeysJoinAlongTheKeysAsTorchRec) {
  Rng rng(17);
  for (const bool weighted : {false, true}) {
    for (const int64_t b : {int64_t{0}, int64_t{1}, int64_t{5}}) {
      const KeyedJaggedTensor x = RandomKjt(DType::kFloat32, 2, b, 4, {3}, weighted, rng);
      const KeyedJaggedTensor y =
          Renamed(RandomKjt(DType::kFloat32, 3, b, 4, {3}, weighted, rng), "y");
      const KeyedJaggedTensor z =
          Renamed(RandomKjt(DType::kFloat32, 1, b, 4, {3}, weighted, rng), "z");
      const auto runs = AtThreadCounts({1, 2}, [&] {
        return KeyedJaggedTensor::Concat({x, y, z});
      });
      for (const KeyedJaggedTensor& out : runs) {
        EXPECT_EQ(out.keys(), (std::vector<std::string>{"f0", "f1", "yf0", "yf1", "yf2", "zf0"}));
        EXPECT_EQ(out.batch_size(), b);
        std::vector<int64_t> lengths = x.lengths().ToVector<int64_t>();
        for (const KeyedJaggedTensor* part : {&y, &z}) {
          const std::vector<int64_t> l = part->lengths().ToVector<int64_t>();
          lengths.insert(lengths.end(), l.begin(), l.end());
        }
        EXPECT_EQ(out.lengths().ToVector<int64_t>(), lengths);
        for (const KeyedJaggedTensor* part : {&x, &y, &z}) {
          for (const std::string& key : part->keys()) {
            const JaggedTensor got = out.Get(key), want = part->Get(key);
            EXPECT_EQ(got.values().ToVector<float>(), want.values().ToVector<float>()) << key;
            EXPECT_EQ(got.lengths().ToVector<int64_t>(), want.lengths().ToVector<int64_t>());
            if (weighted) {
              EXPECT_EQ(got.weights().ToVector<float>(), want.weights().ToVector<float>());
            }
          }
        }
      }
    }
  }
}

TEST(KeyedJaggedConcat, PartsFittingNeitherWayAreErrors) {
  Rng rng(18);
  const KeyedJaggedTensor a = RandomKjt(DType::kInt64, 2, 4, 3, {}, false, rng);
  const KeyedJaggedTensor other = Renamed(RandomKjt(DType::kInt64, 2, 4, 3, {}, false, rng), "o");
  const KeyedJaggedTensor short_batch =
      Renamed(RandomKjt(DType::kInt64, 2, 3, 3, {}, false, rng), "s");
  ExpectError(
      [&] {
        KeyedJaggedTensor::Concat({a, short_batch});
      },
      ErrorCode::kShapeMismatch,
      {"KeyedJaggedTensor::Concat", "part 1 has batch size 3 but part 0 has 4"});
  // Keys partly shared: neither the same keys nor new ones.
  const KeyedJaggedTensor mixed = a.Permute({"f1"});
  ExpectError(
      [&] {
        KeyedJaggedTensor::Concat({a, mixed});
      },
      ErrorCode::kInvalidArgument,
      {"part 1's key 0 is \"f1\" but part 0's is \"f0\"", "\"f1\" is in an earlier part",
       "TorchRec"});
  // Batches joined, then a part of other keys; and other keys, then part 0's again.
  ExpectError(
      [&] {
        KeyedJaggedTensor::Concat({a, a, other});
      },
      ErrorCode::kInvalidArgument, {"part 2's key 0", "an earlier part repeats part 0's keys"});
  ExpectError(
      [&] {
        KeyedJaggedTensor::Concat({a, other, a});
      },
      ErrorCode::kInvalidArgument,
      {"part 2 has part 0's keys, but an earlier part has other keys"});
}

TEST(KeyedJaggedConcat, MismatchesAreErrorsNamingTheFirst) {
  Rng rng(16);
  const KeyedJaggedTensor a = RandomKjt(DType::kInt64, 3, 4, 3, {}, false, rng);
  const KeyedJaggedTensor swapped = a.Permute({"f0", "f2", "f1"});
  ExpectError(
      [&] {
        KeyedJaggedTensor::Concat({a, a, swapped});
      },
      ErrorCode::kInvalidArgument,
      {"KeyedJaggedTensor::Concat", "part 2's key 1 is \"f2\" but part 0's is \"f1\"", "Permute"});
  ExpectError(
      [&] {
        KeyedJaggedTensor::Concat({a, a.Permute({"f0", "f1"})});
      },
      ErrorCode::kInvalidArgument, {"part 1's key 2 is missing but part 0's is \"f2\""});
  ExpectError(
      [&] {
        KeyedJaggedTensor::Concat({a.Permute({"f0"}), a});
      },
      ErrorCode::kInvalidArgument, {"part 1's key 1 is \"f1\" but part 0's is missing"});
  const KeyedJaggedTensor ints = RandomKjt(DType::kInt32, 3, 4, 3, {}, false, rng);
  ExpectError(
      [&] {
        KeyedJaggedTensor::Concat({a, ints});
      },
      ErrorCode::kDTypeMismatch, {"part 1's values are int32 but part 0's are int64"});
  const KeyedJaggedTensor wide = RandomKjt(DType::kInt64, 3, 4, 3, {2}, false, rng);
  ExpectError(
      [&] {
        KeyedJaggedTensor::Concat({a, wide});
      },
      ErrorCode::kShapeMismatch, {"part 1's values are [", "items"});
  const KeyedJaggedTensor weighted = RandomKjt(DType::kInt64, 3, 4, 3, {}, true, rng);
  ExpectError(
      [&] {
        KeyedJaggedTensor::Concat({a, weighted});
      },
      ErrorCode::kInvalidArgument, {"part 1 has weights but part 0 has none"});
  const KeyedJaggedTensor w64(weighted.keys(), weighted.values(), weighted.lengths(),
                              Converted(weighted.weights(), DType::kFloat64));
  ExpectError(
      [&] {
        KeyedJaggedTensor::Concat({weighted, w64});
      },
      ErrorCode::kDTypeMismatch, {"part 1's weights are float64 but part 0's are float32"});
  ExpectError([] { KeyedJaggedTensor::Concat({}); }, ErrorCode::kInvalidArgument,
              {"at least one part"});
  ExpectError(
      [&] {
        KeyedJaggedTensor::Concat({a, KeyedJaggedTensor()});
      },
      ErrorCode::kInvalidArgument, {"default-constructed"});
}

TEST(KeyedJaggedSplit, MatchesTheReferenceAndConcatUndoesIt) {
  Rng rng(17);
  for (DType dtype : AllDTypes()) {
    SCOPED_TRACE(DTypeName(dtype));
    const KeyedJaggedTensor kjt = RandomKjt(dtype, 3, 20, 5, {}, rng() % 2 == 0, rng);
    for (const std::vector<int64_t>& sizes :
         {std::vector<int64_t>{20}, {5, 0, 15}, {0, 20, 0}, {1, 2, 3, 4, 10}}) {
      std::vector<std::vector<ref::ItemSource>> items;
      const std::vector<ref::KjtLayout> want = ref::KjtSplit(LayoutOf(kjt), sizes, &items);
      const std::vector<KeyedJaggedTensor> pieces = kjt.Split(sizes);
      ASSERT_EQ(pieces.size(), sizes.size());
      for (size_t k = 0; k < sizes.size(); ++k)
        ExpectKjtMatches(pieces[k], want[k], {&kjt}, items[k]);
      ExpectSameKjt(KeyedJaggedTensor::Concat(pieces), kjt);
    }
  }
}

TEST(KeyedJaggedSplit, LargeAtOneAndTwoThreadsEmptyBatchesAndErrors) {
  Rng rng(18);
  const KeyedJaggedTensor kjt = RandomKjt(DType::kFloat32, 6, 5000, 30, {}, true, rng);
  const auto out = AtThreadCounts({1, 2}, [&] { return kjt.Split({1000, 3999, 1}); });
  for (size_t k = 0; k < 3; ++k) ExpectSameKjt(out[0][k], out[1][k]);
  ExpectSameKjt(KeyedJaggedTensor::Concat(out[0]), kjt);
  const KeyedJaggedTensor none = RandomKjt(DType::kFloat32, 2, 0, 4, {}, false, rng);
  EXPECT_EQ(none.Split({0, 0}).size(), 2u);
  EXPECT_TRUE(none.Split({}).empty());
  ExpectError(
      [&] {
        kjt.Split({1000, -1, 4001});
      },
      ErrorCode::kInvalidArgument, {"KeyedJaggedTensor::Split", "batch_sizes[1] = -1"});
  ExpectError(
      [&] {
        kjt.Split({4000, 1001});
      },
      ErrorCode::kShapeMismatch, {"more than 5000", "batch_sizes[1] = 1001"});
  ExpectError(
      [&] {
        kjt.Split({4000, 999});
      },
      ErrorCode::kShapeMismatch, {"add up to 4999", "5000"});
  ExpectError([&] { kjt.Split({}); }, ErrorCode::kShapeMismatch, {"add up to 0"});
  ExpectError([] { KeyedJaggedTensor().Split({}); }, ErrorCode::kInvalidArgument,
              {"default-constructed"});
}

TEST(KeyedJaggedToSparse, OneFeatureAsSparse) {
  Rng rng(19);
  const KeyedJaggedTensor kjt = RandomKjt(DType::kString, 3, 30, 6, {}, false, rng);
  for (const std::string& key : kjt.keys()) {
    const SparseTensor st = kjt.ToSparse(key);
    const JaggedTensor jt = kjt.Get(key);
    int64_t max_len = 0;
    EXPECT_EQ(st.indices().ToVector<int64_t>(),
              ref::JaggedSparseIndices(jt.offsets().ToVector<int64_t>(), &max_len));
    EXPECT_EQ(st.shape(), (std::vector<int64_t>{30, max_len}));
    ExpectSame(st.values(), jt.values());
  }
  ExpectError([&] { kjt.ToSparse("nope"); }, ErrorCode::kInvalidArgument,
              {"KeyedJaggedTensor::ToSparse", "\"nope\""});
}

// --- The device bodies' element functions (jagged_device.h) ----------------------------------

// A copy of `like` (C order, any dtype but strings) whose element e is src's element
// source(e), or `pad` where source(e) < 0: what a device kernel with one thread per output
// element writes.
template <typename Source>
Tensor PerElement(const Tensor& like, const Tensor& src, const Source& source, Scalar pad = 0) {
  Tensor out = Tensor::Empty(like.Dims(), like.dtype());
  Dispatch(like.dtype(), "PerElement", [&]<typename T>() {
    if constexpr (!std::is_same_v<T, std::string>) {
      const std::vector<T> s = src.ToVector<T>();
      T* o = out.NumElements() > 0 ? out.data<T>() : nullptr;
      for (int64_t e = 0; e < out.NumElements(); ++e) {
        const int64_t from = source(e);
        o[e] = from < 0 ? pad.To<T>() : s[static_cast<size_t>(from)];
      }
    }
  });
  return out;
}

// ToPadded, FromPadded and ToSparse with jagged_device.h's functions asked per output element
// (as the CUDA kernels ask them) equal the CPU conversions: items of several dims, truncated
// and empty rows, lengths past and below the longest row.
TEST(JaggedDevice, ElementFunctionsGiveTheCpuConversions) {
  Rng rng(20);
  for (DType dtype : {DType::kInt8, DType::kFloat16, DType::kInt32, DType::kFloat64}) {
    for (const std::vector<int64_t>& item : {std::vector<int64_t>{}, {3}, {2, 2}}) {
      SCOPED_TRACE(::testing::Message() << DTypeName(dtype) << " items " << item.size());
      const JaggedTensor jt = RandomJagged(dtype, 50, 9, item, rng);
      const int64_t b = jt.batch_size();
      const std::vector<int64_t> off = jt.offsets().ToVector<int64_t>();
      const int64_t inner = jt.num_values() > 0 ? jt.values().NumElements() / jt.num_values() : 1;
      for (int64_t len : {-1, 0, 1, 4, 12}) {
        const Tensor want = jt.ToPadded(len, 5);
        const int64_t l = want.Dim(1);
        ExpectSame(
            PerElement(
                want, jt.values(),
                [&](int64_t e) { return jagged_internal::PaddedSource(off.data(), l, inner, e); },
                5),
            want);
      }
      const Tensor dense = jt.ToPadded(-1, 0);
      const JaggedTensor back = JaggedTensor::FromPadded(dense, jt.lengths());
      const int64_t l = dense.Dim(1);
      ExpectSame(PerElement(back.values(), dense,
                            [&](int64_t e) {
                              return jagged_internal::UnpaddedSource(off.data(), b, l, inner, e);
                            }),
                 back.values());
      ExpectSame(back.values(), jt.values());
      if (item.empty()) {
        const SparseTensor st = jt.ToSparse();
        std::vector<int64_t> idx;
        for (int64_t i = 0; i < jt.num_values(); ++i) {
          const int64_t r = jagged_internal::RowOfItem(off.data(), b, i);
          idx.push_back(r);
          idx.push_back(i - off[r]);
        }
        EXPECT_EQ(idx, st.indices().ToVector<int64_t>());
      }
    }
  }
}

// The item blocks of a gather: block k copies `counts[k]` items of sources[k] from item
// firsts[k]; blocks without items are left out, as the device body leaves them out.
struct ItemBlocks {
  std::vector<int64_t> starts = {0};
  std::vector<Tensor> sources;
  std::vector<int64_t> firsts;
  void Add(const Tensor& src, int64_t first, int64_t count) {
    if (count == 0) return;
    starts.push_back(starts.back() + count);
    sources.push_back(src);
    firsts.push_back(first);
  }
  // The gather into `like` with GatheredElement asked for every element.
  Tensor Run(const Tensor& like) const {
    const int64_t n = like.Dim(0);
    const int64_t inner = n > 0 ? like.NumElements() / n : 1;
    const int64_t blocks = static_cast<int64_t>(sources.size());
    Tensor out = Tensor::Empty(like.Dims(), like.dtype());
    Dispatch(like.dtype(), "ItemBlocks", [&]<typename T>() {
      if constexpr (!std::is_same_v<T, std::string>) {
        std::vector<std::vector<T>> src;
        for (const Tensor& s : sources) src.push_back(s.ToVector<T>());
        T* o = out.NumElements() > 0 ? out.data<T>() : nullptr;
        for (int64_t e = 0; e < out.NumElements(); ++e) {
          int64_t at = 0;
          const int64_t k = jagged_internal::GatheredElement(starts.data(), blocks, inner, e, &at);
          o[e] = src[k][static_cast<size_t>(firsts[k] * inner + at)];
        }
      }
    });
    return out;
  }
};

// Permute, Concat and Split of KeyedJaggedTensor, gathered with GatheredElement per output
// element (the CUDA kernel's mapping), equal the CPU bodies' values and weights.
TEST(KeyedJaggedDevice, GatheredElementGivesPermuteConcatAndSplit) {
  Rng rng(21);
  for (const std::vector<int64_t>& item : {std::vector<int64_t>{}, {3}}) {
    const KeyedJaggedTensor kjt = RandomKjt(DType::kInt16, 4, 30, 6, item, true, rng);
    const int64_t b = kjt.batch_size();
    const std::vector<int64_t> off = kjt.offsets().ToVector<int64_t>();
    const std::vector<std::string> keys = {"f3", "f1", "f1", "f0"};
    const KeyedJaggedTensor permuted = kjt.Permute(keys);
    ItemBlocks perm, perm_w;
    for (const std::string& key : keys) {
      const int64_t f = kjt.KeyIndex(key);
      perm.Add(kjt.values(), off[f * b], off[(f + 1) * b] - off[f * b]);
      perm_w.Add(kjt.weights(), off[f * b], off[(f + 1) * b] - off[f * b]);
    }
    ExpectSame(perm.Run(permuted.values()), permuted.values());
    ExpectSame(perm_w.Run(permuted.weights()), permuted.weights());

    const std::vector<int64_t> sizes = {10, 0, 19, 1};
    const std::vector<KeyedJaggedTensor> pieces = kjt.Split(sizes);
    int64_t start = 0;
    for (size_t p = 0; p < sizes.size(); ++p) {
      ItemBlocks split;
      for (int64_t f = 0; f < kjt.num_keys(); ++f) {
        const int64_t r = f * b + start;
        split.Add(kjt.values(), off[r], off[r + sizes[p]] - off[r]);
      }
      ExpectSame(split.Run(pieces[p].values()), pieces[p].values());
      start += sizes[p];
    }

    const KeyedJaggedTensor joined = KeyedJaggedTensor::Concat(pieces);
    ItemBlocks concat;
    for (int64_t f = 0; f < kjt.num_keys(); ++f) {
      for (const KeyedJaggedTensor& piece : pieces) {
        const std::vector<int64_t> po = piece.offsets().ToVector<int64_t>();
        const int64_t pb = piece.batch_size();
        concat.Add(piece.values(), po[f * pb], po[(f + 1) * pb] - po[f * pb]);
      }
    }
    ExpectSame(concat.Run(joined.values()), joined.values());
    ExpectSame(joined.values(), kjt.values());
  }
}

}  // namespace
}  // namespace tensorkit
