#include "tensorkit/common/streaming.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "tensorkit/common/simd_path.h"

namespace tensorkit {
namespace {

using streaming::StreamAvx2;
using streaming::StreamAvx512;
using streaming::StreamSse2;

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

}  // namespace

void StreamingCopy(void* dst, const void* src, int64_t bytes) {
  if (bytes <= 0) return;
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  switch (ActiveSimdPath()) {
    case SimdPath::kAvx512:
      return StreamBytesAvx512(d, s, bytes);
    case SimdPath::kAvx2:
      return StreamBytesAvx2(d, s, bytes);
    case SimdPath::kDefault:
      break;
  }
  StreamBytesBase(d, s, bytes);
}

}  // namespace tensorkit
