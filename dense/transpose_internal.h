// tensorkit/dense/transpose_internal.h: the in-register block transposes behind the engine's
// transposing element copies (not a public header; see Note [kernel engine] step 4).
//
// Glossary
//   tile        a block of the copy: `ni` positions of axis 0 (the output's dense axis) by `nj`
//               positions of axis t (the input's dense axis), sized so that its input and output
//               lines stay in the L1 cache while it is copied (TileShapeFor).
//   micro block K x K elements moved through K vector registers of K lanes each: K loads along
//               the input's rows, log2(K) butterfly stages, K stores along the output's rows.
//   butterfly   stage S swaps, for every pair of rows (r, r + S) with bit S of r clear, the
//               off-diagonal S x S sub-blocks: row r keeps its lanes l with bit S clear and takes
//               row r + S's lanes l - S for the others, and row r + S the converse. After the
//               stages K/2, K/4, ..., 1 the block is transposed.
//
// The micro block is written with GCC/clang generic vectors, so one template serves every
// element size and vector width: ops on them are plain bit moves (a copy stays bit-identical)
// and each instruction-set copy in transpose.cc is the same source compiled for another target.
#ifndef TENSORKIT_DENSE_TRANSPOSE_INTERNAL_H_
#define TENSORKIT_DENSE_TRANSPOSE_INTERNAL_H_

#include <cstdint>
#include <cstring>
#include <utility>

#include "tensorkit/common/simd_path.h"
#include "tensorkit/common/streaming.h"

namespace tensorkit::transpose_internal {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// out[j * out_stride + i] = in[i * in_stride + j] for i < ni, j < nj (strides in elements).
using TileFn = void (*)(const void* in, int64_t in_stride, void* out, int64_t out_stride,
                        int64_t ni, int64_t nj);

// Edges of a tile in elements: rows along axis 0, cols along axis t.
struct TileShape {
  int64_t rows = 0;
  int64_t cols = 0;
};

// 16 KiB of input and 16 KiB of output per tile: both fit a 32 KiB (AMD) or 48 KiB (Intel) L1
// with room for the next tile's first lines, and every row segment is at least a cache line.
TileShape TileShapeFor(int elem_size);

// The tile copy of `elem_size`-byte elements (1, 2, 4 or 8) for `path`.
TileFn TileKernel(int elem_size, SimdPath path);

// The same tile loop over K x K micro blocks of U (K lanes per vector), for any target the
// caller is compiled for; transpose.cc instantiates it per instruction set.
template <typename U, int K>
void TransposeTile(const U* in, int64_t in_stride, U* out, int64_t out_stride, int64_t ni,
                   int64_t nj);

// Outputs of at least this many bytes are written by the streaming tile copies: they do not
// stay in the caches anyway, and stores that bypass them neither read each output line first
// nor evict the input. 8 MiB by default; SetStreamingBytesForTesting(-1) restores it.
int64_t StreamingBytes();
void SetStreamingBytesForTesting(int64_t bytes);

// The streaming tile copy of `path`, the same copy as TileKernel's: each 64-byte line of the
// output is assembled whole in an L1 buffer and written with one non-temporal store per
// vector. `out` and out_stride * elem_size must be multiples of 64 bytes.
TileFn StreamingTileKernel(int elem_size, SimdPath path);

// Its tiles: one output line (64 / elem_size elements) of axis 0 by 256 of axis t, walked along
// axis t, so that the input is read as 64 / elem_size sequential row streams.
TileShape StreamingTileShapeFor(int elem_size);

// TransposeTile with Stream::Line(dst, src) writing 64 bytes and Stream::Fence() ordering the
// writes before the tile returns.
template <typename U, int K, typename Stream>
void TransposeTileStreaming(const U* in, int64_t in_stride, U* out, int64_t out_stride, int64_t ni,
                            int64_t nj);

// ---------------------------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------------------------

namespace detail {

template <typename U, int K>
using Vec [[gnu::vector_size(K * sizeof(U))]] = U;

// One butterfly pair: x keeps its lanes outside bit S and takes y's; y the converse.
template <int S, int K, typename V, int... L>
[[gnu::always_inline]] inline void SwapPair(V& x, V& y, std::integer_sequence<int, L...>) {
  const V a = x, b = y;
  x = __builtin_shufflevector(a, b, ((L & S) ? K + L - S : L)...);
  y = __builtin_shufflevector(a, b, ((L & S) ? K + L : L + S)...);
}

// Stage S over all K/2 pairs (P numbers them: pair p is rows (p / S) * 2S + p % S and + S).
template <int S, int K, typename V, int... P>
[[gnu::always_inline]] inline void Stage(V* r, std::integer_sequence<int, P...>) {
  (SwapPair<S, K>(r[(P / S) * 2 * S + P % S], r[(P / S) * 2 * S + P % S + S],
                  std::make_integer_sequence<int, K>{}),
   ...);
}

// Stages K/2 down to 1.
template <int S, int K, typename V>
[[gnu::always_inline]] inline void Butterflies(V* r) {
  if constexpr (S >= 1) {
    Stage<S, K>(r, std::make_integer_sequence<int, K / 2>{});
    Butterflies<S / 2, K>(r);
  }
}

// One K x K micro block: rows of `in` become rows of `out`. The loads and stores are unrolled
// by packs (a loop would keep the rows in memory instead of registers).
template <typename U, int K, int... R>
[[gnu::always_inline]] inline void MicroBlock(const U* in, int64_t in_stride, U* out,
                                              int64_t out_stride,
                                              std::integer_sequence<int, R...>) {
  using V = Vec<U, K>;
  V r[K];
  (std::memcpy(&r[R], in + R * in_stride, sizeof(V)), ...);
  Butterflies<K / 2, K>(r);
  (std::memcpy(out + R * out_stride, &r[R], sizeof(V)), ...);
}

}  // namespace detail

template <typename U, int K>
[[gnu::always_inline]] inline void TransposeTile(const U* in, int64_t in_stride, U* out,
                                                 int64_t out_stride, int64_t ni, int64_t nj) {
  const int64_t bi = ni - ni % K, bj = nj - nj % K;
  for (int64_t i = 0; i < bi; i += K) {
    for (int64_t j = 0; j < bj; j += K) {
      detail::MicroBlock<U, K>(in + i * in_stride + j, in_stride, out + j * out_stride + i,
                               out_stride, std::make_integer_sequence<int, K>{});
    }
  }
  // Tails: the columns right of the last whole block, then the rows below it.
  for (int64_t j = bj; j < nj; ++j) {
    for (int64_t i = 0; i < bi; ++i) out[j * out_stride + i] = in[i * in_stride + j];
  }
  for (int64_t j = 0; j < nj; ++j) {
    for (int64_t i = bi; i < ni; ++i) out[j * out_stride + i] = in[i * in_stride + j];
  }
}

template <typename U, int K, typename Stream>
[[gnu::always_inline]] inline void TransposeTileStreaming(const U* in, int64_t in_stride, U* out,
                                                          int64_t out_stride, int64_t ni,
                                                          int64_t nj) {
  constexpr int64_t kE = 64 / sizeof(U);  // elements per cache line
  static_assert(kE % K == 0);
  const int64_t ei = ni - ni % kE, ej = nj - nj % kE;
  alignas(64) U buf[kE * kE];  // row r: the line of output row j + r
  for (int64_t i = 0; i < ei; i += kE) {
    for (int64_t j = 0; j < ej; j += kE) {
      for (int64_t bi = 0; bi < kE; bi += K) {
        for (int64_t bj = 0; bj < kE; bj += K) {
          detail::MicroBlock<U, K>(in + (i + bi) * in_stride + j + bj, in_stride,
                                   buf + bj * kE + bi, kE, std::make_integer_sequence<int, K>{});
        }
      }
      for (int64_t r = 0; r < kE; ++r) Stream::Line(out + (j + r) * out_stride + i, buf + r * kE);
    }
  }
  // Partial lines with ordinary stores: the columns right of the whole blocks, then the rows
  // below them.
  if (ej < nj) {
    TransposeTile<U, K>(in + ej, in_stride, out + ej * out_stride, out_stride, ei, nj - ej);
  }
  if (ei < ni)
    TransposeTile<U, K>(in + ei * in_stride, in_stride, out + ei, out_stride, ni - ei, nj);
  Stream::Fence();
}

}  // namespace tensorkit::transpose_internal

#endif  // TENSORKIT_DENSE_TRANSPOSE_INTERNAL_H_
