#include "tensorkit/io/text.h"

namespace tensorkit::io {

std::vector<TextChunk> ChunkLines(const Bytes& bytes, int64_t body, int64_t first_line,
                                  char comment) {
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
    }
    TextChunk c;
    c.begin = begin;
    c.end = end;
    chunks.push_back(c);
    begin = end;
  }
  ParallelChunks(static_cast<int64_t>(chunks.size()), 1, [&](int64_t i, int64_t, int64_t) {
    TextChunk& c = chunks[i];
    int64_t entries = 0;
    c.lines =
        WalkLines(base + c.begin, base + c.end, 0, [&](const char* q, const char* le, int64_t) {
          entries += (q < le && *q != comment);
          return true;
        });
    c.entries = entries;
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
