// features/ on a CUDA device against the CPU bits: hash buckets of int32 and int64 ids (dense,
// strided, jagged), fast and strong. Skipped with a message when no CUDA device is visible.
#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <vector>

#include "gpu/gpu_test_util.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/dense/views.h"
#include "tensorkit/features/bucketize.h"
#include "tensorkit/features/counts.h"
#include "tensorkit/features/hash.h"
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

}  // namespace
}  // namespace tensorkit
