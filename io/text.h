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
//   fast path  a reader's parser of the common form of an entry line (unsigned digits, plain
//              reals, single separators), scanning without first finding the line's end. It
//              declines anything else, and the reader's general parser then takes that line,
//              so results and errors are those of the general parser on every input.
#ifndef TENSORKIT_IO_TEXT_H_
#define TENSORKIT_IO_TEXT_H_

#include <fast_float/fast_float.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "tensorkit/common/alloc_fault.h"
#include "tensorkit/common/file_util.h"
#include "tensorkit/common/half.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/common/simd_path.h"

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
// The same, calling done_with(begin, end) on each byte range it has finished reading (a
// boundary's bytes, then each chunk once counted; from several threads): streaming readers
// give those pages back there.
std::vector<TextChunk> ChunkLines(const Bytes& bytes, int64_t body, int64_t first_line,
                                  char comment,
                                  const std::function<void(int64_t begin, int64_t end)>& done_with);
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

// The same with a fast path: fast(p, end, entry, chunk_index) parses the line starting at p
// (nothing of it consumed yet) and returns the pointer to its '\n' (or to `end`), or nullptr to
// decline; a declined line goes to parse(...) as above.
template <typename Fast, typename Parse>
void ParseDataLinesFast(const Bytes& bytes, const std::vector<TextChunk>& chunks, char comment,
                        const char* fmt, const Fast& fast, const Parse& parse);

// Fast-path scanners: each reads one number at *p, advances *p past it and returns true, or
// returns false (leaving *p) when the text is not in the plain form it takes.
inline bool IsLineBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }
inline const char* SkipLineBlanks(const char* p, const char* end) {
  while (p < end && IsLineBlank(*p)) ++p;
  return p;
}
// 1 to 18 decimal digits (no sign), eight at a time.
[[gnu::always_inline]] inline bool ScanDigits(const char** p, const char* end, int64_t* v);
// Two of ScanDigits' numbers separated by blanks ("i j" of a line).
[[gnu::always_inline]] inline bool ScanDigitPair(const char** p, const char* end, int64_t* a,
                                                 int64_t* b);
// An optional '-' then ScanDigits.
inline bool ScanInteger(const char** p, const char* end, int64_t* v);
// A finite real starting with a digit, '-' or '.', correctly rounded (fast_float: the value
// strtod gives); words (inf, nan), a leading '+' and out-of-range values are declined.
[[gnu::always_inline]] inline bool ScanReal(const char** p, const char* end, double* v);
// The commonest entry lines of coordinate files, "i j ... v\n": K unsigned indices of 1 to 8
// digits and a real [-]W.F[e[+-]X] (W 1 to 3 digits, F at least 1, 19 digits in all, the
// exponent X 1 to 3 digits after 'e' or 'E'), single spaces between them and nothing after,
// the '\n' among the first 48 bytes. The fields' places all come from one look at 48 bytes, so
// no field's scan waits for the one before it to end (a line's chain of dependent steps, not
// its instruction count, bounded the field-by-field scan). Returns the line's '\n' with
// indices[K] and *v set (the real correctly rounded, as ScanReal), or nullptr for any other
// line, for values out of range, or when fewer than 64 bytes are left from p.
template <int K>
[[gnu::always_inline]] inline const char* ScanIndicesRealLine(const char* p, const char* end,
                                                              int64_t* indices, double* v);
template <typename T>
[[gnu::always_inline]] inline bool ScanNumber(const char** p, const char* end, T* v) {
  if constexpr (std::is_integral_v<T>) {
    return ScanInteger(p, end, v);
  } else {
    return ScanReal(p, end, v);
  }
}

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
// text in entry order (a window of chunks at a time, so memory stays bounded; a window is
// written while the next one is formatted).
template <typename Format>
void WriteLinesParallel(AtomicFile* file, int64_t n, const Format& format);
// The same for lines of at most `max_line` bytes: format(i, char* out) writes entry i at out
// and returns the end of what it wrote.
template <typename Format>
void WriteBoundedLinesParallel(AtomicFile* file, int64_t n, int64_t max_line, const Format& format);
// Formats chunk c of `chunks` by format_chunk(c, &text) in parallel, a window at a time, and
// writes the texts in chunk order, the previous window's write overlapping the next's formatting.
template <typename FormatChunk>
void WriteChunksInOrder(AtomicFile* file, int64_t chunks, const FormatChunk& format_chunk);

// The longest text AppendNumber / WriteNumber give for any value of T.
inline constexpr int64_t kMaxNumberChars = 32;
// Writes `v` (any numeric dtype's type) as shortest round-trip text at out; returns its end.
// bool is 0 or 1, int8/uint8 are numbers (not characters), float16/bfloat16 their float value.
template <typename T>
char* WriteNumber(T v, char* out) {
  if constexpr (std::is_same_v<T, bool>) {
    *out = v ? '1' : '0';
    return out + 1;
  } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return WriteNumber(static_cast<float>(v), out);
  } else if constexpr (std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>) {
    return WriteNumber(static_cast<int>(v), out);
  } else {
    return std::to_chars(out, out + kMaxNumberChars, v).ptr;
  }
}

// Writes the line "i j v\n" of a two-index coordinate entry (a .mtx line) at out, at most
// kMaxPairLineChars bytes; returns its end.
inline constexpr int64_t kMaxPairLineChars = 3 * kMaxNumberChars + 3;
template <typename T>
char* WritePairLine(int64_t i, int64_t j, T v, char* out) {
  out = WriteNumber(i, out);
  *out++ = ' ';
  out = WriteNumber(j, out);
  *out++ = ' ';
  out = WriteNumber(v, out);
  *out++ = '\n';
  return out;
}

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

namespace text_detail {
// Runs walk(c, &line) on every chunk c in parallel, walk keeping `line` at the line it is on;
// the first error of the earliest chunk is rethrown naming the file and that line.
template <typename Walk>
void WalkChunksNamingLine(const Bytes& bytes, const std::vector<TextChunk>& chunks, const char* fmt,
                          const Walk& walk) {
  struct Failure {
    bool failed = false;
    ErrorCode code = ErrorCode::kCorrupt;
    int64_t line = 0;
    std::string what;
  };
  std::vector<Failure> failures(chunks.size());
  // Each chunk is a poll point (common/cancel.h); a stop names the format and the file.
  NamingCancellation(std::string(fmt) + ": '" + bytes.name + "'", [&] {
    ParallelChunks(static_cast<int64_t>(chunks.size()), 1, [&](int64_t c, int64_t, int64_t) {
      int64_t line = chunks[c].first_line;
      try {
        walk(c, &line);
      } catch (const Error& e) {
        failures[c] = Failure{true, e.code(), line, e.what()};
      }
    });
  });
  for (const Failure& f : failures) {
    if (f.failed) Throw(f.code, fmt, ": '", bytes.name, "' line ", f.line, ": ", f.what);
  }
}
}  // namespace text_detail

template <typename Parse, typename Done>
void ParseDataLines(const Bytes& bytes, const std::vector<TextChunk>& chunks, char comment,
                    const char* fmt, const Parse& parse, const Done& done) {
  const char* base = reinterpret_cast<const char*>(bytes.data);
  text_detail::WalkChunksNamingLine(bytes, chunks, fmt, [&](int64_t c, int64_t* line) {
    const TextChunk& ch = chunks[c];
    int64_t entry = ch.first_entry;
    WalkLines(base + ch.begin, base + ch.end, ch.first_line,
              [&](const char* q, const char* le, int64_t n) {
                *line = n;  // for the message, should parse throw
                if (q < le && *q != comment) parse(q, le, entry++, n, c);
                return true;
              });
    done(c);
  });
}

namespace text_detail {
// Pass 2 over one chunk [p, end) with a fast path (ParseDataLinesFast).
template <typename Fast, typename Parse>
[[gnu::always_inline]] inline void WalkChunkFast(const char* p, const char* const end, char comment,
                                                 int64_t entry, int64_t c, int64_t* line,
                                                 const Fast& fast, const Parse& parse) {
  for (; p < end; ++*line) {
    const char* le = fast(p, end, entry, c);
    if (le != nullptr) {
      ++entry;
    } else {
      const char* nl = static_cast<const char*>(std::memchr(p, '\n', end - p));
      le = nl ? nl : end;
      const char* q = SkipLineBlanks(p, le);
      if (q < le && *q != comment) parse(q, le, entry++, *line, c);
    }
    p = le + 1;
  }
}
template <typename Fast, typename Parse>
void WalkChunkFastBaseline(const char* p, const char* end, char comment, int64_t entry, int64_t c,
                           int64_t* line, const Fast& fast, const Parse& parse) {
  WalkChunkFast(p, end, comment, entry, c, line, fast, parse);
}
#if defined(__x86_64__)
// The same loop compiled for AVX2 CPUs (BMI shifts and bit counts, three-operand vector
// instructions): the same code and results, fewer instructions.
template <typename Fast, typename Parse>
[[gnu::target("avx2,bmi,bmi2,popcnt")]] void WalkChunkFastAvx2(const char* p, const char* end,
                                                               char comment, int64_t entry,
                                                               int64_t c, int64_t* line,
                                                               const Fast& fast,
                                                               const Parse& parse) {
  WalkChunkFast(p, end, comment, entry, c, line, fast, parse);
}
#endif
}  // namespace text_detail

template <typename Fast, typename Parse>
void ParseDataLinesFast(const Bytes& bytes, const std::vector<TextChunk>& chunks, char comment,
                        const char* fmt, const Fast& fast, const Parse& parse) {
  const char* base = reinterpret_cast<const char*>(bytes.data);
  const bool avx2 = ActiveSimdPath() != SimdPath::kDefault;
  text_detail::WalkChunksNamingLine(bytes, chunks, fmt, [&](int64_t c, int64_t* line) {
    const TextChunk& ch = chunks[c];
#if defined(__x86_64__)
    if (avx2) {
      text_detail::WalkChunkFastAvx2(base + ch.begin, base + ch.end, comment, ch.first_entry, c,
                                     line, fast, parse);
      return;
    }
#endif
    text_detail::WalkChunkFastBaseline(base + ch.begin, base + ch.end, comment, ch.first_entry, c,
                                       line, fast, parse);
  });
}

namespace text_detail {
// The number of leading decimal-digit bytes of the 8 bytes `x` (first byte lowest).
inline int DigitRun(uint64_t x) {
  // A byte is a digit when its high nibble is 3 and adding 6 keeps it 3. The carries of the
  // addition only disturb bytes above a non-digit, which do not count.
  constexpr uint64_t kHigh = 0xF0F0F0F0F0F0F0F0ull;
  const uint64_t m =
      ((x & kHigh) | (((x + 0x0606060606060606ull) & kHigh) >> 4)) ^ 0x3333333333333333ull;
  constexpr uint64_t k7f = 0x7F7F7F7F7F7F7F7Full;
  const uint64_t nonzero = (((m & k7f) + k7f) | m) & ~k7f;  // the high bit of each non-digit
  return nonzero == 0 ? 8 : std::countr_zero(nonzero) >> 3;
}
// The value of the first n (1..8) digit bytes of x.
inline uint64_t DigitsValue(uint64_t x, int n) {
  uint64_t d = x - 0x3030303030303030ull;  // borrows only leave the non-digit bytes above
  if (n < 8) d <<= 8 * (8 - n);            // leading zero digits in place of the rest
  d = d * 10 + (d >> 8);                   // pairs
  d = (((d & 0x000000FF000000FFull) * (100 + (1000000ull << 32))) +
       (((d >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32)))) >>
      32;
  return d;
}
// Powers of ten that fit in 64 bits.
inline constexpr uint64_t kPow10[20] = {1ull,
                                        10ull,
                                        100ull,
                                        1000ull,
                                        10000ull,
                                        100000ull,
                                        1000000ull,
                                        10000000ull,
                                        100000000ull,
                                        1000000000ull,
                                        10000000000ull,
                                        100000000000ull,
                                        1000000000000ull,
                                        10000000000000ull,
                                        100000000000000ull,
                                        1000000000000000ull,
                                        10000000000000000ull,
                                        100000000000000000ull,
                                        1000000000000000000ull,
                                        10000000000000000000ull};
// Consumes the digits at *pp, eight at a time, appending them to *w while *n (the digits seen so
// far) stays at most 19, so that *w cannot wrap; *n counts them all.
[[gnu::always_inline]] inline void AppendDigits(const char** pp, const char* end, uint64_t* w,
                                                int* n) {
  const char* p = *pp;
  for (;;) {
    if (end - p < 8) {
      for (; p < end && static_cast<unsigned>(*p - '0') < 10; ++p) {
        if (++*n <= 19) *w = *w * 10 + static_cast<uint64_t>(*p - '0');
      }
      break;
    }
    uint64_t x;
    std::memcpy(&x, p, 8);
    if constexpr (std::endian::native == std::endian::big) x = __builtin_bswap64(x);
    const int k = DigitRun(x);
    if (k == 0) break;
    *n += k;
    if (*n <= 19) *w = *w * kPow10[k] + DigitsValue(x, k);
    p += k;
    if (k < 8) break;
  }
  *pp = p;
}
#if defined(__SSE2__)
// The bytes of v that are decimal digits, one bit a lane (lane 0 lowest).
[[gnu::always_inline]] inline unsigned DigitLanes(__m128i v) {
  const __m128i d = _mm_sub_epi8(v, _mm_set1_epi8('0'));
  return static_cast<unsigned>(
      _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(9)), d)));
}
// The length of the run of digits lanes `digits` start with (16 when all are digits).
[[gnu::always_inline]] inline int LeadingRun(unsigned digits) {
  return std::countr_zero(~digits | 0x10000u);
}
// The first n (0..16) lanes of v, digits all, as the 16-digit number they make with zeros in
// the other lanes: their value times 10^(16 - n).
[[gnu::always_inline]] inline uint64_t PaddedDigits16(__m128i v, int n) {
  const __m128i lane = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m128i keep = _mm_cmpgt_epi8(_mm_set1_epi8(static_cast<char>(n)), lane);
  const __m128i d = _mm_and_si128(_mm_sub_epi8(v, _mm_set1_epi8('0')), keep);
  const __m128i zero = _mm_setzero_si128();
  const __m128i by10 = _mm_setr_epi16(10, 1, 10, 1, 10, 1, 10, 1);
  // Neighbours are combined by multiply-adds: pairs of digits, then of pairs, then of quads.
  const __m128i pairs = _mm_packs_epi32(_mm_madd_epi16(_mm_unpacklo_epi8(d, zero), by10),
                                        _mm_madd_epi16(_mm_unpackhi_epi8(d, zero), by10));
  const __m128i quads = _mm_madd_epi16(pairs, _mm_setr_epi16(100, 1, 100, 1, 100, 1, 100, 1));
  const __m128i eights = _mm_madd_epi16(_mm_packs_epi32(quads, quads),
                                        _mm_setr_epi16(10000, 1, 10000, 1, 10000, 1, 10000, 1));
  const uint64_t both = static_cast<uint64_t>(_mm_cvtsi128_si64(eights));
  return (both & 0xFFFFFFFFu) * 100000000u + (both >> 32);
}
// The digits of a real in the readers' common form as one number: `whole` (1 to 3) digits in
// the 8 bytes `head`, then the fraction at f: nb (0 to 16) digits and nt (0 to 2) more, zeros
// appended up to 16 + nt after the point (the value is the result times 10^-(16 + nt)).
[[gnu::always_inline]] inline uint64_t CommonFormDigits(uint64_t head, int whole, const char* f,
                                                        int nb, int nt) {
  const uint64_t t0 = static_cast<uint64_t>(static_cast<unsigned char>(f[16]) - '0');
  const uint64_t t1 = static_cast<uint64_t>(static_cast<unsigned char>(f[17]) - '0');
  // At most two past the sixteenth fit in 19 digits: their value from the two bytes.
  const uint64_t tail = nt == 2 ? t0 * 10 + t1 : nt == 1 ? t0 : 0;
  return DigitsValue(head, whole) * kPow10[16 + nt] +
         PaddedDigits16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(f)), nb) * kPow10[nt] +
         tail;
}
#endif
}  // namespace text_detail

[[gnu::always_inline]] inline bool ScanDigits(const char** pp, const char* end, int64_t* v) {
  const char* p = *pp;
#if defined(__SSE2__)
  if (end - p >= 16) {  // up to 15 digits from one look at 16 bytes
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const int n = text_detail::LeadingRun(text_detail::DigitLanes(x));
    if (n == 0) return false;
    if (n < 16) {
      uint64_t first, second;  // x86-64: little-endian
      std::memcpy(&first, p, 8);
      std::memcpy(&second, p + 8, 8);
      *v = static_cast<int64_t>(n <= 8 ? text_detail::DigitsValue(first, n)
                                       : text_detail::DigitsValue(first, 8) *
                                                 text_detail::kPow10[n - 8] +
                                             text_detail::DigitsValue(second, n - 8));
      *pp = p + n;
      return true;
    }
  }
#endif
  uint64_t value = 0;
  int total = 0;
  text_detail::AppendDigits(&p, end, &value, &total);
  if (total == 0 || total > 18) return false;  // longer numbers: the general parser's checks
  *v = static_cast<int64_t>(value);
  *pp = p;
  return true;
}

inline bool ScanDigitPair(const char** pp, const char* end, int64_t* a, int64_t* b) {
  const char* p = *pp;
#if defined(__SSE2__)
  // The usual form, two numbers of at most 8 digits and one space, from one look at 16 bytes
  // (and 8-byte reads up to 17 bytes in).
  if (end - p >= 24) {
    const unsigned digits =
        text_detail::DigitLanes(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    const int n1 = text_detail::LeadingRun(digits);
    if (n1 > 0 && n1 <= 8 && p[n1] == ' ') {
      const int n2 = text_detail::LeadingRun(digits >> (n1 + 1));
      if (n2 > 0 && n2 <= 8 && n1 + 1 + n2 < 16) {  // the second run ends inside the look
        uint64_t first, second;                     // x86-64: little-endian
        std::memcpy(&first, p, 8);
        std::memcpy(&second, p + n1 + 1, 8);
        *a = static_cast<int64_t>(text_detail::DigitsValue(first, n1));
        *b = static_cast<int64_t>(text_detail::DigitsValue(second, n2));
        *pp = p + n1 + 1 + n2;
        return true;
      }
    }
  }
#endif
  if (!ScanDigits(&p, end, a) || p == end || !IsLineBlank(*p)) return false;
  p = SkipLineBlanks(p, end);
  if (!ScanDigits(&p, end, b)) return false;
  *pp = p;
  return true;
}

inline bool ScanInteger(const char** pp, const char* end, int64_t* v) {
  const char* p = *pp;
  const bool negative = p < end && *p == '-';
  p += negative;
  int64_t u = 0;
  if (!ScanDigits(&p, end, &u)) return false;
  *v = negative ? -u : u;
  *pp = p;
  return true;
}

namespace text_detail {
inline constexpr double kExactPow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                           1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                           1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
}  // namespace text_detail

[[gnu::always_inline]] inline bool ScanReal(const char** pp, const char* end, double* v) {
  const char* p = *pp;
  if (p == end || (static_cast<unsigned>(*p - '0') >= 10 && *p != '-' && *p != '.')) return false;
  const bool negative = *p == '-';
  const char* s = p + negative;
  uint64_t w = 0;
  int64_t q = 0;  // the value is w * 10^q
  bool plain = false;
  bool common = false;  // plain, and in the common form below
#if defined(__SSE2__)
  // The common form, 1 to 3 digits, '.', then digits (19 in all at most), from looks at 16 + 16
  // + 8 bytes and with no branch on how many digits there are: random numbers' lengths vary, and
  // branches on them mispredicted. w is the digits with zeros appended up to 16 after the point.
  if (end - s >= 40) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
    const int nw = text_detail::LeadingRun(text_detail::DigitLanes(a));
    if (nw >= 1 && nw <= 3 && s[nw] == '.') {
      const char* f = s + nw + 1;
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(f));
      uint64_t head;  // x86-64: little-endian
      std::memcpy(&head, s, 8);
      const int nb = text_detail::LeadingRun(text_detail::DigitLanes(b));
      const int nt = nb == 16 ? text_detail::LeadingRun(text_detail::DigitLanes(
                                    _mm_loadu_si128(reinterpret_cast<const __m128i*>(f + 16))))
                              : 0;  // digits past the sixteenth
      if (nw + nb + nt <= 19) {
        w = text_detail::CommonFormDigits(head, nw, f, nb, nt);
        q = -(16 + nt);
        s = f + nb + nt;
        plain = common = true;
      }
    }
  }
  if (!plain) {
#endif
    int digits = 0;  // leading zeros included: a conservative bound on w's size
    text_detail::AppendDigits(&s, end, &w, &digits);
    int frac = 0;
    if (s < end && *s == '.') {
      ++s;
      const int whole = digits;
      text_detail::AppendDigits(&s, end, &w, &digits);
      frac = digits - whole;
    }
    q = -frac;
    plain = digits > 0 && digits <= 19;
#if defined(__SSE2__)
  }
#endif
  if (plain && s < end && (*s == 'e' || *s == 'E')) {
    const char* e = s + 1;
    const bool minus = e < end && *e == '-';
    e += (e < end && (*e == '-' || *e == '+'));
    int64_t x = 0;
    const char* first = e;
    for (; e < end && static_cast<unsigned>(*e - '0') < 10 && e - first < 6; ++e) {
      x = x * 10 + (*e - '0');
    }
    // No exponent digits, or more than six: fast_float's to read.
    plain = e > first && (e == end || static_cast<unsigned>(*e - '0') >= 10);
    q += minus ? -x : x;
    s = e;
  }
  if (plain) {
    double x = 0;
    bool decided = true;
    // The common form always takes Eisel and Lemire's step: a choice by the size of w would be
    // another branch that random digits mispredict.
    if (!common && w <= (uint64_t{1} << 53) && q >= -22 && q <= 22) {
      // w and 10^|q| are exact doubles, so one division or product rounds correctly
      // (Clinger's fast path; the floating-point environment rounds to nearest).
      x = q < 0 ? static_cast<double>(w) / text_detail::kExactPow10[-q]
                : static_cast<double>(w) * text_detail::kExactPow10[q];
      x = negative ? -x : x;
    } else {
      // Eisel and Lemire's step, as fast_float takes it after its own scan of the digits; a
      // negative power means the digits alone cannot decide, and fast_float reads the text.
      using Binary = fast_float::binary_format<double>;
      const fast_float::adjusted_mantissa am = fast_float::compute_float<Binary>(q, w);
      if (am.power2 == Binary::infinite_power()) return false;  // out of range
      decided = am.power2 >= 0;
      if (decided) fast_float::to_float(negative, am, x);
    }
    if (decided) {
      *v = x;
      *pp = s;
      return true;
    }
  }
  double x = 0;
  const auto r = fast_float::from_chars(p, end, x);
  if (r.ec != std::errc() || r.ptr == p || !std::isfinite(x)) return false;
  *v = x;
  *pp = r.ptr;
  return true;
}

template <int K>
[[gnu::always_inline]] inline const char* ScanIndicesRealLine(const char* p, const char* end,
                                                              int64_t* indices, double* v) {
  static_assert(K >= 1 && K <= 8, "the fields must fit the 48-byte look");
#if defined(__SSE2__)
  if (end - p < 64) return nullptr;
  uint64_t other =
      ~(uint64_t{text_detail::DigitLanes(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)))} |
        uint64_t{text_detail::DigitLanes(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16)))}
            << 16 |
        uint64_t{text_detail::DigitLanes(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 32)))}
            << 32);
  // The places of the first K + 5 bytes that are not digits: the K separators; a '-'; the '.';
  // the '\n', or an 'e' with its sign, then the '\n' (the '-' and the sign when there).
  int at[K + 5];
  for (int k = 0; k < K + 5; ++k) {
    at[k] = std::countr_zero(other);  // 64 when none is left
    other &= other - 1;
  }
  const int b = at[K - 1];  // the last separator
  const bool negative = at[K] == b + 1;
  const int dot = negative ? at[K + 1] : at[K];
  const int after = negative ? at[K + 2] : at[K + 1];  // the '\n' or the 'e'
  // The exponent on a branch of its own: in the common line the '\n' is `after`, with no wait
  // for a look at its byte (the next line's scan starts from it).
  int nl = after;
  int64_t power = 0;  // the exponent's value
  if (after < 48 && p[after] != '\n') {
    if ((p[after] | 0x20) != 'e') return nullptr;
    const int next = negative ? at[K + 3] : at[K + 2];
    const bool sign = next == after + 1;  // not a digit right after the 'e'
    nl = sign ? (negative ? at[K + 4] : at[K + 3]) : next;
    const int first = after + 1 + sign, digits = nl - first;
    if (nl >= 48 || digits < 1 || digits > 3 || (sign && p[next] != '-' && p[next] != '+')) {
      return nullptr;
    }
    uint64_t x;
    std::memcpy(&x, p + first, 8);
    power = static_cast<int64_t>(text_detail::DigitsValue(x, digits));
    if (sign && p[next] == '-') power = -power;
  }
  const int whole = dot - (b + 1 + negative), frac = after - dot - 1;
  // (Every place is below 48 past this test, so the bytes read are inside the look.)
  if (nl >= 48 || whole < 1 || whole > 3 || frac < 1 || whole + frac > 19) return nullptr;
  for (int k = 0; k < K; ++k) {
    const int digits = at[k] - (k == 0 ? 0 : at[k - 1] + 1);
    if (digits < 1 || digits > 8 || p[at[k]] != ' ') return nullptr;
  }
  if (p[dot] != '.' || p[nl] != '\n' || (negative && p[b + 1] != '-')) return nullptr;
  for (int k = 0; k < K; ++k) {
    const int first = k == 0 ? 0 : at[k - 1] + 1;
    uint64_t x;  // x86-64: little-endian
    std::memcpy(&x, p + first, 8);
    indices[k] = static_cast<int64_t>(text_detail::DigitsValue(x, at[k] - first));
  }
  // The value as ScanReal's common form.
  const int nb = frac < 16 ? frac : 16, nt = frac - nb;
  uint64_t head;
  std::memcpy(&head, p + b + 1 + negative, 8);
  const uint64_t w = text_detail::CommonFormDigits(head, whole, p + dot + 1, nb, nt);
  using Binary = fast_float::binary_format<double>;
  const fast_float::adjusted_mantissa am = fast_float::compute_float<Binary>(power - (16 + nt), w);
  // A negative power: the digits alone cannot decide the rounding; out of range: strtod's inf,
  // which only the general parser reads. The scan that reads the text takes the line.
  if (am.power2 < 0 || am.power2 == Binary::infinite_power()) return nullptr;
  fast_float::to_float(negative, am, *v);
  return p + nl;
#else
  (void)p, (void)end, (void)indices, (void)v;
  return nullptr;
#endif
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

template <typename FormatChunk>
void WriteChunksInOrder(AtomicFile* file, int64_t chunks, const FormatChunk& format_chunk) {
  constexpr int64_t kWindow = 32;  // chunks formatted before each write
  std::vector<std::string> text[2] = {std::vector<std::string>(kWindow),
                                      std::vector<std::string>(kWindow)};
  // Step k formats window k into one side while writing window k - 1 from the other: two
  // tasks of one parallel loop, so the thread limit holds and a failure in either propagates.
  for (int64_t w = 0, side = 0; w - kWindow < chunks; w += kWindow, side ^= 1) {
    const int64_t format_n = std::clamp<int64_t>(chunks - w, 0, kWindow);
    const int64_t write_n = w == 0 ? 0 : std::min(chunks - (w - kWindow), kWindow);
    ParallelFor(0, 2, 1, [&](int64_t b, int64_t e) {
      for (int64_t task = b; task < e; ++task) {
        if (task == 0) {
          for (int64_t c = 0; c < write_n; ++c) file->Write(text[side ^ 1][c]);
        } else {
          ParallelChunks(format_n, 1,
                         [&](int64_t c, int64_t, int64_t) { format_chunk(w + c, &text[side][c]); });
        }
      }
    });
  }
}

template <typename Format>
void WriteLinesParallel(AtomicFile* file, int64_t n, const Format& format) {
  constexpr int64_t kEntries = int64_t{1} << 14;
  WriteChunksInOrder(file, NumChunks(n, kEntries), [&](int64_t c, std::string* out) {
    out->clear();
    for (int64_t i = c * kEntries, e = std::min(n, (c + 1) * kEntries); i < e; ++i) {
      format(i, out);
    }
  });
}

template <typename Format>
void WriteBoundedLinesParallel(AtomicFile* file, int64_t n, int64_t max_line,
                               const Format& format) {
  const int64_t entries = std::max<int64_t>(1, (int64_t{1} << 20) / std::max<int64_t>(max_line, 1));
  WriteChunksInOrder(file, NumChunks(n, entries), [&](int64_t c, std::string* out) {
    const int64_t b = c * entries, e = std::min(n, b + entries);
    alloc_fault::MaybeFailBuffer();
    out->resize(static_cast<size_t>((e - b) * max_line));
    char* const start = out->data();
    char* p = start;
    for (int64_t i = b; i < e; ++i) p = format(i, p);
    out->resize(static_cast<size_t>(p - start));
  });
}

// Appends `v` as WriteNumber writes it.
template <typename T>
void AppendNumber(T v, std::string* out) {
  char buf[kMaxNumberChars];
  out->append(buf, WriteNumber(v, buf));
}

}  // namespace tensorkit::io

#endif  // TENSORKIT_IO_TEXT_H_
