// QuantileSketch and FitQuantileBoundaries: the stated rank error bound against exact quantiles
// of sorted data (several distributions, merged shards), determinism and the byte format.
#include "tensorkit/features/quantiles.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tensorkit/features/bucketize.h"
#include "test_util.h"

namespace tensorkit {
namespace {

using testing::AtThreadCounts;
using testing::ExpectError;

std::vector<double> Draw(const std::string& kind, int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> v(static_cast<size_t>(n));
  std::normal_distribution<double> normal(5, 3);
  std::exponential_distribution<double> expo(0.01);
  std::uniform_real_distribution<double> uni(-1, 1);
  for (int64_t i = 0; i < n; ++i) {
    if (kind == "normal") v[i] = normal(rng);
    if (kind == "exponential") v[i] = expo(rng);
    if (kind == "lognormal") v[i] = std::exp(normal(rng));
    if (kind == "sorted") v[i] = static_cast<double>(i);
    if (kind == "reversed") v[i] = static_cast<double>(n - i);
    if (kind == "few") v[i] = static_cast<double>(rng() % 5);  // heavy repeats
    if (kind == "uniform") v[i] = uni(rng);
  }
  return v;
}

// Checks the guarantee of quantiles.h for the sketch of `all` (sorted here): for q on a grid,
// v = Quantile(q) has lo(v) <= q n + E and hi(v) >= q n - E; and E is within its formula.
void CheckBound(const QuantileSketch& s, std::vector<double> all, const std::string& what) {
  std::sort(all.begin(), all.end());
  const double n = static_cast<double>(all.size());
  ASSERT_EQ(s.count(), static_cast<int64_t>(all.size())) << what;
  const double e = static_cast<double>(s.RankErrorBound());
  const double levels = std::max(0.0, std::floor(std::log2(n / s.capacity()))) + 1;
  EXPECT_LE(e, n / s.capacity() * levels) << what;
  double worst = 0;
  for (int i = 0; i <= 200; ++i) {
    const double q = i / 200.0;
    const double v = s.Quantile(q);
    const double lo =
        static_cast<double>(std::lower_bound(all.begin(), all.end(), v) - all.begin());
    const double hi =
        static_cast<double>(std::upper_bound(all.begin(), all.end(), v) - all.begin());
    EXPECT_GT(hi, lo) << what << ": the quantile " << v << " is not one of the values";
    EXPECT_LE(lo, q * n + e) << what << " q = " << q;
    EXPECT_GE(hi, q * n - e) << what << " q = " << q;
    worst = std::max({worst, lo - q * n, q * n - hi});
  }
  EXPECT_LE(worst, e) << what;
}

TEST(QuantileSketch, ErrorBoundOnSeveralDistributions) {
  for (const std::string kind :
       {"normal", "exponential", "lognormal", "sorted", "reversed", "few", "uniform"}) {
    const std::vector<double> v = Draw(kind, 200000, 1);
    QuantileSketch s(256);
    s.Add(Tensor::FromVector(v));
    EXPECT_GT(s.RankErrorBound(), 0) << kind;  // the sketch did compact
    CheckBound(s, v, kind);
  }
}

TEST(QuantileSketch, SmallStreamsAreExact) {
  QuantileSketch s(64);
  const std::vector<double> v = {5, 1, 4, 2, 3};
  for (double x : v) s.Add(x);
  s.Add(std::numeric_limits<double>::quiet_NaN());  // skipped
  EXPECT_EQ(s.count(), 5);
  EXPECT_EQ(s.RankErrorBound(), 0);
  EXPECT_EQ(s.Quantile(0), 1);
  EXPECT_EQ(s.Quantile(0.5), 3);
  EXPECT_EQ(s.Quantile(1), 5);
  EXPECT_EQ(s.Boundaries(5), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(s.Boundaries(1), std::vector<float>{});
  // Repeats collapse: strictly increasing boundaries, fewer of them.
  QuantileSketch r(64);
  r.Add(Tensor::FromVector<int32_t>({7, 7, 7, 7, 7, 7, 9, 9}));
  EXPECT_EQ(r.Boundaries(4), (std::vector<float>{7}));  // 7 fills the first three quarters
  EXPECT_EQ(r.Boundaries(8), (std::vector<float>{7, 9}));
  EXPECT_EQ(QuantileSketch().Boundaries(4), std::vector<float>{});
}

TEST(QuantileSketch, MergedShardsKeepTheBoundForTheUnion) {
  const std::vector<double> a = Draw("normal", 150000, 2);
  const std::vector<double> b = Draw("exponential", 90000, 3);
  QuantileSketch sa(128), sb(128);
  sa.Add(Tensor::FromVector(a));
  sb.Add(Tensor::FromVector(std::vector<float>(b.begin(), b.end())));
  QuantileSketch merged = sa;
  merged.Merge(sb);
  std::vector<double> all = a;
  for (double x : b) all.push_back(static_cast<float>(x));
  EXPECT_GE(merged.RankErrorBound(), sa.RankErrorBound() + sb.RankErrorBound());
  CheckBound(merged, all, "merge");
  // Many small shards merged one by one.
  QuantileSketch tree(128);
  for (int k = 0; k < 40; ++k) {
    QuantileSketch shard(128);
    shard.Add(Tensor::FromVector(
        std::vector<double>(all.begin() + k * 6000, all.begin() + (k + 1) * 6000)));
    tree.Merge(shard);
  }
  CheckBound(tree, all, "40 shards");
  ExpectError([&] { sa.Merge(QuantileSketch(64)); }, ErrorCode::kInvalidArgument,
              {"capacities 128 and 64 differ"});
}

TEST(QuantileSketch, BytesRoundTripAndCorruption) {
  QuantileSketch s(64);
  s.Add(Tensor::FromVector(Draw("lognormal", 5000, 4)));
  const std::string bytes = s.ToBytes();
  const QuantileSketch back = QuantileSketch::FromBytes(bytes);
  EXPECT_EQ(back.ToBytes(), bytes);
  EXPECT_EQ(back.Boundaries(10), s.Boundaries(10));
  EXPECT_EQ(back.RankErrorBound(), s.RankErrorBound());
  // Continuing after a round trip gives the same sketch as continuing the original.
  QuantileSketch s2 = s, back2 = back;
  s2.Add(Tensor::FromVector(Draw("normal", 3000, 5)));
  back2.Add(Tensor::FromVector(Draw("normal", 3000, 5)));
  EXPECT_EQ(s2.ToBytes(), back2.ToBytes());
  ExpectError([&] { QuantileSketch::FromBytes("nope"); }, ErrorCode::kCorrupt, {"TKQS"});
  ExpectError([&] { QuantileSketch::FromBytes(bytes.substr(0, bytes.size() - 3)); },
              ErrorCode::kCorrupt, {"FromBytes"});
  std::string count_off = bytes;
  count_off[12] ^= 1;  // the count's low byte
  ExpectError([&] { QuantileSketch::FromBytes(count_off); }, ErrorCode::kCorrupt,
              {"but the count is"});
  ExpectError([&] { QuantileSketch::FromBytes(bytes + "x"); }, ErrorCode::kCorrupt,
              {"bytes follow"});
}

TEST(FitQuantileBoundaries, DeterministicAndBalanced) {
  std::vector<Tensor> chunks;
  std::vector<double> all;
  for (int k = 0; k < 8; ++k) {
    const std::vector<double> v = Draw(k % 2 ? "normal" : "uniform", 25000, 10 + k);
    all.insert(all.end(), v.begin(), v.end());
    chunks.push_back(Tensor::FromVector(v));
  }
  const auto runs = AtThreadCounts({1, 2}, [&] { return FitQuantileBoundaries(chunks, 10, 512); });
  EXPECT_EQ(runs[0], runs[1]);
  const std::vector<float>& b = runs[0];
  ASSERT_EQ(b.size(), 9u);
  EXPECT_TRUE(std::is_sorted(b.begin(), b.end()));
  // The same as merging the chunks' sketches by hand, in chunk order.
  QuantileSketch all_sketch(512);
  for (const Tensor& c : chunks) {
    QuantileSketch one(512);
    one.Add(c);
    all_sketch.Merge(one);
  }
  EXPECT_EQ(all_sketch.Boundaries(10), b);
  // Each bucket holds about a tenth of the values, within twice the error bound.
  const Tensor ids = Bucketize(Tensor::FromVector(all), b);
  std::vector<int64_t> per(10, 0);
  for (int32_t id : ids.ToVector<int32_t>()) ++per[id];
  const double slack = 2.0 * static_cast<double>(all_sketch.RankErrorBound()) + 2;
  for (int64_t c : per) EXPECT_NEAR(static_cast<double>(c), all.size() / 10.0, slack);
  // A chunk above 2^20 values is sketched in fixed pieces of 2^20, merged in sequence.
  const std::vector<double> big = Draw("lognormal", (int64_t{5} << 19) + 7, 20);
  const Tensor big_t = Tensor::FromVector(big);
  const auto big_runs = AtThreadCounts({1, 2}, [&] { return FitQuantileBoundaries({big_t}, 7); });
  EXPECT_EQ(big_runs[0], big_runs[1]);
  QuantileSketch by_hand;
  for (size_t b = 0; b < big.size(); b += size_t{1} << 20) {
    QuantileSketch piece;
    piece.Add(Tensor::FromVector(std::vector<double>(
        big.begin() + static_cast<std::ptrdiff_t>(b),
        big.begin() + static_cast<std::ptrdiff_t>(std::min(big.size(), b + (size_t{1} << 20))))));
    by_hand.Merge(piece);
  }
  EXPECT_EQ(by_hand.Boundaries(7), big_runs[0]);
  CheckBound(by_hand, big, "pieces");
  ExpectError([&] { FitQuantileBoundaries({Tensor::FromVector<int8_t>({})}, 3); },
              ErrorCode::kUnsupported, {"QuantileSketch::Add"});
  ExpectError([&] { FitQuantileBoundaries(chunks, 0); }, ErrorCode::kInvalidArgument,
              {"num_buckets 0"});
  ExpectError([&] { QuantileSketch(7); }, ErrorCode::kInvalidArgument, {"capacity 7"});
}

}  // namespace
}  // namespace tensorkit
