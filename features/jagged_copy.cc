// The block gather and the small passes that the jagged conversions and the keyed jagged
// operations share.
#include <algorithm>
#include <cstring>
#include <string>

#include "tensorkit/common/error.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/common/streaming.h"
#include "tensorkit/dense/transpose_internal.h"
#include "tensorkit/features/jagged_internal.h"

namespace tensorkit::jagged_internal {

namespace {

// Elements [first, last) of block `b`.
void CopyPart(const CopyBlock& b, int64_t first, int64_t last, bool stream) {
  if (last <= first) return;
  if (b.dtype == DType::kString) {
    const std::string* src = static_cast<const std::string*>(b.src);
    std::copy(src + first, src + last, static_cast<std::string*>(b.dst) + first);
    return;
  }
  const int64_t size = DTypeSize(b.dtype);
  const char* src = static_cast<const char*>(b.src) + first * size;
  char* dst = static_cast<char*>(b.dst) + first * size;
  if (stream) {
    StreamingCopy(dst, src, (last - first) * size);
  } else {
    std::memcpy(dst, src, static_cast<size_t>((last - first) * size));
  }
}

}  // namespace

void CopyBlocks(const std::vector<CopyBlock>& blocks) {
  // start[k]: the byte at which block k begins in the blocks' concatenation.
  const size_t n = blocks.size();
  std::vector<int64_t> start(n + 1, 0);
  for (size_t k = 0; k < n; ++k)
    start[k + 1] = start[k] + blocks[k].count * DTypeSize(blocks[k].dtype);
  const int64_t total = start[n];
  // The output is as large as the input here, so it never stays in the caches: stores that
  // bypass them save reading every output line first.
  const bool stream = total >= transpose_internal::StreamingBytes();
  // Piece p copies the elements whose first byte lies in [p * kPieceBytes, (p + 1) * kPieceBytes):
  // every element belongs to exactly one piece, whatever the element sizes.
  ParallelChunks(total, kPieceBytes, [&](int64_t, int64_t lo, int64_t hi) {
    size_t k =
        static_cast<size_t>(std::upper_bound(start.begin(), start.end(), lo) - start.begin()) - 1;
    for (; k < n && start[k] < hi; ++k) {
      const int64_t size = DTypeSize(blocks[k].dtype);
      const int64_t first = std::max<int64_t>(0, (lo - start[k] + size - 1) / size);
      const int64_t last = std::min(blocks[k].count, (hi - start[k] + size - 1) / size);
      CopyPart(blocks[k], first, last, stream);
    }
  });
}

void WriteIndices(const int64_t* off, int64_t b, int64_t lo, int64_t hi, int rank, int64_t* idx) {
  int64_t r = std::upper_bound(off, off + b + 1, lo) - off - 1;
  for (; r < b && off[r] < hi; ++r) {
    const int64_t s = std::max(off[r], lo), e = std::min(off[r + 1], hi);
    for (int64_t i = s; i < e; ++i) {
      if (rank == 1) {
        idx[i] = i - off[r];
      } else {
        idx[2 * i] = r;
        idx[2 * i + 1] = i - off[r];
      }
    }
  }
}

int64_t MaxLength(const int64_t* off, int64_t b) {
  constexpr int64_t kRows = int64_t{1} << 16;
  std::vector<int64_t> part(static_cast<size_t>(NumChunks(b, kRows)), 0);
  ParallelChunks(b, kRows, [&](int64_t c, int64_t lo, int64_t hi) {
    int64_t m = 0;
    for (int64_t i = lo; i < hi; ++i) m = std::max(m, off[i + 1] - off[i]);
    part[c] = m;
  });
  int64_t m = 0;
  for (int64_t x : part) m = std::max(m, x);
  return m;
}

}  // namespace tensorkit::jagged_internal
