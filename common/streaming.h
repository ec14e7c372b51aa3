// tensorkit/common/streaming.h: writes that bypass the caches (internal; not installed), for
// outputs too large to stay in them: stores that bypass the caches neither read each output
// line first nor evict the input.
//
// Glossary
//   line     64 aligned bytes of the output, written whole by one Line call.
//   Stream*  one struct per SimdPath (common/simd_path.h) with Line(dst, src), which writes the
//            64 bytes at src (any alignment) to the aligned line dst with non-temporal stores,
//            and Fence(), which orders those stores before later ones. A caller compiled for
//            the path's target (gnu::target plus gnu::flatten) inlines them.
#ifndef TENSORKIT_COMMON_STREAMING_H_
#define TENSORKIT_COMMON_STREAMING_H_

#include <immintrin.h>

#include <cstdint>

namespace tensorkit {

// memcpy (dst and src not overlapping) whose whole 64-byte lines of `dst` are written with
// non-temporal stores on the active SIMD path, then fenced: for large outputs, e.g.
// SparseTensor::Concat's.
void StreamingCopy(void* dst, const void* src, int64_t bytes);

namespace streaming {

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

}  // namespace streaming
}  // namespace tensorkit

#endif  // TENSORKIT_COMMON_STREAMING_H_
