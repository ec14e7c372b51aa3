// Matrix Market (.mtx): a "%%MatrixMarket matrix <format> <field> <symmetry>" banner, comment
// lines starting with '%', a size line, then 1-based entries, one a line. Coordinate files list
// "i j [value]"; array files list values column by column (only the lower triangle when
// symmetric, the strictly lower one when skew-symmetric).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>

#include "tensorkit/common/alloc_fault.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/io/formats.h"
#include "tensorkit/io/text.h"

namespace tensorkit::io {
namespace {

enum class Field { kReal, kInteger, kPattern };
enum class Symmetry { kGeneral, kSymmetric, kSkew };

struct MtxHeader {
  bool coordinate = true;
  Field field = Field::kReal;
  Symmetry symmetry = Symmetry::kGeneral;
  int64_t rows = 0, cols = 0, nnz = 0;
  int64_t body = 0;       // byte offset of the first entry line
  int64_t body_line = 0;  // its line number
  int64_t size_line = 0;  // line number of the size line
};

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// Splits a line into whitespace-separated words.
std::vector<std::string> Words(const char* b, const char* e) {
  std::vector<std::string> out;
  while (b < e) {
    while (b < e && std::isspace(static_cast<unsigned char>(*b))) ++b;
    const char* s = b;
    while (b < e && !std::isspace(static_cast<unsigned char>(*b))) ++b;
    if (s < b) out.emplace_back(s, b);
  }
  return out;
}

// The header's lines, read one after the other; errors name the file and the line.
class HeaderLines {
 public:
  explicit HeaderLines(const Bytes& bytes)
      : bytes_(bytes),
        base_(reinterpret_cast<const char*>(bytes.data)),
        p_(base_),
        end_(base_ + bytes.size) {}

  // Reads the next line into [*b, *e); fails with `at_end` when the file has no more lines.
  void Next(const char** b, const char** e, const char* at_end) {
    ++line_;
    if (p_ >= end_) Fail(ErrorCode::kCorrupt, at_end);
    const char* nl = static_cast<const char*>(std::memchr(p_, '\n', end_ - p_));
    *b = p_;
    *e = nl ? nl : end_;
    p_ = nl ? nl + 1 : end_;
  }
  int64_t line() const { return line_; }         // of the line read last
  int64_t offset() const { return p_ - base_; }  // of the line after it
  [[noreturn]] void Fail(ErrorCode code, const std::string& what) const {
    Throw(code, "mtx: '", bytes_.name, "' line ", line_, ": ", what);
  }

 private:
  const Bytes& bytes_;
  const char* base_;
  const char* p_;
  const char* end_;
  int64_t line_ = 0;
};

// A lower-case banner word and what it means.
template <typename T>
struct Keyword {
  const char* word;
  T value;
};

// The value of `word` (already lower case) in `table`, or false.
template <typename T, size_t N>
bool Lookup(const Keyword<T> (&table)[N], const std::string& word, T* out) {
  for (const Keyword<T>& k : table) {
    if (word == k.word) {
      *out = k.value;
      return true;
    }
  }
  return false;
}

constexpr Keyword<bool> kFormats[] = {{"coordinate", true}, {"array", false}};
constexpr Keyword<Field> kFields[] = {{"real", Field::kReal},
                                      {"double", Field::kReal},
                                      {"integer", Field::kInteger},
                                      {"pattern", Field::kPattern}};
constexpr Keyword<Symmetry> kSymmetries[] = {{"general", Symmetry::kGeneral},
                                             {"symmetric", Symmetry::kSymmetric},
                                             {"skew-symmetric", Symmetry::kSkew},
                                             // Real values: Hermitian is symmetric (SciPy reads
                                             // it so).
                                             {"hermitian", Symmetry::kSymmetric}};

// The banner "%%MatrixMarket matrix <format> <field> <symmetry>", split into words.
MtxHeader ParseBanner(const std::vector<std::string>& w, const HeaderLines& lines) {
  if (w.empty() || Lower(w[0]) != "%%matrixmarket") {
    lines.Fail(ErrorCode::kCorrupt,
               "expected the banner '%%MatrixMarket matrix coordinate real general'");
  }
  if (w.size() != 5) {
    lines.Fail(ErrorCode::kCorrupt, "the banner needs 4 words after %%MatrixMarket");
  }
  MtxHeader h;
  if (Lower(w[1]) != "matrix") {
    lines.Fail(ErrorCode::kUnsupported, "object '" + Excerpt(w[1]) + "' is not 'matrix'");
  }
  if (!Lookup(kFormats, Lower(w[2]), &h.coordinate)) {
    lines.Fail(ErrorCode::kCorrupt,
               "format '" + Excerpt(w[2]) + "' is neither coordinate nor array");
  }
  if (!Lookup(kFields, Lower(w[3]), &h.field)) {
    lines.Fail(ErrorCode::kUnsupported,
               "field '" + Excerpt(w[3]) + "' is not supported (real, integer, pattern)");
  }
  if (!Lookup(kSymmetries, Lower(w[4]), &h.symmetry)) {
    lines.Fail(ErrorCode::kUnsupported, "symmetry '" + Excerpt(w[4]) +
                                            "' is not supported (general, symmetric, "
                                            "skew-symmetric, hermitian)");
  }
  if (!h.coordinate && h.field == Field::kPattern) {
    lines.Fail(ErrorCode::kCorrupt, "an array file cannot be 'pattern'");
  }
  return h;
}

// The size line "rows cols [entries]" into `h`, checked against the banner.
void ParseSizeLine(const char* b, const char* e, const HeaderLines& lines, MtxHeader* h) {
  LineTokens t(b, e);
  try {
    h->rows = t.Next<int64_t>("row count");
    h->cols = t.Next<int64_t>("column count");
    if (h->coordinate) h->nnz = t.Next<int64_t>("entry count");
    t.ExpectEnd();
  } catch (const Error& err) {
    lines.Fail(ErrorCode::kCorrupt, std::string("bad size line: ") + err.what());
  }
  if (h->rows < 0 || h->cols < 0 || h->nnz < 0) lines.Fail(ErrorCode::kCorrupt, "negative size");
  // A coordinate file never needs rows * cols (a 2^40 x 2^40 graph of a few edges is fine, as in
  // SciPy); an array file lists every cell, so its cells must be countable.
  int64_t cells = 0;
  if (!h->coordinate && __builtin_mul_overflow(h->rows, h->cols, &cells)) {
    lines.Fail(ErrorCode::kCorrupt,
               "an array (dense) file of " + std::to_string(h->rows) + " x " +
                   std::to_string(h->cols) +
                   " has more cells than int64 counts; no dense matrix of that size can exist");
  }
  // More entries than cells is fine: repeated entries are summed, as SciPy and MATLAB do. The
  // count is checked against the entry lines before anything is allocated.
  if (h->symmetry != Symmetry::kGeneral && h->rows != h->cols) {
    lines.Fail(ErrorCode::kCorrupt, "a symmetric or skew-symmetric matrix must be square");
  }
}

// Reads the banner, comments and size line.
MtxHeader ParseHeader(const Bytes& bytes) {
  HeaderLines lines(bytes);
  const char *b, *e;
  lines.Next(&b, &e, "the file is empty (no %%MatrixMarket banner)");
  MtxHeader h = ParseBanner(Words(b, e), lines);
  for (;;) {  // comments and blank lines up to the size line
    lines.Next(&b, &e, "the file ends before the size line");
    const std::vector<std::string> w = Words(b, e);
    if (!w.empty() && w[0][0] != '%') break;
  }
  ParseSizeLine(b, e, lines, &h);
  h.size_line = lines.line();
  h.body = lines.offset();
  h.body_line = lines.line() + 1;
  return h;
}

// The entry count the size line implies for an array file.
int64_t ArrayEntries(const MtxHeader& h) {
  const int64_t n = h.rows;
  switch (h.symmetry) {
    case Symmetry::kGeneral:
      return h.rows * h.cols;
    // Halve the even factor first so that nothing exceeds rows * cols, which fits in int64.
    case Symmetry::kSymmetric:
      return n % 2 == 0 ? n / 2 * (n + 1) : (n + 1) / 2 * n;
    case Symmetry::kSkew:
      return n == 0 ? 0 : (n % 2 == 0 ? n / 2 * (n - 1) : (n - 1) / 2 * n);
  }
  return 0;
}

// -v without signed overflow (the negation of INT64_MIN wraps, as in two's complement).
template <typename T>
T Negate(T v) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(uint64_t{0} - static_cast<uint64_t>(v));
  } else {
    return -v;
  }
}

DType ValueDType(Field f) { return f == Field::kInteger ? DType::kInt64 : DType::kFloat64; }

// Appends the mirror of every off-diagonal entry (negated when skew), in entry order.
SparseTensor Expand(const SparseTensor& st, bool skew) {
  const int64_t nnz = st.nnz();
  const int64_t* idx = st.indices().data<int64_t>();
  constexpr int64_t kChunk = 1 << 16;
  const int64_t num = NumChunks(nnz, kChunk);
  std::vector<int64_t> counts(num + 1, 0);
  ParallelChunks(nnz, kChunk, [&](int64_t c, int64_t b, int64_t e) {
    int64_t k = 0;
    for (int64_t i = b; i < e; ++i) k += idx[2 * i] != idx[2 * i + 1];
    counts[c + 1] = k;
  });
  for (int64_t c = 0; c < num; ++c) counts[c + 1] += counts[c];
  const int64_t total = nnz + counts[num];
  Tensor out_idx = Tensor::Empty({total, 2}, DType::kInt64);
  Tensor out_val = Tensor::Empty({total}, st.dtype());
  int64_t* oi = out_idx.data<int64_t>();
  Dispatch<Bit(DType::kInt64) | Bit(DType::kFloat64)>(st.dtype(), "mtx", [&]<typename T>() {
    const T* v = st.values().data<T>();
    T* ov = out_val.data<T>();
    ParallelChunks(nnz, kChunk, [&](int64_t c, int64_t b, int64_t e) {
      std::copy(idx + 2 * b, idx + 2 * e, oi + 2 * b);
      std::copy(v + b, v + e, ov + b);
      int64_t o = nnz + counts[c];
      for (int64_t i = b; i < e; ++i) {
        if (idx[2 * i] == idx[2 * i + 1]) continue;
        oi[2 * o] = idx[2 * i + 1];
        oi[2 * o + 1] = idx[2 * i];
        ov[o] = skew ? Negate(v[i]) : v[i];
        ++o;
      }
    });
  });
  return SparseTensor::Create(out_idx, out_val, st.shape());
}

// The 1-based (row, column) of an entry line, checked against the header. A skew-symmetric
// file's diagonal entries are kept as they are (not mirrored), as SciPy 1.17 reads them.
void NextEntryIndices(LineTokens* t, const MtxHeader& h, int64_t* i, int64_t* j) {
  *i = t->Next<int64_t>("row index");
  *j = t->Next<int64_t>("column index");
  TK_CHECK(*i >= 1 && *i <= h.rows, kCorrupt, "row index ", *i, " is out of range [1, ", h.rows,
           "] (Matrix Market indices are 1-based)");
  TK_CHECK(*j >= 1 && *j <= h.cols, kCorrupt, "column index ", *j, " is out of range [1, ", h.cols,
           "] (Matrix Market indices are 1-based)");
}

// The fast path of an entry line at p: "i j[ value]" with unsigned indices in range, single
// kinds of blanks and a plain number; returns the line's end, or nullptr to leave the line to
// NextEntryIndices and LineTokens.
template <typename T>
[[gnu::always_inline]] inline const char* ScanEntry(const char* p, const char* end,
                                                    const MtxHeader& h, int64_t* i, int64_t* j,
                                                    T* v) {
  if constexpr (std::is_same_v<T, double>) {
    int64_t ij[2];
    if (h.field == Field::kReal) {
      const char* le = ScanIndicesRealLine<2>(p, end, ij, v);
      if (le != nullptr && ij[0] >= 1 && ij[0] <= h.rows && ij[1] >= 1 && ij[1] <= h.cols) {
        *i = ij[0];
        *j = ij[1];
        return le;
      }
    }
  }
  if (!ScanDigitPair(&p, end, i, j)) return nullptr;
  if (*i < 1 || *i > h.rows || *j < 1 || *j > h.cols) return nullptr;
  *v = T{1};
  if (h.field != Field::kPattern) {
    if (p == end || !IsLineBlank(*p)) return nullptr;
    p = SkipLineBlanks(p, end);
    if (!ScanNumber(&p, end, v)) return nullptr;
  }
  p = SkipLineBlanks(p, end);
  return p == end || *p == '\n' ? p : nullptr;
}

SparseTensor ReadCoordinate(const Bytes& bytes, const MtxHeader& h, const ReadOptions& options) {
  std::vector<TextChunk> chunks = ChunkLines(bytes, h.body, h.body_line, '%');
  const int64_t found = TotalEntries(chunks);
  TK_CHECK(found == h.nnz, kCorrupt, "mtx: '", bytes.name, "' line ", h.size_line,
           ": the size line declares ", h.nnz, " entries but the file has ", found, " entry lines");
  Tensor indices = Tensor::Empty({h.nnz, 2}, DType::kInt64);
  Tensor values = Tensor::Empty({h.nnz}, ValueDType(h.field));
  int64_t* idx = indices.data<int64_t>();
  const bool skew = h.symmetry == Symmetry::kSkew;
  Dispatch<Bit(DType::kInt64) | Bit(DType::kFloat64)>(values.dtype(), "mtx", [&]<typename T>() {
    T* val = values.data<T>();
    ParseDataLinesFast(
        bytes, chunks, '%', "mtx",
        [&](const char* p, const char* end, int64_t k, int64_t) __attribute__((always_inline)) {
          int64_t i = 0, j = 0;
          T v{};
          const char* le = ScanEntry(p, end, h, &i, &j, &v);
          if (le != nullptr) {
            idx[2 * k] = i - 1;
            idx[2 * k + 1] = j - 1;
            val[k] = v;
          }
          return le;
        },
        [&](const char* b, const char* e, int64_t k, int64_t, int64_t) {
          LineTokens t(b, e);
          int64_t i = 0, j = 0;
          NextEntryIndices(&t, h, &i, &j);
          idx[2 * k] = i - 1;
          idx[2 * k + 1] = j - 1;
          val[k] = h.field == Field::kPattern ? T{1} : t.Next<T>("value");
          t.ExpectEnd();
        });
  });
  SparseTensor st = SparseTensor::Create(indices, values, {h.rows, h.cols});
  if (h.symmetry != Symmetry::kGeneral && options.expand_symmetry) return Expand(st, skew);
  return st;
}

Tensor ReadArray(const Bytes& bytes, const MtxHeader& h, const ReadOptions& options) {
  std::vector<TextChunk> chunks = ChunkLines(bytes, h.body, h.body_line, '%');
  const int64_t expected = ArrayEntries(h), found = TotalEntries(chunks);
  TK_CHECK(found == expected, kCorrupt, "mtx: '", bytes.name, "' line ", h.size_line, ": a ",
           h.rows, " x ", h.cols, " array file needs ", expected, " value lines but has ", found);
  Tensor dense = Tensor::Zeros({h.rows, h.cols}, ValueDType(h.field));
  Dispatch<Bit(DType::kInt64) | Bit(DType::kFloat64)>(dense.dtype(), "mtx", [&]<typename T>() {
    alloc_fault::MaybeFailBuffer();
    std::vector<T> raw(static_cast<size_t>(expected));
    ParseDataLinesFast(
        bytes, chunks, '%', "mtx",
        [&](const char* p, const char* end, int64_t k, int64_t) __attribute__((always_inline))
            ->const char* {
              T v{};
              if (!ScanNumber(&p, end, &v)) return nullptr;
              p = SkipLineBlanks(p, end);
              if (p != end && *p != '\n') return nullptr;
              raw[k] = v;
              return p;
            },
        [&](const char* b, const char* e, int64_t k, int64_t, int64_t) {
          LineTokens t(b, e);
          raw[k] = t.Next<T>("value");
          t.ExpectEnd();
        });
    T* out = dense.data<T>();
    const int64_t m = h.rows, n = h.cols;
    if (h.symmetry == Symmetry::kGeneral) {
      for (int64_t k = 0; k < expected; ++k) out[(k % m) * n + k / m] = raw[k];
      return;
    }
    const bool skew = h.symmetry == Symmetry::kSkew;
    int64_t k = 0;
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t i = skew ? j + 1 : j; i < m; ++i, ++k) {
        out[i * n + j] = raw[k];
        if (options.expand_symmetry && i != j) {
          out[j * n + i] = skew ? Negate(raw[k]) : raw[k];
        }
      }
    }
  });
  return dense;
}

}  // namespace

std::vector<int64_t> VisitMtxPositions(
    const std::string& path, const PositionVisitor& visit,
    const std::function<void(const std::vector<int64_t>& shape)>& on_shape) {
  TK_CHECK(FormatFromPath(path) == Format::kMtx, kUnsupported, "VisitMtxPositions: '", path,
           "' is not a .mtx file; read it with io::Read");
  const MappedFile file(path);
  const Bytes bytes = file.bytes();
  const MtxHeader h = ParseHeader(bytes);
  TK_CHECK(h.coordinate, kUnsupported, "VisitMtxPositions: '", path,
           "' is an array (dense) file; read it with io::Read");
  const std::vector<TextChunk> chunks = ChunkLines(bytes, h.body, h.body_line, '%');
  const int64_t found = TotalEntries(chunks);
  TK_CHECK(found == h.nnz, kCorrupt, "mtx: '", bytes.name, "' line ", h.size_line,
           ": the size line declares ", h.nnz, " entries but the file has ", found, " entry lines");
  const bool mirror = h.symmetry != Symmetry::kGeneral;
  if (on_shape) on_shape({h.rows, h.cols});
  // One buffer per chunk, emptied at its end: at most the chunks in flight hold positions.
  std::vector<std::vector<int64_t>> buffers(chunks.size());
  ParseDataLines(
      bytes, chunks, '%', "mtx",
      [&](const char* b, const char* e, int64_t, int64_t, int64_t c) {
        LineTokens t(b, e);
        int64_t i = 0, j = 0;
        NextEntryIndices(&t, h, &i, &j);
        std::vector<int64_t>& out = buffers[c];
        out.push_back(i - 1);
        out.push_back(j - 1);
        if (mirror && i != j) {
          out.push_back(j - 1);
          out.push_back(i - 1);
        }
      },
      [&](int64_t c) {
        std::vector<int64_t>& out = buffers[c];
        visit(out.data(), static_cast<int64_t>(out.size() / 2));
        std::vector<int64_t>().swap(out);
      });
  return {h.rows, h.cols};
}

TensorData ReadMtxBytes(const Bytes& bytes, const ReadOptions& options) {
  MtxHeader h = ParseHeader(bytes);
  TensorData out;
  if (h.coordinate) {
    out.sparse = ReadCoordinate(bytes, h, options);
  } else {
    out.dense = ReadArray(bytes, h, options);
  }
  return out;
}

std::string MtxCoordinateHeader(DType dtype, int64_t rows, int64_t cols, int64_t nnz) {
  return std::string("%%MatrixMarket matrix coordinate ") + (IsFloat(dtype) ? "real" : "integer") +
         " general\n" + std::to_string(rows) + " " + std::to_string(cols) + " " +
         std::to_string(nnz) + "\n";
}

namespace {

// ------------------------------------------------------------------------- writing: numbers

// How a value is written: the dtype decides between integer and real, the options the form.
struct NumberForm {
  bool scipy = false;  // MtxWriteOptions::scipy_text
  int precision = -1;
};

// An int64 (a 1-based row or column, a shortest value's digits) as WriteNumber writes it.
// Inlined, two digits a step: the indices of every coordinate line are most of a writer's
// work, and std::to_chars' out-of-line digit loop was a quarter of it.
[[gnu::always_inline]] inline char* WriteIndex(int64_t v, char* out) {
  static constexpr char kPairs[] =
      "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
      "8081828384858687888990919293949596979899";
  if (v < 0) return WriteNumber(v, out);  // not an index of a valid matrix; written as is
  uint64_t u = static_cast<uint64_t>(v);
  int digits = 1;
  for (uint64_t t = u; t >= 10; t /= 10) ++digits;
  char* const end = out + digits;
  char* p = end;
  while (u >= 100) {
    const uint64_t pair = (u % 100) * 2;
    u /= 100;
    p -= 2;
    p[0] = kPairs[pair];
    p[1] = kPairs[pair + 1];
  }
  if (u >= 10) {
    p -= 2;
    p[0] = kPairs[u * 2];
    p[1] = kPairs[u * 2 + 1];
  } else {
    *--p = static_cast<char>('0' + u);
  }
  return end;
}

// WriteRyuShortest's text of a finite nonzero double that is n / 10^k for an integer n below
// 2^50 and k <= 9 (values rounded to a few decimals, integers: most real data), found without
// the general shortest search; nullptr for any other value. Why the digits of n (its trailing
// zeros dropped) are the shortest round trip: n / 10^k == v in doubles proves they round-trip,
// and any other decimal of as few digits differs from them by at least 10^-k, more than the
// spacing of doubles around v (at most |v| * 2^-52 < 10^-k / 4), so it cannot round to v too.
char* WriteShortDecimal(double v, char* out) {
  static constexpr double kPow10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};
  constexpr double kLimit = 0x1p50;
  const double a = std::fabs(v);
  if (!(a >= 1e-9 && a < kLimit)) return nullptr;  // zero, tiny, huge, NaN and infinities
  for (int k = 0; k < 10; ++k) {
    const double scaled = a * kPow10[k];
    if (scaled >= kLimit) return nullptr;
    const uint64_t n = static_cast<uint64_t>(scaled + 0.5);  // exact: scaled < 2^50
    if (static_cast<double>(n) / kPow10[k] != a) continue;
    if (v < 0) *out++ = '-';
    // The digits at out + 1, then the first moved before the '.'.
    char* end = WriteIndex(static_cast<int64_t>(n), out + 1);
    const int64_t exponent = (end - (out + 1)) - 1 - k;
    while (end[-1] == '0') --end;  // n > 0: a nonzero digit stops it
    out[0] = out[1];
    if (end - out > 2) {
      out[1] = '.';
    } else {
      end = out + 1;
    }
    if (exponent != 0) {
      *end++ = 'E';
      if (exponent < 0) *end++ = '-';
      end = WriteIndex(exponent < 0 ? -exponent : exponent, end);
    }
    return end;
  }
  return nullptr;
}

// Ryu's shortest scientific form, which fast_matrix_market writes: the digits of the shortest
// round trip as "d[.ddd]E<exp>" without a '+' or leading zeros in the exponent, "E0" dropped.
template <typename T>
char* WriteRyuShortest(T v, char* out) {
  if constexpr (std::is_same_v<T, double>) {
    if (char* end = WriteShortDecimal(v, out)) return end;
  }
  if (std::isnan(v)) {
    std::memcpy(out, "NaN", 3);
    return out + 3;
  }
  if (std::isinf(v)) {
    if (v < 0) *out++ = '-';
    std::memcpy(out, "Infinity", 8);
    return out + 8;
  }
  char buf[kMaxNumberChars];
  const char* end = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific).ptr;
  const char* e = end - 1;  // the exponent is short: find its 'e' from the end
  while (*e != 'e') --e;
  std::memcpy(out, buf, static_cast<size_t>(e - buf));
  out += e - buf;
  const bool negative = e[1] == '-';
  const char* digits = e + 2;
  while (digits + 1 < end && *digits == '0') ++digits;
  if (!(digits + 1 == end && *digits == '0')) {
    *out++ = 'E';
    if (negative) *out++ = '-';
    std::memcpy(out, digits, static_cast<size_t>(end - digits));
    out += end - digits;
  }
  return out;
}

// printf's "%.{digits - 1}e" of v (at least one digit).
char* WriteWithPrecision(double v, int digits, bool scipy, char* out) {
  if (scipy && std::isnan(v)) {
    std::memcpy(out, "nan", 3);
    return out + 3;
  }
  if (scipy && std::isinf(v)) {
    if (v < 0) *out++ = '-';
    std::memcpy(out, "Infinity", 8);
    return out + 8;
  }
  // At most a sign, the digits, '.' and "e-308".
  return std::to_chars(out, out + std::max(digits, 1) + 8, v, std::chars_format::scientific,
                       std::max(digits - 1, 0))
      .ptr;
}

// The longest text WriteValue gives for `form`.
int64_t MaxValueChars(const NumberForm& form) {
  return std::max<int64_t>(kMaxNumberChars, form.precision + 8);
}

template <typename T>
char* WriteValue(T v, const NumberForm& form, char* out) {
  if constexpr (std::is_integral_v<T>) {
    return WriteNumber(v, out);
  } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return WriteValue(static_cast<float>(v), form, out);
  } else {
    if (form.precision >= 0) return WriteWithPrecision(v, form.precision, form.scipy, out);
    return form.scipy ? WriteRyuShortest(v, out) : WriteNumber(v, out);
  }
}

// ------------------------------------------------------------------------- writing: symmetry

// -v as NumPy computes it in T's width (integers wrap; the 16-bit floats in float).
template <typename T>
auto Negated(T v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return -static_cast<float>(v);
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(Negate(static_cast<int64_t>(v)));
  } else {
    return -v;
  }
}

template <typename T>
auto Plain(T v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return static_cast<float>(v);
  } else {
    return v;
  }
}

// SciPy's test of symmetry, fed pairs (a[i][j], a[j][i]) in SciPy's order: a nonzero diagonal
// rules out skew-symmetry (and is then not compared otherwise), every other pair is compared
// both ways.
struct SymmetryTest {
  bool symmetric = true, skew = true;
  template <typename T>
  bool Step(T aij, T aji, bool diagonal) {
    if (skew && diagonal && Plain(aij) != 0) {
      skew = false;
    } else {
      if (symmetric && Plain(aij) != Plain(aji)) symmetric = false;
      if (skew && Plain(aij) != Negated(aji)) skew = false;
    }
    return symmetric || skew;
  }
  MtxSymmetry result() const {
    return symmetric ? MtxSymmetry::kSymmetric
                     : (skew ? MtxSymmetry::kSkewSymmetric : MtxSymmetry::kGeneral);
  }
};

// What kDetect decides for a sparse matrix, and the entries to write then (the summed ones when
// the test got that far, else the input's).
struct SparseDetection {
  MtxSymmetry symmetry = MtxSymmetry::kGeneral;
  SparseTensor entries;
};

SparseDetection DetectSparse(const SparseTensor& st) {
  SparseDetection d{MtxSymmetry::kGeneral, st};
  if (st.shape()[0] != st.shape()[1]) return d;
  const int64_t* idx = st.indices().data<int64_t>();
  const int64_t nnz = st.nnz();
  bool balanced = false;
  Dispatch<kNumericDTypes>(st.dtype(), "mtx: symmetry", [&]<typename T>() {
    const T* v = st.values().data<T>();
    int64_t below = 0, above = 0;
    for (int64_t k = 0; k < nnz; ++k) {
      if (Plain(v[k]) == 0) continue;
      below += idx[2 * k] > idx[2 * k + 1];
      above += idx[2 * k] < idx[2 * k + 1];
    }
    balanced = below == above;
  });
  if (!balanced) return d;
  SparseTensor summed = st;
  summed.Coalesce();
  d.entries = summed;
  const int64_t n = summed.nnz();
  const int64_t* s = summed.indices().data<int64_t>();
  // The summed entries are sorted by (row, column): a[j][i] is found by binary search.
  auto find = [&](int64_t r, int64_t c) -> int64_t {
    int64_t lo = 0, hi = n;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (s[2 * mid] < r || (s[2 * mid] == r && s[2 * mid + 1] < c)) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo < n && s[2 * lo] == r && s[2 * lo + 1] == c ? lo : -1;
  };
  Dispatch<kNumericDTypes>(summed.dtype(), "mtx: symmetry", [&]<typename T>() {
    const T* v = summed.values().data<T>();
    SymmetryTest test;
    for (int64_t k = 0; k < n; ++k) {
      const int64_t i = s[2 * k], j = s[2 * k + 1];
      if (i < j) continue;
      const int64_t m = i == j ? k : find(j, i);
      if (!test.Step(v[k], m >= 0 ? v[m] : T{}, i == j)) break;
    }
    d.symmetry = test.result();
  });
  return d;
}

MtxSymmetry DetectDense(const Tensor& t) {
  const int64_t n = t.Dim(0);
  if (n != t.Dim(1)) return MtxSymmetry::kGeneral;
  MtxSymmetry out = MtxSymmetry::kGeneral;
  Dispatch<kNumericDTypes>(t.dtype(), "mtx: symmetry", [&]<typename T>() {
    const T* a = t.data<T>();
    SymmetryTest test;
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t i = j; i < n; ++i) {
        if (!test.Step(a[i * n + j], a[j * n + i], i == j)) {
          j = n;
          break;
        }
      }
    }
    out = test.result();
  });
  return out;
}

// ------------------------------------------------------------------------- writing: files

const char* SymmetryWord(MtxSymmetry s) {
  switch (s) {
    case MtxSymmetry::kSymmetric:
      return "symmetric";
    case MtxSymmetry::kSkewSymmetric:
      return "skew-symmetric";
    case MtxSymmetry::kHermitian:
      return "hermitian";
    default:
      return "general";
  }
}

std::string Banner(bool coordinate, const char* field, MtxSymmetry symmetry,
                   const MtxWriteOptions& o) {
  std::string h = std::string("%%MatrixMarket matrix ") + (coordinate ? "coordinate " : "array ") +
                  field + " " + SymmetryWord(symmetry) + "\n";
  if (!o.comment.empty() || o.scipy_text) {
    for (size_t b = 0;;) {
      const size_t nl = o.comment.find('\n', b);
      h += '%';
      h.append(o.comment, b, nl == std::string::npos ? std::string::npos : nl - b);
      h += '\n';
      if (nl == std::string::npos) break;
      b = nl + 1;
    }
  }
  return h;
}

// The values converted for `field`: doubles for kReal, int64 for kInteger from floats
// (checked), bools as int64; others as they are. Sets *field_word.
Tensor ValuesFor(const Tensor& values, MtxField field, const char** field_word,
                 const std::string& path) {
  const DType dt = values.dtype();
  TK_CHECK(dt != DType::kString, kUnsupported, "mtx: cannot write string values to '", path, "'");
  const bool is_float = IsFloat(dt);
  if (field == MtxField::kPattern) {
    *field_word = "pattern";
    return values;
  }
  if (field == MtxField::kAuto && is_float) {
    *field_word = "real";
    return values;
  }
  if (field == MtxField::kReal) {  // as double, float32 included (NumPy's astype, as SciPy does)
    *field_word = "real";
    return dt == DType::kFloat64 ? values : Converted(values, DType::kFloat64);
  }
  *field_word = "integer";
  if (!is_float) return dt == DType::kBool ? Converted(values, DType::kInt64) : values;
  const Tensor d = Converted(values, DType::kFloat64);
  Tensor out = Tensor::Empty(d.Dims(), DType::kInt64);
  const double* v = d.data<double>();
  int64_t* o = out.data<int64_t>();
  for (int64_t k = 0, n = d.NumElements(); k < n; ++k) {
    // Within int64: [-2^63, 2^63), both bounds exact doubles.
    TK_CHECK(v[k] >= -9223372036854775808.0 && v[k] < 9223372036854775808.0, kInvalidArgument,
             "mtx: the integer field cannot hold value ", v[k], " (element ", k, ") in '", path,
             "'; write it as real");
    o[k] = static_cast<int64_t>(v[k]);
  }
  return out;
}

// Entry k's row and column, from interleaved ([nnz, 2]) or separate index arrays.
template <typename I>
struct EntryIndices {
  const I* rows;
  const I* cols;
  int64_t stride;  // elements from one entry's index to the next one's
  int64_t row(int64_t k) const { return static_cast<int64_t>(rows[k * stride]); }
  int64_t col(int64_t k) const { return static_cast<int64_t>(cols[k * stride]); }
};

// The entries of a rows x cols matrix as a coordinate file with `symmetry` (already decided:
// not kDetect).
template <typename I>
void WriteCoordinateMtx(const std::string& path, int64_t rows, int64_t cols, int64_t nnz,
                        const EntryIndices<I>& ix, const Tensor& input_values, MtxSymmetry symmetry,
                        const MtxWriteOptions& o) {
  TK_CHECK(symmetry == MtxSymmetry::kGeneral || rows == cols, kInvalidArgument, "mtx: a ",
           SymmetryWord(symmetry), " matrix must be square, not ", rows, " x ", cols, " ('", path,
           "')");
  const char* field = nullptr;
  const Tensor values = ValuesFor(input_values, o.field, &field, path);
  // The entries written: all, or those on and below the diagonal.
  std::vector<int64_t> keep;
  int64_t count = nnz;
  if (symmetry != MtxSymmetry::kGeneral) {
    for (int64_t k = 0; k < nnz; ++k) {
      if (ix.row(k) >= ix.col(k)) keep.push_back(k);
    }
    count = static_cast<int64_t>(keep.size());
  }
  // fast_matrix_market calls a coordinate file without entries real, whatever the values.
  if (o.scipy_text && count == 0) field = "real";
  AtomicFile file(path);
  file.Write(Banner(true, field, symmetry, o) + std::to_string(rows) + " " + std::to_string(cols) +
             " " + std::to_string(count) + "\n");
  const bool all = symmetry == MtxSymmetry::kGeneral;
  const NumberForm form{o.scipy_text, o.precision};
  if (o.field == MtxField::kPattern) {
    WriteBoundedLinesParallel(&file, count, 2 * kMaxNumberChars + 2, [&](int64_t i, char* out) {
      const int64_t k = all ? i : keep[i];
      out = WriteIndex(ix.row(k) + 1, out);
      *out++ = ' ';
      out = WriteIndex(ix.col(k) + 1, out);
      *out++ = '\n';
      return out;
    });
  } else {
    Dispatch<kNumericDTypes>(values.dtype(), "mtx: write", [&]<typename T>() {
      const T* v = values.data<T>();
      const int64_t line = 2 * kMaxNumberChars + MaxValueChars(form) + 3;
      WriteBoundedLinesParallel(&file, count, line, [&](int64_t i, char* out) {
        const int64_t k = all ? i : keep[i];
        out = WriteIndex(ix.row(k) + 1, out);
        *out++ = ' ';
        out = WriteIndex(ix.col(k) + 1, out);
        *out++ = ' ';
        out = WriteValue(v[k], form, out);
        *out++ = '\n';
        return out;
      });
    });
  }
  file.Commit();
}

void WriteSparseMtx(const std::string& path, const SparseTensor& input, const MtxWriteOptions& o) {
  SparseTensor st = HostContiguous(input);
  TK_CHECK(st.rank() == 2, kUnsupported, "mtx: Matrix Market holds matrices; cannot write a rank-",
           st.rank(), " tensor to '", path, "' (use .tns for any rank)");
  MtxSymmetry symmetry = o.symmetry;
  if (symmetry == MtxSymmetry::kDetect) {
    SparseDetection d = DetectSparse(st);
    symmetry = d.symmetry;
    st = HostContiguous(d.entries);
  }
  const int64_t* idx = st.indices().data<int64_t>();
  WriteCoordinateMtx(path, st.shape()[0], st.shape()[1], st.nnz(),
                     EntryIndices<int64_t>{idx, idx + 1, 2}, st.values(), symmetry, o);
}

void WriteDenseMtx(const std::string& path, const Tensor& t, const MtxWriteOptions& o) {
  t.CheckDefined("mtx: write");
  TK_CHECK(t.NumAxes() == 2, kUnsupported, "mtx: Matrix Market holds matrices; cannot write dims ",
           ShapeString(t.Dims()), " to '", path, "'");
  TK_CHECK(o.field != MtxField::kPattern, kInvalidArgument, "mtx: an array (dense) file of '", path,
           "' cannot be 'pattern'; write a sparse matrix for a pattern file");
  const Tensor host = t.device().is_cpu() && t.IsContiguous() ? t : t.To(Device::Cpu());
  const int64_t m = host.Dim(0), n = host.Dim(1);
  const MtxSymmetry symmetry = o.symmetry == MtxSymmetry::kDetect ? DetectDense(host) : o.symmetry;
  TK_CHECK(symmetry == MtxSymmetry::kGeneral || m == n, kInvalidArgument, "mtx: a ",
           SymmetryWord(symmetry), " matrix must be square, not ", m, " x ", n, " ('", path, "')");
  const char* field = nullptr;
  const Tensor values = ValuesFor(host, o.field, &field, path);
  AtomicFile file(path);
  file.Write(Banner(false, field, symmetry, o) + std::to_string(m) + " " + std::to_string(n) +
             "\n");
  // Column j's values start at first[j]: m each in a general file, m - j (or m - j - 1 without
  // the diagonal) in a triangle.
  const int64_t skip = symmetry == MtxSymmetry::kSkewSymmetric ? 1 : 0;
  const bool all = symmetry == MtxSymmetry::kGeneral;
  std::vector<int64_t> first;
  int64_t count = m * n;
  if (!all) {
    first.resize(static_cast<size_t>(n + 1), 0);
    for (int64_t j = 0; j < n; ++j) first[j + 1] = first[j] + std::max<int64_t>(m - j - skip, 0);
    count = first[n];
  }
  const NumberForm form{o.scipy_text, o.precision};
  Dispatch<kNumericDTypes>(values.dtype(), "mtx: write", [&]<typename T>() {
    const T* v = values.data<T>();
    WriteBoundedLinesParallel(&file, count, MaxValueChars(form) + 1, [&](int64_t k, char* out) {
      int64_t i, j;
      if (all) {
        i = k % m;
        j = k / m;
      } else {
        j = std::upper_bound(first.begin(), first.end(), k) - first.begin() - 1;
        i = j + skip + (k - first[j]);
      }
      out = WriteValue(v[i * n + j], form, out);
      *out++ = '\n';
      return out;
    });
  });
  file.Commit();
}

}  // namespace

MtxSymmetry DetectMtxSymmetry(const TensorData& data) {
  if (!data.is_sparse()) {
    const Tensor& t = data.dense;
    TK_CHECK(t.NumAxes() == 2, kInvalidArgument, "DetectMtxSymmetry: expected a matrix, got dims ",
             ShapeString(t.Dims()));
    return DetectDense(t.device().is_cpu() && t.IsContiguous() ? t : t.To(Device::Cpu()));
  }
  TK_CHECK(data.sparse.rank() == 2, kInvalidArgument,
           "DetectMtxSymmetry: expected a matrix, got a rank-", data.sparse.rank(), " tensor");
  return DetectSparse(HostContiguous(data.sparse)).symmetry;
}

void WriteMtx(const std::string& path, const TensorData& data, const MtxWriteOptions& options) {
  TK_CHECK(options.precision >= -1, kInvalidArgument, "mtx: precision ", options.precision,
           " is negative; pass -1 for the shortest form or a digit count");
  if (data.is_sparse()) {
    WriteSparseMtx(path, data.sparse, options);
  } else {
    WriteDenseMtx(path, data.dense, options);
  }
}

void WriteMtx(const std::string& path, const MtxCoordinates& matrix,
              const MtxWriteOptions& options) {
  const Tensor& r = matrix.rows;
  const Tensor& c = matrix.cols;
  const Tensor& v = matrix.values;
  TK_CHECK(r.defined() && c.defined() && v.defined(), kInvalidArgument,
           "mtx: MtxCoordinates needs rows, cols and values for '", path, "'");
  TK_CHECK(r.NumAxes() == 1 && c.NumAxes() == 1 && v.NumAxes() == 1 && r.Dim(0) == c.Dim(0) &&
               r.Dim(0) == v.Dim(0),
           kShapeMismatch, "mtx: rows, cols and values must be 1-D of one length, got dims ",
           ShapeString(r.Dims()), ", ", ShapeString(c.Dims()), " and ", ShapeString(v.Dims()),
           " for '", path, "'");
  TK_CHECK(IsInteger(r.dtype()) && IsInteger(c.dtype()), kDTypeMismatch,
           "mtx: rows and cols must be integers, got ", DTypeName(r.dtype()), " and ",
           DTypeName(c.dtype()), " for '", path, "'");
  TK_CHECK(matrix.num_rows >= 0 && matrix.num_cols >= 0, kInvalidArgument, "mtx: negative shape ",
           matrix.num_rows, " x ", matrix.num_cols, " for '", path, "'");
  TK_CHECK(options.precision >= -1, kInvalidArgument, "mtx: precision ", options.precision,
           " is negative; pass -1 for the shortest form or a digit count");
  // The same index dtype for both, int32 (SciPy's usual) or int64, read where it lies.
  const DType index_dtype =
      r.dtype() == c.dtype() && r.dtype() == DType::kInt32 ? DType::kInt32 : DType::kInt64;
  const Tensor rows = Converted(r, index_dtype).HostContiguous();
  const Tensor cols = Converted(c, index_dtype).HostContiguous();
  if (options.symmetry != MtxSymmetry::kGeneral) {  // detection and triangles: as a SparseTensor
    const Tensor r64 = Converted(rows, DType::kInt64), c64 = Converted(cols, DType::kInt64);
    Tensor indices = Tensor::Empty({r64.Dim(0), 2}, DType::kInt64);
    int64_t* idx = indices.data<int64_t>();
    const int64_t* rp = r64.data<int64_t>();
    const int64_t* cp = c64.data<int64_t>();
    for (int64_t k = 0, n = r64.Dim(0); k < n; ++k) {
      idx[2 * k] = rp[k];
      idx[2 * k + 1] = cp[k];
    }
    WriteSparseMtx(path, SparseTensor::Create(indices, v, {matrix.num_rows, matrix.num_cols}),
                   options);
    return;
  }
  const Tensor values = v.HostContiguous();
  const int64_t nnz = v.Dim(0);
  if (index_dtype == DType::kInt32) {
    WriteCoordinateMtx(path, matrix.num_rows, matrix.num_cols, nnz,
                       EntryIndices<int32_t>{rows.data<int32_t>(), cols.data<int32_t>(), 1}, values,
                       MtxSymmetry::kGeneral, options);
  } else {
    WriteCoordinateMtx(path, matrix.num_rows, matrix.num_cols, nnz,
                       EntryIndices<int64_t>{rows.data<int64_t>(), cols.data<int64_t>(), 1}, values,
                       MtxSymmetry::kGeneral, options);
  }
}

void WriteMtx(const std::string& path, const TensorData& data) {
  WriteMtx(path, data, MtxWriteOptions{});
}

}  // namespace tensorkit::io
