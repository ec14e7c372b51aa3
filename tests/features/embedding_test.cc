// EmbeddingBag, EmbeddingBags and EmbeddingBagBackward against the naive references.
#include "tensorkit/features/embedding.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <numeric>
#include <random>

#include "reference/features_reference.h"
#include "tensorkit/common/simd_path.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/dense/views.h"
#include "tensorkit/features/embedding_device.h"
#include "test_util.h"

namespace tensorkit {
namespace {

using testing::AtThreadCounts;
using testing::ExpectError;

constexpr Combiner kAllCombiners[] = {Combiner::kSum, Combiner::kMean, Combiner::kSqrtN,
                                      Combiner::kMax, Combiner::kMin};

bool IsExtreme(Combiner c) { return c == Combiner::kMax || c == Combiner::kMin; }

// Calls f.template operator()<T>() for every table dtype.
template <typename F>
void ForEachTableType(F&& f) {
  f.template operator()<float>();
  f.template operator()<double>();
  f.template operator()<Half>();
  f.template operator()<BFloat16>();
}

// The bits of a value, so that results compare exactly (also NaN and signed zeros).
template <typename T>
auto Bits(T v) {
  if constexpr (sizeof(T) == 2) {
    return v.bits;
  } else {
    return std::bit_cast<std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>(v);
  }
}

template <typename T>
void ExpectSameBits(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.Dims(), b.Dims());
  ASSERT_EQ(a.dtype(), b.dtype());
  const std::vector<T> x = a.ToVector<T>(), y = b.ToVector<T>();
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(Bits(x[i]), Bits(y[i])) << "element " << i;
  }
}

// A random input: table [V, D] of T, bags of random lengths (some empty) whose ids include the
// padding id now and then, and optional weights.
struct Bags {
  std::vector<int64_t> offsets{0};
  std::vector<int64_t> ids;
  std::vector<double> weights;  // empty when unweighted
};

Bags RandomBags(std::mt19937_64& rng, int64_t b, int64_t v, int64_t max_len, int64_t padding_id,
                bool weighted) {
  Bags bags;
  std::uniform_int_distribution<int64_t> len(0, max_len), id(0, std::max<int64_t>(v - 1, 0));
  std::uniform_int_distribution<int> pct(0, 99);
  for (int64_t i = 0; i < b; ++i) {
    const int64_t n = pct(rng) < 15 || v == 0 ? 0 : len(rng);
    for (int64_t j = 0; j < n; ++j) {
      bags.ids.push_back(padding_id >= 0 && pct(rng) < 20 ? padding_id : id(rng));
      // Multiples of 1/4 in [-2, 2): sums of products stay exact enough to be interesting.
      if (weighted) bags.weights.push_back(static_cast<double>(pct(rng) % 16 - 8) / 4.0);
    }
    bags.offsets.push_back(static_cast<int64_t>(bags.ids.size()));
  }
  return bags;
}

Tensor IdsTensor(const std::vector<int64_t>& ids, DType dtype) {
  return Converted(Tensor::FromVector<int64_t>(ids), dtype);
}

JaggedTensor ToJagged(const Bags& bags, DType id_dtype, DType weight_dtype = DType::kFloat32) {
  Tensor weights;
  if (!bags.weights.empty()) {
    weights = Converted(Tensor::FromVector<double>(bags.weights), weight_dtype);
  }
  return JaggedTensor::FromOffsets(IdsTensor(bags.ids, id_dtype),
                                   Tensor::FromVector<int64_t>(bags.offsets), weights);
}

// Random table values of T and the same values widened to the compute type.
template <typename T>
std::pair<Tensor, std::vector<ComputeType<T>>> RandomTable(std::mt19937_64& rng, int64_t v,
                                                           int64_t d) {
  std::uniform_int_distribution<int> q(-64, 63);
  std::vector<T> values;
  std::vector<ComputeType<T>> wide;
  for (int64_t i = 0; i < v * d; ++i) {
    // A few bits of mantissa plus a small random scale: exact in every dtype, rarely tied.
    const float x =
        static_cast<float>(q(rng)) / 16.0f * (1.0f + static_cast<float>(q(rng)) / 128.0f);
    values.push_back(static_cast<T>(x));
    wide.push_back(static_cast<ComputeType<T>>(values.back()));
  }
  return {Tensor::FromVector<T>(values, {v, d}), wide};
}

template <typename C>
std::vector<C> Widened(const std::vector<double>& w) {
  std::vector<C> out;
  for (double x : w) out.push_back(static_cast<C>(static_cast<float>(x)));
  return out;
}

// The reference rounded to T, as a tensor [rows, d].
template <typename T, typename C>
Tensor Rounded(const std::vector<C>& ref, int64_t rows, int64_t d) {
  std::vector<T> out;
  for (C x : ref) out.push_back(static_cast<T>(x));
  return Tensor::FromVector<T>(out, {rows, d});
}

// --- EmbeddingBag ------------------------------------------------------------------------------

TEST(EmbeddingBag, MatchesTheReferenceForEveryDTypeWidthAndCombiner) {
  std::mt19937_64 rng(7);
  ForEachTableType([&]<typename T>() {
    using C = ComputeType<T>;
    for (int64_t d : {1, 3, 16, 32, 64, 128, 70}) {
      const int64_t v = 1 + static_cast<int64_t>(rng() % 40);
      auto [table, wide] = RandomTable<T>(rng, v, d);
      for (Combiner combiner : kAllCombiners) {
        for (bool weighted : {false, true}) {
          if (weighted && IsExtreme(combiner)) continue;
          for (int64_t pad : {int64_t{-1}, v / 2}) {
            for (DType id_dtype : {DType::kInt32, DType::kInt64}) {
              const Bags bags = RandomBags(rng, 1 + rng() % 30, v, 9, pad, weighted);
              const Tensor out = EmbeddingBag(table, ToJagged(bags, id_dtype), combiner, pad);
              const std::vector<C> ref = ref::EmbeddingBagRef<C>(
                  wide, d, bags.offsets, bags.ids, Widened<C>(bags.weights), combiner, pad);
              SCOPED_TRACE(::testing::Message()
                           << DTypeName(DTypeOf<T>) << " d=" << d << " " << CombinerName(combiner)
                           << " weighted=" << weighted << " pad=" << pad);
              ExpectSameBits<T>(out, Rounded<T>(ref, bags.offsets.size() - 1, d));
            }
          }
        }
      }
    }
  });
}

TEST(EmbeddingBag, SmallExampleByHand) {
  // Rows 0..3 of width 2; bags {1, 3}, {}, {2, 0 (padding), 2}, {0}.
  Tensor table = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6, 7, 8}, {4, 2});
  JaggedTensor ids = JaggedTensor::FromLengths(Tensor::FromVector<int64_t>({1, 3, 2, 0, 2, 0}),
                                               Tensor::FromVector<int64_t>({2, 0, 3, 1}));
  EXPECT_EQ(EmbeddingBag(table, ids, Combiner::kSum, 0).ToVector<float>(),
            (std::vector<float>{10, 12, 0, 0, 10, 12, 0, 0}));
  EXPECT_EQ(EmbeddingBag(table, ids, Combiner::kMean, 0).ToVector<float>(),
            (std::vector<float>{5, 6, 0, 0, 5, 6, 0, 0}));
  EXPECT_EQ(EmbeddingBag(table, ids, Combiner::kMax).ToVector<float>(),
            (std::vector<float>{7, 8, 0, 0, 5, 6, 1, 2}));
  EXPECT_EQ(EmbeddingBag(table, ids, Combiner::kMin).ToVector<float>(),
            (std::vector<float>{3, 4, 0, 0, 1, 2, 1, 2}));
  // Weighted: mean divides by the weights' sum, sqrtn by the root of their squares' sum.
  JaggedTensor weighted = ids.WithWeights(Tensor::FromVector<float>({3, 1, 1, 1, 1, 2}));
  EXPECT_EQ(EmbeddingBag(table, weighted, Combiner::kSum).ToVector<float>(),
            (std::vector<float>{16, 20, 0, 0, 11, 14, 2, 4}));
  EXPECT_EQ(EmbeddingBag(table, weighted, Combiner::kMean).ToVector<float>(),
            (std::vector<float>{4, 5, 0, 0, 11.f / 3, 14.f / 3, 1, 2}));
  EXPECT_EQ(EmbeddingBag(table, weighted, Combiner::kSqrtN, 0).ToVector<float>(),
            (std::vector<float>{16 / std::sqrt(10.f), 20 / std::sqrt(10.f), 0, 0,
                                10 / std::sqrt(2.f), 12 / std::sqrt(2.f), 0, 0}));
  // Weights adding up to 0 give 0 (div_no_nan), not inf or NaN.
  JaggedTensor cancel = ids.WithWeights(Tensor::FromVector<float>({1, -1, 1, 1, 1, 1}));
  EXPECT_EQ(EmbeddingBag(table, cancel, Combiner::kMean).ToVector<float>()[0], 0.0f);
}

TEST(EmbeddingBag, EmptyBatchAndEmptyBags) {
  Tensor table = Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2});
  JaggedTensor none = JaggedTensor::FromOffsets(Tensor::Zeros({0}, DType::kInt64),
                                                Tensor::FromVector<int64_t>({0}));
  JaggedTensor empty = JaggedTensor::FromOffsets(Tensor::Zeros({0}, DType::kInt32),
                                                 Tensor::FromVector<int64_t>({0, 0, 0}));
  for (Combiner c : kAllCombiners) {
    EXPECT_EQ(EmbeddingBag(table, none, c).Dims(), (std::vector<int64_t>{0, 2}));
    const Tensor out = EmbeddingBag(table, empty, c);
    EXPECT_EQ(out.Dims(), (std::vector<int64_t>{2, 2}));
    EXPECT_EQ(out.ToVector<float>(), (std::vector<float>(4, 0.0f)));
  }
  // A table of width 0 and one of no rows (only empty bags can use it).
  EXPECT_EQ(EmbeddingBag(Tensor::Zeros({3, 0}, DType::kFloat32), empty, Combiner::kSum).Dims(),
            (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(EmbeddingBag(Tensor::Zeros({0, 4}, DType::kFloat16), empty, Combiner::kMax).Dims(),
            (std::vector<int64_t>{2, 4}));
}

TEST(EmbeddingBag, StridedTablesAndIds) {
  std::mt19937_64 rng(11);
  auto [base, wide] = RandomTable<float>(rng, 24, 40);
  // Columns 5..21 of rows 2..20: rows are not adjacent but columns are.
  const Tensor rows = Slice(Slice(base, 0, 2, 20), 1, 5, 21);
  // A transposed table: columns are not adjacent (copied first).
  const Tensor transposed = Transpose(Transpose(rows, 0, 1).Clone(), 0, 1);
  const Bags bags = RandomBags(rng, 50, 18, 8, -1, true);
  // Every other id of a longer tensor: strided ids.
  std::vector<int64_t> doubled;
  for (int64_t id : bags.ids) doubled.insert(doubled.end(), {id, 999});
  const Tensor strided_ids =
      Slice(Tensor::FromVector<int64_t>(doubled), 0, 0, static_cast<int64_t>(doubled.size()), 2);
  const JaggedTensor ids = JaggedTensor::FromOffsets(
      strided_ids, Tensor::FromVector<int64_t>(bags.offsets),
      Converted(Tensor::FromVector<double>(bags.weights), DType::kFloat32));
  for (Combiner c : {Combiner::kSum, Combiner::kSqrtN}) {
    const Tensor expected = EmbeddingBag(rows.Clone(), ids, c);
    ExpectSameBits<float>(EmbeddingBag(rows, ids, c), expected);
    ExpectSameBits<float>(EmbeddingBag(transposed, ids, c), expected);
  }
}

TEST(EmbeddingBag, WeightsOfAnyFloatDTypeAreConverted) {
  std::mt19937_64 rng(3);
  auto [table, wide] = RandomTable<float>(rng, 10, 16);
  const Bags bags = RandomBags(rng, 20, 10, 6, -1, true);
  const Tensor expected = EmbeddingBag(table, ToJagged(bags, DType::kInt64), Combiner::kMean);
  for (DType w : {DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
    ExpectSameBits<float>(EmbeddingBag(table, ToJagged(bags, DType::kInt64, w), Combiner::kMean),
                          expected);
  }
}

// A large input (many tasks) for the thread-count and instruction-set checks.
template <typename T>
std::pair<Tensor, JaggedTensor> LargeInput(std::mt19937_64& rng, int64_t d, bool weighted,
                                           int64_t pad) {
  auto table = RandomTable<T>(rng, 5000, d).first;
  const Bags bags = RandomBags(rng, 6000, 5000, 60, pad, weighted);
  return {table, ToJagged(bags, DType::kInt32)};
}

TEST(EmbeddingBag, BitIdenticalAtOneAndTwoThreadsAndOnEverySimdPath) {
  std::mt19937_64 rng(5);
  ForEachTableType([&]<typename T>() {
    for (int64_t d : {64, 33}) {
      for (Combiner c : kAllCombiners) {
        const bool weighted = !IsExtreme(c) && d == 64;
        auto [table, ids] = LargeInput<T>(rng, d, weighted, 17);
        const auto outs = AtThreadCounts({1, 2}, [&] { return EmbeddingBag(table, ids, c, 17); });
        ExpectSameBits<T>(outs[0], outs[1]);
        for (auto path : {SimdPath::kDefault, SimdPath::kAvx2}) {
          if (!SimdPathSupported(path)) continue;
          SetSimdPathForTesting(path);
          ExpectSameBits<T>(EmbeddingBag(table, ids, c, 17), outs[0]);
        }
        SetSimdPathForTesting(BestSimdPath());
      }
    }
  });
}

// The device body's reduction (embedding_device.h), run on the host with the CUDA kernel's
// mapping (a warp per bag, lane l over columns c + l, c + l + 32, ...) and with one column at a
// time, gives the CPU kernels' bits: widths around the warp's 128-column pass, every combiner,
// padding, int32 and int64 ids, weights with full mantissas (so a fused multiply-add or another
// order of operations would show), and a table whose rows are wider than D.
TEST(EmbeddingBag, TheDeviceReductionGivesTheCpuBits) {
  std::mt19937_64 rng(29);
  std::uniform_real_distribution<float> any_weight(-2.0f, 2.0f);
  ForEachTableType([&]<typename T>() {
    using C = ComputeType<T>;
    for (int64_t d : {1, 31, 64, 127, 128, 129, 300}) {
      for (Combiner combiner : kAllCombiners) {
        for (bool weighted : {false, true}) {
          if (weighted && IsExtreme(combiner)) continue;
          const int64_t v = 50, pad = combiner == Combiner::kMin ? -1 : 7;
          Bags bags = RandomBags(rng, 40, v, 12, pad, weighted);
          for (double& w : bags.weights) w = any_weight(rng);
          const Tensor wide_rows = RandomTable<T>(rng, v, d + 5).first;
          const Tensor table = Slice(wide_rows, 1, 2, d + 2);  // row stride d + 5
          for (DType id_dtype : {DType::kInt32, DType::kInt64}) {
            const JaggedTensor ids = ToJagged(bags, id_dtype);
            const Tensor want = EmbeddingBag(table, ids, combiner, pad);
            const Tensor wc = ids.has_weights() ? Converted(ids.weights(), DTypeOf<C>) : Tensor();
            const Tensor id64 = Converted(ids.values(), DType::kInt64);
            const Tensor id32 = Converted(ids.values(), DType::kInt32);
            const auto run = [&]<typename I>(const Tensor& id_tensor, int mapping) {
              Tensor got = Tensor::Zeros({ids.batch_size(), d}, DTypeOf<T>);
              embedding_internal::BagJob<C> a;
              a.table = table.data<T>();
              a.table_ld = table.Stride(0);
              a.d = d;
              a.ids = id_tensor.data<I>();
              a.off = ids.offsets_data();
              a.weights = wc.defined() ? wc.data<C>() : nullptr;
              a.padding_id = pad;
              a.combiner = combiner;
              a.out = got.data<T>();
              a.out_ld = d;
              for (int64_t bag = 0; bag < ids.batch_size(); ++bag) {
                if (mapping == 0) {
                  for (int64_t c = 0; c < d; c += 128) {
                    for (int lane = 0; lane < 32; ++lane) {
                      embedding_internal::ReduceBagColumns<4, T, I>(a, bag, c + lane, 32);
                    }
                  }
                } else {
                  for (int64_t c = 0; c < d; ++c)
                    embedding_internal::ReduceBagColumns<1, T, I>(a, bag, c, 1);
                }
              }
              return got;
            };
            SCOPED_TRACE(::testing::Message()
                         << DTypeName(DTypeOf<T>) << " d=" << d << " " << CombinerName(combiner)
                         << " weighted=" << weighted << " ids " << DTypeName(id_dtype));
            for (int mapping : {0, 1}) {
              ExpectSameBits<T>(id_dtype == DType::kInt64
                                    ? run.template operator()<int64_t>(id64, mapping)
                                    : run.template operator()<int32_t>(id32, mapping),
                                want);
            }
          }
        }
      }
    }
  });
}

TEST(EmbeddingBag, BadInputsAreErrors) {
  Tensor table = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {3, 2});
  auto bags = [](std::vector<int64_t> ids, std::vector<int64_t> lengths, DType dtype) {
    return JaggedTensor::FromLengths(IdsTensor(ids, dtype), Tensor::FromVector<int64_t>(lengths));
  };
  for (DType dtype : {DType::kInt32, DType::kInt64}) {
    ExpectError(
        [&] {
          EmbeddingBag(table, bags({0, 1, 2, 3}, {1, 0, 3}, dtype), Combiner::kSum);
        },
        ErrorCode::kOutOfRange, {"EmbeddingBag", "id 3 in bag 2 at position 2", "[0, 3)"});
    ExpectError(
        [&] {
          EmbeddingBag(table, bags({-1, 1}, {2}, dtype), Combiner::kMean);
        },
        ErrorCode::kOutOfRange, {"id -1 in bag 0 at position 0"});
  }
  // Only the padding id itself is skipped; -1 means none.
  EXPECT_NO_THROW(EmbeddingBag(table, bags({2, 1}, {2}, DType::kInt64), Combiner::kSum, 2));
  ExpectError([&] { EmbeddingBag(table, bags({0}, {1}, DType::kInt64), Combiner::kSum, 3); },
              ErrorCode::kOutOfRange, {"padding_id 3", "-1"});
  ExpectError([&] { EmbeddingBag(table, bags({0}, {1}, DType::kInt64), Combiner::kSum, -2); },
              ErrorCode::kOutOfRange, {"padding_id -2"});
  const JaggedTensor weighted =
      bags({0, 1}, {2}, DType::kInt64).WithWeights(Tensor::FromVector<float>({1, 2}));
  for (Combiner c : {Combiner::kMax, Combiner::kMin}) {
    ExpectError([&] { EmbeddingBag(table, weighted, c); }, ErrorCode::kInvalidArgument,
                {"EmbeddingBag", CombinerName(c), "weights"});
  }
  ExpectError(
      [&] {
        EmbeddingBag(table,
                     JaggedTensor::FromLengths(Tensor::FromVector<float>({0}),
                                               Tensor::FromVector<int64_t>({1})),
                     Combiner::kSum);
      },
      ErrorCode::kDTypeMismatch, {"int32 or int64", "float32"});
  ExpectError(
      [&] {
        EmbeddingBag(table,
                     JaggedTensor::FromLengths(Tensor::FromVector<int64_t>({0, 1}, {1, 2}),
                                               Tensor::FromVector<int64_t>({1})),
                     Combiner::kSum);
      },
      ErrorCode::kShapeMismatch, {"1-D"});
  ExpectError([&] { EmbeddingBag(table, JaggedTensor(), Combiner::kSum); },
              ErrorCode::kInvalidArgument, {"default-constructed"});
  const JaggedTensor ok = bags({0}, {1}, DType::kInt64);
  ExpectError(
      [&] {
        EmbeddingBag(Tensor::FromVector<float>({1, 2}), ok, Combiner::kSum);
      },
      ErrorCode::kShapeMismatch, {"2-D"});
  ExpectError(
      [&] {
        EmbeddingBag(Tensor::FromVector<int32_t>({1, 2}, {1, 2}), ok, Combiner::kSum);
      },
      ErrorCode::kDTypeMismatch, {"float32", "int32"});
  ExpectError([&] { EmbeddingBag(Tensor(), ok, Combiner::kSum); }, ErrorCode::kInvalidArgument,
              {"undefined"});
}

// --- EmbeddingBags -----------------------------------------------------------------------------

TEST(EmbeddingBags, EqualsOneEmbeddingBagPerFeatureSideBySide) {
  std::mt19937_64 rng(13);
  ForEachTableType([&]<typename T>() {
    for (bool weighted : {false, true}) {
      for (DType id_dtype : {DType::kInt32, DType::kInt64}) {
        for (int64_t b : {0, 1, 37, 700}) {
          const std::vector<int64_t> widths = {16, 5, 64, 128};
          const std::vector<int64_t> rows = {30, 7, 100, 12};
          std::vector<Combiner> combiners;
          std::vector<Tensor> tables;
          std::vector<int64_t> ids, lengths;
          std::vector<double> weights;
          for (size_t f = 0; f < widths.size(); ++f) {
            tables.push_back(RandomTable<T>(rng, rows[f], widths[f]).first);
            combiners.push_back(kAllCombiners[(f + (weighted ? 0 : 3)) % (weighted ? 3 : 5)]);
            const Bags bags = RandomBags(rng, b, rows[f], 8, -1, weighted);
            ids.insert(ids.end(), bags.ids.begin(), bags.ids.end());
            weights.insert(weights.end(), bags.weights.begin(), bags.weights.end());
            for (int64_t i = 0; i < b; ++i)
              lengths.push_back(bags.offsets[i + 1] - bags.offsets[i]);
          }
          const int64_t nf = static_cast<int64_t>(widths.size());
          const KeyedJaggedTensor kjt(
              {"a", "b", "c", "d"}, IdsTensor(ids, id_dtype),
              Tensor::FromVector<int64_t>(lengths, {nf, b}),
              weighted ? Converted(Tensor::FromVector<double>(weights), DType::kFloat32)
                       : Tensor());
          const auto outs =
              AtThreadCounts({1, 2}, [&] { return EmbeddingBags(tables, kjt, combiners); });
          std::vector<Tensor> parts;
          for (int64_t f = 0; f < nf; ++f) {
            parts.push_back(EmbeddingBag(tables[f], kjt.Get(kjt.keys()[f]), combiners[f]));
          }
          ExpectSameBits<T>(outs[0], ConcatenateColumns(parts));
          ExpectSameBits<T>(outs[1], outs[0]);
        }
      }
    }
  });
}

TEST(EmbeddingBags, BadInputsNameTheFeature) {
  const std::vector<Tensor> tables = {Tensor::Zeros({4, 2}, DType::kFloat32),
                                      Tensor::Zeros({3, 5}, DType::kFloat32)};
  // Feature "x": bags {0, 1}, {3}; feature "y": bags {}, {2, 3}: id 3 of "y" is out of range.
  const KeyedJaggedTensor kjt({"x", "y"}, Tensor::FromVector<int64_t>({0, 1, 3, 2, 3}),
                              Tensor::FromVector<int64_t>({2, 1, 0, 2}, {2, 2}));
  const std::vector<Combiner> sums = {Combiner::kSum, Combiner::kSum};
  ExpectError([&] { EmbeddingBags(tables, kjt, sums); }, ErrorCode::kOutOfRange,
              {"EmbeddingBags", "feature \"y\"", "id 3 in bag 1 at position 1", "[0, 3)"});
  ExpectError([&] { EmbeddingBags({tables[0]}, kjt, sums); }, ErrorCode::kInvalidArgument,
              {"1 tables for 2 features"});
  ExpectError([&] { EmbeddingBags(tables, kjt, {Combiner::kSum}); }, ErrorCode::kInvalidArgument,
              {"1 combiners for 2 features"});
  ExpectError(
      [&] {
        EmbeddingBags({tables[0], Tensor::Zeros({4, 5}, DType::kFloat64)}, kjt, sums);
      },
      ErrorCode::kDTypeMismatch, {"feature \"y\"", "float64", "float32"});
  const KeyedJaggedTensor weighted({"x", "y"}, Tensor::FromVector<int64_t>({0, 1, 3, 2, 2}),
                                   Tensor::FromVector<int64_t>({2, 1, 0, 2}, {2, 2}),
                                   Tensor::FromVector<float>({1, 1, 1, 1, 1}));
  ExpectError(
      [&] {
        EmbeddingBags(tables, weighted, {Combiner::kSum, Combiner::kMax});
      },
      ErrorCode::kInvalidArgument, {"feature \"y\"", "max"});
  EXPECT_NO_THROW(EmbeddingBags(tables, weighted, {Combiner::kSum, Combiner::kMean}));
}

// --- EmbeddingBagBackward ----------------------------------------------------------------------

// The rows of a sparse gradient must be exactly the touched rows, every column, in order.
void ExpectTouchedRows(const SparseTensor& st, const std::vector<bool>& touched, int64_t d) {
  std::vector<int64_t> expected;
  for (size_t r = 0; r < touched.size(); ++r) {
    if (!touched[r]) continue;
    for (int64_t c = 0; c < d; ++c) expected.insert(expected.end(), {static_cast<int64_t>(r), c});
  }
  EXPECT_EQ(st.indices().ToVector<int64_t>(), expected);
  EXPECT_EQ(st.order(), (std::vector<int>{0, 1}));
  EXPECT_TRUE(st.IndicesValid());
}

TEST(EmbeddingBagBackward, MatchesTheReferenceInBothForms) {
  std::mt19937_64 rng(17);
  ForEachTableType([&]<typename T>() {
    using C = ComputeType<T>;
    for (int64_t d : {1, 16, 7}) {
      for (Combiner combiner : kAllCombiners) {
        for (bool weighted : {false, true}) {
          if (weighted && IsExtreme(combiner)) continue;
          for (int64_t pad : {int64_t{-1}, int64_t{3}}) {
            const int64_t v = 4 + static_cast<int64_t>(rng() % 30);
            auto [table, wide] = RandomTable<T>(rng, v, d);
            const Bags bags = RandomBags(rng, 1 + rng() % 25, v, 7, pad, weighted);
            const int64_t b = static_cast<int64_t>(bags.offsets.size()) - 1;
            auto [grad, grad_wide] = RandomTable<T>(rng, b, d);
            const JaggedTensor ids = ToJagged(bags, rng() % 2 ? DType::kInt32 : DType::kInt64);
            std::vector<bool> touched;
            const std::vector<C> ref = ref::EmbeddingBagGradRef<C>(
                grad_wide, v, d, bags.offsets, bags.ids, Widened<C>(bags.weights), combiner, pad,
                wide, &touched);
            SCOPED_TRACE(::testing::Message()
                         << DTypeName(DTypeOf<T>) << " d=" << d << " " << CombinerName(combiner)
                         << " weighted=" << weighted << " pad=" << pad);
            const Tensor table_arg = IsExtreme(combiner) ? table : Tensor();
            const SparseTensor st = EmbeddingBagBackward(grad, ids, combiner, v, pad, table_arg);
            ExpectTouchedRows(st, touched, d);
            const Tensor expected = Rounded<T>(ref, v, d);
            ExpectSameBits<T>(st.ToDense(), expected);
            Tensor dense = Tensor::Zeros({v, d}, DTypeOf<T>);
            EmbeddingBagBackward(grad, ids, combiner, &dense, pad, table_arg);
            ExpectSameBits<T>(dense, expected);
          }
        }
      }
    }
  });
}

TEST(EmbeddingBagBackward, DenseFormAddsIntoTheGradient) {
  std::mt19937_64 rng(19);
  auto [table, wide] = RandomTable<double>(rng, 20, 8);
  const Bags bags = RandomBags(rng, 30, 20, 6, -1, true);
  auto [grad, grad_wide] = RandomTable<double>(rng, 30, 8);
  auto [start, start_wide] = RandomTable<double>(rng, 20, 8);
  const std::vector<double> ref = ref::EmbeddingBagGradRef<double>(
      grad_wide, 20, 8, bags.offsets, bags.ids, bags.weights, Combiner::kSqrtN, -1, wide, nullptr);
  // A strided target: every other column of a wider tensor.
  Tensor wider = Tensor::Zeros({20, 16}, DType::kFloat64);
  Tensor target = Slice(wider, 1, 0, 16, 2);
  Copy(start, &target);
  EmbeddingBagBackward(grad, ToJagged(bags, DType::kInt64, DType::kFloat64), Combiner::kSqrtN,
                       &target);
  const std::vector<double> got = target.ToVector<double>();
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], start_wide[i] + ref[i]) << i;
}

// sum(EmbeddingBag(table) * grad) differentiated numerically, row by row, in float64.
TEST(EmbeddingBagBackward, AgreesWithTheNumericalGradient) {
  std::mt19937_64 rng(23);
  std::uniform_real_distribution<double> u(-1, 1);
  const int64_t v = 12, d = 3, b = 9;
  std::vector<double> table_values(v * d), grad_values(b * d);
  for (double& x : table_values) x = u(rng);  // distinct: no ties for max and min
  for (double& x : grad_values) x = u(rng);
  const Tensor grad = Tensor::FromVector<double>(grad_values, {b, d});
  for (Combiner combiner : kAllCombiners) {
    for (bool weighted : {false, true}) {
      if (weighted && IsExtreme(combiner)) continue;
      Bags bags = RandomBags(rng, b, v, 6, 5, false);
      if (weighted) {
        for (size_t i = 0; i < bags.ids.size(); ++i) bags.weights.push_back(u(rng));
      }
      const JaggedTensor ids = ToJagged(bags, DType::kInt64, DType::kFloat64);
      auto loss = [&](const std::vector<double>& t) {
        const Tensor out = EmbeddingBag(Tensor::FromVector<double>(t, {v, d}), ids, combiner, 5);
        const std::vector<double> o = out.ToVector<double>();
        double s = 0;
        for (size_t i = 0; i < o.size(); ++i) s += o[i] * grad_values[i];
        return s;
      };
      const Tensor table = Tensor::FromVector<double>(table_values, {v, d});
      const std::vector<double> analytic =
          EmbeddingBagBackward(grad, ids, combiner, v, 5, table).ToDense().ToVector<double>();
      const double h = 1e-6;
      for (int64_t i = 0; i < v * d; ++i) {
        std::vector<double> plus = table_values, minus = table_values;
        plus[i] += h;
        minus[i] -= h;
        const double numeric = (loss(plus) - loss(minus)) / (2 * h);
        EXPECT_NEAR(analytic[i], numeric, 1e-6)
            << CombinerName(combiner) << " weighted=" << weighted << " element " << i;
      }
    }
  }
}

TEST(EmbeddingBagBackward, BitIdenticalAtOneAndTwoThreads) {
  std::mt19937_64 rng(29);
  for (Combiner c : kAllCombiners) {
    auto [table, ids] = LargeInput<float>(rng, 32, !IsExtreme(c), 9);
    auto grad = RandomTable<float>(rng, ids.batch_size(), 32).first;
    const Tensor t = IsExtreme(c) ? table : Tensor();
    const auto sparse = AtThreadCounts(
        {1, 2}, [&] { return EmbeddingBagBackward(grad, ids, c, table.Dim(0), 9, t); });
    EXPECT_EQ(sparse[0].indices().ToVector<int64_t>(), sparse[1].indices().ToVector<int64_t>());
    ExpectSameBits<float>(sparse[0].values(), sparse[1].values());
    const auto dense = AtThreadCounts({1, 2}, [&] {
      Tensor g = Tensor::Zeros(table.Dims(), DType::kFloat32);
      EmbeddingBagBackward(grad, ids, c, &g, 9, t);
      return g;
    });
    ExpectSameBits<float>(dense[0], dense[1]);
    ExpectSameBits<float>(dense[0], sparse[0].ToDense());
  }
}

// The gradient's device functions (embedding_device.h) run on the host with the CUDA body's
// plan (positions sorted stably by id, the runs of the ids that occur, winners per bag and
// column, divisors per bag) and its mapping (a warp per run, lanes over columns) give the CPU
// body's coalesced rows bit for bit, and the same sums added into a dense gradient: every dtype
// and combiner, weights with full mantissas, padding, widths around the warp.
TEST(EmbeddingBagBackward, TheDeviceSumsGiveTheCpuBits) {
  std::mt19937_64 rng(31);
  std::uniform_real_distribution<float> any_weight(-2.0f, 2.0f);
  ForEachTableType([&]<typename T>() {
    using C = ComputeType<T>;
    for (int64_t d : {1, 31, 33, 70}) {
      for (Combiner combiner : kAllCombiners) {
        for (bool weighted : {false, true}) {
          if (weighted && IsExtreme(combiner)) continue;
          const int64_t v = 40, pad = combiner == Combiner::kSum ? -1 : 5;
          Bags bags = RandomBags(rng, 60, v, 14, pad, weighted);
          for (double& w : bags.weights) w = any_weight(rng);
          const int64_t b = static_cast<int64_t>(bags.offsets.size()) - 1;
          const Tensor table = RandomTable<T>(rng, v, d).first;
          const Tensor grad = RandomTable<T>(rng, b, d).first;
          const JaggedTensor ids = ToJagged(bags, DType::kInt32);
          const Tensor table_arg = IsExtreme(combiner) ? table : Tensor();
          const SparseTensor want = EmbeddingBagBackward(grad, ids, combiner, v, pad, table_arg);
          SCOPED_TRACE(::testing::Message() << DTypeName(DTypeOf<T>) << " d=" << d << " "
                                            << CombinerName(combiner) << " weighted=" << weighted);
          // The plan.
          const std::vector<int64_t>& id = bags.ids;
          const int64_t n = static_cast<int64_t>(id.size());
          std::vector<int64_t> perm(static_cast<size_t>(n));
          std::iota(perm.begin(), perm.end(), 0);
          std::stable_sort(perm.begin(), perm.end(),
                           [&](int64_t x, int64_t y) { return id[x] < id[y]; });
          std::vector<int64_t> ptr(static_cast<size_t>(v) + 1, 0);
          for (int64_t p = 0; p < n; ++p) ++ptr[id[p] + 1];
          for (int64_t r = 0; r < v; ++r) ptr[r + 1] += ptr[r];
          const Tensor wc = ids.has_weights() ? Converted(ids.weights(), DTypeOf<C>) : Tensor();
          const C* w = wc.defined() ? wc.data<C>() : nullptr;
          std::vector<C> divisors(static_cast<size_t>(b));
          std::vector<int64_t> winners(static_cast<size_t>(b * d));
          for (int64_t bag = 0; bag < b; ++bag) {
            divisors[bag] = embedding_internal::GradDivisor<C>(id.data(), bags.offsets.data(), w,
                                                               pad, combiner, bag);
            for (int64_t c = 0; c < d; ++c) {
              winners[bag * d + c] =
                  embedding_internal::BagWinner(table.data<T>(), table.Stride(0), id.data(),
                                                bags.offsets.data(), pad, combiner, bag, c);
            }
          }
          std::vector<int64_t> position_bags(static_cast<size_t>(n));
          for (int64_t q = 0; q < n; ++q) {
            position_bags[q] =
                embedding_internal::PositionBag(perm.data(), bags.offsets.data(), b, q);
          }
          embedding_internal::GradJob<C> a;
          a.grad = grad.data<T>();
          a.d = d;
          a.perm = perm.data();
          a.bags = position_bags.data();
          a.weights = w;
          if (IsExtreme(combiner)) {
            a.winners = winners.data();
          } else {
            a.divisors = divisors.data();
          }
          // The sums, a warp per run of a non-padding id that occurs.
          std::vector<int64_t> idx;
          std::vector<T> values;
          Tensor dense = RandomTable<T>(rng, v, d).first;
          Tensor dense_want = dense.Clone();
          EmbeddingBagBackward(grad, ids, combiner, &dense_want, pad, table_arg);
          T* row_sums = dense.data<T>();
          for (int64_t r = 0; r < v; ++r) {
            if (r == pad || ptr[r + 1] == ptr[r]) continue;
            for (int lane = 0; lane < 32; ++lane) {
              for (int64_t c = lane; c < d; c += 32) {
                const C acc = embedding_internal::RunColumnSum<T>(a, ptr[r], ptr[r + 1], c);
                row_sums[r * d + c] = static_cast<T>(static_cast<C>(row_sums[r * d + c]) + acc);
              }
            }
            for (int64_t c = 0; c < d; ++c) {
              idx.push_back(r);
              idx.push_back(c);
              values.push_back(
                  static_cast<T>(embedding_internal::RunColumnSum<T>(a, ptr[r], ptr[r + 1], c)));
            }
          }
          EXPECT_EQ(want.indices().ToVector<int64_t>(), idx);
          ExpectSameBits<T>(want.values(), Tensor::FromVector<T>(values));
          ExpectSameBits<T>(dense, dense_want);
        }
      }
    }
  });
}

TEST(EmbeddingBagBackward, EmptyInputs) {
  const JaggedTensor none = JaggedTensor::FromOffsets(Tensor::Zeros({0}, DType::kInt64),
                                                      Tensor::FromVector<int64_t>({0}));
  const SparseTensor st =
      EmbeddingBagBackward(Tensor::Zeros({0, 4}, DType::kFloat32), none, Combiner::kMean, 10);
  EXPECT_EQ(st.nnz(), 0);
  EXPECT_EQ(st.shape(), (std::vector<int64_t>{10, 4}));
  // Only padding ids: nothing touched.
  const JaggedTensor pads = JaggedTensor::FromLengths(Tensor::FromVector<int32_t>({2, 2}),
                                                      Tensor::FromVector<int64_t>({0, 2}));
  EXPECT_EQ(EmbeddingBagBackward(Tensor::Zeros({2, 4}, DType::kFloat16), pads, Combiner::kSum, 3, 2)
                .nnz(),
            0);
}

TEST(EmbeddingBagBackward, BadInputsAreErrors) {
  const JaggedTensor ids = JaggedTensor::FromLengths(Tensor::FromVector<int64_t>({0, 4, 1}),
                                                     Tensor::FromVector<int64_t>({1, 2}));
  const Tensor grad = Tensor::Zeros({2, 3}, DType::kFloat32);
  ExpectError([&] { EmbeddingBagBackward(grad, ids, Combiner::kSum, 4); }, ErrorCode::kOutOfRange,
              {"EmbeddingBagBackward", "id 4 in bag 1 at position 0", "[0, 4)"});
  EXPECT_NO_THROW(EmbeddingBagBackward(grad, ids, Combiner::kSum, 5));
  ExpectError([&] { EmbeddingBagBackward(grad, ids, Combiner::kMax, 5); },
              ErrorCode::kInvalidArgument, {"max", "pass it as `table`"});
  ExpectError(
      [&] {
        EmbeddingBagBackward(grad, ids, Combiner::kMin, 5, -1,
                             Tensor::Zeros({5, 2}, DType::kFloat32));
      },
      ErrorCode::kShapeMismatch, {"table must be [5, 3]"});
  ExpectError(
      [&] {
        EmbeddingBagBackward(Tensor::Zeros({3, 3}, DType::kFloat32), ids, Combiner::kSum, 5);
      },
      ErrorCode::kShapeMismatch, {"B = 2"});
  ExpectError(
      [&] {
        EmbeddingBagBackward(Tensor::Zeros({2, 3}, DType::kInt64), ids, Combiner::kSum, 5);
      },
      ErrorCode::kDTypeMismatch, {"grad", "int64"});
  ExpectError([&] { EmbeddingBagBackward(grad, ids, Combiner::kSum, -1); },
              ErrorCode::kInvalidArgument, {"num_rows is -1"});
  ExpectError([&] { EmbeddingBagBackward(grad, ids, Combiner::kSum, 5, 5); },
              ErrorCode::kOutOfRange, {"padding_id 5"});
  ExpectError(
      [&] {
        EmbeddingBagBackward(grad, ids.WithWeights(Tensor::FromVector<float>({1, 1, 1})),
                             Combiner::kMax, 5, -1, Tensor::Zeros({5, 3}, DType::kFloat32));
      },
      ErrorCode::kInvalidArgument, {"weights"});
  ExpectError([&] { EmbeddingBagBackward(grad, ids, Combiner::kSum, nullptr); },
              ErrorCode::kInvalidArgument, {"table_grad"});
  Tensor wrong_dtype = Tensor::Zeros({5, 3}, DType::kFloat64);
  ExpectError([&] { EmbeddingBagBackward(grad, ids, Combiner::kSum, &wrong_dtype); },
              ErrorCode::kDTypeMismatch, {"float64", "float32"});
  Tensor wrong_width = Tensor::Zeros({5, 2}, DType::kFloat32);
  ExpectError([&] { EmbeddingBagBackward(grad, ids, Combiner::kSum, &wrong_width); },
              ErrorCode::kShapeMismatch, {"[5 2]"});
  Tensor small = Tensor::Zeros({4, 3}, DType::kFloat32);
  ExpectError([&] { EmbeddingBagBackward(grad, ids, Combiner::kSum, &small); },
              ErrorCode::kOutOfRange, {"id 4", "[0, 4)"});
}

}  // namespace
}  // namespace tensorkit
