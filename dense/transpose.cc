// The tile copies of transpose_internal.h, one per element size and instruction-set path.
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

}  // namespace

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
  switch (elem_size) {
    case 1:
      return ForPath<uint8_t>(path);
    case 2:
      return ForPath<uint16_t>(path);
    case 4:
      return ForPath<uint32_t>(path);
    case 8:
      return ForPath<uint64_t>(path);
  }
  TK_INTERNAL_CHECK(false);
  return nullptr;
}

}  // namespace tensorkit::transpose_internal
