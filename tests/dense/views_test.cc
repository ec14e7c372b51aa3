// Tests of dense/views.h. Every view is checked element by element against the naive index
// arithmetic of tests/reference over randomised source layouts (slices with steps, negative
// strides, transposes, dim-0 and dim-1 axes): the view's memory-index at each index tuple must
// equal the source's memory-index at the corresponding source tuple.
#include "tensorkit/dense/views.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <numeric>
#include <unordered_set>

#include "reference/reference.h"
#include "tensorkit/common/error.h"
#include "test_util.h"

namespace tensorkit {
namespace {

using ::testing::HasSubstr;
using IndexMap = std::function<ref::Index(const ref::Index&)>;

using ::tensorkit::testing::ExpectError;

// Checks that `view` has `dims`, is valid, shares src's storage, and that each of its index
// tuples i reaches the memory-index (and so the value) of src at map(i).
void ExpectViewOf(const Tensor& src, const Tensor& view, const std::vector<int64_t>& dims,
                  const IndexMap& map) {
  ASSERT_EQ(view.Dims(), dims) << "source " << src.pattern();
  EXPECT_TRUE(IsValid(view.pattern())) << view.pattern() << ": " << WhyInvalid(view.pattern());
  EXPECT_TRUE(SharesStorage(src, view));
  EXPECT_EQ(view.dtype(), src.dtype());
  ref::ForEachIndex(dims, [&](const ref::Index& i) {
    const ref::Index j = map(i);
    ASSERT_EQ(ref::MemoryIndex(view.pattern(), i), ref::MemoryIndex(src.pattern(), j))
        << "view " << view.pattern() << " of " << src.pattern() << " at " << ShapeString(i);
    EXPECT_EQ(ref::Get<int32_t>(view, i), ref::Get<int32_t>(src, j));
  });
}

int64_t Uniform(ref::Rng& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

// An axis argument for a tensor with n > 0 axes, in either the positive or the negative form.
int RandomAxisArg(ref::Rng& rng, int n, int* normalized) {
  *normalized = static_cast<int>(Uniform(rng, 0, n - 1));
  return Uniform(rng, 0, 1) ? *normalized : *normalized - n;
}

// A random int32 source with a random strided layout and a few random (reference) view steps.
Tensor RandomSource(ref::Rng& rng, int min_rank = 0, int max_rank = 4) {
  Tensor t = ref::RandomStridedTensor<int32_t>(rng, ref::RandomDims(rng, min_rank, max_rank, 5));
  if (Uniform(rng, 0, 1)) {
    t = ref::RandomView(rng, t, {.num_ops = 2, .allow_rank_change = false});
  }
  return t;
}

// Prime factors of d in increasing order (empty for 0 and 1).
std::vector<int64_t> PrimeFactors(int64_t d) {
  std::vector<int64_t> f;
  for (int64_t p = 2; d > 1; ++p) {
    while (d % p == 0) {
      f.push_back(p);
      d /= p;
    }
  }
  return f;
}

// Random dims with the same element count as `dims`: prime factors kept in order (so merges and
// splits of the source axes, likely views) or shuffled (often not views), grouped at random,
// with dim-1 axes sprinkled in. At most kMaxAxes axes.
std::vector<int64_t> RandomSameCount(ref::Rng& rng, const std::vector<int64_t>& dims) {
  std::vector<int64_t> out;
  if (ref::NumElements(dims) == 0) {
    out = dims;
    std::shuffle(out.begin(), out.end(), rng);
    if (Uniform(rng, 0, 1)) out.push_back(Uniform(rng, 2, 3));
  } else {
    std::vector<int64_t> primes;
    for (int64_t d : dims) {
      for (int64_t p : PrimeFactors(d)) primes.push_back(p);
    }
    if (Uniform(rng, 0, 2) == 0) std::shuffle(primes.begin(), primes.end(), rng);
    for (int64_t p : primes) {
      if (!out.empty() && Uniform(rng, 0, 1)) {
        out.back() *= p;
      } else {
        out.push_back(p);
      }
    }
  }
  while (out.size() < static_cast<size_t>(kMaxAxes) && Uniform(rng, 0, 2) == 0) {
    out.insert(out.begin() + Uniform(rng, 0, static_cast<int64_t>(out.size())), 1);
  }
  while (out.size() > static_cast<size_t>(kMaxAxes)) {  // merge the last two
    out[out.size() - 2] *= out.back();
    out.pop_back();
  }
  return out;
}

// The brute-force answer to "does View(src, dims) exist": the strides of a view are forced by
// the memory-indexes of the unit index tuples; the view exists iff they reproduce every
// memory-index of src in C order.
bool BruteForceViewExists(const Tensor& src, const std::vector<int64_t>& dims) {
  const std::vector<int64_t> seq = ref::MemoryIndexes(src.pattern());
  if (seq.empty()) return true;
  std::vector<int64_t> strides(dims.size(), 0);
  for (size_t a = 0; a < dims.size(); ++a) {
    if (dims[a] < 2) continue;
    ref::Index unit(dims.size(), 0);
    unit[a] = 1;
    strides[a] = seq[ref::Ravel(dims, unit)] - seq[0];
  }
  for (size_t k = 0; k < seq.size(); ++k) {
    const ref::Index i = ref::Unravel(dims, static_cast<int64_t>(k));
    int64_t m = seq[0];
    for (size_t a = 0; a < dims.size(); ++a) m += i[a] * strides[a];
    if (m != seq[k]) return false;
  }
  return true;
}

// The source index tuple of View result index i: same C-order position.
IndexMap SameCOrder(const std::vector<int64_t>& src_dims, const std::vector<int64_t>& dims) {
  return [=](const ref::Index& i) { return ref::Unravel(src_dims, ref::Ravel(dims, i)); };
}

// A random valid (start, end) pair for Slice with `step` on an axis of `dim`.
std::pair<int64_t, int64_t> RandomRange(ref::Rng& rng, int64_t dim, int64_t step) {
  if (step > 0) {
    const int64_t start = Uniform(rng, 0, dim);
    return {start, Uniform(rng, start, dim)};
  }
  const int64_t start = Uniform(rng, -1, dim - 1);
  return {start, Uniform(rng, -1, start)};
}

// ---------------------------------------------------------------------------------------------
// Each view against the reference.
// ---------------------------------------------------------------------------------------------

TEST(ViewsTest, SliceMatchesReference) {
  ref::Rng rng(21);
  for (int iter = 0; iter < 600; ++iter) {
    Tensor t = RandomSource(rng, 1);
    int axis;
    const int arg = RandomAxisArg(rng, t.NumAxes(), &axis);
    int64_t step = Uniform(rng, 1, 3) * (Uniform(rng, 0, 1) ? 1 : -1);
    const auto [start, end] = RandomRange(rng, t.Dim(axis), step);
    Tensor v = Slice(t, arg, start, end, step);
    std::vector<int64_t> dims = t.Dims();
    dims[axis] = (std::abs(end - start) + std::abs(step) - 1) / std::abs(step);
    ExpectViewOf(t, v, dims, [&](ref::Index i) {
      i[axis] = start + i[axis] * step;
      return i;
    });
  }
}

TEST(ViewsTest, SliceExamples) {
  Tensor t = Tensor::FromVector(std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  EXPECT_EQ(Slice(t, 0, 4, -1, -1).ToVector<int32_t>(), (std::vector<int32_t>{4, 3, 2, 1, 0}));
  EXPECT_EQ(Slice(t, 0, 9, 2, -3).ToVector<int32_t>(), (std::vector<int32_t>{9, 6, 3}));
  EXPECT_EQ(Slice(t, -1, 1, 10, 4).ToVector<int32_t>(), (std::vector<int32_t>{1, 5, 9}));
  EXPECT_EQ(Slice(t, 0, 3, 3).NumElements(), 0);    // start == end
  EXPECT_EQ(Slice(t, 0, 10, 10).NumElements(), 0);  // empty at the end
  EXPECT_EQ(Slice(t, 0, -1, -1, -1).NumElements(), 0);
  Tensor one = Slice(t, 0, 7, 8);
  EXPECT_EQ(one.Dims(), (std::vector<int64_t>{1}));
  EXPECT_EQ(one.Stride(0), 0);  // dim 1 always has stride 0
  EXPECT_EQ(one.ToVector<int32_t>(), (std::vector<int32_t>{7}));
  // A huge step is fine: one element.
  EXPECT_EQ(Slice(t, 0, 2, 10, INT64_MAX).ToVector<int32_t>(), (std::vector<int32_t>{2}));
  EXPECT_EQ(Slice(t, 0, 2, -1, INT64_MIN).ToVector<int32_t>(), (std::vector<int32_t>{2}));
  // Writing through a view writes the source.
  ref::Set<int32_t>(Slice(t, 0, 5, 1, -2), {1}, 42);
  EXPECT_EQ(ref::Get<int32_t>(t, {3}), 42);
}

TEST(ViewsTest, SelectMatchesReference) {
  ref::Rng rng(22);
  for (int iter = 0; iter < 400; ++iter) {
    Tensor t = RandomSource(rng, 1);
    int axis;
    const int arg = RandomAxisArg(rng, t.NumAxes(), &axis);
    if (t.Dim(axis) == 0) continue;
    const int64_t index = Uniform(rng, 0, t.Dim(axis) - 1);
    std::vector<int64_t> dims = t.Dims();
    dims.erase(dims.begin() + axis);
    ExpectViewOf(t, Select(t, arg, index), dims, [&](ref::Index i) {
      i.insert(i.begin() + axis, index);
      return i;
    });
  }
}

TEST(ViewsTest, TransposeAndPermuteMatchReference) {
  ref::Rng rng(23);
  for (int iter = 0; iter < 400; ++iter) {
    Tensor t = RandomSource(rng, 1);
    const int n = t.NumAxes();
    int a, b;
    const int arg_a = RandomAxisArg(rng, n, &a), arg_b = RandomAxisArg(rng, n, &b);
    std::vector<int64_t> dims = t.Dims();
    std::swap(dims[a], dims[b]);
    ExpectViewOf(t, Transpose(t, arg_a, arg_b), dims, [&](ref::Index i) {
      std::swap(i[a], i[b]);
      return i;
    });

    std::vector<int> axes(n);
    std::iota(axes.begin(), axes.end(), 0);
    std::shuffle(axes.begin(), axes.end(), rng);
    std::vector<int> args = axes;
    for (int& x : args) x -= Uniform(rng, 0, 1) ? n : 0;  // mix negative forms in
    std::vector<int64_t> pdims(n);
    for (int k = 0; k < n; ++k) pdims[k] = t.Dim(axes[k]);
    ExpectViewOf(t, Permute(t, args), pdims, [&](const ref::Index& i) {
      ref::Index j(n);
      for (int k = 0; k < n; ++k) j[axes[k]] = i[k];  // output axis k is input axis axes[k]
      return j;
    });
  }
  Tensor t = Tensor::Zeros({2, 3, 4}, DType::kInt32);
  EXPECT_EQ(Permute(t, {2, 0, 1}).Dims(), (std::vector<int64_t>{4, 2, 3}));  // NumPy's rule
  EXPECT_EQ(Permute(Tensor::FromScalar(1), {}).NumAxes(), 0);
}

TEST(ViewsTest, ViewMatchesBruteForce) {
  ref::Rng rng(24);
  int exists = 0, not_exists = 0;
  for (int iter = 0; iter < 800; ++iter) {
    Tensor t = RandomSource(rng);
    const std::vector<int64_t> dims = RandomSameCount(rng, t.Dims());
    std::vector<int64_t> arg = dims;
    if (!dims.empty() && t.NumElements() > 0 && Uniform(rng, 0, 3) == 0) {
      arg[Uniform(rng, 0, static_cast<int64_t>(dims.size()) - 1)] = -1;  // infer one dim
    }
    const bool want = BruteForceViewExists(t, dims);
    std::optional<Tensor> v = View(t, arg);
    ASSERT_EQ(v.has_value(), want) << t.pattern() << " -> " << ShapeString(dims);
    (want ? exists : not_exists)++;
    if (v) ExpectViewOf(t, *v, dims, SameCOrder(t.Dims(), dims));
  }
  EXPECT_GT(exists, 200);
  EXPECT_GT(not_exists, 50);
}

TEST(ViewsTest, ViewExamples) {
  Tensor a = Tensor::Zeros({90}, DType::kInt32);
  EXPECT_EQ(View(a, {9, 5, 2})->Dims(), (std::vector<int64_t>{9, 5, 2}));
  EXPECT_EQ(View(a, {9, -1, 2})->Dims(), (std::vector<int64_t>{9, 5, 2}));
  Tensor m = Tensor::Zeros({3, 4}, DType::kInt32);
  EXPECT_FALSE(View(Transpose(m, 0, 1), {12}).has_value());      // flattening a transpose
  EXPECT_TRUE(View(Transpose(m, 0, 1), {2, 2, 3}).has_value());  // splitting axis 0 only
  EXPECT_FALSE(View(Slice(m, 1, 0, 2), {6}).has_value());        // gaps between rows
  EXPECT_TRUE(View(Slice(m, 0, 0, 2), {8}).has_value());         // whole rows: contiguous
  Tensor flipped = Slice(Slice(m, 0, 2, -1, -1), 1, 3, -1, -1);  // both axes reversed
  std::optional<Tensor> f = View(flipped, {12});
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->Stride(0), -1);
  EXPECT_EQ(View(Tensor::FromScalar(5), {1, 1})->Dims(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(View(Tensor::FromVector(std::vector<int32_t>{7}), {})->NumAxes(), 0);
  EXPECT_EQ(View(Tensor::Zeros({0, 4}, DType::kInt32), {2, 0, 5})->NumElements(), 0);
  EXPECT_EQ(Flatten(flipped)->ToVector<int32_t>(), flipped.ToVector<int32_t>());
  EXPECT_FALSE(Flatten(Transpose(m, 0, 1)).has_value());
}

TEST(ViewsTest, MergeAxesMatchesBruteForce) {
  ref::Rng rng(25);
  int merged = 0;
  for (int iter = 0; iter < 600; ++iter) {
    Tensor t = RandomSource(rng, 1);
    const int n = t.NumAxes();
    int axis1;
    const int arg = RandomAxisArg(rng, n, &axis1);
    const int num = static_cast<int>(Uniform(rng, 1, n - axis1));
    std::vector<int64_t> dims = t.Dims();
    int64_t prod = 1;
    for (int a = axis1; a < axis1 + num; ++a) prod *= dims[a];
    dims.erase(dims.begin() + axis1, dims.begin() + axis1 + num);
    dims.insert(dims.begin() + axis1, prod);
    std::optional<Tensor> v = MergeAxes(t, arg, num);
    ASSERT_EQ(v.has_value(), BruteForceViewExists(t, dims)) << t.pattern() << " " << axis1;
    if (!v) continue;
    ++merged;
    ExpectViewOf(t, *v, dims, SameCOrder(t.Dims(), dims));
    if (num == 1) {
      EXPECT_EQ(v->pattern(), t.pattern());
    }
  }
  EXPECT_GT(merged, 200);
  Tensor c = Tensor::Zeros({3, 4, 5}, DType::kInt32);
  EXPECT_EQ(MergeAxes(c, 0)->Dims(), (std::vector<int64_t>{12, 5}));  // axis1 == 0 works
  EXPECT_EQ(MergeAxes(c, 0, 3)->Dims(), (std::vector<int64_t>{60}));
  EXPECT_EQ(MergeAxes(c, -2)->Dims(), (std::vector<int64_t>{3, 20}));
  EXPECT_FALSE(MergeAxes(Transpose(c, 0, 1), 0).has_value());
  // An empty tensor whose other dims multiply past int64: merging them gives dim 0.
  Tensor huge =
      SplitAxis(Tensor::Zeros({0}, DType::kInt32), 0, {0, int64_t{1} << 40, int64_t{1} << 40});
  EXPECT_EQ(huge.NumElements(), 0);
  EXPECT_EQ(MergeAxes(huge, 1)->Dims(), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(View(huge, {0})->Dims(), (std::vector<int64_t>{0}));
}

TEST(ViewsTest, SplitAxisMatchesReference) {
  ref::Rng rng(26);
  for (int iter = 0; iter < 500; ++iter) {
    Tensor t = RandomSource(rng, 1, 4);
    int axis;
    const int arg = RandomAxisArg(rng, t.NumAxes(), &axis);
    std::vector<int64_t> parts = RandomSameCount(rng, {t.Dim(axis)});
    while (t.NumAxes() - 1 + parts.size() > static_cast<size_t>(kMaxAxes)) {
      parts[parts.size() - 2] *= parts.back();
      parts.pop_back();
    }
    if (parts.empty()) parts.push_back(1);  // a dim-1 axis "split" into one part
    std::vector<int64_t> dims = t.Dims();
    dims.erase(dims.begin() + axis);
    dims.insert(dims.begin() + axis, parts.begin(), parts.end());
    const size_t np = parts.size();
    Tensor v = SplitAxis(t, arg, parts);
    ExpectViewOf(t, v, dims, [&](const ref::Index& i) {
      ref::Index j(i.begin(), i.begin() + axis);
      j.push_back(ref::Ravel(parts, ref::Index(i.begin() + axis, i.begin() + axis + np)));
      j.insert(j.end(), i.begin() + axis + np, i.end());
      return j;
    });
  }
  Tensor a = Tensor::Zeros({10, 3}, DType::kInt32);
  EXPECT_EQ(SplitAxis(a, 0, {2, 5}).Dims(), (std::vector<int64_t>{2, 5, 3}));
  EXPECT_EQ(SplitAxis(a, 0, {2, -1}).Dims(), (std::vector<int64_t>{2, 5, 3}));
  Tensor rev = SplitAxis(Slice(a, 0, 9, -1, -1), 0, {2, 5});
  EXPECT_EQ(rev.Strides(), (std::vector<int64_t>{-15, -3, 1}));  // negative stride preserved
  EXPECT_EQ(SplitAxis(Tensor::Zeros({0}, DType::kInt32), 0, {3, 0}).NumElements(), 0);
}

TEST(ViewsTest, SqueezeUnsqueezeAndSliceRowsMatchReference) {
  ref::Rng rng(27);
  for (int iter = 0; iter < 400; ++iter) {
    Tensor t = RandomSource(rng, 0, 4);
    const int n = t.NumAxes();
    // Unsqueeze at every position, both forms.
    const int pos = static_cast<int>(Uniform(rng, 0, n));
    const int arg = Uniform(rng, 0, 1) ? pos : pos - (n + 1);
    std::vector<int64_t> dims = t.Dims();
    dims.insert(dims.begin() + pos, 1);
    Tensor u = Unsqueeze(t, arg);
    ExpectViewOf(t, u, dims, [&](ref::Index i) {
      i.erase(i.begin() + pos);
      return i;
    });
    EXPECT_EQ(u.Stride(pos), 0);
    // Squeeze it back: the same pattern.
    EXPECT_EQ(Squeeze(u, Uniform(rng, 0, 1) ? pos : pos - (n + 1)).pattern(), t.pattern());
    if (n == 0) continue;
    // SliceRows is Slice on axis 0.
    const auto [start, end] = RandomRange(rng, t.Dim(0), 1);
    std::vector<int64_t> rdims = t.Dims();
    rdims[0] = end - start;
    ExpectViewOf(t, SliceRows(t, start, end), rdims, [&](ref::Index i) {
      i[0] += start;
      return i;
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Composition: chains of views stay valid and consistent, and simple algebraic identities hold.
// ---------------------------------------------------------------------------------------------

// Applies one random view function to t; returns false when the one drawn does not apply.
bool RandomStep(ref::Rng& rng, const Tensor& t, Tensor* out) {
  const int n = t.NumAxes();
  int axis = 0;
  const int arg = n > 0 ? RandomAxisArg(rng, n, &axis) : 0;
  switch (Uniform(rng, 0, 8)) {
    case 0: {
      if (n == 0) return false;
      const int64_t step = Uniform(rng, 1, 2) * (Uniform(rng, 0, 1) ? 1 : -1);
      const auto [start, end] = RandomRange(rng, t.Dim(axis), step);
      *out = Slice(t, arg, start, end, step);
      return true;
    }
    case 1:
      if (n == 0 || t.Dim(axis) == 0) return false;
      *out = Select(t, arg, Uniform(rng, 0, t.Dim(axis) - 1));
      return true;
    case 2:
      if (n == 0) return false;
      *out = Transpose(t, arg, static_cast<int>(Uniform(rng, 0, n - 1)));
      return true;
    case 3: {
      std::vector<int> axes(n);
      std::iota(axes.begin(), axes.end(), 0);
      std::shuffle(axes.begin(), axes.end(), rng);
      *out = Permute(t, axes);
      return true;
    }
    case 4: {
      std::optional<Tensor> v = View(t, RandomSameCount(rng, t.Dims()));
      if (!v) return false;
      *out = *v;
      return true;
    }
    case 5: {
      if (n == 0) return false;
      std::optional<Tensor> v = MergeAxes(t, arg, static_cast<int>(Uniform(rng, 1, n - axis)));
      if (!v) return false;
      *out = *v;
      return true;
    }
    case 6: {
      if (n == 0 || n >= kMaxAxes) return false;
      std::vector<int64_t> parts = RandomSameCount(rng, {t.Dim(axis)});
      if (parts.empty() || n - 1 + parts.size() > static_cast<size_t>(kMaxAxes)) return false;
      *out = SplitAxis(t, arg, parts);
      return true;
    }
    case 7:
      if (n == 0 || t.Dim(axis) != 1) return false;
      *out = Squeeze(t, arg);
      return true;
    default:
      if (n >= 6) return false;
      *out = Unsqueeze(t, static_cast<int>(Uniform(rng, 0, n)));
      return true;
  }
}

// A chain of random view functions on a random source: every intermediate view is valid, and
// the elements seen through the final view are the ones of the source it was derived from
// (checked by writing distinct values through the view and reading them from the source).
TEST(ViewsTest, ChainsOfViewsStayValidAndShareStorage) {
  ref::Rng rng(28);
  for (int iter = 0; iter < 300; ++iter) {
    Tensor src = RandomSource(rng);
    Tensor v = src;
    for (int step = 0; step < 6; ++step) {
      Tensor next;
      if (!RandomStep(rng, v, &next)) continue;
      ASSERT_TRUE(IsValid(next.pattern())) << next.pattern() << ": " << WhyInvalid(next.pattern());
      ASSERT_TRUE(SharesStorage(next, src));
      // The memory-index set of a view is a subset of its source's.
      const std::vector<int64_t> outer_list = ref::MemoryIndexes(v.pattern());
      const std::unordered_set<int64_t> outer(outer_list.begin(), outer_list.end());
      for (int64_t m : ref::MemoryIndexes(next.pattern())) {
        ASSERT_EQ(outer.count(m), 1u) << next.pattern() << " is not inside " << v.pattern();
      }
      v = next;
    }
    // Distinct writes through the view land on distinct source elements (uniqueness).
    int32_t k = 1000;
    ref::ForEachIndex(v.Dims(), [&](const ref::Index& i) { ref::Set<int32_t>(v, i, k++); });
    std::vector<int32_t> seen = ref::Elements<int32_t>(src);
    for (int32_t x = 1000; x < k; ++x) {
      EXPECT_EQ(std::count(seen.begin(), seen.end(), x), 1) << v.pattern();
    }
    EXPECT_EQ(v.ToVector<int32_t>(), ref::Elements<int32_t>(v));
  }
}

// Slice of a slice along one axis is one slice with the composed start and step.
TEST(ViewsTest, SlicesCompose) {
  ref::Rng rng(29);
  for (int iter = 0; iter < 400; ++iter) {
    Tensor t = RandomSource(rng, 1);
    const int axis = static_cast<int>(Uniform(rng, 0, t.NumAxes() - 1));
    const int64_t step1 = Uniform(rng, 1, 3) * (Uniform(rng, 0, 1) ? 1 : -1);
    const auto [s1, e1] = RandomRange(rng, t.Dim(axis), step1);
    Tensor a = Slice(t, axis, s1, e1, step1);
    const int64_t step2 = Uniform(rng, 1, 3) * (Uniform(rng, 0, 1) ? 1 : -1);
    const auto [s2, e2] = RandomRange(rng, a.Dim(axis), step2);
    Tensor b = Slice(a, axis, s2, e2, step2);
    const int64_t count = b.Dim(axis);
    if (count == 0) continue;  // an empty slice keeps its source's offset; nothing to compose
    const int64_t start = s1 + s2 * step1, step = step1 * step2;
    const int64_t last = start + (count - 1) * step;
    Tensor c = Slice(t, axis, start, last + (step > 0 ? 1 : -1), step);
    EXPECT_EQ(b.pattern(), c.pattern()) << t.pattern();
  }
}

TEST(ViewsTest, InverseViewsRestoreThePattern) {
  ref::Rng rng(30);
  for (int iter = 0; iter < 300; ++iter) {
    Tensor t = RandomSource(rng, 1);
    const int n = t.NumAxes();
    const int a = static_cast<int>(Uniform(rng, 0, n - 1));
    const int b = static_cast<int>(Uniform(rng, 0, n - 1));
    EXPECT_EQ(Transpose(Transpose(t, a, b), b, a).pattern(), t.pattern());
    std::vector<int> axes(n), inverse(n);
    std::iota(axes.begin(), axes.end(), 0);
    std::shuffle(axes.begin(), axes.end(), rng);
    for (int k = 0; k < n; ++k) inverse[axes[k]] = k;
    EXPECT_EQ(Permute(Permute(t, axes), inverse).pattern(), t.pattern());
    // Splitting an axis then merging the parts back always succeeds and restores it.
    if (t.Dim(a) > 0 && n < kMaxAxes) {
      std::vector<int64_t> parts = RandomSameCount(rng, {t.Dim(a)});
      if (!parts.empty() && n - 1 + parts.size() <= static_cast<size_t>(kMaxAxes)) {
        std::optional<Tensor> m =
            MergeAxes(SplitAxis(t, a, parts), a, static_cast<int>(parts.size()));
        ASSERT_TRUE(m.has_value());
        if (t.NumElements() > 0) {  // an empty tensor's strides are free
          EXPECT_EQ(m->pattern(), t.pattern());
        }
        EXPECT_EQ(m->Dims(), t.Dims());
      }
    }
    // A view back to the original dims restores the pattern (except empty tensors, whose
    // strides are free).
    if (t.NumElements() > 0) {
      std::optional<Tensor> v = View(t, RandomSameCount(rng, t.Dims()));
      if (v) {
        std::optional<Tensor> back = View(*v, t.Dims());
        ASSERT_TRUE(back.has_value());
        EXPECT_EQ(back->pattern(), t.pattern());
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Errors: every invalid call throws Error naming the function and the bad values.
// ---------------------------------------------------------------------------------------------

TEST(ViewsTest, SliceErrors) {
  Tensor t = Tensor::Zeros({4, 10}, DType::kFloat32);
  ExpectError([&] { Slice(t, 1, 0, 12); }, ErrorCode::kOutOfRange,
              {"Slice: end 12 is out of range for axis 1 of dims [4 10]"});
  ExpectError([&] { Slice(t, 0, 5, 5); }, ErrorCode::kOutOfRange, {"Slice: start 5", "[0, 4]"});
  ExpectError([&] { Slice(t, 0, -1, 2); }, ErrorCode::kOutOfRange, {"Slice: start -1"});
  ExpectError([&] { Slice(t, 0, 3, 2); }, ErrorCode::kOutOfRange, {"Slice: end 2", "[3, 4]"});
  ExpectError([&] { Slice(t, 0, 1, 2, 0); }, ErrorCode::kInvalidArgument,
              {"Slice: step 0", "axis 0 of dims [4 10]"});
  ExpectError([&] { Slice(t, 0, 4, 0, -1); }, ErrorCode::kOutOfRange,
              {"Slice: start 4", "negative step -1", "[-1, 3]"});
  ExpectError([&] { Slice(t, 0, 1, 2, -1); }, ErrorCode::kOutOfRange, {"Slice: end 2", "[-1, 1]"});
  ExpectError([&] { Slice(t, 0, 1, -2, -1); }, ErrorCode::kOutOfRange, {"Slice: end -2"});
  ExpectError([&] { Slice(t, 2, 0, 1); }, ErrorCode::kOutOfRange, {"Slice: axis 2", "2 axes"});
  ExpectError([&] { Slice(t, -3, 0, 1); }, ErrorCode::kOutOfRange, {"Slice: axis -3"});
  ExpectError([&] { Slice(Tensor(), 0, 0, 1); }, ErrorCode::kInvalidArgument,
              {"Slice", "undefined"});
}

TEST(ViewsTest, OtherErrors) {
  Tensor t = Tensor::Zeros({2, 3, 4}, DType::kInt32);
  ExpectError([&] { Select(t, 1, 3); }, ErrorCode::kOutOfRange,
              {"Select: index 3", "axis 1 of dims [2 3 4]", "0 to 2"});
  ExpectError([&] { Select(t, 1, -1); }, ErrorCode::kOutOfRange, {"Select: index -1"});
  ExpectError([&] { Select(t, 3, 0); }, ErrorCode::kOutOfRange, {"Select: axis 3"});
  ExpectError([&] { Transpose(t, 0, 5); }, ErrorCode::kOutOfRange, {"Transpose: axis 5"});
  ExpectError(
      [&] {
        Permute(t, {0, 1});
      },
      ErrorCode::kInvalidArgument, {"Permute: axes [0 1]", "3 axes"});
  ExpectError(
      [&] {
        Permute(t, {0, 1, 1});
      },
      ErrorCode::kInvalidArgument,
      {"Permute: axes [0 1 1]", "not a permutation", "axis 1 appears twice"});
  ExpectError(
      [&] {
        Permute(t, {0, 2, -1});
      },
      ErrorCode::kInvalidArgument, {"not a permutation", "axis 2 appears twice"});
  ExpectError([&] { Permute(t, {0, 1, 3}); }, ErrorCode::kOutOfRange, {"Permute: axis 3"});
  ExpectError(
      [&] {
        View(t, {5, 5});
      },
      ErrorCode::kShapeMismatch, {"View: dims [5 5] hold 25 elements", "dims [2 3 4] has 24"});
  ExpectError(
      [&] {
        View(t, {5, -1});
      },
      ErrorCode::kShapeMismatch, {"View: cannot infer the -1 in dims [5 -1]", "24"});
  ExpectError(
      [&] {
        View(t, {-1, -1});
      },
      ErrorCode::kInvalidArgument, {"View", "more than one -1"});
  ExpectError([&] { View(t, {-2, -12}); }, ErrorCode::kInvalidArgument, {"View: negative dim -2"});
  ExpectError(
      [&] {
        View(t, {1, 1, 1, 1, 1, 1, 2, 3, 4});
      },
      ErrorCode::kInvalidArgument, {"View", "9 axes", "at most 8"});
  ExpectError(
      [&] {
        View(t, {int64_t{1} << 40, int64_t{1} << 40});
      },
      ErrorCode::kShapeMismatch, {"View", "more than int64"});
  ExpectError([&] { MergeAxes(t, 1, 3); }, ErrorCode::kOutOfRange,
              {"MergeAxes: cannot merge 3 axes starting at axis 1 of dims [2 3 4]"});
  ExpectError([&] { MergeAxes(t, 0, 0); }, ErrorCode::kOutOfRange, {"MergeAxes", "num_axes"});
  ExpectError([&] { MergeAxes(t, 3); }, ErrorCode::kOutOfRange, {"MergeAxes: axis 3"});
  ExpectError(
      [&] {
        SplitAxis(t, 2, {3, 2});
      },
      ErrorCode::kShapeMismatch,
      {"SplitAxis: dims [3 2] hold 6 elements but axis 2 of dims [2 3 4] has 4"});
  ExpectError([&] { SplitAxis(t, 2, {}); }, ErrorCode::kInvalidArgument,
              {"SplitAxis", "must not be empty"});
  ExpectError(
      [&] {
        SplitAxis(t, 0, {1, 1, 1, 1, 1, 1, 2});
      },
      ErrorCode::kInvalidArgument, {"SplitAxis", "9 axes"});
  ExpectError([&] { SplitAxis(t, 4, {1}); }, ErrorCode::kOutOfRange, {"SplitAxis: axis 4"});
  ExpectError([&] { Squeeze(t, 1); }, ErrorCode::kInvalidArgument,
              {"Squeeze: axis 1 of dims [2 3 4] has dim 3"});
  ExpectError([&] { Squeeze(t, -4); }, ErrorCode::kOutOfRange, {"Squeeze: axis -4"});
  ExpectError([&] { Unsqueeze(t, 4); }, ErrorCode::kOutOfRange, {"Unsqueeze: axis 4", "-4 to 3"});
  ExpectError([&] { Unsqueeze(t, -5); }, ErrorCode::kOutOfRange, {"Unsqueeze: axis -5"});
  Tensor full = Tensor::Zeros({1, 1, 1, 1, 1, 1, 1, 1}, DType::kInt32);
  ExpectError([&] { Unsqueeze(full, 0); }, ErrorCode::kInvalidArgument,
              {"Unsqueeze", "already have 8 axes"});
  ExpectError([&] { SliceRows(t, 1, 3); }, ErrorCode::kOutOfRange, {"SliceRows: end 3", "2 rows"});
  ExpectError([&] { SliceRows(t, 3, 3); }, ErrorCode::kOutOfRange, {"SliceRows: start 3"});
  ExpectError([&] { SliceRows(Tensor::FromScalar(1.0f), 0, 1); }, ErrorCode::kInvalidArgument,
              {"SliceRows", "rank 0"});
  for (auto fn : std::vector<std::function<void()>>{
           [] { Select(Tensor(), 0, 0); }, [] { Transpose(Tensor(), 0, 0); },
           [] { Permute(Tensor(), {}); }, [] { View(Tensor(), {}); },
           [] { MergeAxes(Tensor(), 0); }, [] { SplitAxis(Tensor(), 0, {1}); },
           [] { Squeeze(Tensor(), 0); }, [] { Unsqueeze(Tensor(), 0); },
           [] { SliceRows(Tensor(), 0, 0); }, [] { Flatten(Tensor()); }}) {
    ExpectError(fn, ErrorCode::kInvalidArgument, {"undefined"});
  }
}

// Strides near the int64 limit: no view computes a stride or offset that overflows (UBSan
// checks this in the sanitizer build). The storage is a fake huge range that is never read.
TEST(ViewsTest, HugeStridesDoNotOverflow) {
  static char byte;
  auto storage = Storage::Wrap(&byte, INT64_MAX, Device::Cpu(), {});
  const int64_t big = int64_t{1} << 62;
  Tensor t(storage, MakePattern({2}, {big}), DType::kUInt8);
  Tensor split = SplitAxis(t, 0, {1, 2, 1});
  EXPECT_EQ(split.Strides(), (std::vector<int64_t>{0, big, 0}));
  EXPECT_EQ(Slice(t, 0, 1, 0, -1).Strides(), (std::vector<int64_t>{0}));  // one element
  EXPECT_EQ(Slice(t, 0, 1, 0, -1).pattern().offset, big);
  EXPECT_EQ(Slice(t, 0, 1, -1, -1).pattern().offset, big);
  EXPECT_EQ(Slice(t, 0, 1, -1, -1).Dims(), (std::vector<int64_t>{2}));
  EXPECT_EQ(Slice(t, 0, 1, -1, -1).Stride(0), -big);
  Tensor m(storage, MakePattern({2, 2}, {big, big / 2}), DType::kUInt8);
  EXPECT_EQ(MergeAxes(m, 0)->Strides(), (std::vector<int64_t>{big / 2}));
  EXPECT_EQ(View(m, {1, 4, 1})->Strides(), (std::vector<int64_t>{0, big / 2, 0}));
  Tensor gap(storage, MakePattern({2, 2}, {big, 1}), DType::kUInt8);
  EXPECT_FALSE(MergeAxes(gap, 0).has_value());
  EXPECT_FALSE(MergeAxes(Transpose(m, 0, 1), 0).has_value());
}

// Views work for every dtype (they never touch elements) and keep the dtype.
TEST(ViewsTest, ViewsOfStringAndBoolTensors) {
  Tensor s = Tensor::FromVector(std::vector<std::string>{"a", "b", "c", "d", "e", "f"}, {2, 3});
  EXPECT_EQ(Transpose(s, 0, 1).ToVector<std::string>(),
            (std::vector<std::string>{"a", "d", "b", "e", "c", "f"}));
  EXPECT_EQ(Slice(s, 1, 2, -1, -2).ToVector<std::string>(),
            (std::vector<std::string>{"c", "a", "f", "d"}));
  Tensor b = Tensor::FromVector(std::vector<bool>{true, false, false, true}, {2, 2});
  EXPECT_EQ(Select(b, 1, 1).ToVector<bool>(), (std::vector<bool>{false, true}));
  EXPECT_EQ(View(b, {4})->dtype(), DType::kBool);
}

}  // namespace
}  // namespace tensorkit
