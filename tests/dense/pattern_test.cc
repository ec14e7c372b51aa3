// Tests of dense/pattern.h: validity, canonical form, compactness, broadcasting and overlap,
// checked against brute-force enumeration of memory-indexes (tests/reference).
#include "tensorkit/dense/pattern.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <unordered_set>

#include "reference/reference.h"
#include "tensorkit/common/error.h"
#include "test_util.h"

namespace tensorkit {
namespace {

using ::testing::HasSubstr;

using ::tensorkit::testing::ExpectError;

// A pattern straight from public dims/strides without any check or fix-up.
Pattern Raw(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides,
            int64_t offset = 0) {
  Pattern p;
  p.num_axes = static_cast<int>(dims.size());
  p.offset = offset;
  for (int a = 0; a < p.num_axes; ++a) {
    p.dims[p.num_axes - 1 - a] = dims[a];
    p.strides[p.num_axes - 1 - a] = strides[a];
  }
  return p;
}

std::vector<int64_t> Sorted(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

bool AllDistinct(const std::vector<int64_t>& v) {
  return std::set<int64_t>(v.begin(), v.end()).size() == v.size();
}

// A random valid pattern: a random strided layout, then a few random view steps.
Pattern RandomValidPattern(ref::Rng& rng, int64_t max_dim = 4) {
  std::vector<int64_t> dims = ref::RandomDims(rng, 0, 4, max_dim);
  Tensor t = ref::RandomStridedTensor<uint8_t>(rng, dims);
  return ref::RandomView(rng, t, {.num_ops = 2}).pattern();
}

// A random pattern that may or may not be valid (offset chosen so that indexes stay >= 0).
Pattern RandomAnyPattern(ref::Rng& rng) {
  std::vector<int64_t> dims = ref::RandomDims(rng, 0, 3, 4, /*zero_ok=*/false);
  std::vector<int64_t> strides(dims.size());
  int64_t offset = 0;
  for (size_t a = 0; a < dims.size(); ++a) {
    strides[a] = dims[a] == 1 ? 0 : std::uniform_int_distribution<int64_t>(-6, 6)(rng);
    if (strides[a] < 0) offset -= strides[a] * (dims[a] - 1);
  }
  return Raw(dims, strides, offset);
}

TEST(PatternTest, AccessorsUsePublicNumbering) {
  Pattern p = MakePattern({2, 3, 4}, {12, 4, 1}, 5);
  EXPECT_EQ(p.num_axes, 3);
  EXPECT_EQ(p.Dims(), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(p.Strides(), (std::vector<int64_t>{12, 4, 1}));
  EXPECT_EQ(p.Dim(0), 2);
  EXPECT_EQ(p.Stride(2), 1);
  EXPECT_EQ(p.dims[0], 4);  // private numbering is reversed
  EXPECT_EQ(p.NumElements(), 24);
  EXPECT_EQ(p.offset, 5);
}

TEST(PatternTest, NumElementsWithZeroDimDoesNotOverflow) {
  // Such a pattern can arise from SplitAxis of an empty axis; its count is 0, not overflow.
  Pattern p = Raw({0, int64_t{1} << 40, int64_t{1} << 40}, {1, 1, 1});
  EXPECT_EQ(p.NumElements(), 0);
  EXPECT_TRUE(IsValid(p));
  EXPECT_EQ(DefaultPattern({}).NumElements(), 1);
}

TEST(PatternTest, DefaultPatternIsCOrder) {
  ref::Rng rng(1);
  for (int iter = 0; iter < 200; ++iter) {
    std::vector<int64_t> dims = ref::RandomDims(rng, 0, 5, 5);
    Pattern p = DefaultPattern(dims);
    ASSERT_TRUE(IsValid(p)) << p;
    EXPECT_TRUE(HasDefaultStrides(p)) << p;
    std::vector<int64_t> m = ref::MemoryIndexes(p);
    for (size_t i = 0; i < m.size(); ++i) EXPECT_EQ(m[i], static_cast<int64_t>(i)) << p;
    for (int a = 0; a < p.num_axes; ++a) {
      if (p.Dim(a) == 1) {
        EXPECT_EQ(p.Stride(a), 0) << p;
      }
    }
  }
}

TEST(PatternTest, DefaultPatternErrors) {
  ExpectError(
      [] {
        DefaultPattern({2, -1});
      },
      ErrorCode::kInvalidArgument, {"DefaultPattern", "negative dim -1", "[2 -1]"});
  ExpectError(
      [] {
        DefaultPattern({1, 1, 1, 1, 1, 1, 1, 1, 1}, "Tensor::Zeros");
      },
      ErrorCode::kInvalidArgument, {"Tensor::Zeros", "9 axes", "at most 8"});
  ExpectError(
      [] {
        DefaultPattern({int64_t{1} << 40, int64_t{1} << 40});
      },
      ErrorCode::kOutOfRange, {"DefaultPattern", "int64"});
}

TEST(PatternTest, MakePatternChecksValidity) {
  EXPECT_EQ(MakePattern({3, 1}, {1, 7}).Stride(1), 0);  // dim 1 gets stride 0
  ExpectError(
      [] {
        MakePattern({3, 2}, {1, 1}, 0, "Op");
      },
      ErrorCode::kInvalidArgument, {"Op", "[3 2]", "axis-dominance"});
  ExpectError(
      [] {
        MakePattern({3}, {1, 1});
      },
      ErrorCode::kInvalidArgument, {"MakePattern", "differ in length"});
  ExpectError([] { MakePattern({3}, {-1}); }, ErrorCode::kInvalidArgument,
              {"MakePattern", "negative"});
}

TEST(PatternTest, IsValidExamples) {
  EXPECT_TRUE(IsValid(Raw({}, {})));
  EXPECT_TRUE(IsValid(Raw({2, 3}, {3, 1})));
  EXPECT_TRUE(IsValid(Raw({2, 3}, {1, 2})));      // transposed
  EXPECT_TRUE(IsValid(Raw({2, 3}, {-3, 1}, 3)));  // flipped rows
  EXPECT_TRUE(IsValid(Raw({2, 3}, {10, 2})));     // gaps are fine
  EXPECT_TRUE(IsValid(Raw({0, 3}, {0, 0})));      // no elements: any strides
  EXPECT_TRUE(IsValid(Raw({1, 3}, {0, 1})));
  EXPECT_TRUE(IsValid(Raw({2, 2}, {3, 2})));         // every other column of a [2 3] matrix
  EXPECT_TRUE(IsValid(Raw({2, 2}, {3, -2}, 2)));     // the same, columns reversed
  EXPECT_TRUE(IsValid(Raw({2, 2, 2}, {7, 3, 1})));   // spans 1 + 3 < 7
  EXPECT_FALSE(IsValid(Raw({2, 2, 2}, {6, 3, 4})));  // spans 3 + 4 >= 6 (and 3 + 6 = 4 + 5)

  EXPECT_THAT(WhyInvalid(Raw({1, 3}, {5, 1})), HasSubstr("dim 1 but stride 5"));
  EXPECT_THAT(WhyInvalid(Raw({2, 3}, {0, 1})), HasSubstr("stride 0"));
  EXPECT_THAT(WhyInvalid(Raw({2, 3}, {3, 1}, -1)), HasSubstr("negative offset"));
  EXPECT_THAT(WhyInvalid(Raw({2, 3}, {-3, 1}, 2)), HasSubstr("negative"));
  EXPECT_THAT(WhyInvalid(Raw({2, 3}, {2, 1})), HasSubstr("axis-dominance"));
  EXPECT_THAT(WhyInvalid(Raw({3, 2}, {1, 2})), HasSubstr("axis-dominance"));
  EXPECT_THAT(WhyInvalid(Raw({2, -1}, {1, 1})), HasSubstr("negative dim"));
  Pattern too_many = Raw({}, {});
  too_many.num_axes = 9;
  EXPECT_FALSE(IsValid(too_many));
  Pattern stray = Raw({2}, {1});
  stray.dims[3] = 2;  // beyond num_axes
  EXPECT_FALSE(IsValid(stray));
  Pattern huge = Raw({3, 2}, {int64_t{1} << 62, 1});
  EXPECT_THAT(WhyInvalid(huge), HasSubstr("overflow"));
}

// Validity is a sufficient condition for uniqueness: every valid pattern reaches distinct,
// non-negative memory-indexes.
TEST(PatternTest, ValidImpliesUniqueAndNonNegative) {
  ref::Rng rng(2);
  int valid = 0;
  for (int iter = 0; iter < 2000; ++iter) {
    Pattern p = RandomAnyPattern(rng);
    if (!IsValid(p)) continue;
    ++valid;
    std::vector<int64_t> m = ref::MemoryIndexes(p);
    EXPECT_TRUE(AllDistinct(m)) << p;
    for (int64_t x : m) EXPECT_GE(x, 0) << p;
  }
  EXPECT_GT(valid, 100);
}

TEST(PatternTest, MinMaxMemoryIndexMatchBruteForce) {
  ref::Rng rng(3);
  for (int iter = 0; iter < 300; ++iter) {
    Pattern p = RandomValidPattern(rng);
    std::vector<int64_t> m = ref::MemoryIndexes(p);
    if (m.empty()) {
      EXPECT_EQ(MinMemoryIndex(p), p.offset);
      EXPECT_EQ(MaxMemoryIndex(p), p.offset);
      continue;
    }
    EXPECT_EQ(MinMemoryIndex(p), *std::min_element(m.begin(), m.end())) << p;
    EXPECT_EQ(MaxMemoryIndex(p), *std::max_element(m.begin(), m.end())) << p;
  }
}

TEST(PatternTest, CanonicalizeKeepsTheMemoryIndexSet) {
  ref::Rng rng(4);
  for (int iter = 0; iter < 300; ++iter) {
    Pattern p = RandomValidPattern(rng);
    Pattern c = Canonicalize(p);
    ASSERT_TRUE(IsValid(c)) << p << " -> " << c;
    EXPECT_EQ(Sorted(ref::MemoryIndexes(c)), Sorted(ref::MemoryIndexes(p))) << p << " -> " << c;
    EXPECT_EQ(Canonicalize(c), c) << "not idempotent: " << c;
    if (p.NumElements() == 0) continue;
    EXPECT_EQ(c.offset, MinMemoryIndex(p));
    // Canonical: no trivial axes, positive strides increasing with the raxis, nothing mergeable.
    for (int r = 0; r < c.num_axes; ++r) {
      EXPECT_GT(c.dims[r], 1) << c;
      EXPECT_GT(c.strides[r], 0) << c;
      if (r > 0) {
        EXPECT_GT(c.strides[r], c.strides[r - 1]) << c;
        EXPECT_NE(c.strides[r], c.strides[r - 1] * c.dims[r - 1]) << "mergeable: " << c;
      }
    }
  }
}

// Two valid patterns with the same memory-index set have the same canonical form: permuting,
// flipping and splitting axes does not change it.
TEST(PatternTest, CanonicalizeIsAFunctionOfTheSet) {
  Pattern a = MakePattern({4, 6}, {6, 1});
  Pattern b = MakePattern({6, 4}, {1, 6});              // transposed
  Pattern c = MakePattern({2, 2, 6}, {-12, 6, 1}, 12);  // split and flipped outer axis
  Pattern d = MakePattern({24}, {-1}, 23);              // one reversed axis
  EXPECT_EQ(Canonicalize(a), Canonicalize(b));
  EXPECT_EQ(Canonicalize(a), Canonicalize(c));
  EXPECT_EQ(Canonicalize(a), Canonicalize(d));
  EXPECT_EQ(Canonicalize(a), MakePattern({24}, {1}));
  EXPECT_EQ(Canonicalize(MakePattern({0, 5}, {5, 1}, 9)),
            Canonicalize(MakePattern({3, 0}, {1, 3})));
}

TEST(PatternTest, IsCompactMatchesBruteForce) {
  ref::Rng rng(5);
  int compact = 0;
  for (int iter = 0; iter < 400; ++iter) {
    Pattern p = RandomValidPattern(rng, 3);
    std::vector<int64_t> m = Sorted(ref::MemoryIndexes(p));
    const bool expected = m.empty() || m.back() - m.front() + 1 == static_cast<int64_t>(m.size());
    EXPECT_EQ(IsCompact(p), expected) << p;
    compact += expected;
  }
  EXPECT_GT(compact, 20);
}

TEST(PatternTest, HasDefaultStridesMatchesBruteForce) {
  ref::Rng rng(6);
  for (int iter = 0; iter < 400; ++iter) {
    Pattern p = RandomValidPattern(rng, 3);
    std::vector<int64_t> m = ref::MemoryIndexes(p);
    bool expected = true;
    for (size_t i = 0; i < m.size(); ++i) expected = expected && m[i] == p.offset + (int64_t)i;
    EXPECT_EQ(HasDefaultStrides(p), expected) << p;
  }
  EXPECT_FALSE(HasDefaultStrides(MakePattern({2, 3}, {1, 2})));
  EXPECT_TRUE(HasDefaultStrides(MakePattern({2, 1, 3}, {3, 0, 1}, 4)));
  EXPECT_TRUE(HasDefaultStrides(Raw({0, 2, 2}, {0, 2, 8})));  // no elements: any strides
  EXPECT_TRUE(HasDefaultStrides(Raw({2, 0}, {5, 3})));
}

TEST(PatternTest, BroadcastableMatchesReference) {
  ref::Rng rng(7);
  for (int iter = 0; iter < 500; ++iter) {
    std::vector<std::vector<int64_t>> dims;
    const int n = iter % 2 ? 2 : 3;
    for (int k = 0; k < n; ++k) dims.push_back(ref::RandomDims(rng, 0, 3, 3));
    bool expected = true;
    std::vector<int64_t> want;
    try {
      want = ref::BroadcastDims(dims);
    } catch (const std::logic_error&) {
      expected = false;
    }
    const Pattern a = DefaultPattern(dims[0]), b = DefaultPattern(dims[1]);
    const bool got = n == 2 ? Broadcastable(a, b) : Broadcastable(a, b, DefaultPattern(dims[2]));
    EXPECT_EQ(got, expected) << ShapeString(dims[0]) << ShapeString(dims[1]);
    if (expected) {
      EXPECT_EQ(BroadcastDims(dims), want);
    }
  }
  EXPECT_EQ(BroadcastDims({{3, 1}, {4}, {2, 1, 1}}), (std::vector<int64_t>{2, 3, 4}));
}

// Overlap is exact: compare with the intersection of enumerated memory-index sets, for views
// of one small storage (so overlaps are common).
TEST(PatternTest, OverlapIsExact) {
  ref::Rng rng(8);
  int overlapping = 0, disjoint = 0;
  for (int iter = 0; iter < 1000; ++iter) {
    Tensor base = ref::RandomStridedTensor<uint8_t>(rng, ref::RandomDims(rng, 1, 3, 5, false));
    const Pattern a = ref::RandomView(rng, base, {.num_ops = 3}).pattern();
    const Pattern b = ref::RandomView(rng, base, {.num_ops = 3}).pattern();
    std::vector<int64_t> ma = ref::MemoryIndexes(a);
    std::unordered_set<int64_t> sb;
    for (int64_t m : ref::MemoryIndexes(b)) sb.insert(m);
    bool expected = false;
    for (int64_t m : ma) expected = expected || sb.count(m) > 0;
    EXPECT_EQ(Overlap(a, b), expected) << a << " vs " << b;
    EXPECT_EQ(Overlap(b, a), expected) << b << " vs " << a;
    (expected ? overlapping : disjoint)++;
  }
  EXPECT_GT(overlapping, 50);
  EXPECT_GT(disjoint, 50);
}

// The same for patterns with random strides that no view of one tensor produces (strides that
// do not divide each other, shared gcds, offsets far apart), so every rule of the exact test
// meets cases it must decide both ways.
TEST(PatternTest, OverlapIsExactForRandomStrides) {
  ref::Rng rng(81);
  auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  int overlapping = 0, disjoint = 0;
  for (int tested = 0; tested < 4000;) {
    Pattern p[2];
    bool valid = true;
    for (Pattern& x : p) {
      const int n = static_cast<int>(uniform(1, 4));
      std::vector<int64_t> dims(n), strides(n);
      const int64_t unit = uniform(1, 3);  // a common factor now and then
      for (int a = 0; a < n; ++a) {
        dims[a] = uniform(1, 9);
        strides[a] = unit * uniform(1, 90) * (uniform(0, 3) == 0 ? -1 : 1);
      }
      x = Raw(dims, strides, uniform(0, 2000));
      for (int a = 0; a < n; ++a) {
        if (dims[a] == 1) x.strides[n - 1 - a] = 0;
      }
      valid = valid && IsValid(x);
    }
    if (!valid) continue;
    ++tested;
    std::unordered_set<int64_t> in_b;
    for (int64_t m : ref::MemoryIndexes(p[1])) in_b.insert(m);
    bool expected = false;
    for (int64_t m : ref::MemoryIndexes(p[0])) expected = expected || in_b.count(m) > 0;
    EXPECT_EQ(Overlap(p[0], p[1]), expected) << p[0] << " vs " << p[1];
    EXPECT_EQ(Overlap(p[1], p[0]), expected) << p[1] << " vs " << p[0];
    (expected ? overlapping : disjoint)++;
  }
  EXPECT_GT(overlapping, 100);
  EXPECT_GT(disjoint, 100);
}

// Calls f(memory_index) for every element of p until f returns false (an odometer: the reference's
// index tuples are too slow for millions of elements).
template <typename F>
void WalkMemoryIndexes(const Pattern& p, F&& f) {
  if (p.NumElements() == 0) return;
  std::array<int64_t, kMaxAxes> idx{};
  int64_t m = p.offset;
  while (f(m)) {
    int r = 0;
    for (; r < p.num_axes; ++r) {
      if (++idx[r] < p.dims[r]) {
        m += p.strides[r];
        break;
      }
      m -= p.strides[r] * (p.dims[r] - 1);
      idx[r] = 0;
    }
    if (r == p.num_axes) return;
  }
}

// Large views of one [4100 2050] matrix (8.4M elements, far beyond any enumeration budget),
// checked against a bitmap of the storage.
TEST(PatternTest, OverlapIsExactForLargeViews) {
  const int64_t rows = 4100, cols = 2050;
  const std::vector<std::pair<std::string, Pattern>> views = {
      {"left half", MakePattern({rows, 1025}, {cols, 1}, 0)},
      {"right half", MakePattern({rows, 1025}, {cols, 1}, 1025)},
      {"even columns", MakePattern({rows, 1025}, {cols, 2}, 0)},
      {"odd columns reversed", MakePattern({rows, 1025}, {cols, -2}, 2049)},
      {"odd rows transposed", MakePattern({cols, rows / 2}, {1, 2 * cols}, cols)},
      {"every third element", MakePattern({rows * cols / 3}, {3}, 1)},
      {"rows of 2053", MakePattern({4000, 700}, {2053, 1}, 7)},
      {"last column", MakePattern({rows}, {cols}, cols - 1)},
  };
  std::vector<bool> in_a(rows * cols);
  for (size_t i = 0; i < views.size(); ++i) {
    const auto& [name_a, a] = views[i];
    std::fill(in_a.begin(), in_a.end(), false);
    WalkMemoryIndexes(a, [&](int64_t m) { return in_a[m] = true; });
    for (size_t j = i; j < views.size(); ++j) {
      const auto& [name_b, b] = views[j];
      bool expected = false;
      WalkMemoryIndexes(b, [&](int64_t m) { return !(expected = in_a[m]); });
      EXPECT_EQ(Overlap(a, b), expected) << name_a << " vs " << name_b;
      EXPECT_EQ(Overlap(b, a), expected) << name_b << " vs " << name_a;
    }
  }
  EXPECT_FALSE(Overlap(views[0].second, views[1].second));
}

TEST(PatternTest, OverlapExamples) {
  Pattern even = MakePattern({5}, {2}, 0), odd = MakePattern({5}, {2}, 1);
  EXPECT_FALSE(Overlap(even, odd));
  EXPECT_TRUE(Overlap(even, even));
  Pattern rows = MakePattern({2, 3}, {6, 1}), cols = MakePattern({2, 3}, {6, 1}, 3);
  EXPECT_FALSE(Overlap(rows, cols));  // interleaved ranges that never meet
  EXPECT_FALSE(Overlap(MakePattern({0}, {1}), MakePattern({4}, {1})));
}

TEST(PatternTest, EqualityAndHash) {
  ref::Rng rng(9);
  for (int iter = 0; iter < 200; ++iter) {
    Pattern p = RandomValidPattern(rng);
    Pattern q = p;
    EXPECT_EQ(p, q);
    EXPECT_EQ(Hash(p), Hash(q));
    EXPECT_EQ(PatternHash()(p), Hash(q));
    q.offset += 1;
    EXPECT_FALSE(p == q);
    q = p;
    if (q.num_axes > 0) {
      q.dims[0] += 1;
      EXPECT_FALSE(p == q);
    }
  }
  // Hash spreads: distinct default patterns rarely collide.
  std::unordered_set<size_t> hashes;
  int count = 0;
  for (int64_t a = 0; a < 6; ++a) {
    for (int64_t b = 0; b < 6; ++b, ++count) hashes.insert(Hash(DefaultPattern({a, b})));
  }
  EXPECT_GT(static_cast<int>(hashes.size()), count - 3);
}

TEST(PatternTest, ToStringAndStream) {
  EXPECT_EQ(MakePattern({2, 3}, {3, 1}).ToString(), "offset=0 dims=[2 3] strides=[3 1]");
  EXPECT_EQ(MakePattern({2, 1}, {-1, 0}, 4).ToString(), "offset=4 dims=[2 1] strides=[-1 0]");
  EXPECT_EQ(Pattern().ToString(), "offset=0 dims=[] strides=[]");
  std::ostringstream os;
  os << MakePattern({4}, {2}, 1);
  EXPECT_EQ(os.str(), "offset=1 dims=[4] strides=[2]");
}

TEST(PatternTest, NormalizeAxis) {
  EXPECT_EQ(NormalizeAxis(0, 3, "Op"), 0);
  EXPECT_EQ(NormalizeAxis(-1, 3, "Op"), 2);
  EXPECT_EQ(NormalizeAxis(-3, 3, "Op"), 0);
  ExpectError([] { NormalizeAxis(3, 3, "Op"); }, ErrorCode::kOutOfRange,
              {"Op: axis 3", "3 axes", "-3 to 2"});
  ExpectError([] { NormalizeAxis(-4, 3, "Op"); }, ErrorCode::kOutOfRange, {"Op: axis -4"});
  ExpectError([] { NormalizeAxis(0, 0, "Op"); }, ErrorCode::kOutOfRange, {"0 axes"});
}

}  // namespace
}  // namespace tensorkit
