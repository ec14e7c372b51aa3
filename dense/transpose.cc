// The tile copies of transpose_internal.h, one per element size and instruction-set path.
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "tensorkit/common/dtype.h"
#include "tensorkit/common/error.h"
#include "tensorkit/dense/transpose_internal.h"

namespace tensorkit::transpose_internal {
namespace {

// The template compiled three times: SSE2 (the default target), AVX2 and AVX-512. Only bit
// moves, so every copy gives the same result.
template <typename U, int K>
void TileBase(const void* in, int64_t si, void* out, int64_t so, int64_t ni, int64_t nj) {
  TransposeTile<U, K>(static_cast<const U*>(in), si, static_cast<U*>(out), so, ni, nj);
}

template <typename U, int K>
[[gnu::target("avx2")]] void TileAvx2(const void* in, int64_t si, void* out, int64_t so, int64_t ni,
                                      int64_t nj) {
  TransposeTile<U, K>(static_cast<const U*>(in), si, static_cast<U*>(out), so, ni, nj);
}

template <typename U, int K>
[[gnu::target("avx512f,avx512dq,avx512vl,avx512bw")]] void TileAvx512(const void* in, int64_t si,
                                                                      void* out, int64_t so,
                                                                      int64_t ni, int64_t nj) {
  TransposeTile<U, K>(static_cast<const U*>(in), si, static_cast<U*>(out), so, ni, nj);
}

// K per path: rows of 16 bytes (SSE2), 32 bytes (AVX2; bytes keep 16 so that 16 rows fit the
// 16 registers) and 64 bytes (AVX-512's 32 registers; 16-bit and 8-bit rows use 32-byte
// vectors, so a 32 x 32 block of bytes or a 16 x 16 block of halves stays in registers).
template <typename U>
TileFn ForPath(SimdPath path) {
  constexpr int kSse = 16 / sizeof(U);
  switch (path) {
    case SimdPath::kAvx512:
      return sizeof(U) >= 4 ? &TileAvx512<U, 64 / sizeof(U)> : &TileAvx512<U, 32 / sizeof(U)>;
    case SimdPath::kAvx2:
      return sizeof(U) == 1 ? &TileAvx2<U, 16> : &TileAvx2<U, 32 / sizeof(U)>;
    case SimdPath::kDefault:
      break;
  }
  return &TileBase<U, kSse>;
}

using streaming::StreamAvx2;
using streaming::StreamAvx512;
using streaming::StreamSse2;

template <typename U, int K>
void StreamBase(const void* in, int64_t si, void* out, int64_t so, int64_t ni, int64_t nj) {
  TransposeTileStreaming<U, K, StreamSse2>(static_cast<const U*>(in), si, static_cast<U*>(out), so,
                                           ni, nj);
}

// flatten: the intrinsics' target must be that of the function they are inlined into.
template <typename U, int K>
[[gnu::target("avx2"), gnu::flatten]] void StreamAvx2Tile(const void* in, int64_t si, void* out,
                                                          int64_t so, int64_t ni, int64_t nj) {
  TransposeTileStreaming<U, K, StreamAvx2>(static_cast<const U*>(in), si, static_cast<U*>(out), so,
                                           ni, nj);
}

template <typename U, int K>
[[gnu::target("avx512f,avx512dq,avx512vl,avx512bw"), gnu::flatten]] void StreamAvx512Tile(
    const void* in, int64_t si, void* out, int64_t so, int64_t ni, int64_t nj) {
  TransposeTileStreaming<U, K, StreamAvx512>(static_cast<const U*>(in), si, static_cast<U*>(out),
                                             so, ni, nj);
}

// The same K per path as ForPath.
template <typename U>
TileFn StreamingForPath(SimdPath path) {
  constexpr int kAvx512 = sizeof(U) >= 4 ? 64 / sizeof(U) : 32 / sizeof(U);
  constexpr int kAvx2 = sizeof(U) == 1 ? 16 : 32 / sizeof(U);
  switch (path) {
    case SimdPath::kAvx512:
      return &StreamAvx512Tile<U, kAvx512>;
    case SimdPath::kAvx2:
      return &StreamAvx2Tile<U, kAvx2>;
    case SimdPath::kDefault:
      break;
  }
  return &StreamBase<U, 16 / sizeof(U)>;
}

constexpr int64_t kDefaultStreamingBytes = int64_t{8} << 20;
std::atomic<int64_t> streaming_bytes{kDefaultStreamingBytes};

}  // namespace

int64_t StreamingBytes() { return streaming_bytes.load(std::memory_order_relaxed); }

void SetStreamingBytesForTesting(int64_t bytes) {
  streaming_bytes.store(bytes < 0 ? kDefaultStreamingBytes : bytes, std::memory_order_relaxed);
}

TileFn StreamingTileKernel(int elem_size, SimdPath path) {
  TileFn fn = nullptr;
  BySize(elem_size, [&]<typename U>() { fn = StreamingForPath<U>(path); });
  return fn;
}

TileShape StreamingTileShapeFor(int elem_size) {
  TK_INTERNAL_CHECK(elem_size == 1 || elem_size == 2 || elem_size == 4 || elem_size == 8);
  return {64 / elem_size, 256};
}

TileShape TileShapeFor(int elem_size) {
  switch (elem_size) {
    case 1:
      return {128, 128};
    case 2:
      return {128, 64};
    case 4:
      return {64, 64};
    case 8:
      return {64, 32};
  }
  TK_INTERNAL_CHECK(false);
  return {};
}

TileFn TileKernel(int elem_size, SimdPath path) {
  TileFn fn = nullptr;
  BySize(elem_size, [&]<typename U>() { fn = ForPath<U>(path); });
  return fn;
}

}  // namespace tensorkit::transpose_internal
