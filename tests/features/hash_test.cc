// Fingerprint64, StrongKeyedHash and the hash-bucket ops against TensorFlow's test vectors, a
// golden file written by TensorFlow (data/hash_golden.tsv, gen_hash_golden.py) and SipHash's
// published vector.
#include "tensorkit/features/hash.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tensorkit/features/hash_device.h"
#include "tensorkit/features/lookup_device.h"
#include "test_util.h"

namespace tensorkit {
namespace {

using testing::AtThreadCounts;
using testing::ExpectError;

constexpr int64_t kBig = INT64_MAX;  // 2^63 - 1 buckets keep 63 bits of the hash

Tensor Strings(std::vector<std::string> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::FromVector(std::move(v), {n});
}

std::vector<int64_t> Ints(const Tensor& t) {
  const Tensor c = t.HostContiguous();
  return std::vector<int64_t>(c.data<int64_t>(), c.data<int64_t>() + c.NumElements());
}

struct Golden {
  std::string bytes;
  int64_t fast, strong12, strong_decaf;
};

std::vector<Golden> ReadGolden() {
  std::ifstream f(std::string(TENSORKIT_SOURCE_DIR) + "/tests/features/data/hash_golden.tsv");
  std::vector<Golden> out;
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    std::string hex;
    Golden g;
    std::getline(in, hex, '\t');
    in >> g.fast >> g.strong12 >> g.strong_decaf;
    for (size_t i = 0; i + 1 < hex.size(); i += 2) {
      g.bytes.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    }
    out.push_back(g);
  }
  return out;
}

TEST(HashBucketFast, TensorFlowTestVectors) {
  // string_to_hash_bucket_op_test.py: Fingerprint64 of "a".."d" mod 10.
  EXPECT_EQ(Ints(HashBucketFast(Strings({"a", "b", "c", "d"}), 10)),
            (std::vector<int64_t>{9, 2, 2, 5}));
  EXPECT_EQ(Ints(HashBucketFast(Strings({"a", "b", "c"}), 1)), (std::vector<int64_t>{0, 0, 0}));
}

TEST(HashBucketStrong, TensorFlowTestVectors) {
  // Measured with TensorFlow 2.21 (tf.strings.to_hash_bucket_strong).
  EXPECT_EQ(Ints(HashBucketStrong(Strings({"a", "b", "c"}), 10, {98765, 132})),
            (std::vector<int64_t>{4, 2, 8}));
  EXPECT_EQ(Ints(HashBucketStrong(Strings({"a", "b", "c"}), 10, {1, 2})),
            (std::vector<int64_t>{6, 4, 9}));
}

TEST(StrongKeyedHash, SipHashPaperVector) {
  // SipHash-2-4, key 00..0f, message 00..0e (appendix A of the paper).
  std::string msg;
  for (int i = 0; i < 15; ++i) msg.push_back(static_cast<char>(i));
  EXPECT_EQ(StrongKeyedHash(0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL, msg),
            0xa129ca6149be45e5ULL);
}

TEST(HashBucket, GoldenFileFromTensorFlow) {
  const std::vector<Golden> golden = ReadGolden();
  ASSERT_GT(golden.size(), 600u);
  std::vector<std::string> strings;
  for (const Golden& g : golden) strings.push_back(g.bytes);
  const Tensor in = Strings(strings);
  const std::vector<int64_t> fast = Ints(HashBucketFast(in, kBig));
  const std::vector<int64_t> s12 = Ints(HashBucketStrong(in, kBig, {1, 2}));
  const std::vector<int64_t> sd = Ints(HashBucketStrong(in, kBig, {0xDECAFCAFFE, 0xDECAFCAFFE}));
  for (size_t i = 0; i < golden.size(); ++i) {
    EXPECT_EQ(fast[i], golden[i].fast) << "string " << i << " of length " << strings[i].size();
    EXPECT_EQ(s12[i], golden[i].strong12) << "string " << i;
    EXPECT_EQ(sd[i], golden[i].strong_decaf) << "string " << i;
    EXPECT_EQ(static_cast<int64_t>(Fingerprint64(strings[i]) % kBig), golden[i].fast);
  }
}

TEST(HashBucket, IntegersHashTheirDecimalString) {
  const std::vector<int64_t> v = {0, -1, 12, INT64_MIN, INT64_MAX, 1000000007};
  std::vector<std::string> dec;
  for (int64_t x : v) dec.push_back(std::to_string(x));
  const std::vector<int64_t> want = Ints(HashBucketFast(Strings(dec), 1000));
  EXPECT_EQ(Ints(HashBucketFast(Tensor::FromVector(v), 1000)), want);
  const std::vector<int32_t> v32 = {0, -1, 12, INT32_MIN};
  std::vector<std::string> dec32;
  for (int32_t x : v32) dec32.push_back(std::to_string(x));
  EXPECT_EQ(Ints(HashBucketStrong(Tensor::FromVector(v32), 77, {3, 4})),
            Ints(HashBucketStrong(Strings(dec32), 77, {3, 4})));
}

TEST(HashBucket, KeepsTheStructure) {
  const Tensor m =
      Tensor::FromVector(std::vector<std::string>{"a", "b", "c", "d", "e", "f"}, {2, 3});
  const Tensor h = HashBucketFast(m, 10);
  EXPECT_EQ(h.Dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Ints(h)[3], 5);  // "d"
  const JaggedTensor j = JaggedTensor::FromLengths(
      Strings({"a", "b", "c", "d"}), Tensor::FromVector(std::vector<int64_t>{3, 0, 1}));
  const JaggedTensor hj = HashBucketFast(j, 10);
  EXPECT_EQ(hj.offsets().raw_data(), j.offsets().raw_data());  // shared, not copied
  EXPECT_EQ(Ints(hj.values()), (std::vector<int64_t>{9, 2, 2, 5}));
  const SparseTensor s = SparseTensor::Create(
      Tensor::FromVector(std::vector<int64_t>{0, 1, 2, 0}, {2, 2}), Strings({"c", "a"}), {3, 2});
  const SparseTensor hs = HashBucketStrong(s, 10, {98765, 132});
  EXPECT_EQ(hs.indices().raw_data(), s.indices().raw_data());
  EXPECT_EQ(hs.shape(), s.shape());
  EXPECT_EQ(Ints(hs.values()), (std::vector<int64_t>{8, 4}));
}

TEST(HashBucket, SameAtEveryThreadCount) {
  std::mt19937_64 rng(7);
  std::vector<std::string> v(100000);
  for (auto& s : v) {
    s.resize(rng() % 40);
    for (char& c : s) c = static_cast<char>(rng());
  }
  const Tensor in = Strings(v);
  const auto runs = AtThreadCounts({1, 2, 4}, [&] { return Ints(HashBucketFast(in, 1 << 20)); });
  EXPECT_EQ(runs[0], runs[1]);
  EXPECT_EQ(runs[0], runs[2]);
  for (size_t i = 0; i < v.size(); i += 997) {
    EXPECT_EQ(runs[0][i], static_cast<int64_t>(Fingerprint64(v[i]) % (1 << 20)));
  }
}

// The host/device forms (hash_device.h) that CUDA bodies run: the short Fingerprint64 equals
// farmhash's at every length it covers, the decimal writer std::to_string.
TEST(HashDevice, ShortFingerprintEqualsFarmhash) {
  std::mt19937_64 rng(11);
  for (int n = 0; n <= 32; ++n) {
    for (int trial = 0; trial < 200; ++trial) {
      std::string s(static_cast<size_t>(n), '\0');
      for (char& c : s) c = static_cast<char>(trial % 2 ? rng() : '0' + rng() % 10);
      ASSERT_EQ(features_internal::ShortFingerprint64(s.data(), n), Fingerprint64(s))
          << "length " << n;
    }
  }
}

TEST(HashDevice, IntegersHashAsTheirDecimalString) {
  std::mt19937_64 rng(12);
  std::vector<int64_t> v = {0, 1, -1, 9, 10, -10, INT64_MIN, INT64_MAX, INT64_MIN + 1};
  for (int i = 0; i < 5000; ++i) v.push_back(static_cast<int64_t>(rng()) >> (rng() % 64));
  for (int64_t x : v) {
    char buf[20];
    const int n = features_internal::WriteDecimal(x, buf);
    const std::string dec = std::to_string(x);
    ASSERT_EQ(std::string(buf, n), dec);
    ASSERT_EQ(features_internal::IntegerHash(x, false, 0, 0), Fingerprint64(dec));
    ASSERT_EQ(features_internal::IntegerHash(x, true, 5, 6), StrongKeyedHash(5, 6, dec));
  }
}

// The device lookup's search: positions of present keys, -1 for absent ones, any size.
TEST(HashDevice, SortedPositionFindsEveryKey) {
  std::mt19937_64 rng(13);
  for (int64_t n : {0, 1, 2, 7, 64, 1000}) {
    std::vector<int64_t> keys;
    for (int64_t i = 0; i < n; ++i) keys.push_back(static_cast<int64_t>(rng() % 5000) * 2);
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    const int64_t m = static_cast<int64_t>(keys.size());
    for (int64_t i = 0; i < m; ++i) {
      ASSERT_EQ(features_internal::SortedPosition(keys.data(), m, keys[i]), i);
      ASSERT_EQ(features_internal::SortedPosition(keys.data(), m, keys[i] + 1), -1);
    }
    ASSERT_EQ(features_internal::SortedPosition(keys.data(), m, -1), -1);
  }
}

TEST(HashBucket, BadInputsAreErrors) {
  ExpectError([] { HashBucketFast(Strings({"a"}), 0); }, ErrorCode::kInvalidArgument,
              {"HashBucketFast", "num_buckets 0"});
  ExpectError(
      [] {
        HashBucketStrong(Strings({"a"}), -3, {1, 2});
      },
      ErrorCode::kInvalidArgument, {"HashBucketStrong", "num_buckets -3"});
  ExpectError([] { HashBucketFast(Tensor::FromVector(std::vector<float>{1.f}), 4); },
              ErrorCode::kDTypeMismatch, {"HashBucketFast", "float32"});
  ExpectError([] { HashBucketFast(Tensor(), 4); }, ErrorCode::kInvalidArgument,
              {"HashBucketFast", "undefined"});
}

}  // namespace
}  // namespace tensorkit
