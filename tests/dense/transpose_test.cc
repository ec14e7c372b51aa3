// The engine's transposing element copies (dense/transpose.cc): every SIMD path this CPU has,
// every element size, against the reference over random permutations, odd sizes (tails of
// micro blocks and tiles), negative strides and transposed outputs; bit-exact, also for NaN
// payloads, and the same at 1, 2 and 3 threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "dense/simd_paths.h"
#include "reference/reference.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/dense/transpose_internal.h"
#include "tensorkit/dense/views.h"
#include "test_util.h"

namespace tensorkit {
namespace {

using testing::PathGuard;
using testing::PathName;
using testing::SupportedPaths;

// Random element bits of every kind, NaN payloads included for the floats: the copy must move
// bits, never values.
template <typename T>
Tensor RandomBits(std::mt19937_64& rng, const std::vector<int64_t>& dims) {
  using Bits = std::conditional_t<
      sizeof(T) == 1, uint8_t,
      std::conditional_t<sizeof(T) == 2, uint16_t,
                         std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;
  std::vector<T> v(static_cast<size_t>(ref::NumElements(dims)));
  for (T& x : v) x = std::bit_cast<T>(static_cast<Bits>(rng()));
  return Tensor::FromVector(std::move(v), dims);
}

template <typename T>
bool SameBits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](T x, T y) {
           return std::memcmp(&x, &y, sizeof(T)) == 0;
         });
}

// A random permuted (sometimes reversed, sometimes stepped) view of a random tensor of rank
// 2..4, with dims large enough for the tiled path and odd enough for every tail, copied into
// a C-order output or into a transposed view of one; compared with the reference's elements.
template <typename T>
void CheckRandomPermutes(uint64_t seed, int rounds) {
  std::mt19937_64 rng(seed);
  ref::Rng rrng(seed);
  for (int round = 0; round < rounds; ++round) {
    const int rank = 2 + static_cast<int>(rng() % 3);
    std::vector<int64_t> dims(rank);
    for (int64_t& d : dims) d = 1 + rng() % (rank == 2 ? 200 : rank == 3 ? 48 : 20);
    Tensor base = RandomBits<T>(rng, dims);
    std::vector<int> perm(rank);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    Tensor src = Permute(base, perm);
    if (rng() % 4 == 0) {  // a reversed axis: negative strides
      const int a = static_cast<int>(rng() % rank);
      src = Slice(src, a, src.Dim(a) - 1, -1, -1);
    }
    if (rng() % 6 == 0) {  // every other element along one axis
      const int a = static_cast<int>(rng() % rank);
      src = Slice(src, a, 0, src.Dim(a), 2);
    }
    const std::vector<T> want = ref::Elements<T>(src);
    Tensor out = Tensor::Empty(src.Dims(), base.dtype());
    Copy(src, &out);
    EXPECT_TRUE(SameBits(out.ToVector<T>(), want)) << src.pattern() << " round " << round;
    // The output transposed too: its dense axis is then the last-but-one.
    std::vector<int64_t> tdims = src.Dims();
    std::swap(tdims[rank - 1], tdims[rank - 2]);
    Tensor backing = Tensor::Empty(tdims, base.dtype());
    Tensor tout = Transpose(backing, rank - 1, rank - 2);
    Copy(src, &tout);
    EXPECT_TRUE(SameBits(ref::Elements<T>(tout), want)) << src.pattern() << " round " << round;
  }
}

// Permutes whose every dim is a whole number of cache lines of T, some plus a few elements:
// with the streaming threshold at 0, outputs with whole-line rows take the streaming tiles
// (the others fall back to the plain ones, tile by tile where the alignment varies).
template <typename T>
void CheckLinePermutes(uint64_t seed, int rounds) {
  constexpr int64_t kLine = 64 / sizeof(T);
  std::mt19937_64 rng(seed);
  for (int round = 0; round < rounds; ++round) {
    const int rank = 2 + static_cast<int>(rng() % 3);
    std::vector<int64_t> dims(rank);
    do {  // at most 2^18 elements
      for (int64_t& d : dims) {
        d = rng() % 2 ? kLine * static_cast<int64_t>(1 + rng() % (rank == 2 ? 12 : 3))
                      : static_cast<int64_t>(1 + rng() % 6);
        if (rng() % 3 == 0) d += static_cast<int64_t>(rng() % 5);
      }
    } while (ref::NumElements(dims) > (int64_t{1} << 18));
    Tensor base = RandomBits<T>(rng, dims);
    std::vector<int> perm(rank);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    Tensor src = Permute(base, perm);
    Tensor out = Tensor::Empty(src.Dims(), base.dtype());
    Copy(src, &out);
    EXPECT_TRUE(SameBits(out.ToVector<T>(), ref::Elements<T>(src)))
        << src.pattern() << " round " << round;
  }
}

// Restores the default streaming threshold.
struct StreamingGuard {
  ~StreamingGuard() { transpose_internal::SetStreamingBytesForTesting(-1); }
};

// Every element size on one path, with the plain tiles and then with the streaming ones;
// skipped with a message where the CPU lacks the path.
void CheckPath(SimdPath p) {
  if (!SimdPathSupported(p)) {
    GTEST_SKIP() << "this CPU cannot run the " << PathName(p) << " path";
  }
  PathGuard guard;
  StreamingGuard streaming_guard;
  SetSimdPathForTesting(p);
  for (int64_t threshold : {int64_t{-1}, int64_t{0}}) {
    SCOPED_TRACE(threshold == 0 ? "streaming tiles" : "plain tiles");
    transpose_internal::SetStreamingBytesForTesting(threshold);
    CheckRandomPermutes<uint8_t>(1, 25);
    CheckRandomPermutes<int16_t>(2, 25);
    CheckRandomPermutes<Half>(3, 10);
    CheckRandomPermutes<float>(4, 25);
    CheckRandomPermutes<int32_t>(5, 10);
    CheckRandomPermutes<double>(6, 25);
    CheckRandomPermutes<int64_t>(7, 10);
    CheckLinePermutes<uint8_t>(21, 10);
    CheckLinePermutes<int16_t>(22, 10);
    CheckLinePermutes<float>(24, 15);
    CheckLinePermutes<double>(26, 15);
  }
}

TEST(TransposeTest, DefaultPathMatchesReference) { CheckPath(SimdPath::kDefault); }
TEST(TransposeTest, Avx2PathMatchesReference) { CheckPath(SimdPath::kAvx2); }
TEST(TransposeTest, Avx512PathMatchesReference) { CheckPath(SimdPath::kAvx512); }

// The benchmark's shapes, small: a 2-D transpose and the (0, 2, 3, 1) permute whose merged
// inner axes make a batch of transposes.
TEST(TransposeTest, TransposeAndPermuteShapes) {
  PathGuard guard;
  std::mt19937_64 rng(8);
  Tensor a = RandomBits<float>(rng, {333, 270});
  Tensor p = RandomBits<double>(rng, {3, 20, 17, 33});
  for (SimdPath path : SupportedPaths()) {
    SetSimdPathForTesting(path);
    Tensor at = Transpose(a, 0, 1), out = Tensor::Empty(at.Dims(), DType::kFloat32);
    Copy(at, &out);
    EXPECT_TRUE(SameBits(out.ToVector<float>(), ref::Elements<float>(at)));
    Tensor pp = Permute(p, {0, 2, 3, 1}), pout = Tensor::Empty(pp.Dims(), DType::kFloat64);
    Copy(pp, &pout);
    EXPECT_TRUE(SameBits(pout.ToVector<double>(), ref::Elements<double>(pp)));
  }
}

TEST(TransposeTest, SameBitsAtOneTwoAndThreeThreads) {
  std::mt19937_64 rng(9);
  Tensor a = RandomBits<float>(rng, {517, 300});
  Tensor at = Transpose(a, 0, 1);
  const std::vector<float> want = ref::Elements<float>(at);
  const auto outs = testing::AtThreadCounts({1, 2, 3}, [&] {
    Tensor out = Tensor::Empty(at.Dims(), DType::kFloat32);
    Copy(at, &out);
    return out.ToVector<float>();
  });
  for (const std::vector<float>& out : outs) EXPECT_TRUE(SameBits(out, want));
}

// The micro-block network of every K the paths use (16 x 16 floats and 8 x 8 doubles are the
// AVX-512 ones), compiled here for the default target: the same template, so this checks the
// shuffles of paths this CPU may lack. Tiles of odd size exercise the tails. The streaming
// tile runs with a stand-in for the non-temporal stores (a plain copy of each line).
struct CopyLine {
  static void Line(void* dst, const void* src) { std::memcpy(dst, src, 64); }
  static void Fence() {}
};

template <typename U, int K>
void CheckTile(uint64_t seed) {
  constexpr int64_t kLine = 64 / sizeof(U);
  std::mt19937_64 rng(seed);
  for (int round = 0; round < 20; ++round) {
    const int64_t ni = 1 + static_cast<int64_t>(rng() % (3 * kLine)),
                  nj = 1 + static_cast<int64_t>(rng() % (3 * kLine));
    // Output rows of whole lines, as the streaming tile requires.
    const int64_t si = nj + static_cast<int64_t>(rng() % 5),
                  so = kLine * ((ni + kLine - 1) / kLine + static_cast<int64_t>(rng() % 2));
    std::vector<U> in(static_cast<size_t>(ni * si));
    for (U& x : in) x = static_cast<U>(rng());
    for (bool streaming : {false, true}) {
      std::vector<U> out(static_cast<size_t>(nj * so), U{0});
      if (streaming) {
        transpose_internal::TransposeTileStreaming<U, K, CopyLine>(in.data(), si, out.data(), so,
                                                                   ni, nj);
      } else {
        transpose_internal::TransposeTile<U, K>(in.data(), si, out.data(), so, ni, nj);
      }
      for (int64_t i = 0; i < ni; ++i) {
        for (int64_t j = 0; j < nj; ++j) {
          ASSERT_EQ(out[j * so + i], in[i * si + j])
              << "K " << K << (streaming ? " streaming" : "") << " at " << i << "," << j;
        }
      }
    }
  }
}

// StreamingCopy against memcpy on every path: every start within a line on both sides, and
// lengths from nothing to several lines.
TEST(TransposeTest, StreamingCopyMatchesMemcpy) {
  PathGuard guard;
  std::mt19937_64 rng(41);
  std::vector<uint8_t> src(1024), dst(1024), want(1024);
  for (uint8_t& x : src) x = static_cast<uint8_t>(rng());
  for (SimdPath path : SupportedPaths()) {
    SetSimdPathForTesting(path);
    for (int round = 0; round < 300; ++round) {
      const size_t from = rng() % 64, to = rng() % 64, bytes = rng() % 700;
      std::fill(dst.begin(), dst.end(), uint8_t{0xA5});
      want = dst;
      std::memcpy(want.data() + to, src.data() + from, bytes);
      StreamingCopy(dst.data() + to, src.data() + from, static_cast<int64_t>(bytes));
      ASSERT_EQ(dst, want) << PathName(path) << " from " << from << " to " << to << ", " << bytes
                           << " bytes";
    }
  }
}

// The benchmark's 2-D transpose at a size above the default threshold (so no override): into
// a fresh output whose rows are whole lines (1040 floats; streamed, with an odd number of them
// for partial tiles) and into one whose rows are not (the plain tiles).
TEST(TransposeTest, LargeTransposesStreamAndMatch) {
  std::mt19937_64 rng(40);
  const int64_t bytes = transpose_internal::StreamingBytes();
  const int64_t rows = 1040, cols = bytes / (4 * rows) + 9;
  Tensor a = RandomBits<float>(rng, {rows, cols});
  Tensor at = Transpose(a, 0, 1);
  const std::vector<float> want = ref::Elements<float>(at);
  Tensor out = Tensor::Empty(at.Dims(), DType::kFloat32);
  Copy(at, &out);
  EXPECT_TRUE(SameBits(out.ToVector<float>(), want));
  Tensor wide = Tensor::Empty({cols, rows + 3}, DType::kFloat32);
  Tensor part = Slice(wide, 1, 1, rows + 1);
  Copy(at, &part);
  EXPECT_TRUE(SameBits(ref::Elements<float>(part), want));
}

TEST(TransposeTest, MicroBlocksOfEveryWidth) {
  CheckTile<uint8_t, 16>(10);
  CheckTile<uint8_t, 32>(11);
  CheckTile<uint16_t, 8>(12);
  CheckTile<uint16_t, 16>(13);
  CheckTile<uint32_t, 4>(14);
  CheckTile<uint32_t, 8>(15);
  CheckTile<uint32_t, 16>(16);
  CheckTile<uint64_t, 2>(17);
  CheckTile<uint64_t, 4>(18);
  CheckTile<uint64_t, 8>(19);
}

}  // namespace
}  // namespace tensorkit
