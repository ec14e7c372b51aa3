// The device-neutral arithmetic of the CUDA structural kernels (sparse/keys.h), run on the host
// and checked against the CPU implementation: key words sort entries exactly as the CPU's sort,
// positions and memory indices agree with the CPU's walk over a pattern, zero tests agree with
// FromDense, and launch sizes cover every item.
#include "tensorkit/sparse/keys.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "sparse/sparse_test_util.h"
#include "tensorkit/sparse/internal.h"

namespace tensorkit {
namespace {

namespace sk = sparse_keys;
namespace si = sparse_internal;

// The stable permutation the device computes: LSD passes over the key words, word 0 first.
std::vector<int64_t> KeyWordPermutation(const std::vector<int64_t>& rows, int64_t n,
                                        const std::vector<int64_t>& shape,
                                        const std::vector<int>& order) {
  const int rank = static_cast<int>(shape.size());
  const sk::KeyWords kw = sk::MakeKeyWords(shape, order);
  std::vector<int64_t> perm(static_cast<size_t>(n));
  std::iota(perm.begin(), perm.end(), int64_t{0});
  for (int w = 0; w < kw.num_words(); ++w) {
    std::vector<uint64_t> key(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      key[i] = sk::PackWord(rows.data() + i * rank, rank, kw.word.data(), kw.shift.data(), w);
      EXPECT_LT(kw.bits[w] == 64 ? 0 : key[i] >> kw.bits[w], 1u) << "word " << w << " too wide";
    }
    std::stable_sort(perm.begin(), perm.end(),
                     [&](int64_t a, int64_t b) { return key[a] < key[b]; });
  }
  return perm;
}

TEST(SparseKeys, KeyWordsSortLikeTheCpu) {
  std::mt19937_64 rng(13);
  const std::vector<std::vector<int64_t>> shapes = {
      {7},
      {1},
      {5, 1, 3},
      {1, 1},
      {300, 2, 9, 4},
      {1 << 20, 1 << 22, 1 << 21},                                // 63 bits: two words
      {int64_t{1} << 40, int64_t{1} << 40, 3, int64_t{1} << 50},  // four words
      {int64_t{1} << 62, 2}};
  for (const auto& shape : shapes) {
    const int rank = static_cast<int>(shape.size());
    for (int trial = 0; trial < 4; ++trial) {
      const int64_t n = trial == 0 ? 1 : 200;
      std::vector<int64_t> rows;
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t d : shape) {  // few distinct values per axis, so repeats and ties occur
          const int64_t v = static_cast<int64_t>(rng() % 3);
          rows.push_back(d <= 3 ? v % d : (v == 2 ? d - 1 : v * (d / 3)));
        }
      }
      std::vector<int> order = si::Iota(rank);
      std::shuffle(order.begin(), order.end(), rng);
      const std::vector<int64_t> want = si::SortPermutation(rows.data(), n, shape, order);
      EXPECT_EQ(KeyWordPermutation(rows, n, shape, order), want)
          << "shape " << ShapeString(shape) << " order " << ShapeString(order);
    }
  }
}

TEST(SparseKeys, FieldsNeverStraddleWordsAndDecode) {
  const std::vector<int64_t> shape = {int64_t{1} << 33, 5, int64_t{1} << 31, 1, 1000};
  const std::vector<int> order = {2, 0, 4, 1, 3};
  const sk::KeyWords kw = sk::MakeKeyWords(shape, order);
  ASSERT_EQ(kw.num_words(), 2);
  EXPECT_EQ(kw.word[3], -1);  // dim 1: no bits
  const std::vector<int64_t> row = {(int64_t{1} << 33) - 1, 4, 12345, 0, 999};
  for (int a = 0; a < 5; ++a) {
    if (kw.word[a] < 0) continue;
    const int bits = sk::BitsBelow(static_cast<uint64_t>(shape[a]));
    EXPECT_LE(kw.shift[a] + bits, 64) << "axis " << a;
    const uint64_t word = sk::PackWord(row.data(), 5, kw.word.data(), kw.shift.data(), kw.word[a]);
    EXPECT_EQ(sk::FieldOf(word, kw.shift[a], (uint64_t{1} << bits) - 1), row[a]) << "axis " << a;
  }
  // order[0] is the most significant: alone in the last word (it does not fit after the others);
  // within word 0 the earlier order axes sit higher.
  EXPECT_EQ(kw.word[2], 1);
  EXPECT_EQ(kw.word[0], 0);
  EXPECT_GT(kw.shift[0], kw.shift[4]);
  EXPECT_GT(kw.shift[4], kw.shift[1]);
}

TEST(SparseKeys, PositionsAndMemoryIndicesMatchThePatternWalk) {
  const std::vector<int64_t> dims = {3, 4, 5};
  const std::vector<int64_t> strides = {-1, 15, 3};  // a permuted, reversed view
  const int64_t offset = 2;
  int64_t count = 0;
  si::ForEachPosition(
      dims, strides, offset, 0, 60, [&](int64_t pos, int64_t mem, const int64_t* index) {
        EXPECT_EQ(sk::PositionOf(index, dims.data(), 3), pos);
        int64_t row[3];
        sk::RowAt(pos, dims.data(), 3, row);
        EXPECT_TRUE(sk::SameRow(row, index, 3)) << "position " << pos;
        EXPECT_EQ(sk::MemoryIndexAt(pos, dims.data(), strides.data(), 3, offset), mem);
        ++count;
      });
  EXPECT_EQ(count, 60);
  EXPECT_EQ(sk::PositionOf(nullptr, nullptr, 0), 0);  // rank 0: the one element
  EXPECT_EQ(sk::MemoryIndexAt(0, nullptr, nullptr, 0, 7), 7);
}

template <typename T>
uint64_t Bits(T v) {
  uint64_t x = 0;
  std::memcpy(&x, &v, sizeof(T));
  return x;
}

template <typename T>
void ExpectZeroTestLikeFromDense(const std::vector<T>& values) {
  const bool is_float = (kFloatDTypes & Bit(DTypeOf<T>)) != 0;
  const int64_t n = static_cast<int64_t>(values.size());
  const SparseTensor st = SparseTensor::FromDense(Tensor::FromVector(values, {n}));
  const std::vector<int64_t> kept = st.indices().ToVector<int64_t>();
  std::vector<int64_t> mine;
  for (int64_t i = 0; i < n; ++i) {
    if (!sk::BytesAreZero(Bits(values[i]), sizeof(T), is_float)) mine.push_back(i);
  }
  EXPECT_EQ(mine, kept) << DTypeName(DTypeOf<T>);
}

TEST(SparseKeys, ZeroTestMatchesFromDense) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  ExpectZeroTestLikeFromDense<float>({0.f, -0.f, 1.f, nan, 1e-45f, -2.f});
  ExpectZeroTestLikeFromDense<double>({0.0, -0.0, 3.0, std::nan(""), -1e-300});
  ExpectZeroTestLikeFromDense<Half>({Half(0.f), Half(-0.f), Half(1.f), Half(nan), Half(-3.f)});
  ExpectZeroTestLikeFromDense<BFloat16>({BFloat16(0.f), BFloat16(-0.f), BFloat16(2.f)});
  ExpectZeroTestLikeFromDense<int8_t>({0, -128, 1, 0, -1});
  ExpectZeroTestLikeFromDense<int16_t>({0, INT16_MIN, 1});
  ExpectZeroTestLikeFromDense<int32_t>({0, INT32_MIN, 7});
  ExpectZeroTestLikeFromDense<int64_t>({0, INT64_MIN, -1});
  ExpectZeroTestLikeFromDense<bool>({false, true, false, true});
}

// The device scatter's rule (stable sort by position, the last entry of each run writes) gives
// the CPU ToDense's result, repeats included.
TEST(SparseKeys, LastOfEachPositionRunIsTheCpuWinner) {
  std::mt19937_64 rng(5);
  const std::vector<int64_t> shape = {4, 3, 2};
  const int64_t n = 100;  // 24 elements: many repeats
  const std::vector<int64_t> rows = testing::RandomRows(rng, n, shape);
  std::vector<int32_t> vals(n);
  std::iota(vals.begin(), vals.end(), 1);
  const SparseTensor st = testing::MakeSparse<int32_t>(rows, vals, shape);
  std::vector<int64_t> pos(n), perm(n);
  for (int64_t i = 0; i < n; ++i) pos[i] = sk::PositionOf(rows.data() + i * 3, shape.data(), 3);
  std::iota(perm.begin(), perm.end(), int64_t{0});
  std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) { return pos[a] < pos[b]; });
  std::vector<int32_t> dense(24, 0);
  for (int64_t i = 0; i < n; ++i) {
    if (i + 1 < n && pos[perm[i + 1]] == pos[perm[i]]) continue;
    dense[pos[perm[i]]] = vals[perm[i]];
  }
  EXPECT_EQ(dense, st.ToDense().ToVector<int32_t>());
}

// Every entry of random compressed pointers (many empty slices) finds the slice the CPU's
// expansion gives it.
TEST(SparseKeys, SliceOfMatchesThePointerWalk) {
  std::mt19937_64 rng(17);
  for (int trial = 0; trial < 200; ++trial) {
    const int64_t num = 1 + static_cast<int64_t>(rng() % 40);
    std::vector<int64_t> ptr{0};
    for (int64_t r = 0; r < num; ++r) ptr.push_back(ptr.back() + (rng() % 3 == 0 ? rng() % 5 : 0));
    for (int64_t r = 0; r < num; ++r) {
      for (int64_t p = ptr[r]; p < ptr[r + 1]; ++p) {
        ASSERT_EQ(sk::SliceOf(p, ptr.data(), num), r) << "entry " << p << " of trial " << trial;
      }
    }
  }
}

// The heads MergeRuns keeps: every run for Coalesce, the runs of two or more for
// SparseMultiply, against a walk over the runs.
TEST(SparseKeys, RunStartsMatchTheRunWalk) {
  std::mt19937_64 rng(19);
  for (int trial = 0; trial < 100; ++trial) {
    const int rank = 1 + static_cast<int>(trial % 3);
    std::vector<int64_t> rows;
    std::vector<int64_t> lengths;
    for (int64_t run = 0, n = 1 + static_cast<int64_t>(rng() % 12); run < n; ++run) {
      const int64_t len = 1 + static_cast<int64_t>(rng() % 3);
      lengths.push_back(len);
      for (int64_t j = 0; j < len; ++j) {
        for (int a = 0; a < rank; ++a) rows.push_back(a == 0 ? run : 7);
      }
    }
    const int64_t n = static_cast<int64_t>(rows.size()) / rank;
    for (int64_t min_run : {1, 2, 3}) {
      std::vector<int64_t> want, got;
      int64_t at = 0;
      for (int64_t len : lengths) {
        if (len >= min_run) want.push_back(at);
        at += len;
      }
      for (int64_t i = 0; i < n; ++i) {
        if (sk::StartsRun(rows.data(), i, n, rank, min_run)) got.push_back(i);
      }
      EXPECT_EQ(got, want) << "trial " << trial << ", min_run " << min_run;
    }
  }
}

TEST(SparseKeys, LaunchSizesCoverEveryItem) {
  EXPECT_EQ(sk::BlocksFor(0, 256, 1 << 16), 1);
  EXPECT_EQ(sk::BlocksFor(1, 256, 1 << 16), 1);
  EXPECT_EQ(sk::BlocksFor(256, 256, 1 << 16), 1);
  EXPECT_EQ(sk::BlocksFor(257, 256, 1 << 16), 2);
  EXPECT_EQ(sk::BlocksFor(int64_t{1} << 40, 256, 1 << 16), 1 << 16);  // grid-stride covers it
  EXPECT_EQ(sk::BitsBelow(0), 0);
  EXPECT_EQ(sk::BitsBelow(1), 0);
  EXPECT_EQ(sk::BitsBelow(2), 1);
  EXPECT_EQ(sk::BitsBelow(1025), 11);
  EXPECT_EQ(sk::BitsBelow(~uint64_t{0}), 64);
}

}  // namespace
}  // namespace tensorkit
