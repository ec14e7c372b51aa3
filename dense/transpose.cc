// The tile copies of transpose_internal.h, one per element size and instruction-set path.
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "tensorkit/common/cuda/by_size.h"
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
TileFn ForPath(ops_internal::SimdPath path) {
  constexpr int kSse = 16 / sizeof(U);
  switch (path) {
    case ops_internal::SimdPath::kAvx512:
      return sizeof(U) >= 4 ? &TileAvx512<U, 64 / sizeof(U)> : &TileAvx512<U, 32 / sizeof(U)>;
    case ops_internal::SimdPath::kAvx2:
      return sizeof(U) == 1 ? &TileAvx2<U, 16> : &TileAvx2<U, 32 / sizeof(U)>;
    case ops_internal::SimdPath::kDefault:
      break;
  }
  return &TileBase<U, kSse>;
}

// 64 bytes from anywhere to an aligned output line, past the caches, per path.
struct StreamSse2 {
  [[gnu::always_inline]] static inline void Line(void* dst, const void* src) {
    for (int k = 0; k < 4; ++k) {
      _mm_stream_si128(static_cast<__m128i*>(dst) + k,
                       _mm_loadu_si128(static_cast<const __m128i*>(src) + k));
    }
  }
  [[gnu::always_inline]] static inline void Fence() { _mm_sfence(); }
};

struct StreamAvx2 {
  [[gnu::target("avx2")]] static inline void Line(void* dst, const void* src) {
    for (int k = 0; k < 2; ++k) {
      _mm256_stream_si256(static_cast<__m256i*>(dst) + k,
                          _mm256_loadu_si256(static_cast<const __m256i*>(src) + k));
    }
  }
  [[gnu::always_inline]] static inline void Fence() { _mm_sfence(); }
};

struct StreamAvx512 {
  [[gnu::target("avx512f,avx512dq,avx512vl,avx512bw")]] static inline void Line(void* dst,
                                                                                const void* src) {
    _mm512_stream_si512(static_cast<__m512i*>(dst), _mm512_loadu_si512(src));
  }
  [[gnu::always_inline]] static inline void Fence() { _mm_sfence(); }
};

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
TileFn StreamingForPath(ops_internal::SimdPath path) {
  constexpr int kAvx512 = sizeof(U) >= 4 ? 64 / sizeof(U) : 32 / sizeof(U);
  constexpr int kAvx2 = sizeof(U) == 1 ? 16 : 32 / sizeof(U);
  switch (path) {
    case ops_internal::SimdPath::kAvx512:
      return &StreamAvx512Tile<U, kAvx512>;
    case ops_internal::SimdPath::kAvx2:
      return &StreamAvx2Tile<U, kAvx2>;
    case ops_internal::SimdPath::kDefault:
      break;
  }
  return &StreamBase<U, 16 / sizeof(U)>;
}

// StreamingCopy on one path: the partial lines at either end with memcpy, the whole ones
// streamed.
template <typename Stream>
[[gnu::always_inline]] inline void StreamBytes(char* dst, const char* src, int64_t bytes) {
  const int64_t head = std::min<int64_t>(
      bytes, static_cast<int64_t>((64 - reinterpret_cast<uintptr_t>(dst) % 64) % 64));
  std::memcpy(dst, src, static_cast<size_t>(head));
  int64_t i = head;
  for (; i + 64 <= bytes; i += 64) Stream::Line(dst + i, src + i);
  std::memcpy(dst + i, src + i, static_cast<size_t>(bytes - i));
  Stream::Fence();
}

void StreamBytesBase(char* dst, const char* src, int64_t bytes) {
  StreamBytes<StreamSse2>(dst, src, bytes);
}

[[gnu::target("avx2"), gnu::flatten]] void StreamBytesAvx2(char* dst, const char* src,
                                                           int64_t bytes) {
  StreamBytes<StreamAvx2>(dst, src, bytes);
}

[[gnu::target("avx512f,avx512dq,avx512vl,avx512bw"), gnu::flatten]] void StreamBytesAvx512(
    char* dst, const char* src, int64_t bytes) {
  StreamBytes<StreamAvx512>(dst, src, bytes);
}

constexpr int64_t kDefaultStreamingBytes = int64_t{8} << 20;
std::atomic<int64_t> streaming_bytes{kDefaultStreamingBytes};

}  // namespace

int64_t StreamingBytes() { return streaming_bytes.load(std::memory_order_relaxed); }

void SetStreamingBytesForTesting(int64_t bytes) {
  streaming_bytes.store(bytes < 0 ? kDefaultStreamingBytes : bytes, std::memory_order_relaxed);
}

void StreamingCopy(void* dst, const void* src, int64_t bytes) {
  if (bytes <= 0) return;
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  switch (ops_internal::ActiveSimdPath()) {
    case ops_internal::SimdPath::kAvx512:
      return StreamBytesAvx512(d, s, bytes);
    case ops_internal::SimdPath::kAvx2:
      return StreamBytesAvx2(d, s, bytes);
    case ops_internal::SimdPath::kDefault:
      break;
  }
  StreamBytesBase(d, s, bytes);
}

TileFn StreamingTileKernel(int elem_size, ops_internal::SimdPath path) {
  TileFn fn = nullptr;
  cuda_backend::BySize(elem_size, [&]<typename U>() { fn = StreamingForPath<U>(path); });
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

TileFn TileKernel(int elem_size, ops_internal::SimdPath path) {
  TileFn fn = nullptr;
  cuda_backend::BySize(elem_size, [&]<typename U>() { fn = ForPath<U>(path); });
  return fn;
}

}  // namespace tensorkit::transpose_internal
