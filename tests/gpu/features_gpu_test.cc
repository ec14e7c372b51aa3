// features/ on a CUDA device against the CPU bits: hash buckets of int32 and int64 ids (dense,
// strided, jagged), fast and strong; integer lookups, Bucketize, CountSparse; EmbeddingBag and
// EmbeddingBags with weights whose products round (a fused multiply-add on the device would show);
// the jagged conversions and the keyed jagged gathers; FillEmptyRows and its gradient;
// EmbeddingBagBackward in both forms. Skipped with a message when no CUDA device is visible.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gpu/gpu_test_util.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/dense/views.h"
#include "tensorkit/features/bucketize.h"
#include "tensorkit/features/counts.h"
#include "tensorkit/features/embedding.h"
#include "tensorkit/features/hash.h"
#include "tensorkit/features/jagged.h"
#include "tensorkit/features/segment.h"
#include "tensorkit/features/vocabulary.h"
#include "test_util.h"

namespace tensorkit {
namespace {

const Device kGpu = Device::Cuda(0);

std::vector<int64_t> Host(const Tensor& t) {
  const Tensor c = t.To(Device::Cpu()).HostContiguous();
  return std::vector<int64_t>(c.data<int64_t>(), c.data<int64_t>() + c.NumElements());
}

template <typename T>
Tensor RandomIds(int64_t n) {
  std::mt19937_64 rng(5);
  std::vector<T> v(static_cast<size_t>(n));
  for (T& x : v) x = static_cast<T>(static_cast<int64_t>(rng()) >> (rng() % 64));
  if (n > 2) {
    v[0] = std::numeric_limits<T>::min();
    v[1] = std::numeric_limits<T>::max();
  }
  return Tensor::FromVector(std::move(v));
}

TEST(FeaturesGpu, HashBucketsOfIdsEqualTheCpu) {
  TK_REQUIRE_GPU();
  for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{1000}, int64_t{3} << 20}) {
    for (const Tensor& ids : {RandomIds<int64_t>(n), RandomIds<int32_t>(n)}) {
      const Tensor on = ids.To(kGpu);
      EXPECT_EQ(Host(HashBucketFast(on, 1000003)), Host(HashBucketFast(ids, 1000003)));
      EXPECT_EQ(Host(HashBucketStrong(on, INT64_MAX, {7, 8})),
                Host(HashBucketStrong(ids, INT64_MAX, {7, 8})));
      EXPECT_TRUE(HashBucketFast(on, 10).device() == kGpu);
    }
  }
  // A strided view and a jagged feature.
  const Tensor m = SplitAxis(RandomIds<int64_t>(600), 0, {20, 30});
  const Tensor t = Transpose(m, 0, 1);
  EXPECT_EQ(Host(HashBucketFast(Transpose(m.To(kGpu), 0, 1), 97)), Host(HashBucketFast(t, 97)));
  const JaggedTensor j = JaggedTensor::FromLengths(
      RandomIds<int64_t>(10).To(kGpu), Tensor::FromVector(std::vector<int64_t>{3, 0, 7}).To(kGpu));
  EXPECT_EQ(Host(HashBucketFast(j, 50).values()), Host(HashBucketFast(RandomIds<int64_t>(10), 50)));
}

// FromLengths on the device keeps the offsets there (a device scan) and gives the CPU's offsets,
// host offsets and Errors.
TEST(FeaturesGpu, FromLengthsScansOnTheDevice) {
  TK_REQUIRE_GPU();
  const Tensor values = RandomIds<int64_t>(1000);
  std::vector<int64_t> lengths(300, 0);
  for (size_t i = 0; i < lengths.size(); ++i) lengths[i] = static_cast<int64_t>(i % 7);
  lengths.back() += 1000 - 3 * 299;  // adds up to 1000
  for (DType dtype : {DType::kInt32, DType::kInt64}) {
    const Tensor len = Converted(Tensor::FromVector(lengths), dtype);
    const JaggedTensor cpu = JaggedTensor::FromLengths(values, len);
    const JaggedTensor gpu = JaggedTensor::FromLengths(values.To(kGpu), len.To(kGpu));
    EXPECT_TRUE(gpu.offsets().device() == kGpu);
    EXPECT_EQ(Host(gpu.offsets()), Host(cpu.offsets()));
    EXPECT_EQ(std::vector<int64_t>(gpu.offsets_data(), gpu.offsets_data() + 301),
              Host(cpu.offsets()));
  }
  const JaggedTensor none = JaggedTensor::FromLengths(Tensor::Zeros({0}, DType::kFloat32).To(kGpu),
                                                      Tensor::Zeros({0}, DType::kInt64).To(kGpu));
  EXPECT_EQ(Host(none.offsets()), (std::vector<int64_t>{0}));
  const Tensor three = Tensor::FromVector<float>({1, 2, 3});
  for (const std::vector<int64_t>& bad :
       std::vector<std::vector<int64_t>>{{2, -1, 2}, {2, 2}, {1, 1}, {INT64_MAX, INT64_MAX, 3}}) {
    const Tensor len = Tensor::FromVector(bad);
    EXPECT_EQ(testing::ErrorOf([&] { JaggedTensor::FromLengths(three.To(kGpu), len.To(kGpu)); }),
              testing::ErrorOf([&] { JaggedTensor::FromLengths(three, len); }));
  }
}

TEST(FeaturesGpu, IntegerLookupEqualsTheCpu) {
  TK_REQUIRE_GPU();
  std::vector<int64_t> tokens;
  for (int64_t i = 0; i < 5000; ++i) tokens.push_back(i * 7919 % 100003 - 50000);
  for (int64_t num_oov : {int64_t{1}, int64_t{3}}) {
    for (OovMethod method : {OovMethod::kFloorMod, OovMethod::kFarmHash}) {
      LookupOptions o;
      o.num_oov_indices = num_oov;
      o.oov_method = method;
      o.mask_value = 123456789;
      const Vocabulary v = Vocabulary::FromIntegers(tokens, o);
      for (const Tensor& ids : {RandomIds<int64_t>(200000), RandomIds<int32_t>(1000)}) {
        EXPECT_EQ(Host(v.Lookup(ids.To(kGpu))), Host(v.Lookup(ids)));
      }
      const Tensor known = Tensor::FromVector(std::vector<int64_t>{tokens[5], 123456789, -7});
      EXPECT_EQ(Host(v.Lookup(known.To(kGpu))), Host(v.Lookup(known)));
    }
  }
  LookupOptions strict;
  strict.num_oov_indices = 0;
  const Vocabulary v = Vocabulary::FromIntegers(tokens, strict);
  const Tensor bad =
      Tensor::FromVector(std::vector<int64_t>{tokens[0], tokens[1], 1000000000, 1000000001});
  testing::ExpectError([&] { v.Lookup(bad.To(kGpu)); }, ErrorCode::kInvalidArgument,
                       {"value 2 (1000000000)", "num_oov_indices is 0"});
}

std::vector<int32_t> Host32(const Tensor& t) {
  const Tensor c = t.To(Device::Cpu()).HostContiguous();
  return std::vector<int32_t>(c.data<int32_t>(), c.data<int32_t>() + c.NumElements());
}

TEST(FeaturesGpu, BucketizeEqualsTheCpu) {
  TK_REQUIRE_GPU();
  std::mt19937_64 rng(6);
  std::vector<float> bf;
  for (int i = 0; i < 1000; ++i) bf.push_back(static_cast<float>(i) * 0.5f - 250.0f);
  bf.push_back(std::numeric_limits<float>::infinity());
  const std::vector<double> bd(bf.begin(), bf.end());
  std::vector<double> v(300000);
  for (double& x : v) x = static_cast<double>(static_cast<int64_t>(rng() % 1200000) - 600000) / 997;
  v[0] = std::numeric_limits<double>::quiet_NaN();
  v[1] = -std::numeric_limits<double>::infinity();
  v[2] = 16777219.0;  // rounds to 16777220.0f when values compare as float
  const Tensor d = Tensor::FromVector(v);
  for (DType dt : {DType::kFloat64, DType::kFloat32, DType::kInt64, DType::kInt32}) {
    const Tensor x = dt == DType::kFloat64 ? d : Converted(d, dt);
    EXPECT_EQ(Host32(Bucketize(x.To(kGpu), bf)), Host32(Bucketize(x, bf))) << DTypeName(dt);
    EXPECT_EQ(Host32(Bucketize(x.To(kGpu), bd)), Host32(Bucketize(x, bd))) << DTypeName(dt);
  }
  EXPECT_EQ(Host32(Bucketize(Tensor::Empty({0}, DType::kFloat32).To(kGpu), bf)).size(), 0u);
}

// The (row, id) entries and values of a count, on the CPU.
std::pair<std::vector<int64_t>, Tensor> Entries(const SparseTensor& st) {
  return {Host(st.indices()), st.values().To(Device::Cpu())};
}

TEST(FeaturesGpu, CountSparseEqualsTheCpu) {
  TK_REQUIRE_GPU();
  std::mt19937_64 rng(8);
  const int64_t rows = 3000, n = 60000;
  std::vector<int64_t> idx, ids;
  for (int64_t i = 0; i < n; ++i) {
    idx.push_back(static_cast<int64_t>(rng() % rows));
    idx.push_back(i % 50);
    ids.push_back(static_cast<int64_t>(rng() % 700));
  }
  std::vector<float> w(static_cast<size_t>(n));
  for (float& x : w) x = static_cast<float>(rng() % 16) / 4.0f;  // exact sums in any order
  const SparseTensor st =
      SparseTensor::Create(Tensor::FromVector(idx, {n, 2}), Tensor::FromVector(ids), {rows, 50});
  const SparseTensor on = st.To(kGpu);
  const Tensor weights = Tensor::FromVector(w);
  for (bool binary : {false, true}) {
    for (int64_t max_length : {int64_t{-1}, int64_t{0}, int64_t{300}}) {
      const SparseTensor want = CountSparse(st, weights, binary, 1000, max_length);
      const SparseTensor got = CountSparse(on, weights.To(kGpu), binary, 1000, max_length);
      EXPECT_EQ(got.shape(), want.shape());
      const auto [gi, gv] = Entries(got);
      const auto [wi, wv] = Entries(want);
      EXPECT_EQ(gi, wi);
      gpu_testing::ExpectSame<float>(gv, wv, "CountSparse values");
      EXPECT_EQ(Entries(CountSparse(on)).first, Entries(CountSparse(st)).first);
    }
  }
  // Rank-3 ids count by index[0], as on the CPU.
  std::vector<int64_t> idx3;
  for (int64_t i = 0; i < n; ++i) {
    idx3.insert(idx3.end(), {idx[2 * i], idx[2 * i + 1], static_cast<int64_t>(rng() % 3)});
  }
  const SparseTensor st3 = SparseTensor::Create(Tensor::FromVector(idx3, {n, 3}),
                                                Tensor::FromVector(ids), {rows, 50, 3});
  const SparseTensor got3 = CountSparse(st3.To(kGpu), weights.To(kGpu), false, 1000);
  const SparseTensor want3 = CountSparse(st3, weights, false, 1000);
  EXPECT_EQ(got3.shape(), want3.shape());
  EXPECT_EQ(Entries(got3).first, Entries(want3).first);
  gpu_testing::ExpectSame<float>(Entries(got3).second, Entries(want3).second, "rank-3 values");
  // Rank-1 ids and a jagged batch.
  const SparseTensor one =
      SparseTensor::Create(Tensor::FromVector(std::vector<int64_t>{0, 1, 2, 3}, {4, 1}),
                           Tensor::FromVector(std::vector<int32_t>{5, 2, 5, 0}), {4});
  EXPECT_EQ(Entries(CountSparse(one.To(kGpu))).first, Entries(CountSparse(one)).first);
  const JaggedTensor j =
      JaggedTensor::FromLengths(Tensor::FromVector(std::vector<int64_t>{4, 4, 1, 7, 7, 7}),
                                Tensor::FromVector(std::vector<int64_t>{2, 0, 4}));
  const JaggedTensor jg = JaggedTensor::FromOffsets(j.values().To(kGpu), j.offsets().To(kGpu));
  EXPECT_EQ(Entries(CountSparse(jg)).first, Entries(CountSparse(j)).first);
  EXPECT_EQ(CountSparse(jg).shape(), CountSparse(j).shape());
  const SparseTensor negative =
      SparseTensor::Create(Tensor::FromVector(std::vector<int64_t>{0, 0, 0, 1}, {2, 2}),
                           Tensor::FromVector(std::vector<int64_t>{3, -2}), {1, 2});
  testing::ExpectError([&] { CountSparse(negative.To(kGpu)); }, ErrorCode::kInvalidArgument,
                       {"id -2 of entry 1", "negative"});
}

// A random table [v, d] of T (values with short mantissas times a random scale) and random bags
// (some empty, the padding id now and then) with weights of full float32 mantissas.
template <typename T>
Tensor RandomTableOf(std::mt19937_64& rng, int64_t v, int64_t d) {
  std::uniform_real_distribution<float> x(-4.0f, 4.0f);
  std::vector<T> values(static_cast<size_t>(v * d));
  for (T& e : values) e = static_cast<T>(x(rng));
  return Tensor::FromVector(std::move(values), {v, d});
}

JaggedTensor RandomBagsOf(std::mt19937_64& rng, int64_t b, int64_t v, int64_t pad, bool weighted,
                          DType id_dtype) {
  std::vector<int64_t> ids, lengths;
  std::vector<float> weights;
  std::uniform_real_distribution<float> w(-2.0f, 2.0f);
  for (int64_t i = 0; i < b; ++i) {
    const int64_t n = rng() % 7 == 0 ? 0 : static_cast<int64_t>(rng() % 60);
    for (int64_t j = 0; j < n; ++j) {
      ids.push_back(pad >= 0 && rng() % 5 == 0 ? pad : static_cast<int64_t>(rng() % v));
      if (weighted) weights.push_back(w(rng));
    }
    lengths.push_back(n);
  }
  return JaggedTensor::FromLengths(Converted(Tensor::FromVector(ids), id_dtype),
                                   Tensor::FromVector(lengths),
                                   weighted ? Tensor::FromVector(weights) : Tensor());
}

JaggedTensor OnGpu(const JaggedTensor& j) {
  return JaggedTensor::FromOffsets(j.values().To(kGpu), j.offsets().To(kGpu),
                                   j.has_weights() ? j.weights().To(kGpu) : Tensor());
}

template <typename T>
void ExpectSameBitsOf(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_TRUE(got.device() == kGpu) << what;
  ASSERT_EQ(got.Dims(), want.Dims()) << what;
  const Tensor g = got.To(Device::Cpu());
  ASSERT_EQ(std::memcmp(g.raw_data(), want.raw_data(), want.NumElements() * sizeof(T)), 0) << what;
}

TEST(FeaturesGpu, EmbeddingBagEqualsTheCpuBits) {
  TK_REQUIRE_GPU();
  std::mt19937_64 rng(17);
  const auto each = [&]<typename T>() {
    for (int64_t d : {1, 16, 33, 64, 128, 129, 300}) {
      const Tensor table = RandomTableOf<T>(rng, 1000, d);
      const Tensor on = table.To(kGpu);
      for (Combiner c :
           {Combiner::kSum, Combiner::kMean, Combiner::kSqrtN, Combiner::kMax, Combiner::kMin}) {
        const bool extreme = c == Combiner::kMax || c == Combiner::kMin;
        for (bool weighted : {false, true}) {
          if (weighted && extreme) continue;
          for (DType id_dtype : {DType::kInt32, DType::kInt64}) {
            const JaggedTensor ids = RandomBagsOf(rng, 3000, 1000, 11, weighted, id_dtype);
            const std::string what = std::string(DTypeName(DTypeOf<T>)) +
                                     " d=" + std::to_string(d) + " " + CombinerName(c) +
                                     (weighted ? " weighted" : "");
            ExpectSameBitsOf<T>(EmbeddingBag(on, OnGpu(ids), c, 11),
                                EmbeddingBag(table, ids, c, 11), what);
          }
        }
      }
    }
  };
  testing::ForEachType<float, double, Half, BFloat16>(each);
  // A table whose rows are wider than D, an empty batch, a batch of empty bags.
  const Tensor wide = RandomTableOf<float>(rng, 50, 70);
  const Tensor view = Slice(wide, 1, 3, 67);
  const JaggedTensor ids = RandomBagsOf(rng, 200, 50, -1, true, DType::kInt64);
  ExpectSameBitsOf<float>(EmbeddingBag(Slice(wide.To(kGpu), 1, 3, 67), OnGpu(ids), Combiner::kMean),
                          EmbeddingBag(view, ids, Combiner::kMean), "a strided table");
  const JaggedTensor none = RandomBagsOf(rng, 0, 50, -1, false, DType::kInt64);
  EXPECT_EQ(EmbeddingBag(wide.To(kGpu), OnGpu(none), Combiner::kSum).Dims(),
            (std::vector<int64_t>{0, 70}));
  const JaggedTensor empties = JaggedTensor::FromLengths(Tensor::Zeros({0}, DType::kInt64),
                                                         Tensor::Zeros({5}, DType::kInt64));
  ExpectSameBitsOf<float>(EmbeddingBag(wide.To(kGpu), OnGpu(empties), Combiner::kMax),
                          EmbeddingBag(wide, empties, Combiner::kMax), "empty bags");
}

TEST(FeaturesGpu, EmbeddingBagsEqualTheCpuBitsAndErrorsNameTheBag) {
  TK_REQUIRE_GPU();
  std::mt19937_64 rng(19);
  const std::vector<int64_t> widths = {16, 5, 64, 200}, rows = {300, 7, 1000, 12};
  const std::vector<Combiner> combiners = {Combiner::kSum, Combiner::kMean, Combiner::kSqrtN,
                                           Combiner::kSum};
  const int64_t b = 900;
  std::vector<Tensor> tables, on;
  std::vector<int64_t> ids, lengths;
  std::vector<float> weights;
  for (size_t f = 0; f < widths.size(); ++f) {
    tables.push_back(RandomTableOf<float>(rng, rows[f], widths[f]));
    on.push_back(tables.back().To(kGpu));
    const JaggedTensor j = RandomBagsOf(rng, b, rows[f], -1, true, DType::kInt64);
    const std::vector<int64_t> v = j.values().ToVector<int64_t>();
    const std::vector<float> w = j.weights().ToVector<float>();
    const std::vector<int64_t> l = j.lengths().ToVector<int64_t>();
    ids.insert(ids.end(), v.begin(), v.end());
    weights.insert(weights.end(), w.begin(), w.end());
    lengths.insert(lengths.end(), l.begin(), l.end());
  }
  const int64_t nf = static_cast<int64_t>(widths.size());
  const KeyedJaggedTensor kjt({"a", "b", "c", "d"}, Tensor::FromVector(ids),
                              Tensor::FromVector(lengths, {nf, b}), Tensor::FromVector(weights));
  const KeyedJaggedTensor kjt_gpu({"a", "b", "c", "d"}, Tensor::FromVector(ids).To(kGpu),
                                  Tensor::FromVector(lengths, {nf, b}).To(kGpu),
                                  Tensor::FromVector(weights).To(kGpu));
  ExpectSameBitsOf<float>(EmbeddingBags(on, kjt_gpu, combiners),
                          EmbeddingBags(tables, kjt, combiners), "EmbeddingBags");
  // An id past feature "c"'s table: the same Error as on the CPU, naming the feature and bag.
  std::vector<int64_t> bad = ids;
  const int64_t at = static_cast<int64_t>(ids.size()) - 3;  // in feature "d"
  bad[at] = 12;
  const KeyedJaggedTensor bad_gpu({"a", "b", "c", "d"}, Tensor::FromVector(bad).To(kGpu),
                                  Tensor::FromVector(lengths, {nf, b}).To(kGpu));
  const KeyedJaggedTensor bad_cpu({"a", "b", "c", "d"}, Tensor::FromVector(bad),
                                  Tensor::FromVector(lengths, {nf, b}));
  std::string cpu_message;
  try {
    EmbeddingBags(tables, bad_cpu, combiners);
  } catch (const Error& e) {
    cpu_message = e.what();
  }
  ASSERT_FALSE(cpu_message.empty());
  testing::ExpectError([&] { EmbeddingBags(on, bad_gpu, combiners); }, ErrorCode::kOutOfRange,
                       {cpu_message});
  // Operands on two devices.
  testing::ExpectError(
      [&] {
        EmbeddingBag(tables[0], OnGpu(RandomBagsOf(rng, 3, 300, -1, false, DType::kInt64)),
                     Combiner::kSum);
      },
      ErrorCode::kDeviceMismatch, {"EmbeddingBag", "a table is on cpu"});
}

TEST(FeaturesGpu, SparseSegmentReduceEqualsTheCpuBits) {
  TK_REQUIRE_GPU();
  std::mt19937_64 rng(23);
  std::uniform_real_distribution<float> x(-100.0f, 100.0f);
  const auto each = [&]<typename T>() {
    for (int64_t d : {1, 33, 64, 200}) {
      const int64_t rows = 5000;
      std::vector<T> values(static_cast<size_t>(rows * d));
      for (T& v : values) v = static_cast<T>(std::is_integral_v<T> ? x(rng) * 1000 : x(rng));
      const Tensor data = Tensor::FromVector(values, {rows, d});
      std::vector<int64_t> ids, idx;
      for (int64_t s = 0; s < 3000; ++s) {
        if (s % 11 == 4) continue;  // empty segments
        const int64_t n = static_cast<int64_t>(rng() % 30);
        for (int64_t j = 0; j < n; ++j) {
          ids.push_back(s);
          idx.push_back(static_cast<int64_t>(rng() % rows));
        }
      }
      for (Combiner c :
           {Combiner::kSum, Combiner::kMean, Combiner::kSqrtN, Combiner::kMax, Combiner::kMin}) {
        if (std::is_integral_v<T> && (c == Combiner::kMean || c == Combiner::kSqrtN)) continue;
        for (DType id_dtype : {DType::kInt32, DType::kInt64}) {
          const Tensor id_t = Converted(Tensor::FromVector(ids), id_dtype);
          const Tensor idx_t = Converted(Tensor::FromVector(idx), id_dtype);
          for (int64_t num_segments : {int64_t{-1}, int64_t{3100}}) {
            const std::string what = std::string(DTypeName(DTypeOf<T>)) +
                                     " d=" + std::to_string(d) + " " + CombinerName(c);
            ExpectSameBitsOf<T>(
                SparseSegmentReduce(data.To(kGpu), idx_t.To(kGpu), id_t.To(kGpu), num_segments, c),
                SparseSegmentReduce(data, idx_t, id_t, num_segments, c), what);
          }
        }
      }
    }
  };
  testing::ForEachType<float, double, Half, BFloat16, int32_t, int64_t>(each);
  // Bad entries give the CPU's Errors; nothing is read out of bounds.
  const Tensor data = Tensor::Zeros({4, 3}, DType::kFloat32, kGpu);
  const auto ids = [](std::vector<int64_t> v) { return Tensor::FromVector(v).To(kGpu); };
  testing::ExpectError(
      [&] {
        SparseSegmentReduce(data, ids({0, 1, 2}), ids({0, 2, 1}), -1, Combiner::kSum);
      },
      ErrorCode::kInvalidArgument, {"segment_ids[2] = 1 is less than segment_ids[1] = 2"});
  testing::ExpectError(
      [&] {
        SparseSegmentReduce(data, ids({0, 4, 2}), ids({0, 0, 1}), -1, Combiner::kSum);
      },
      ErrorCode::kOutOfRange, {"indices[1] = 4", "[0, 4)"});
  testing::ExpectError(
      [&] {
        SparseSegmentReduce(data, ids({0, 1}), ids({0, 5}), 3, Combiner::kSum);
      },
      ErrorCode::kOutOfRange, {"segment_ids[1] = 5"});
  EXPECT_EQ(SparseSegmentReduce(data, ids({}), ids({}), -1, Combiner::kSum).Dims(),
            (std::vector<int64_t>{0, 3}));
}

TEST(FeaturesGpu, SegmentAndUnsortedSegmentReduceEqualTheCpuBits) {
  TK_REQUIRE_GPU();
  std::mt19937_64 rng(29);
  std::uniform_real_distribution<float> x(-100.0f, 100.0f);
  const auto each = [&]<typename T>() {
    for (int64_t d : {1, 40, 129}) {
      std::vector<int64_t> ids;
      for (int64_t s = 0; s < 2000; ++s) {
        if (s % 13 == 5) continue;  // gaps
        const int64_t n = static_cast<int64_t>(rng() % 20);
        for (int64_t j = 0; j < n; ++j) ids.push_back(s);
      }
      const int64_t rows = static_cast<int64_t>(ids.size());
      std::vector<T> values(static_cast<size_t>(rows * d));
      for (size_t i = 0; i < values.size(); ++i) {
        values[i] = static_cast<T>(i % 9 == 2              ? -0.0f
                                   : std::is_integral_v<T> ? x(rng) * 1000
                                                           : x(rng));
      }
      const Tensor data = Tensor::FromVector(values, {rows, d});
      std::vector<int64_t> loose = ids;
      std::shuffle(loose.begin(), loose.end(), rng);
      for (size_t k = 0; k < loose.size(); k += 5) loose[k] = -7;  // dropped
      for (Combiner c :
           {Combiner::kSum, Combiner::kMean, Combiner::kSqrtN, Combiner::kMax, Combiner::kMin}) {
        if (std::is_integral_v<T> && (c == Combiner::kMean || c == Combiner::kSqrtN)) continue;
        for (DType id_dtype : {DType::kInt32, DType::kInt64}) {
          const std::string what = std::string(DTypeName(DTypeOf<T>)) + " d=" + std::to_string(d) +
                                   " " + CombinerName(c);
          const Tensor id_t = Converted(Tensor::FromVector(ids), id_dtype);
          ExpectSameBitsOf<T>(SegmentReduce(data.To(kGpu), id_t.To(kGpu), -1, c),
                              SegmentReduce(data, id_t, -1, c), "SegmentReduce " + what);
          const Tensor loose_t = Converted(Tensor::FromVector(loose), id_dtype);
          for (int64_t num : {int64_t{-1}, int64_t{2100}}) {
            ExpectSameBitsOf<T>(UnsortedSegmentReduce(data.To(kGpu), loose_t.To(kGpu), num, c),
                                UnsortedSegmentReduce(data, loose_t, num, c),
                                "UnsortedSegmentReduce " + what);
          }
        }
      }
    }
  };
  testing::ForEachType<float, double, Half, BFloat16, int32_t, int64_t>(each);
  // Ids of two axes (a prefix of data's dims), and the CPU's Errors.
  const Tensor data = Tensor::FromVector(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2});
  const Tensor ids = Tensor::FromVector(std::vector<int64_t>{1, 0, -1, 1}, {2, 2});
  ExpectSameBitsOf<float>(UnsortedSegmentReduce(data.To(kGpu), ids.To(kGpu), 3, Combiner::kMax),
                          UnsortedSegmentReduce(data, ids, 3, Combiner::kMax), "2-D ids");
  testing::ExpectError(
      [&] { UnsortedSegmentReduce(data.To(kGpu), ids.To(kGpu), 1, Combiner::kSum); },
      ErrorCode::kOutOfRange, {"segment_ids[0, 0] = 1 is out of range [0, 1)"});
  testing::ExpectError(
      [&] {
        SegmentReduce(Tensor::Zeros({3, 2}, DType::kFloat32, kGpu),
                      Tensor::FromVector(std::vector<int64_t>{0, 2, 1}).To(kGpu), -1,
                      Combiner::kSum);
      },
      ErrorCode::kInvalidArgument, {"segment_ids[2] = 1 is less than segment_ids[1] = 2"});
  testing::ExpectError(
      [&] {
        SegmentReduce(Tensor::Zeros({3, 2}, DType::kFloat32, kGpu),
                      Tensor::FromVector(std::vector<int64_t>{0, 1, 1}), -1, Combiner::kSum);
      },
      ErrorCode::kDeviceMismatch, {"SegmentReduce", "segment_ids is on cpu"});
}

// Expects `got` (on the device) to hold want's dims, dtype and bytes.
void ExpectSameTensor(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_TRUE(got.device() == kGpu) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.Dims(), want.Dims()) << what;
  const Tensor g = got.To(Device::Cpu()).HostContiguous();
  const Tensor w = want.HostContiguous();
  const size_t bytes = static_cast<size_t>(w.NumElements() * DTypeSize(w.dtype()));
  ASSERT_TRUE(bytes == 0 || std::memcmp(g.raw_data(), w.raw_data(), bytes) == 0) << what;
}

void ExpectSameSparse(const SparseTensor& got, const SparseTensor& want, const std::string& what) {
  EXPECT_EQ(got.shape(), want.shape()) << what;
  EXPECT_EQ(got.order(), want.order()) << what;
  ExpectSameTensor(got.indices(), want.indices(), what + " indices");
  ExpectSameTensor(got.values(), want.values(), what + " values");
}

// A random tensor of `dims` and `dtype` (every byte random, so every bit pattern moves).
Tensor RandomBytes(std::mt19937_64& rng, DType dtype, const std::vector<int64_t>& dims) {
  Tensor t = Tensor::Empty(dims, dtype);
  auto* p = static_cast<unsigned char*>(t.raw_data());
  const int64_t bytes = t.NumElements() * DTypeSize(dtype);
  for (int64_t i = 0; i < bytes; ++i) p[i] = static_cast<unsigned char>(rng());
  if (dtype == DType::kBool) {
    for (int64_t i = 0; i < bytes; ++i) p[i] &= 1;
  }
  return t;
}

// A jagged batch of b rows of up to max_len items [item...] (about one row in five empty).
JaggedTensor RandomJaggedOf(std::mt19937_64& rng, DType dtype, int64_t b, int64_t max_len,
                            const std::vector<int64_t>& item) {
  std::vector<int64_t> lengths;
  int64_t n = 0;
  for (int64_t i = 0; i < b; ++i) {
    lengths.push_back(rng() % 5 == 0 ? 0 : static_cast<int64_t>(rng() % (max_len + 1)));
    n += lengths.back();
  }
  std::vector<int64_t> dims = {n};
  dims.insert(dims.end(), item.begin(), item.end());
  return JaggedTensor::FromLengths(RandomBytes(rng, dtype, dims), Tensor::FromVector(lengths));
}

TEST(FeaturesGpu, JaggedConversionsEqualTheCpu) {
  TK_REQUIRE_GPU();
  std::mt19937_64 rng(31);
  for (DType dtype : {DType::kBool, DType::kInt8, DType::kFloat16, DType::kInt32, DType::kFloat32,
                      DType::kFloat64}) {
    for (const std::vector<int64_t>& item : {std::vector<int64_t>{}, {3}, {2, 2}}) {
      const std::string what =
          std::string(DTypeName(dtype)) + " items " + std::to_string(item.size());
      const JaggedTensor jt = RandomJaggedOf(rng, dtype, 3000, 40, item);
      const JaggedTensor on = OnGpu(jt);
      for (int64_t len : {-1, 0, 7, 60}) {
        ExpectSameTensor(on.ToPadded(len, 3), jt.ToPadded(len, 3),
                         what + " ToPadded " + std::to_string(len));
      }
      const Tensor dense = jt.ToPadded(-1, 0);
      const JaggedTensor back = JaggedTensor::FromPadded(dense.To(kGpu), jt.lengths().To(kGpu));
      const JaggedTensor want = JaggedTensor::FromPadded(dense, jt.lengths());
      ExpectSameTensor(back.offsets(), want.offsets(), what + " FromPadded offsets");
      ExpectSameTensor(back.values(), want.values(), what + " FromPadded values");
      EXPECT_EQ(back.lengths().ToVector<int64_t>(), jt.lengths().ToVector<int64_t>()) << what;
      if (!item.empty()) continue;
      ExpectSameSparse(on.ToSparse(), jt.ToSparse(), what + " ToSparse");
      // FromSparse of the sorted entries (values shared) and of shuffled ones.
      const SparseTensor st = jt.ToSparse();
      const JaggedTensor sorted = JaggedTensor::FromSparse(st.To(kGpu));
      ExpectSameTensor(sorted.offsets(), jt.offsets(), what + " FromSparse sorted");
      ExpectSameTensor(sorted.values(), jt.values(), what + " FromSparse sorted values");
      const int64_t nnz = st.nnz();
      std::vector<int64_t> perm(static_cast<size_t>(nnz));
      for (int64_t i = 0; i < nnz; ++i) perm[i] = i;
      std::shuffle(perm.begin(), perm.end(), rng);
      const std::vector<int64_t> idx = st.indices().ToVector<int64_t>();
      std::vector<int64_t> shuffled_idx;
      for (int64_t p : perm) {
        shuffled_idx.push_back(idx[2 * p]);
        shuffled_idx.push_back(2 * (40 - idx[2 * p + 1]));  // columns, not positions
      }
      // Entry k holds its position in the sorted entries.
      const SparseTensor shuffled =
          SparseTensor::Create(Tensor::FromVector(shuffled_idx, {nnz, 2}), Tensor::FromVector(perm),
                               {st.shape()[0], 81});
      const JaggedTensor want_s = JaggedTensor::FromSparse(shuffled);
      const JaggedTensor got_s = JaggedTensor::FromSparse(shuffled.To(kGpu));
      ExpectSameTensor(got_s.offsets(), want_s.offsets(), what + " FromSparse shuffled");
      ExpectSameTensor(got_s.values(), want_s.values(), what + " FromSparse shuffled values");
    }
  }
  // Rows that are all full share dense's storage on the device too.
  const Tensor full = Tensor::Zeros({4, 3}, DType::kFloat32, kGpu);
  EXPECT_TRUE(SharesStorage(
      JaggedTensor::FromPadded(full, Tensor::FromVector(std::vector<int32_t>{3, 3, 3, 3}).To(kGpu))
          .values(),
      full));
  // Bad inputs: the CPU's Errors.
  const auto sparse = [](std::vector<int64_t> idx, std::vector<int64_t> shape) {
    const int64_t nnz = static_cast<int64_t>(idx.size()) / 2;
    return SparseTensor::Create(Tensor::FromVector(idx, {nnz, 2}),
                                Tensor::FromVector(std::vector<float>(nnz, 1.0f)), shape);
  };
  for (const SparseTensor& bad :
       {sparse({0, 0, 0, 0}, {2, 2}), sparse({1, 1, 0, 0, 1, 1}, {2, 2}),
        sparse({0, 1, 2, 0}, {2, 2}), sparse({1, 0, 0, 5}, {2, 2}),
        sparse({0, 1, 1, 1, 0, 1}, {2, 2}), sparse({1, 0, 0, 1, 0, 0, 0, 1}, {2, 2})}) {
    const std::string cpu = testing::ErrorOf([&] { JaggedTensor::FromSparse(bad); });
    ASSERT_FALSE(cpu.empty());
    EXPECT_EQ(testing::ErrorOf([&] { JaggedTensor::FromSparse(bad.To(kGpu)); }), cpu);
  }
  const Tensor dense = Tensor::Zeros({3, 4}, DType::kFloat32);
  const Tensor lengths = Tensor::FromVector(std::vector<int64_t>{1, 5, 2});
  EXPECT_EQ(testing::ErrorOf([&] { JaggedTensor::FromPadded(dense.To(kGpu), lengths.To(kGpu)); }),
            testing::ErrorOf([&] { JaggedTensor::FromPadded(dense, lengths); }));
  testing::ExpectError([&] { JaggedTensor::FromPadded(dense.To(kGpu), lengths); },
                       ErrorCode::kDeviceMismatch, {"JaggedTensor::FromPadded"});
}

KeyedJaggedTensor KjtOnGpu(const KeyedJaggedTensor& k) {
  return KeyedJaggedTensor(k.keys(), k.values().To(kGpu), k.lengths().To(kGpu),
                           k.has_weights() ? k.weights().To(kGpu) : Tensor());
}

void ExpectSameKjt(const KeyedJaggedTensor& got, const KeyedJaggedTensor& want,
                   const std::string& what) {
  EXPECT_EQ(got.keys(), want.keys()) << what;
  EXPECT_EQ(got.batch_size(), want.batch_size()) << what;
  ExpectSameTensor(got.lengths(), want.lengths(), what + " lengths");
  ExpectSameTensor(got.offsets(), want.offsets(), what + " offsets");
  ExpectSameTensor(got.values(), want.values(), what + " values");
  ASSERT_EQ(got.has_weights(), want.has_weights()) << what;
  if (want.has_weights()) ExpectSameTensor(got.weights(), want.weights(), what + " weights");
}

TEST(FeaturesGpu, KeyedJaggedGathersEqualTheCpu) {
  TK_REQUIRE_GPU();
  std::mt19937_64 rng(37);
  for (DType dtype : {DType::kInt8, DType::kFloat16, DType::kInt64}) {
    for (const std::vector<int64_t>& item : {std::vector<int64_t>{}, {5}}) {
      const std::string what =
          std::string(DTypeName(dtype)) + " items " + std::to_string(item.size());
      std::vector<KeyedJaggedTensor> parts;
      for (int64_t b : {700, 0, 1300}) {
        std::vector<int64_t> lengths;
        int64_t n = 0;
        for (int64_t i = 0; i < 4 * b; ++i) {
          lengths.push_back(rng() % 4 == 0 ? 0 : static_cast<int64_t>(rng() % 30));
          n += lengths.back();
        }
        std::vector<int64_t> dims = {n};
        dims.insert(dims.end(), item.begin(), item.end());
        parts.emplace_back(std::vector<std::string>{"a", "b", "c", "d"},
                           RandomBytes(rng, dtype, dims), Tensor::FromVector(lengths, {4, b}),
                           RandomBytes(rng, DType::kFloat32, {n}));
      }
      std::vector<KeyedJaggedTensor> on;
      for (const KeyedJaggedTensor& p : parts) on.push_back(KjtOnGpu(p));
      const std::vector<std::string> keys = {"d", "b", "b", "a"};
      ExpectSameKjt(on[0].Permute(keys), parts[0].Permute(keys), what + " Permute");
      const KeyedJaggedTensor joined = KeyedJaggedTensor::Concat(on);
      ExpectSameKjt(joined, KeyedJaggedTensor::Concat(parts), what + " Concat");
      const std::vector<int64_t> sizes = {1000, 0, 999, 1};
      const std::vector<KeyedJaggedTensor> got = joined.Split(sizes);
      const std::vector<KeyedJaggedTensor> want = KeyedJaggedTensor::Concat(parts).Split(sizes);
      ASSERT_EQ(got.size(), want.size());
      for (size_t k = 0; k < got.size(); ++k) ExpectSameKjt(got[k], want[k], what + " Split");
      if (item.empty()) {
        ExpectSameSparse(on[2].ToSparse("c"), parts[2].ToSparse("c"), what + " ToSparse");
      }
    }
  }
  const KeyedJaggedTensor cpu({"a"}, Tensor::FromVector(std::vector<int64_t>{1, 2}),
                              Tensor::FromVector(std::vector<int64_t>{2}, {1, 1}));
  testing::ExpectError(
      [&] {
        KeyedJaggedTensor::Concat({KjtOnGpu(cpu), cpu});
      },
      ErrorCode::kDeviceMismatch, {"KeyedJaggedTensor::Concat", "part 1"});
}

TEST(FeaturesGpu, FillEmptyRowsEqualsTheCpu) {
  TK_REQUIRE_GPU();
  std::mt19937_64 rng(41);
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{5000}, {20000, 30}, {3000, 4, 5}, {1, 1}, {7, 3}}) {
    for (bool sorted : {false, true}) {
      for (DType dtype :
           {DType::kBool, DType::kInt16, DType::kFloat16, DType::kFloat32, DType::kInt64}) {
        const int rank = static_cast<int>(shape.size());
        const int64_t nnz = shape[0] == 7 ? 0 : shape[0] * 2;
        std::vector<std::vector<int64_t>> rows;
        for (int64_t i = 0; i < nnz; ++i) {
          std::vector<int64_t> row(static_cast<size_t>(rank));
          row[0] = static_cast<int64_t>(rng() % static_cast<uint64_t>(shape[0])) & ~int64_t{3};
          for (int a = 1; a < rank; ++a) row[a] = static_cast<int64_t>(rng() % shape[a]);
          rows.push_back(row);
        }
        if (sorted) std::sort(rows.begin(), rows.end());
        std::vector<int64_t> idx;
        for (const auto& r : rows) idx.insert(idx.end(), r.begin(), r.end());
        const SparseTensor st = SparseTensor::Create(Tensor::FromVector(idx, {nnz, rank}),
                                                     RandomBytes(rng, dtype, {nnz}), shape);
        const std::string what =
            ShapeString(shape) + " " + DTypeName(dtype) + (sorted ? " sorted" : " shuffled");
        const FillEmptyRowsResult want = FillEmptyRows(st, 1);
        const FillEmptyRowsResult got = FillEmptyRows(st.To(kGpu), 1);
        ExpectSameSparse(got.output, want.output, what);
        ExpectSameTensor(got.empty_row_indicator, want.empty_row_indicator, what + " empty");
        ExpectSameTensor(got.reverse_index_map, want.reverse_index_map, what + " reverse");
      }
    }
  }
  // Sorted entries without empty rows come back as they are.
  const SparseTensor full =
      SparseTensor::Create(Tensor::FromVector(std::vector<int64_t>{0, 1, 1, 0}, {2, 2}),
                           Tensor::FromVector(std::vector<float>{1, 2}), {2, 2})
          .To(kGpu);
  EXPECT_TRUE(SharesStorage(FillEmptyRows(full, 0).output.values(), full.values()));
  const SparseTensor outside =
      SparseTensor::Create(Tensor::FromVector(std::vector<int64_t>{0, 1, 1, 2}, {2, 2}),
                           Tensor::FromVector(std::vector<float>{1, 2}), {2, 2});
  EXPECT_EQ(testing::ErrorOf([&] { FillEmptyRows(outside.To(kGpu), 0); }),
            testing::ErrorOf([&] { FillEmptyRows(outside, 0); }));
}

TEST(FeaturesGpu, FillEmptyRowsGradEqualsTheCpuBits) {
  TK_REQUIRE_GPU();
  std::mt19937_64 rng(43);
  std::uniform_real_distribution<float> x(-1000.0f, 1000.0f);
  for (int64_t n_full : {int64_t{0}, int64_t{10}, int64_t{5} * 65536 + 77}) {
    std::vector<int64_t> rev;
    for (int64_t j = 0; j < n_full; ++j) {
      if (rng() % 4 != 0) rev.push_back(j);
    }
    // Floats of wide range (their sums depend on the order) and small integers (int8 wraps).
    std::vector<float> grad(static_cast<size_t>(n_full)), small(grad.size());
    for (float& g : grad) g = x(rng) * (1.0f + x(rng));
    for (float& g : small) g = static_cast<float>(static_cast<int>(rng() % 201) - 100);
    const Tensor r = Tensor::FromVector(rev);
    for (DType dtype :
         {DType::kFloat32, DType::kFloat64, DType::kBFloat16, DType::kInt32, DType::kInt8}) {
      const Tensor g = Converted(Tensor::FromVector(IsFloat(dtype) ? grad : small), dtype);
      const FillEmptyRowsGradResult want = FillEmptyRowsGrad(r, g);
      const FillEmptyRowsGradResult got = FillEmptyRowsGrad(r.To(kGpu), g.To(kGpu));
      const std::string what = std::string(DTypeName(dtype)) + " " + std::to_string(n_full);
      ExpectSameTensor(got.d_values, want.d_values, what + " d_values");
      ExpectSameTensor(got.d_default_value, want.d_default_value, what + " d_default_value");
    }
  }
  const Tensor r = Tensor::FromVector(std::vector<int64_t>{0, 3, 1});
  const Tensor g = Tensor::FromVector(std::vector<float>{1, 2, 3});
  EXPECT_EQ(testing::ErrorOf([&] { FillEmptyRowsGrad(r.To(kGpu), g.To(kGpu)); }),
            testing::ErrorOf([&] { FillEmptyRowsGrad(r, g); }));
}

TEST(FeaturesGpu, EmbeddingBagBackwardEqualsTheCpuBits) {
  TK_REQUIRE_GPU();
  std::mt19937_64 rng(47);
  const auto each = [&]<typename T>() {
    for (int64_t d : {1, 33, 64, 130}) {
      const int64_t v = 500;
      const Tensor table = RandomTableOf<T>(rng, v, d);
      for (Combiner c :
           {Combiner::kSum, Combiner::kMean, Combiner::kSqrtN, Combiner::kMax, Combiner::kMin}) {
        const bool extreme = c == Combiner::kMax || c == Combiner::kMin;
        for (bool weighted : {false, true}) {
          if (weighted && extreme) continue;
          const JaggedTensor ids = RandomBagsOf(rng, 2000, v, 11, weighted, DType::kInt32);
          const Tensor grad = RandomTableOf<T>(rng, ids.batch_size(), d);
          const Tensor t = extreme ? table : Tensor();
          const Tensor t_gpu = extreme ? table.To(kGpu) : Tensor();
          const std::string what = std::string(DTypeName(DTypeOf<T>)) + " d=" + std::to_string(d) +
                                   " " + CombinerName(c) + (weighted ? " weighted" : "");
          ExpectSameSparse(EmbeddingBagBackward(grad.To(kGpu), OnGpu(ids), c, v, 11, t_gpu),
                           EmbeddingBagBackward(grad, ids, c, v, 11, t), what);
          const Tensor start = RandomTableOf<T>(rng, v, d);
          Tensor want = start.Clone();
          EmbeddingBagBackward(grad, ids, c, &want, 11, t);
          Tensor got = start.To(kGpu);
          EmbeddingBagBackward(grad.To(kGpu), OnGpu(ids), c, &got, 11, t_gpu);
          ExpectSameTensor(got, want, what + " dense");
        }
      }
    }
  };
  testing::ForEachType<float, double, Half, BFloat16>(each);
  // Only padding ids, an empty batch, and a bad id (the CPU's Error).
  const JaggedTensor pads =
      JaggedTensor::FromLengths(Tensor::FromVector(std::vector<int64_t>{2, 2}),
                                Tensor::FromVector(std::vector<int64_t>{0, 2}));
  EXPECT_EQ(EmbeddingBagBackward(Tensor::Zeros({2, 4}, DType::kFloat32, kGpu), OnGpu(pads),
                                 Combiner::kSum, 3, 2)
                .nnz(),
            0);
  const JaggedTensor bad =
      JaggedTensor::FromLengths(Tensor::FromVector(std::vector<int64_t>{0, 4, 1}),
                                Tensor::FromVector(std::vector<int64_t>{1, 2}));
  const Tensor grad = Tensor::Zeros({2, 3}, DType::kFloat32);
  EXPECT_EQ(
      testing::ErrorOf([&] { EmbeddingBagBackward(grad.To(kGpu), OnGpu(bad), Combiner::kSum, 4); }),
      testing::ErrorOf([&] { EmbeddingBagBackward(grad, bad, Combiner::kSum, 4); }));
  testing::ExpectError([&] { EmbeddingBagBackward(grad, OnGpu(bad), Combiner::kSum, 5); },
                       ErrorCode::kDeviceMismatch, {"EmbeddingBagBackward", "grad"});
}

}  // namespace
}  // namespace tensorkit
