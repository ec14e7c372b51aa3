// tensorkit/io/text.h: parallel parsing and writing of line-based text formats (internal).
//
// Glossary
//   body       the part of a text file after its header lines: one entry per data line.
//   data line  a line that is neither blank nor a comment (first non-blank char `comment`).
//   chunk      a run of whole lines starting near a fixed byte offset (kChunkBytes apart) so that
//              the split, and so every result, never depends on the thread count.
//   pass 1     counts lines and data lines per chunk; prefix sums then give each chunk its
//              first line number and first output position, and the total is checked against
//              the header BEFORE anything is allocated.
//   pass 2     parses each chunk straight into the output; the first error of the earliest
//              chunk is reported, naming the file and the line.
#ifndef TENSORKIT_IO_TEXT_H_
#define TENSORKIT_IO_TEXT_H_

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "tensorkit/common/file_util.h"
#include "tensorkit/common/parallel.h"

namespace tensorkit::io {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

inline constexpr int64_t kChunkBytes = int64_t{1} << 20;

struct TextChunk {
  int64_t begin = 0, end = 0;  // byte range of whole lines
  int64_t first_line = 0;      // 1-based line number of the chunk's first line
  int64_t first_entry = 0;     // index of its first data line among all data lines
  int64_t lines = 0, entries = 0;
};

// Splits [body, size) into chunks and runs pass 1. `first_line` is the line number at `body`.
std::vector<TextChunk> ChunkLines(const Bytes& bytes, int64_t body, int64_t first_line,
                                  char comment);
inline int64_t TotalEntries(const std::vector<TextChunk>& chunks) {
  return chunks.empty() ? 0 : chunks.back().first_entry + chunks.back().entries;
}

// Calls visit(begin, end, line_number) for the lines of [p, end) in order, `begin` past the
// line's leading blanks and `end` at its '\n' (or the end), numbering from `line`; stops when
// visit returns false. Returns the number of the line it stopped at, or the one after the last.
template <typename Visit>
int64_t WalkLines(const char* p, const char* end, int64_t line, const Visit& visit);

// Pass 2: calls parse(line_begin, line_end, entry, line_number, chunk_index) for every data
// line. `parse` throws Error for bad content; the earliest one is rethrown as
// Error(code, "<fmt>: '<file>' line <n>: <what>").
template <typename Parse>
void ParseDataLines(const Bytes& bytes, const std::vector<TextChunk>& chunks, char comment,
                    const char* fmt, const Parse& parse);
// The same, calling done(chunk_index) after each chunk's last line (for readers that stream a
// chunk's results out before the next: bounded memory).
template <typename Parse, typename Done>
void ParseDataLines(const Bytes& bytes, const std::vector<TextChunk>& chunks, char comment,
                    const char* fmt, const Parse& parse, const Done& done);

// A cursor over one line's whitespace-separated tokens.
class LineTokens {
 public:
  LineTokens(const char* b, const char* e) : p_(b), e_(e) {}
  bool AtEnd() {
    Skip();
    return p_ == e_;
  }
  // Parses the next token as T (an integer or floating type); throws Error(kCorrupt).
  template <typename T>
  T Next(const char* what);
  void ExpectEnd();
  // Skips the tokens left, returning how many there were.
  int64_t CountRest() {
    int64_t n = 0;
    for (; !AtEnd(); ++n) {
      while (p_ != e_ && *p_ != ' ' && *p_ != '\t' && *p_ != '\r') ++p_;
    }
    return n;
  }

 private:
  void Skip() {
    while (p_ != e_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\r')) ++p_;
  }
  const char* p_;
  const char* e_;
};

// The value strtod gives for a number from_chars found out of range: +-0 or +-infinity.
template <typename T>
T OutOfRangeValue(const char* b, const char* e);

// Calls format(i, &out) for i in [0, n) in parallel over fixed chunks of entries and writes the
// text in entry order (a window of chunks at a time, so memory stays bounded).
template <typename Format>
void WriteLinesParallel(AtomicFile* file, int64_t n, const Format& format);

// ---------------------------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------------------------

template <typename Visit>
int64_t WalkLines(const char* p, const char* end, int64_t line, const Visit& visit) {
  while (p < end) {
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', end - p));
    const char* le = nl ? nl : end;
    const char* q = p;
    while (q < le && (*q == ' ' || *q == '\t' || *q == '\r')) ++q;
    if (!visit(q, le, line)) return line;
    ++line;
    p = le + 1;
  }
  return line;
}

template <typename Parse>
void ParseDataLines(const Bytes& bytes, const std::vector<TextChunk>& chunks, char comment,
                    const char* fmt, const Parse& parse) {
  ParseDataLines(bytes, chunks, comment, fmt, parse, [](int64_t) {});
}

template <typename Parse, typename Done>
void ParseDataLines(const Bytes& bytes, const std::vector<TextChunk>& chunks, char comment,
                    const char* fmt, const Parse& parse, const Done& done) {
  struct Failure {
    bool failed = false;
    ErrorCode code = ErrorCode::kCorrupt;
    int64_t line = 0;
    std::string what;
  };
  std::vector<Failure> failures(chunks.size());
  const char* base = reinterpret_cast<const char*>(bytes.data);
  ParallelChunks(static_cast<int64_t>(chunks.size()), 1, [&](int64_t c, int64_t, int64_t) {
    const TextChunk& ch = chunks[c];
    int64_t line = ch.first_line, entry = ch.first_entry;
    try {
      WalkLines(base + ch.begin, base + ch.end, ch.first_line,
                [&](const char* q, const char* le, int64_t n) {
                  line = n;  // for the message, should parse throw
                  if (q < le && *q != comment) parse(q, le, entry++, n, c);
                  return true;
                });
      done(c);
    } catch (const Error& e) {
      failures[c] = Failure{true, e.code(), line, e.what()};
    }
  });
  for (const Failure& f : failures) {
    if (f.failed) Throw(f.code, fmt, ": '", bytes.name, "' line ", f.line, ": ", f.what);
  }
}

template <typename T>
T LineTokens::Next(const char* what) {
  Skip();
  const char* start = p_;
  while (p_ != e_ && *p_ != ' ' && *p_ != '\t' && *p_ != '\r') ++p_;
  TK_CHECK(start != p_, kCorrupt, "missing ", what);
  T v{};
  const char* first = start;
  if constexpr (std::is_integral_v<T>) {
    if (*first == '+') ++first;  // from_chars rejects a leading '+'
  } else {
    if (*first == '+' && p_ - first > 1 && first[1] != '-') ++first;
  }
  auto [q, ec] = std::from_chars(first, p_, v);
  const std::string_view token(start, static_cast<size_t>(p_ - start));
  if constexpr (std::is_floating_point_v<T>) {
    // As strtod (and so NumPy and SciPy): too small rounds to zero, too large to infinity.
    if (ec == std::errc::result_out_of_range && q == p_) return OutOfRangeValue<T>(first, p_);
    TK_CHECK(ec == std::errc() && q == p_, kCorrupt, what, " '", Excerpt(token),
             "' is not a number");
  } else {
    TK_CHECK(ec != std::errc::result_out_of_range || q != p_, kCorrupt, what, " '", Excerpt(token),
             "' is out of range for int64");
    TK_CHECK(ec == std::errc() && q == p_, kCorrupt, what, " '", Excerpt(token),
             "' is not an integer");
  }
  return v;
}

template <typename T>
T OutOfRangeValue(const char* b, const char* e) {
  // from_chars reports a syntactically valid number whose value rounds to 0 or to infinity.
  // It is infinite when its decimal exponent (digits before the point, or minus the zeros after
  // it, plus the written exponent) is positive, else zero.
  const bool negative = *b == '-';
  if (negative) ++b;
  int64_t digits_before = 0, zeros_after = 0;
  bool nonzero = false, point = false;
  const char* p = b;
  for (; p < e && ((*p >= '0' && *p <= '9') || *p == '.'); ++p) {
    if (*p == '.') {
      point = true;
    } else if (*p != '0' || nonzero) {
      if (!point) ++digits_before;
      nonzero = true;
    } else if (point) {
      ++zeros_after;
    }
  }
  int64_t exponent = 0;
  if (p < e && (*p == 'e' || *p == 'E')) {
    ++p;
    const bool neg_exp = p < e && *p == '-';
    if (p < e && (*p == '-' || *p == '+')) ++p;
    for (; p < e; ++p) exponent = std::min<int64_t>(exponent * 10 + (*p - '0'), int64_t{1} << 40);
    if (neg_exp) exponent = -exponent;
  }
  const int64_t magnitude = (digits_before > 0 ? digits_before : -zeros_after) + exponent;
  const T v = magnitude > 0 ? std::numeric_limits<T>::infinity() : T{0};
  return negative ? -v : v;
}

inline void LineTokens::ExpectEnd() {
  Skip();
  TK_CHECK(p_ == e_, kCorrupt, "unexpected text '", Excerpt(std::string_view(p_, e_ - p_)),
           "' after the entry");
}

template <typename Format>
void WriteLinesParallel(AtomicFile* file, int64_t n, const Format& format) {
  constexpr int64_t kEntries = int64_t{1} << 14;
  constexpr int64_t kWindow = 64;  // chunks formatted before each write
  std::vector<std::string> text(kWindow);
  for (int64_t w = 0; w < n; w += kEntries * kWindow) {
    const int64_t wn = std::min(n - w, kEntries * kWindow);
    ParallelChunks(wn, kEntries, [&](int64_t c, int64_t b, int64_t e) {
      std::string& out = text[c];
      out.clear();
      for (int64_t i = b; i < e; ++i) format(w + i, &out);
    });
    for (int64_t c = 0; c < NumChunks(wn, kEntries); ++c) file->Write(text[c]);
  }
}

// Appends `v` as shortest round-trip text.
template <typename T>
void AppendNumber(T v, std::string* out) {
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, p);
}

}  // namespace tensorkit::io

#endif  // TENSORKIT_IO_TEXT_H_
