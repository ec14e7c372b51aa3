// Matrix Market (.mtx): a "%%MatrixMarket matrix <format> <field> <symmetry>" banner, comment
// lines starting with '%', a size line, then 1-based entries, one a line. Coordinate files list
// "i j [value]"; array files list values column by column (only the lower triangle when
// symmetric, the strictly lower one when skew-symmetric).
#include <algorithm>
#include <cctype>

#include "tensorkit/common/alloc_fault.h"
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
                                             {"skew-symmetric", Symmetry::kSkew}};

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
                                            "skew-symmetric)");
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

// The 1-based (row, column) of an entry line, checked against the header.
void NextEntryIndices(LineTokens* t, const MtxHeader& h, bool skew, int64_t* i, int64_t* j) {
  *i = t->Next<int64_t>("row index");
  *j = t->Next<int64_t>("column index");
  TK_CHECK(*i >= 1 && *i <= h.rows, kCorrupt, "row index ", *i, " is out of range [1, ", h.rows,
           "] (Matrix Market indices are 1-based)");
  TK_CHECK(*j >= 1 && *j <= h.cols, kCorrupt, "column index ", *j, " is out of range [1, ", h.cols,
           "] (Matrix Market indices are 1-based)");
  TK_CHECK(!skew || *i != *j, kCorrupt, "a skew-symmetric matrix has no diagonal entry (", *i, ", ",
           *j, ")");
}

// The fast path of an entry line at p: "i j[ value]" with unsigned indices in range, single
// kinds of blanks and a plain number; returns the line's end, or nullptr to leave the line to
// NextEntryIndices and LineTokens.
template <typename T>
[[gnu::always_inline]] inline const char* ScanEntry(const char* p, const char* end,
                                                    const MtxHeader& h, bool skew, int64_t* i,
                                                    int64_t* j, T* v) {
  if constexpr (std::is_same_v<T, double>) {
    int64_t ij[2];
    if (h.field == Field::kReal) {
      const char* le = ScanIndicesRealLine<2>(p, end, ij, v);
      if (le != nullptr && ij[0] >= 1 && ij[0] <= h.rows && ij[1] >= 1 && ij[1] <= h.cols &&
          !(skew && ij[0] == ij[1])) {
        *i = ij[0];
        *j = ij[1];
        return le;
      }
    }
  }
  if (!ScanDigitPair(&p, end, i, j)) return nullptr;
  if (*i < 1 || *i > h.rows || *j < 1 || *j > h.cols || (skew && *i == *j)) return nullptr;
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
          const char* le = ScanEntry(p, end, h, skew, &i, &j, &v);
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
          NextEntryIndices(&t, h, skew, &i, &j);
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
  const bool skew = h.symmetry == Symmetry::kSkew;
  const bool mirror = h.symmetry != Symmetry::kGeneral;
  if (on_shape) on_shape({h.rows, h.cols});
  // One buffer per chunk, emptied at its end: at most the chunks in flight hold positions.
  std::vector<std::vector<int64_t>> buffers(chunks.size());
  ParseDataLines(
      bytes, chunks, '%', "mtx",
      [&](const char* b, const char* e, int64_t, int64_t, int64_t c) {
        LineTokens t(b, e);
        int64_t i = 0, j = 0;
        NextEntryIndices(&t, h, skew, &i, &j);
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

void WriteMtx(const std::string& path, const TensorData& data) {
  const DType dtype = data.is_sparse() ? data.sparse.dtype() : data.dense.dtype();
  TK_CHECK(dtype != DType::kString, kUnsupported, "mtx: cannot write string values to '", path,
           "'");
  const char* field = IsFloat(dtype) ? "real" : "integer";
  if (data.is_sparse()) {
    SparseTensor st = HostContiguous(data.sparse);
    TK_CHECK(st.rank() == 2, kUnsupported,
             "mtx: Matrix Market holds matrices; cannot write a rank-", st.rank(), " tensor to '",
             path, "' (use .tns for any rank)");
    AtomicFile file(path);
    file.Write(MtxCoordinateHeader(dtype, st.shape()[0], st.shape()[1], st.nnz()));
    const int64_t* idx = st.indices().data<int64_t>();
    Dispatch<kNumericDTypes>(dtype, "mtx: write", [&]<typename T>() {
      const T* v = st.values().data<T>();
      WriteBoundedLinesParallel(&file, st.nnz(), kMaxPairLineChars, [&](int64_t i, char* out) {
        return WritePairLine(idx[2 * i] + 1, idx[2 * i + 1] + 1, v[i], out);
      });
    });
    file.Commit();
    return;
  }
  const Tensor& t = data.dense;
  t.CheckDefined("mtx: write");
  TK_CHECK(t.NumAxes() == 2, kUnsupported, "mtx: Matrix Market holds matrices; cannot write dims ",
           ShapeString(t.Dims()), " to '", path, "'");
  Tensor host = t.device().is_cpu() && t.IsContiguous() ? t : t.To(Device::Cpu());
  const int64_t m = host.Dim(0), n = host.Dim(1);
  AtomicFile file(path);
  file.Write(std::string("%%MatrixMarket matrix array ") + field + " general\n" +
             std::to_string(m) + " " + std::to_string(n) + "\n");
  Dispatch<kNumericDTypes>(dtype, "mtx: write", [&]<typename T>() {
    const T* v = host.data<T>();
    WriteBoundedLinesParallel(&file, m * n, kMaxNumberChars + 1, [&](int64_t k, char* out) {
      out = WriteNumber(v[(k % m) * n + k / m], out);  // column by column
      *out++ = '\n';
      return out;
    });
  });
  file.Commit();
}

}  // namespace tensorkit::io
