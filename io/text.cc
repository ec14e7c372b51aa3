#include "tensorkit/io/text.h"

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "tensorkit/common/simd_path.h"

namespace tensorkit::io {
namespace {

// Whether the line starting at p (before end) is a data line: not blank, not a comment.
bool IsDataLine(const char* p, const char* end, char comment) {
  p = SkipLineBlanks(p, end);
  return p < end && *p != '\n' && *p != comment;
}

// Whether a line starting with c needs IsDataLine's look: a blank, a control byte, a comment.
bool MayNotStartData(char c, char comment) {
  return static_cast<unsigned char>(c) <= ' ' || c == comment;
}

// Pass 1 over [b, e): its lines, and its data lines. Newlines are counted a vector at a time;
// only a line whose first byte is a blank, a control byte or the comment character is looked
// at (IsDataLine), so the vector loop classifies bytes by two comparisons.
#if defined(__SSE2__)
int64_t SumLanes(__m128i lanes) {
  const __m128i sums = _mm_sad_epu8(lanes, _mm_setzero_si128());
  return _mm_cvtsi128_si64(sums) + _mm_cvtsi128_si64(_mm_unpackhi_epi64(sums, sums));
}

template <typename Scalar>
void CountLinesSse2(const char* b, const char* e, char comment, const Scalar& scalar_tail) {
  int64_t newlines = 0, not_data = 0;
  bool at_start = true;  // the next byte starts a line
  const char* p = b;
  const __m128i nl = _mm_set1_epi8('\n'), sp = _mm_set1_epi8(' '), hash = _mm_set1_epi8(comment);
  // Newlines are summed per byte lane (255 blocks at most before the lanes are added up), as
  // the baseline x86-64 target has no popcnt instruction.
  __m128i lanes = _mm_setzero_si128();
  int in_lanes = 0;
  for (; e - p >= 16; p += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i is_nl = _mm_cmpeq_epi8(v, nl);
    const unsigned nl_mask = static_cast<unsigned>(_mm_movemask_epi8(is_nl));
    const __m128i special =
        _mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(v, sp), v), _mm_cmpeq_epi8(v, hash));
    const unsigned starts = ((nl_mask << 1) | (at_start ? 1u : 0u)) & 0xFFFFu;
    unsigned check = starts & static_cast<unsigned>(_mm_movemask_epi8(special));
    while (check != 0) {
      const int bit = std::countr_zero(check);
      check &= check - 1;
      not_data += !IsDataLine(p + bit, e, comment);
    }
    lanes = _mm_sub_epi8(lanes, is_nl);
    if (++in_lanes == 255) {
      newlines += SumLanes(lanes);
      lanes = _mm_setzero_si128();
      in_lanes = 0;
    }
    at_start = (nl_mask >> 15) != 0;
  }
  newlines += SumLanes(lanes);
  scalar_tail(p, at_start, newlines, not_data);
}

// The same 32 bytes at a time, on CPUs with AVX2.
template <typename Scalar>
[[gnu::target("avx2,bmi,bmi2,popcnt")]] void CountLinesAvx2(const char* b, const char* e,
                                                            char comment,
                                                            const Scalar& scalar_tail) {
  int64_t newlines = 0, not_data = 0;
  bool at_start = true;
  const char* p = b;
  const __m256i nl = _mm256_set1_epi8('\n'), sp = _mm256_set1_epi8(' '),
                hash = _mm256_set1_epi8(comment);
  for (; e - p >= 32; p += 32) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    const uint32_t nl_mask = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, nl)));
    const __m256i special =
        _mm256_or_si256(_mm256_cmpeq_epi8(_mm256_min_epu8(v, sp), v), _mm256_cmpeq_epi8(v, hash));
    const uint32_t starts = (nl_mask << 1) | (at_start ? 1u : 0u);
    uint32_t check = starts & static_cast<uint32_t>(_mm256_movemask_epi8(special));
    while (check != 0) {
      const int bit = std::countr_zero(check);
      check &= check - 1;
      not_data += !IsDataLine(p + bit, e, comment);
    }
    newlines += std::popcount(nl_mask);
    at_start = (nl_mask >> 31) != 0;
  }
  scalar_tail(p, at_start, newlines, not_data);
}
#endif

void CountLines(const char* b, const char* e, char comment, int64_t* lines, int64_t* entries) {
  // The bytes the vector loop left: one at a time; then the totals.
  const auto tail = [&](const char* p, bool at_start, int64_t newlines, int64_t not_data) {
    for (; p < e; ++p) {
      if (at_start && MayNotStartData(*p, comment)) not_data += !IsDataLine(p, e, comment);
      at_start = *p == '\n';
      newlines += at_start;
    }
    // A last line without its newline is a line too; at_start after a final newline starts
    // none.
    *lines = newlines + (e > b && e[-1] != '\n' ? 1 : 0);
    *entries = *lines - not_data;
  };
#if defined(__SSE2__)
  if (ActiveSimdPath() != SimdPath::kDefault) {
    CountLinesAvx2(b, e, comment, tail);
  } else {
    CountLinesSse2(b, e, comment, tail);
  }
#else
  tail(b, true, 0, 0);
#endif
}

}  // namespace

std::vector<TextChunk> ChunkLines(const Bytes& bytes, int64_t body, int64_t first_line,
                                  char comment) {
  return ChunkLines(bytes, body, first_line, comment, {});
}

std::vector<TextChunk> ChunkLines(
    const Bytes& bytes, int64_t body, int64_t first_line, char comment,
    const std::function<void(int64_t begin, int64_t end)>& done_with) {
  const char* base = reinterpret_cast<const char*>(bytes.data);
  const int64_t size = static_cast<int64_t>(bytes.size);
  // Boundaries: body, then the first line start at or after each multiple of kChunkBytes.
  std::vector<TextChunk> chunks;
  int64_t begin = body;
  while (begin < size) {
    int64_t target = std::min(size, begin + kChunkBytes);
    int64_t end = size;
    if (target < size) {
      const void* nl = std::memchr(base + target - 1, '\n', size - (target - 1));
      end = nl ? static_cast<const char*>(nl) - base + 1 : size;
      if (done_with) done_with(target - 1, end);
    }
    TextChunk c;
    c.begin = begin;
    c.end = end;
    chunks.push_back(c);
    begin = end;
  }
  NamingCancellation("'" + bytes.name + "'", [&] {  // the chunks are poll points
    ParallelChunks(static_cast<int64_t>(chunks.size()), 1, [&](int64_t i, int64_t, int64_t) {
      TextChunk& c = chunks[i];
      CountLines(base + c.begin, base + c.end, comment, &c.lines, &c.entries);
      if (done_with) done_with(c.begin, c.end);
    });
  });
  int64_t line = first_line, entry = 0;
  for (TextChunk& c : chunks) {
    c.first_line = line;
    c.first_entry = entry;
    line += c.lines;
    entry += c.entries;
  }
  return chunks;
}

}  // namespace tensorkit::io
