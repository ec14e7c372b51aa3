// libsvm / svmlight files: a parallel reader over text.h's chunks of whole lines (each chunk
// parsed into its own arrays, then the chunks concatenated in order) and a parallel writer.
#include "tensorkit/io/libsvm.h"

#include <fast_float/fast_float.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string_view>
#include <type_traits>
#include <vector>

#include "tensorkit/common/alloc_fault.h"
#include "tensorkit/common/error.h"
#include "tensorkit/common/file_util.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/io/formats.h"
#include "tensorkit/io/text.h"

namespace tensorkit::io {
namespace {

constexpr const char* kFmt = "libsvm";

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// Note [entry pieces]
// ~~~~~~~~~~~~~~~~~~~
// A read parses each chunk's entries into vectors, then copies them to the outputs. Fresh heap
// pages for those vectors (16 bytes an entry: 160 MB for a 120 MB file) cost a read a quarter
// of its time in page faults and zeroing. So each chunk's columns start in their piece of one
// block of the library's allocator (2 MiB pages, kept by its block cache for the next read);
// a chunk with more entries than its piece holds moves on to the heap, as a vector does.
template <typename T>
class PieceAllocator {
 public:
  using value_type = T;
  using propagate_on_container_move_assignment = std::true_type;
  PieceAllocator() = default;
  PieceAllocator(T* piece, size_t size) : piece_(piece), size_(size) {}
  template <typename U>
  explicit PieceAllocator(const PieceAllocator<U>&) {}  // a rebound allocator has no piece
  // A copied vector gets the heap, never a second claim on the piece.
  PieceAllocator select_on_container_copy_construction() const { return {}; }

  T* allocate(size_t n) {
    if (piece_ != nullptr && !taken_ && n <= size_) {
      taken_ = true;
      return piece_;
    }
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, size_t n) noexcept {
    if (p == piece_) {
      taken_ = false;
      return;
    }
    std::allocator<T>().deallocate(p, n);
  }
  friend bool operator==(const PieceAllocator& a, const PieceAllocator& b) {
    return a.piece_ == b.piece_;
  }

 private:
  T* piece_ = nullptr;
  size_t size_ = 0;
  bool taken_ = false;
};

template <typename T>
using EntryColumn = std::vector<T, PieceAllocator<T>>;

// What one chunk of lines parses into.
struct ChunkOut {
  std::vector<int64_t> row_nnz;  // per sample
  EntryColumn<int64_t> cols;
  EntryColumn<double> vals;
  std::vector<double> labels;        // one per sample, or (multilabel) all of them
  std::vector<int64_t> label_count;  // multilabel: per sample
  std::vector<int64_t> qids;         // per sample, valid where has_qid
  std::vector<uint8_t> has_qid;
  int64_t min_col = std::numeric_limits<int64_t>::max();
  int64_t max_col = -1;
};

// The 1-based column of p in its line (the line starts after the previous '\n' or at base).
int64_t ColumnOf(const char* base, const char* p) {
  const char* s = p;
  while (s > base && s[-1] != '\n') --s;
  return (p - s) + 1;
}

// A token [b, e) that the caller has cut out of a line.
struct Token {
  const char* b;
  const char* e;
  std::string_view view() const { return std::string_view(b, static_cast<size_t>(e - b)); }
};

[[noreturn]] void Bad(const char* base, const char* at, const char* what, const Token& t,
                      const char* expected) {
  Throw(ErrorCode::kCorrupt, "column ", ColumnOf(base, at), ": ", what, " '", Excerpt(t.view()),
        "' is not ", expected);
}

double ParseNumber(const char* base, const Token& t, const char* what) {
  const char* first = t.b;
  // A leading '+' as Python's float() takes it; fast_float does not.
  if (first < t.e && *first == '+' && t.e - first > 1 && first[1] != '-') ++first;
  double v = 0;
  const auto [p, ec] = fast_float::from_chars(first, t.e, v);
  if (p == t.e && ec == std::errc::result_out_of_range) return OutOfRangeValue<double>(first, t.e);
  if (p != t.e || ec != std::errc() || first == t.e) Bad(base, t.b, what, t, "a number");
  return v;
}

int64_t ParseInteger(const char* base, const Token& t, const char* what) {
  const char* first = t.b;
  if (first < t.e && *first == '+') ++first;
  int64_t v = 0;
  const auto [p, ec] = std::from_chars(first, t.e, v);
  if (p != t.e || ec != std::errc() || first == t.e) Bad(base, t.b, what, t, "an integer");
  return v;
}

// Appends entry (idx, v) of the current line, checking its index against the previous one.
inline void AddEntry(const char* base, const char* at, int64_t idx, double v, bool base_one,
                     int64_t* prev, ChunkOut* out) {
  if (idx < 0 || (base_one && idx == 0)) {
    Throw(ErrorCode::kCorrupt, "column ", ColumnOf(base, at), ": index ", idx,
          idx < 0 ? " is negative" : " is 0 in a file read as 1-based (read it as zero-based)");
  }
  if (idx <= *prev) {
    Throw(ErrorCode::kCorrupt, "column ", ColumnOf(base, at), ": index ", idx, " follows index ",
          *prev, "; indices must be sorted and unique within a line");
  }
  *prev = idx;
  out->cols.push_back(idx);
  out->vals.push_back(v);
}

// Parses one data line [b, e) (leading blanks already skipped) into *out.
void ParseLine(const char* base, const char* b, const char* e, bool multilabel, bool base_one,
               ChunkOut* out) {
  if (const void* hash = std::memchr(b, '#', static_cast<size_t>(e - b))) {
    e = static_cast<const char*>(hash);
  }
  auto next_token = [&](Token* t) {
    while (b < e && IsBlank(*b)) ++b;
    if (b == e) return false;
    t->b = b;
    while (b < e && !IsBlank(*b)) ++b;
    t->e = b;
    return true;
  };
  Token t{};
  if (!next_token(&t)) return;  // only a comment: not a sample
  int64_t labels = 0;
  bool have_feature_token = false;
  if (multilabel && std::memchr(t.b, ':', static_cast<size_t>(t.e - t.b)) != nullptr) {
    have_feature_token = true;  // no labels: the first token already is a feature
  } else if (multilabel) {
    const size_t first = out->labels.size();
    for (const char* s = t.b; s <= t.e;) {
      const char* comma = static_cast<const char*>(std::memchr(s, ',', t.e - s));
      const char* end = comma ? comma : t.e;
      out->labels.push_back(ParseNumber(base, Token{s, end}, "label"));
      ++labels;
      s = end + 1;
    }
    std::sort(out->labels.begin() + static_cast<int64_t>(first), out->labels.end());
  } else {
    out->labels.push_back(ParseNumber(base, t, "label"));
  }
  if (multilabel) out->label_count.push_back(labels);
  bool has_qid = false;
  int64_t qid = 0, nnz = 0, prev = -1;
  // Slow path for one token: everything the fast path below does not take (a qid, a '+', bad
  // text), with the exact errors.
  auto slow = [&](const Token& tk) {
    const char* colon = static_cast<const char*>(std::memchr(tk.b, ':', tk.e - tk.b));
    if (colon == nullptr) {
      Throw(ErrorCode::kCorrupt, "column ", ColumnOf(base, tk.b), ": '", Excerpt(tk.view()),
            "' is not index:value");
    }
    if (nnz == 0 && !has_qid && colon - tk.b == 3 && std::memcmp(tk.b, "qid", 3) == 0) {
      has_qid = true;
      qid = ParseInteger(base, Token{colon + 1, tk.e}, "qid");
      return;
    }
    const int64_t idx = ParseInteger(base, Token{tk.b, colon}, "index");
    AddEntry(base, tk.b, idx, ParseNumber(base, Token{colon + 1, tk.e}, "value"), base_one, &prev,
             out);
    ++nnz;
  };
  if (have_feature_token) slow(t);
  while (true) {
    while (b < e && IsBlank(*b)) ++b;
    if (b == e) break;
    // Fast path: decimal digits, ':', a plain number, then a blank.
    const char* tok = b;
    int64_t idx = 0;
    double v = 0;
    const char* q = b;
    const bool fast = ScanDigits(&q, e, &idx) && q < e && *q++ == ':' && ScanReal(&q, e, &v) &&
                      (q == e || IsBlank(*q));
    if (fast) {
      b = q;
      AddEntry(base, tok, idx, v, base_one, &prev, out);
      ++nnz;
      continue;
    }
    b = tok;
    while (b < e && !IsBlank(*b)) ++b;
    slow(Token{tok, b});
  }
  if (nnz > 0) {
    out->min_col = std::min(out->min_col, out->cols[out->cols.size() - nnz]);
    out->max_col = std::max(out->max_col, prev);
  }
  out->row_nnz.push_back(nnz);
  out->qids.push_back(qid);
  out->has_qid.push_back(has_qid ? 1 : 0);
}

// Exclusive running sums of per-chunk sizes (the chunks' first positions), the total last.
template <typename Size>
std::vector<int64_t> Starts(const std::vector<ChunkOut>& outs, const Size& size) {
  std::vector<int64_t> s(outs.size() + 1, 0);
  for (size_t c = 0; c < outs.size(); ++c) s[c + 1] = s[c] + size(outs[c]);
  return s;
}

// The index base (scikit-learn's rule for kAuto: one-based unless some index is 0) and the
// number of features, from every entry's smallest and largest index.
struct Extent {
  bool one_based = false;
  int64_t shift = 0;  // subtracted from each index
  int64_t cols = 0;
};
Extent ExtentOf(const LibsvmReadOptions& o, int64_t entries, int64_t min_col, int64_t max_col,
                const std::string& name) {
  Extent x;
  x.one_based =
      o.base == IndexBase::kOne || (o.base == IndexBase::kAuto && entries > 0 && min_col > 0);
  x.shift = x.one_based ? 1 : 0;
  // The shape never needs samples * features, but the column count itself must be an int64.
  TK_CHECK(o.num_features >= 0 || max_col - x.shift < std::numeric_limits<int64_t>::max(), kCorrupt,
           kFmt, ": '", name, "' has feature index ", max_col,
           " in a zero-based file, so its column count (index + 1) does not fit in int64");
  x.cols = o.num_features >= 0 ? o.num_features : max_col - x.shift + 1;
  if (o.num_features >= 0 && max_col - x.shift >= o.num_features) {
    Throw(ErrorCode::kCorrupt, kFmt, ": '", name, "' has feature index ", max_col - x.shift, " (",
          x.one_based ? "1-based " : "", "index ", max_col, ") but num_features is ",
          o.num_features, "; pass a larger num_features or -1");
  }
  return x;
}

// The labels, label offsets and qids of every chunk at their places in d.
void CopyLabels(const ChunkOut& ch, int64_t c, const LibsvmReadOptions& o,
                const std::vector<int64_t>& row0, const std::vector<int64_t>& lab0, bool qids,
                LibsvmData* d) {
  std::copy(ch.labels.begin(), ch.labels.end(), d->labels.data<double>() + lab0[c]);
  if (o.multilabel) {
    int64_t* off = d->label_offsets.data<int64_t>();
    int64_t at = lab0[c];
    for (size_t r = 0; r < ch.label_count.size(); ++r) {
      off[row0[c] + r] = at;
      at += ch.label_count[r];
    }
  }
  if (qids) std::copy(ch.qids.begin(), ch.qids.end(), d->qids.data<int64_t>() + row0[c]);
}

// Each chunk's rows written straight into SciPy's CSR arrays.
void FillCsr(const std::vector<ChunkOut>& outs, const LibsvmReadOptions& o,
             const std::vector<int64_t>& row0, const std::vector<int64_t>& nz0,
             const std::vector<int64_t>& lab0, bool qids, int64_t shift, LibsvmData* d) {
  LibsvmCsr& csr = d->csr;
  int64_t* ptr = csr.indptr.data<int64_t>();
  int64_t* ind = csr.indices.data<int64_t>();
  ParallelChunks(static_cast<int64_t>(outs.size()), 1, [&](int64_t c, int64_t, int64_t) {
    const ChunkOut& ch = outs[c];
    int64_t k = nz0[c];
    for (size_t r = 0; r < ch.row_nnz.size(); ++r) {
      ptr[row0[c] + static_cast<int64_t>(r)] = k;
      k += ch.row_nnz[r];
    }
    for (size_t j = 0; j < ch.cols.size(); ++j) ind[nz0[c] + j] = ch.cols[j] - shift;
    if (o.dtype == DType::kFloat32) {
      float* v = csr.values.data<float>() + nz0[c];
      for (size_t j = 0; j < ch.vals.size(); ++j) v[j] = static_cast<float>(ch.vals[j]);
    } else {
      std::copy(ch.vals.begin(), ch.vals.end(), csr.values.data<double>() + nz0[c]);
    }
    CopyLabels(ch, c, o, row0, lab0, qids, d);
  });
  ptr[row0.back()] = nz0.back();
}

LibsvmData AssembleCsr(const std::vector<ChunkOut>& outs, const LibsvmReadOptions& o,
                       const std::vector<int64_t>& row0, const std::vector<int64_t>& nz0,
                       const std::vector<int64_t>& lab0, int64_t with_qid, const Extent& x,
                       LibsvmData d);

LibsvmData Assemble(std::vector<ChunkOut>& outs, const LibsvmReadOptions& o,
                    const std::vector<TextChunk>& chunks, const std::string& name) {
  const std::vector<int64_t> row0 =
      Starts(outs, [](const ChunkOut& c) { return static_cast<int64_t>(c.row_nnz.size()); });
  const std::vector<int64_t> nz0 =
      Starts(outs, [](const ChunkOut& c) { return static_cast<int64_t>(c.cols.size()); });
  const std::vector<int64_t> lab0 =
      Starts(outs, [](const ChunkOut& c) { return static_cast<int64_t>(c.labels.size()); });
  const int64_t samples = row0.back(), nnz = nz0.back();
  int64_t min_col = std::numeric_limits<int64_t>::max(), max_col = -1, with_qid = 0;
  for (const ChunkOut& c : outs) {
    min_col = std::min(min_col, c.min_col);
    max_col = std::max(max_col, c.max_col);
    with_qid += std::count(c.has_qid.begin(), c.has_qid.end(), 1);
  }
  LibsvmData d;
  const Extent x = ExtentOf(o, nnz, min_col, max_col, name);
  d.one_based = x.one_based;
  const int64_t shift = x.shift, cols = x.cols;
  if (with_qid > 0 && with_qid < samples) {
    // Name the first sample without one: its line is found by walking its chunk again.
    for (size_t c = 0; c < outs.size(); ++c) {
      const auto it = std::find(outs[c].has_qid.begin(), outs[c].has_qid.end(), 0);
      if (it == outs[c].has_qid.end()) continue;
      Throw(ErrorCode::kCorrupt, kFmt, ": '", name, "': sample ",
            row0[c] + (it - outs[c].has_qid.begin()), " (in the lines from ", chunks[c].first_line,
            ") has no qid but ", with_qid, " samples have one; give every line a qid or none");
    }
  }
  d.labels = Tensor::Empty({lab0.back()}, DType::kFloat64);
  if (o.multilabel) d.label_offsets = Tensor::Empty({samples + 1}, DType::kInt64);
  if (with_qid > 0) d.qids = Tensor::Empty({samples}, DType::kInt64);
  if (o.csr) return AssembleCsr(outs, o, row0, nz0, lab0, with_qid, x, std::move(d));
  Tensor indices = Tensor::Empty({nnz, 2}, DType::kInt64);
  Tensor values = Tensor::Empty({nnz}, o.dtype);
  int64_t* ind = indices.data<int64_t>();
  ParallelChunks(static_cast<int64_t>(outs.size()), 1, [&](int64_t c, int64_t, int64_t) {
    const ChunkOut& ch = outs[c];
    int64_t k = nz0[c];
    for (size_t r = 0; r < ch.row_nnz.size(); ++r) {
      for (int64_t j = 0; j < ch.row_nnz[r]; ++j, ++k) ind[2 * k] = row0[c] + r;
    }
    for (size_t j = 0; j < ch.cols.size(); ++j) ind[2 * (nz0[c] + j) + 1] = ch.cols[j] - shift;
    if (o.dtype == DType::kFloat32) {
      float* v = values.data<float>() + nz0[c];
      for (size_t j = 0; j < ch.vals.size(); ++j) v[j] = static_cast<float>(ch.vals[j]);
    } else {
      std::copy(ch.vals.begin(), ch.vals.end(), values.data<double>() + nz0[c]);
    }
    CopyLabels(ch, c, o, row0, lab0, with_qid > 0, &d);
  });
  if (o.multilabel) d.label_offsets.data<int64_t>()[samples] = lab0.back();
  d.features = SparseTensor::Create(std::move(indices), std::move(values),
                                    {samples, std::max<int64_t>(cols, 0)}, {0, 1});
  return d;
}

LibsvmData AssembleCsr(const std::vector<ChunkOut>& outs, const LibsvmReadOptions& o,
                       const std::vector<int64_t>& row0, const std::vector<int64_t>& nz0,
                       const std::vector<int64_t>& lab0, int64_t with_qid, const Extent& x,
                       LibsvmData d) {
  const int64_t samples = row0.back(), nnz = nz0.back();
  LibsvmCsr& csr = d.csr;
  csr.shape = {samples, std::max<int64_t>(x.cols, 0)};
  csr.indptr = Tensor::Empty({samples + 1}, DType::kInt64);
  csr.indices = Tensor::Empty({nnz}, DType::kInt64);
  csr.values = Tensor::Empty({nnz}, o.dtype);
  FillCsr(outs, o, row0, nz0, lab0, with_qid > 0, x.shift, &d);
  if (o.multilabel) d.label_offsets.data<int64_t>()[samples] = lab0.back();
  return d;
}

}  // namespace

static LibsvmData ReadLibsvmUnguarded(const void* data, size_t size, const std::string& name,
                                      const LibsvmReadOptions& options);

LibsvmData ReadLibsvmFromMemory(const void* data, size_t size, const std::string& name,
                                const LibsvmReadOptions& options) {
  const std::string op = "ReadLibsvm: '" + name + "'";
  return alloc_fault::ReportingAllocationFailure(
      op.c_str(), [&] { return ReadLibsvmUnguarded(data, size, name, options); });
}

static LibsvmData ReadLibsvmUnguarded(const void* data, size_t size, const std::string& name,
                                      const LibsvmReadOptions& options) {
  TK_CHECK(options.dtype == DType::kFloat64 || options.dtype == DType::kFloat32, kInvalidArgument,
           "ReadLibsvm: dtype ", DTypeName(options.dtype),
           " is not a feature dtype; pass float64 or float32");
  const Bytes bytes{static_cast<const uint8_t*>(data), size, name};
  const std::vector<TextChunk> chunks = ChunkLines(bytes, 0, 1, '#');
  // About one entry per 8 bytes; each chunk's columns in its pieces of `pieces` (Note [entry
  // pieces]), which outlives `outs`.
  std::vector<size_t> guess(chunks.size());
  int64_t total = 0;
  for (size_t c = 0; c < chunks.size(); ++c) {
    guess[c] = static_cast<size_t>((chunks[c].end - chunks[c].begin) / 8 + 1);
    total += static_cast<int64_t>(guess[c]);
  }
  static_assert(sizeof(int64_t) == sizeof(double));
  const Tensor pieces = Tensor::Empty({2 * total}, DType::kInt64);
  int64_t* cols_at = pieces.data<int64_t>();
  double* vals_at = reinterpret_cast<double*>(cols_at + total);
  std::vector<ChunkOut> outs;
  outs.reserve(chunks.size());
  alloc_fault::MaybeFailBuffer();
  for (size_t c = 0; c < chunks.size(); ++c) {
    ChunkOut& out = outs.emplace_back();
    out.cols = EntryColumn<int64_t>(PieceAllocator<int64_t>(cols_at, guess[c]));
    out.vals = EntryColumn<double>(PieceAllocator<double>(vals_at, guess[c]));
    cols_at += guess[c];
    vals_at += guess[c];
    outs[c].cols.reserve(guess[c]);
    outs[c].vals.reserve(guess[c]);
    outs[c].row_nnz.reserve(static_cast<size_t>(chunks[c].entries));
    outs[c].labels.reserve(static_cast<size_t>(chunks[c].entries));
    outs[c].qids.reserve(static_cast<size_t>(chunks[c].entries));
    outs[c].has_qid.reserve(static_cast<size_t>(chunks[c].entries));
  }
  const char* base = reinterpret_cast<const char*>(bytes.data);
  const bool base_one = options.base == IndexBase::kOne;
  ParseDataLines(bytes, chunks, '#', kFmt,
                 [&](const char* b, const char* e, int64_t, int64_t, int64_t c) {
                   ParseLine(base, b, e, options.multilabel, base_one, &outs[c]);
                 });
  return Assemble(outs, options, chunks, name);
}

namespace {

// What the streaming readers learn from a first parse of every chunk (each chunk's arrays are
// dropped as soon as they are counted): where each chunk's samples, entries and labels start,
// and the shape and checks of Assemble.
struct FileSummary {
  std::vector<int64_t> row0, nz0, lab0;  // per chunk, exclusive running sums, totals last
  Extent extent;
  bool qids = false;  // every sample has one
  std::vector<int64_t> shape;
};

// Pass 2 of a streaming reader: every chunk parsed again, handed to on_chunk(c, out) and
// dropped, its bytes given back to the page cache (MappedFile::Release).
template <typename OnChunk>
void StreamChunks(const MappedFile& file, const std::vector<TextChunk>& chunks,
                  const LibsvmReadOptions& o, const OnChunk& on_chunk) {
  const Bytes bytes = file.bytes();
  const char* base = reinterpret_cast<const char*>(bytes.data);
  const bool base_one = o.base == IndexBase::kOne;
  std::vector<ChunkOut> outs(chunks.size());
  ParseDataLines(
      bytes, chunks, '#', kFmt,
      [&](const char* b, const char* e, int64_t, int64_t, int64_t c) {
        ParseLine(base, b, e, o.multilabel, base_one, &outs[c]);
      },
      [&](int64_t c) {
        alloc_fault::MaybeFailBuffer();  // the chunk's arrays and what on_chunk makes of them
        on_chunk(c, outs[c]);
        outs[c] = ChunkOut{};
        file.Release(static_cast<size_t>(chunks[c].begin), static_cast<size_t>(chunks[c].end));
      });
}

// The file's chunks of lines (text.h's pass 1), each chunk's pages given back once counted.
std::vector<TextChunk> ChunkAndRelease(const MappedFile& file) {
  return ChunkLines(file.bytes(), 0, 1, '#', [&](int64_t begin, int64_t end) {
    file.Release(static_cast<size_t>(begin), static_cast<size_t>(end));
  });
}

FileSummary Summarize(const MappedFile& file, const std::vector<TextChunk>& chunks,
                      const LibsvmReadOptions& o) {
  const size_t n = chunks.size();
  FileSummary s;
  s.row0.assign(n + 1, 0);
  s.nz0.assign(n + 1, 0);
  s.lab0.assign(n + 1, 0);
  std::vector<int64_t> with_qid(n, 0), min_col(n), max_col(n);
  StreamChunks(file, chunks, o, [&](int64_t c, const ChunkOut& ch) {
    s.row0[c + 1] = static_cast<int64_t>(ch.row_nnz.size());
    s.nz0[c + 1] = static_cast<int64_t>(ch.cols.size());
    s.lab0[c + 1] = static_cast<int64_t>(ch.labels.size());
    with_qid[c] = std::count(ch.has_qid.begin(), ch.has_qid.end(), 1);
    min_col[c] = ch.min_col;
    max_col[c] = ch.max_col;
  });
  int64_t qids = 0, lo = std::numeric_limits<int64_t>::max(), hi = -1;
  for (size_t c = 0; c < n; ++c) {
    s.row0[c + 1] += s.row0[c];
    s.nz0[c + 1] += s.nz0[c];
    s.lab0[c + 1] += s.lab0[c];
    qids += with_qid[c];
    lo = std::min(lo, min_col[c]);
    hi = std::max(hi, max_col[c]);
  }
  const int64_t samples = s.row0.back();
  const std::string& name = file.bytes().name;
  s.extent = ExtentOf(o, s.nz0.back(), lo, hi, name);
  TK_CHECK(qids == 0 || qids == samples, kCorrupt, kFmt, ": '", name, "': ", qids, " of ", samples,
           " samples have a qid; give every line a qid or none");
  s.qids = qids > 0;
  s.shape = {samples, std::max<int64_t>(s.extent.cols, 0)};
  return s;
}

// Pass 2 must find in chunk c what pass 1 counted there; a file rewritten in between would
// otherwise write pieces over each other's places.
void CheckUnchanged(const FileSummary& s, int64_t c, const ChunkOut& ch, const std::string& name) {
  TK_CHECK(static_cast<int64_t>(ch.row_nnz.size()) == s.row0[c + 1] - s.row0[c] &&
               static_cast<int64_t>(ch.cols.size()) == s.nz0[c + 1] - s.nz0[c] &&
               static_cast<int64_t>(ch.labels.size()) == s.lab0[c + 1] - s.lab0[c],
           kCorrupt, kFmt, ": '", name,
           "' changed while it was converted (its lines differ between two reads)");
}

// The .npz WriteNpz writes for ReadLibsvm's result with csr and the labels (qids,
// label_offsets) as extra members, byte for byte, written a chunk at a time at its place.
void StreamToNpz(const MappedFile& in, const std::vector<TextChunk>& chunks,
                 const LibsvmReadOptions& o, const FileSummary& s, const std::string& out) {
  const size_t n = chunks.size();
  const int64_t rows = s.row0.back(), nnz = s.nz0.back(), labels = s.lab0.back();
  const int64_t shift = s.extent.shift;
  const std::string zero(8, '\0');  // label_offsets[0]
  // indices and indptr in the dtype SciPy gives them (int32 unless a dim or nnz needs int64).
  const DType index_dtype = ScipyIndexDType(true, s.shape, nnz);
  const bool narrow = index_dtype == DType::kInt32;
  const std::string index_zero(DTypeSize(index_dtype), '\0');  // indptr[0]
  AtomicFile file(out);
  ZipWriter zip(&file);
  const std::string fmt = "csr";
  zip.Add("format.npy", {NpyByteStringHeader(fmt.size()), fmt}, false);
  zip.Add("shape.npy", {NpyHeaderFor(DType::kInt64, {2}), BytesOf(s.shape)}, false);
  StreamedNpyMember indices(&zip, &file, "indices", index_dtype, nnz, "", n);
  StreamedNpyMember indptr(&zip, &file, "indptr", index_dtype, rows + 1, index_zero, n);
  StreamedNpyMember data(&zip, &file, "data", o.dtype, nnz, "", n);
  StreamedNpyMember label(&zip, &file, "labels", DType::kFloat64, labels, "", n);
  std::optional<StreamedNpyMember> label_offsets, qids;
  if (o.multilabel)
    label_offsets.emplace(&zip, &file, "label_offsets", DType::kInt64, rows + 1, zero, n);
  if (s.qids) qids.emplace(&zip, &file, "qids", DType::kInt64, rows, "", n);
  StreamChunks(in, chunks, o, [&](int64_t c, ChunkOut& ch) {
    CheckUnchanged(s, c, ch, in.bytes().name);
    for (int64_t& col : ch.cols) col -= shift;
    // Row ends (indptr[r + 1]) replace the per-row counts in place.
    int64_t at = s.nz0[c];
    for (int64_t& k : ch.row_nnz) k = at += k;
    if (narrow) {
      const std::vector<int32_t> cols(ch.cols.begin(), ch.cols.end());
      const std::vector<int32_t> ends(ch.row_nnz.begin(), ch.row_nnz.end());
      indices.Put(c, s.nz0[c], BytesOf(cols));
      indptr.Put(c, s.row0[c], BytesOf(ends));
    } else {
      indices.Put(c, s.nz0[c], BytesOf(ch.cols));
      indptr.Put(c, s.row0[c], BytesOf(ch.row_nnz));
    }
    if (o.dtype == DType::kFloat32) {
      std::vector<float> v(ch.vals.begin(), ch.vals.end());
      data.Put(c, s.nz0[c], BytesOf(v));
    } else {
      data.Put(c, s.nz0[c], BytesOf(ch.vals));
    }
    label.Put(c, s.lab0[c], BytesOf(ch.labels));
    if (label_offsets) {
      at = s.lab0[c];
      for (int64_t& k : ch.label_count) k = at += k;
      label_offsets->Put(c, s.row0[c], BytesOf(ch.label_count));
    }
    if (qids) qids->Put(c, s.row0[c], BytesOf(ch.qids));
  });
  for (StreamedNpyMember* m : {&indices, &indptr, &data, &label}) m->Seal();
  if (label_offsets) label_offsets->Seal();
  if (qids) qids->Seal();
  zip.Finish();
  file.Commit();
}

// The coordinate .mtx WriteMtx writes for ReadLibsvm's features, byte for byte: each chunk of
// lines parsed and formatted in parallel, a window at a time, and written in order.
void StreamToMtx(const MappedFile& in, const std::vector<TextChunk>& chunks,
                 const LibsvmReadOptions& o, const FileSummary& s, const std::string& out) {
  AtomicFile file(out);
  file.Write(MtxCoordinateHeader(o.dtype, s.shape[0], s.shape[1], s.nz0.back()));
  const int64_t one = 1 - s.extent.shift;  // 1-based rows and columns
  WriteChunksInOrder(&file, static_cast<int64_t>(chunks.size()), [&](int64_t c, std::string* text) {
    text->clear();
    StreamChunks(in, {chunks[c]}, o, [&](int64_t, const ChunkOut& ch) {
      CheckUnchanged(s, c, ch, in.bytes().name);
      // Lines go through a small buffer: the text keeps the capacity of what it held, and a
      // window of them is in memory at once.
      char line[kMaxPairLineChars];
      int64_t k = 0;
      for (size_t r = 0; r < ch.row_nnz.size(); ++r) {
        const int64_t row = s.row0[c] + static_cast<int64_t>(r) + 1;
        for (int64_t j = 0; j < ch.row_nnz[r]; ++j, ++k) {
          const char* end =
              o.dtype == DType::kFloat32
                  ? WritePairLine(row, ch.cols[k] + one, static_cast<float>(ch.vals[k]), line)
                  : WritePairLine(row, ch.cols[k] + one, ch.vals[k], line);
          text->append(line, static_cast<size_t>(end - line));
        }
      }
    });
  });
  file.Commit();
}

}  // namespace

std::vector<int64_t> VisitLibsvmPositions(
    const std::string& path, const PositionVisitor& visit,
    const std::function<void(const std::vector<int64_t>& shape)>& on_shape,
    const LibsvmReadOptions& options) {
  const MappedFile file(path);
  const std::vector<TextChunk> chunks = ChunkAndRelease(file);
  const FileSummary s = Summarize(file, chunks, options);
  if (on_shape) on_shape(s.shape);
  StreamChunks(file, chunks, options, [&](int64_t c, const ChunkOut& ch) {
    std::vector<int64_t> rc(2 * ch.cols.size());
    int64_t k = 0;
    for (size_t r = 0; r < ch.row_nnz.size(); ++r) {
      for (int64_t j = 0; j < ch.row_nnz[r]; ++j, ++k) {
        rc[2 * k] = s.row0[c] + static_cast<int64_t>(r);
        rc[2 * k + 1] = ch.cols[k] - s.extent.shift;
      }
    }
    visit(rc.data(), k);
  });
  return s.shape;
}

static void ConvertLibsvmUnguarded(const std::string& in, const std::string& out,
                                   const LibsvmReadOptions& options);

void ConvertLibsvm(const std::string& in, const std::string& out,
                   const LibsvmReadOptions& options) {
  const std::string op = "ConvertLibsvm: '" + in + "'";
  alloc_fault::ReportingAllocationFailure(op.c_str(),
                                          [&] { ConvertLibsvmUnguarded(in, out, options); });
}

static void ConvertLibsvmUnguarded(const std::string& in, const std::string& out,
                                   const LibsvmReadOptions& options) {
  const Format f = FormatFromPath(out);
  TK_CHECK(f == Format::kNpz || f == Format::kMtx, kUnsupported, "ConvertLibsvm: cannot stream '",
           in, "' into '", out,
           "'; the output must be .npz or .mtx (read other conversions with "
           "ReadLibsvm and write them with Write)");
  TK_CHECK(options.dtype == DType::kFloat64 || options.dtype == DType::kFloat32, kInvalidArgument,
           "ConvertLibsvm: dtype ", DTypeName(options.dtype),
           " is not a feature dtype; pass float64 or float32");
  const MappedFile file(in);
  const std::vector<TextChunk> chunks = ChunkAndRelease(file);
  const FileSummary s = Summarize(file, chunks, options);
  if (f == Format::kNpz) {
    StreamToNpz(file, chunks, options, s, out);
  } else {
    StreamToMtx(file, chunks, options, s, out);
  }
}

LibsvmData ReadLibsvm(const std::string& path, const LibsvmReadOptions& options) {
  const MappedFile file(path);
  const Bytes b = file.bytes();
  return ReadLibsvmFromMemory(b.data, b.size, path, options);
}

namespace {

// printf's "%.16g" of v (scikit-learn's form), NaN spelled "nan" whatever its sign bit, as
// Python's '%' operator spells it (glibc's printf writes "-nan"). Returns the end.
char* WriteG16(double v, char* out) {
  if (std::isnan(v)) {
    std::memcpy(out, "nan", 3);
    return out + 3;
  }
  // An integer below 1e16 has at most 16 digits, so "%.16g" writes it in full: the common case
  // of counts and class labels skips the digit generation.
  if (std::fabs(v) < 1e16 && v == std::trunc(v)) {
    if (v == 0) {
      if (std::signbit(v)) *out++ = '-';
      *out++ = '0';
      return out;
    }
    return std::to_chars(out, out + kMaxNumberChars, static_cast<int64_t>(v)).ptr;
  }
  return std::to_chars(out, out + kMaxNumberChars, v, std::chars_format::general, 16).ptr;
}

// Appends element i of `t` (host, contiguous, numeric) as `style` spells it.
class NumberWriter {
 public:
  NumberWriter(const Tensor& t, LibsvmStyle style) {
    sklearn_ = style == LibsvmStyle::kScikitLearn;
    integral_ = sklearn_ && (IsInteger(t.dtype()) || t.dtype() == DType::kBool);
    if (integral_) {
      i64_ = t.dtype() == DType::kInt64 ? t : Converted(t, DType::kInt64);
    } else {
      f64_ = t.dtype() == DType::kFloat64 ? t : Converted(t, DType::kFloat64);
    }
  }
  void Append(int64_t i, std::string* out) const {
    if (integral_) {
      AppendNumber(i64_.data<int64_t>()[i], out);
    } else if (sklearn_) {
      char buf[kMaxNumberChars];
      out->append(buf, WriteG16(f64_.data<double>()[i], buf));
    } else {
      AppendNumber(f64_.data<double>()[i], out);
    }
  }

 private:
  bool sklearn_ = false, integral_ = false;
  Tensor i64_, f64_;
};

}  // namespace

void WriteLibsvm(const std::string& path, const LibsvmData& data,
                 const LibsvmWriteOptions& options) {
  const char* op = "WriteLibsvm";
  const SparseTensor& f = data.features;
  TK_CHECK(f.rank() == 2, kInvalidArgument, op, ": features have rank ", f.rank(),
           "; libsvm holds a 2-D [samples, features] matrix");
  TK_CHECK(f.dtype() != DType::kString, kInvalidArgument, op, ": features of dtype ",
           DTypeName(f.dtype()), " are not numbers");
  TK_CHECK(f.dtype() != DType::kBool || options.style == LibsvmStyle::kScikitLearn,
           kInvalidArgument, op, ": features of dtype bool are not numbers; convert them");
  TK_CHECK(!data.labels.defined() || data.labels.dtype() != DType::kString, kInvalidArgument, op,
           ": labels of dtype string are not numbers");
  SparseTensor st = f.To(Device::Cpu());
  if (!st.SortedIn({0, 1})) st.Reorder({0, 1});
  st.ValidateIndices();
  const int64_t samples = st.shape()[0];
  const bool multi = data.label_offsets.defined();
  const Tensor labels =
      data.labels.defined() ? data.labels.To(Device::Cpu()).HostContiguous() : Tensor();
  const Tensor loff =
      multi ? Converted(data.label_offsets.To(Device::Cpu()).HostContiguous(), DType::kInt64)
            : Tensor();
  TK_CHECK(!labels.defined() || multi || labels.NumElements() == samples, kShapeMismatch, op, ": ",
           labels.NumElements(), " labels for ", samples, " samples");
  TK_CHECK(!multi || loff.NumElements() == samples + 1, kShapeMismatch, op, ": label_offsets has ",
           loff.NumElements(), " elements for ", samples, " samples (needs samples + 1)");
  if (multi) {
    const int64_t* o = loff.data<int64_t>();
    const int64_t n = labels.defined() ? labels.NumElements() : 0;
    for (int64_t r = 0; r < samples; ++r) {
      TK_CHECK(o[0] == 0 && o[r] <= o[r + 1] && o[r + 1] <= n, kInvalidArgument, op,
               ": label_offsets must rise from 0 to the label count ", n, "; sample ", r,
               " spans [", o[r], ", ", o[r + 1], ")");
    }
  }
  const Tensor qids = data.qids.defined()
                          ? Converted(data.qids.To(Device::Cpu()).HostContiguous(), DType::kInt64)
                          : Tensor();
  TK_CHECK(!qids.defined() || qids.NumElements() == samples, kShapeMismatch, op, ": ",
           qids.NumElements(), " qids for ", samples, " samples");
  // Row starts over the sorted entries.
  const Tensor idx = st.indices().HostContiguous();
  const int64_t* ind = idx.data<int64_t>();
  const int64_t nnz = st.nnz();
  std::vector<int64_t> start(static_cast<size_t>(samples + 1), 0);
  for (int64_t k = 0; k < nnz; ++k) ++start[ind[2 * k] + 1];
  for (int64_t r = 0; r < samples; ++r) start[r + 1] += start[r];
  const NumberWriter values(st.values().HostContiguous(), options.style);
  const std::optional<NumberWriter> label_text =
      labels.defined() ? std::optional<NumberWriter>(std::in_place, labels, options.style)
                       : std::nullopt;
  const bool space_always = options.style == LibsvmStyle::kScikitLearn;
  const int64_t one = options.one_based ? 1 : 0;
  AtomicFile file(path);
  if (!options.header.empty()) file.Write(options.header);
  WriteLinesParallel(&file, samples, [&](int64_t r, std::string* out) {
    if (!label_text) {
      out->push_back('0');
    } else if (multi) {
      const int64_t* o = loff.data<int64_t>();
      for (int64_t j = o[r]; j < o[r + 1]; ++j) {
        if (j > o[r]) out->push_back(',');
        label_text->Append(j, out);
      }
    } else {
      label_text->Append(r, out);
    }
    if (qids.defined()) {
      out->append(" qid:");
      AppendNumber(qids.data<int64_t>()[r], out);
    }
    if (space_always && start[r] == start[r + 1]) out->push_back(' ');
    for (int64_t k = start[r]; k < start[r + 1]; ++k) {
      out->push_back(' ');
      AppendNumber(ind[2 * k + 1] + one, out);
      out->push_back(':');
      values.Append(k, out);
    }
    out->push_back('\n');
  });
  file.Commit();
}

}  // namespace tensorkit::io
