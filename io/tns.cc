// FROSTT (.tns): one nonzero a line, "i1 i2 ... iN value", 1-based, whitespace separated; lines
// starting with '#' are comments. The rank is the number of fields of the first entry minus one;
// the shape is the caller's, else that of a comment "# shape: d1 ... dN" before the first entry
// (tensorkit writes one, so that a tensor without entries, or with none on its last rows, keeps
// its shape), else the largest index on each axis.
#include <algorithm>
#include <functional>
#include <utility>

#include "tensorkit/io/formats.h"
#include "tensorkit/io/text.h"

namespace tensorkit::io {
namespace {

struct TnsLayout {
  int fields = 0;          // whitespace-separated fields on the first data line
  int64_t first_line = 0;  // its line number
  bool has_shape = false;  // a "# shape:" comment came before it
  std::vector<int64_t> shape;
};

// The dims of a comment "# shape: d1 ... dN" (from just after '#'), or false when the comment
// is anything else.
bool ParseShapeComment(const char* b, const char* e, std::vector<int64_t>* shape) {
  while (b < e && (*b == ' ' || *b == '\t')) ++b;
  constexpr std::string_view kTag = "shape:";
  if (static_cast<size_t>(e - b) < kTag.size() || std::string_view(b, kTag.size()) != kTag) {
    return false;
  }
  LineTokens t(b + kTag.size(), e);
  std::vector<int64_t> dims;
  try {
    while (!t.AtEnd()) {
      dims.push_back(t.Next<int64_t>("dim"));
      if (dims.back() < 0 || dims.size() > 4096) return false;
    }
  } catch (const Error&) {
    return false;  // an ordinary comment that happens to start with "shape:"
  }
  if (dims.empty()) return false;
  *shape = std::move(dims);
  return true;
}

TnsLayout FindLayout(const Bytes& bytes) {
  const char* p = reinterpret_cast<const char*>(bytes.data);
  TnsLayout out;
  out.first_line = WalkLines(p, p + bytes.size, 1, [&](const char* q, const char* le, int64_t) {
    if (q == le) return true;  // blank
    if (*q == '#') {
      if (!out.has_shape) out.has_shape = ParseShapeComment(q + 1, le, &out.shape);
      return true;
    }
    out.fields = static_cast<int>(LineTokens(q, le).CountRest());
    return false;  // the first entry
  });
  return out;
}

// The rank of a file of `nnz` entries: its first entry's fields less the value, or the rank of
// `given` (the caller's shape when `by_caller`, else the file's comment) when there is none;
// checked against `given`.
int RankOf(const TnsLayout& layout, int64_t nnz, const std::vector<int64_t>& given, bool by_caller,
           const std::string& name) {
  int rank = layout.fields - 1;
  if (nnz == 0) {
    TK_CHECK(!given.empty(), kCorrupt, "tns: '", name,
             "' has no entries and no '# shape:' comment, so its rank is unknown; pass the shape");
    rank = static_cast<int>(given.size());
  }
  TK_CHECK(rank >= 1, kCorrupt, "tns: '", name, "' line ", layout.first_line,
           ": an entry needs at least one index and a value, found ", layout.fields, " field(s)");
  if (!given.empty() && static_cast<int>(given.size()) != rank) {
    Throw(by_caller ? ErrorCode::kInvalidArgument : ErrorCode::kCorrupt, "tns: '", name,
          "' has rank ", rank, " (line ", layout.first_line, ") but the ",
          by_caller ? "given" : "shape comment's", " shape ", ShapeString(given), " has ",
          given.size(), " axes");
  }
  TK_CHECK(rank <= 4096, kUnsupported, "tns: '", name, "' line ", layout.first_line, ": rank ",
           rank, " is more than 4096 axes");
  return rank;
}

// One entry line [b, e): its 0-based indices into row[0..rank), each axis's largest 1-based
// index into mx, its value returned. Errors as the reader gives them.
double ParseEntry(const char* b, const char* e, int rank, const std::vector<int64_t>& given,
                  int64_t* row, int64_t* mx) {
  LineTokens t(b, e);
  for (int a = 0; a < rank; ++a) {
    const int64_t i = t.Next<int64_t>("index");
    TK_CHECK(i >= 1, kCorrupt, "index ", i, " on axis ", a,
             " is out of range (FROSTT indices are 1-based)");
    TK_CHECK(given.empty() || i <= given[a], kCorrupt, "index ", i, " on axis ", a,
             " is out of range [1, ", given.empty() ? 0 : given[a], "] of the shape ",
             ShapeString(given));
    row[a] = i - 1;
    mx[a] = std::max(mx[a], i);
  }
  const double v = t.Next<double>("value");
  t.ExpectEnd();
  return v;
}

// ScanIndicesRealLine for rank K, the indices checked against the given shape.
template <int K>
[[gnu::always_inline]] inline const char* ScanLineOfRank(const char* p, const char* end,
                                                         const std::vector<int64_t>& given,
                                                         int64_t* row, int64_t* mx, double* v) {
  int64_t ix[K];
  const char* le = ScanIndicesRealLine<K>(p, end, ix, v);
  if (le == nullptr) return nullptr;
  for (int a = 0; a < K; ++a) {
    if (ix[a] < 1 || (!given.empty() && ix[a] > given[a])) return nullptr;
  }
  for (int a = 0; a < K; ++a) {
    row[a] = ix[a] - 1;
    mx[a] = std::max(mx[a], ix[a]);
  }
  return le;
}

// The fast path of ParseEntry: unsigned indices in range, single kinds of blanks, a plain
// number; returns the line's end, or nullptr to leave the line to ParseEntry.
[[gnu::always_inline]] inline const char* ScanEntry(const char* p, const char* end, int rank,
                                                    const std::vector<int64_t>& given, int64_t* row,
                                                    int64_t* mx, double* v) {
  // The commonest ranks' lines in their commonest form, each field found from one look.
  const char* le = rank == 2   ? ScanLineOfRank<2>(p, end, given, row, mx, v)
                   : rank == 3 ? ScanLineOfRank<3>(p, end, given, row, mx, v)
                   : rank == 4 ? ScanLineOfRank<4>(p, end, given, row, mx, v)
                               : nullptr;
  if (le != nullptr) return le;
  for (int a = 0; a < rank; ++a) {
    int64_t i = 0;
    if (!ScanDigits(&p, end, &i) || i < 1 || (!given.empty() && i > given[a])) return nullptr;
    if (p == end || !IsLineBlank(*p)) return nullptr;
    p = SkipLineBlanks(p, end);
    row[a] = i - 1;
    mx[a] = std::max(mx[a], i);
  }
  if (!ScanReal(&p, end, v)) return nullptr;
  p = SkipLineBlanks(p, end);
  return p == end || *p == '\n' ? p : nullptr;
}

// The shape from each chunk's largest indices.
std::vector<int64_t> Largest(const std::vector<std::vector<int64_t>>& maxima, int rank) {
  std::vector<int64_t> shape(static_cast<size_t>(rank), 0);
  for (const auto& mx : maxima) {
    for (int a = 0; a < rank; ++a) shape[a] = std::max(shape[a], mx[a]);
  }
  return shape;
}

}  // namespace

TensorData ReadTnsBytes(const Bytes& bytes, const ReadOptions& options) {
  const TnsLayout layout = FindLayout(bytes);
  const int64_t first = layout.first_line;
  std::vector<TextChunk> chunks = ChunkLines(bytes, 0, 1, '#');
  const int64_t nnz = TotalEntries(chunks);
  // The caller's shape wins over the file's comment.
  const std::vector<int64_t>& given = options.shape.empty() ? layout.shape : options.shape;
  const int rank = RankOf(layout, nnz, given, !options.shape.empty(), bytes.name);
  // Every entry line holds rank + 1 fields of at least two bytes each (digit and separator), so
  // this bounds the allocation below by the file size.
  TK_CHECK(nnz <= static_cast<int64_t>(bytes.size) / (2 * (rank + 1)) + 1, kCorrupt, "tns: '",
           bytes.name, "': ", nnz, " entry lines of rank ", rank, " (line ", first,
           ") cannot fit in ", bytes.size, " bytes; some line has too few fields");
  Tensor indices = Tensor::Empty({nnz, rank}, DType::kInt64);
  Tensor values = Tensor::Empty({nnz}, DType::kFloat64);
  int64_t* idx = indices.data<int64_t>();
  double* val = values.data<double>();
  std::vector<std::vector<int64_t>> maxima(chunks.size(), std::vector<int64_t>(rank, 0));
  ParseDataLinesFast(
      bytes, chunks, '#', "tns",
      [&](const char* p, const char* end, int64_t k, int64_t c) __attribute__((always_inline)) {
        return ScanEntry(p, end, rank, given, idx + k * rank, maxima[c].data(), val + k);
      },
      [&](const char* b, const char* e, int64_t k, int64_t, int64_t c) {
        val[k] = ParseEntry(b, e, rank, given, idx + k * rank, maxima[c].data());
      });
  const std::vector<int64_t> shape = given.empty() ? Largest(maxima, rank) : given;
  TensorData out;
  out.sparse = SparseTensor::Create(indices, values, shape);
  return out;
}

void WriteTns(const std::string& path, const SparseTensor& input) {
  SparseTensor st = HostContiguous(input);
  TK_CHECK(st.dtype() != DType::kString, kUnsupported, "tns: cannot write string values to '", path,
           "'");
  TK_CHECK(st.rank() >= 1, kUnsupported, "tns: cannot write a rank-0 tensor to '", path, "'");
  const int rank = st.rank();
  const int64_t* idx = st.indices().data<int64_t>();
  AtomicFile file(path);
  std::string shape_line = "# shape:";
  for (int64_t d : st.shape()) {
    shape_line += ' ';  // not " " + ...: g++ 12 warns falsely (-Wrestrict) on that form
    shape_line += std::to_string(d);
  }
  file.Write(shape_line + "\n");
  Dispatch<kNumericDTypes>(st.dtype(), "tns: write", [&]<typename T>() {
    const T* v = st.values().data<T>();
    WriteBoundedLinesParallel(&file, st.nnz(), (rank + 1) * (kMaxNumberChars + 1),
                              [&](int64_t i, char* out) {
                                for (int a = 0; a < rank; ++a) {
                                  out = WriteNumber(idx[i * rank + a] + 1, out);
                                  *out++ = ' ';
                                }
                                out = WriteNumber(v[i], out);
                                *out++ = '\n';
                                return out;
                              });
  });
  file.Commit();
}

std::vector<int64_t> VisitTnsPositions(
    const std::string& path,
    const std::function<std::pair<int, int>(const std::vector<int64_t>& shape)>& choose_axes,
    const PositionVisitor& visit) {
  TK_CHECK(FormatFromPath(path) == Format::kTns, kUnsupported, "VisitTnsPositions: '", path,
           "' is not a .tns file; read it with io::Read");
  const MappedFile file(path);
  const Bytes bytes = file.bytes();
  const TnsLayout layout = FindLayout(bytes);
  const std::vector<TextChunk> chunks = ChunkLines(bytes, 0, 1, '#');
  const int64_t nnz = TotalEntries(chunks);
  const int rank = RankOf(layout, nnz, layout.shape, false, path);
  std::vector<std::vector<int64_t>> maxima(chunks.size(), std::vector<int64_t>(rank, 0));
  std::vector<std::vector<int64_t>> rows(chunks.size());  // a chunk's indices while in flight
  auto parse = [&](const char* b, const char* e, int64_t c) {
    std::vector<int64_t>& buf = rows[c];
    const size_t at = buf.size();
    buf.resize(at + static_cast<size_t>(rank));
    ParseEntry(b, e, rank, layout.shape, buf.data() + at, maxima[c].data());
  };
  std::vector<int64_t> shape = layout.shape;
  if (shape.empty()) {  // pass 1: the largest index on each axis
    ParseDataLines(
        bytes, chunks, '#', "tns",
        [&](const char* b, const char* e, int64_t, int64_t, int64_t c) {
          parse(b, e, c);
          rows[c].clear();
        },
        [&](int64_t c) { std::vector<int64_t>().swap(rows[c]); });
    shape = Largest(maxima, rank);
  }
  // Plain ints rather than a structured binding: lambdas below capture them (clang 14 cannot
  // capture bindings).
  const std::pair<int, int> axes = choose_axes(shape);
  const int ai = axes.first, aj = axes.second;
  TK_CHECK(ai >= 0 && ai < rank && aj >= 0 && aj < rank, kInvalidArgument,
           "VisitTnsPositions: axes ", ai, " and ", aj, " for a rank-", rank, " tensor");
  ParseDataLines(
      bytes, chunks, '#', "tns",
      [&](const char* b, const char* e, int64_t, int64_t, int64_t c) { parse(b, e, c); },
      [&](int64_t c) {
        std::vector<int64_t>& buf = rows[c];
        const int64_t n = static_cast<int64_t>(buf.size()) / rank;
        std::vector<int64_t> rc(static_cast<size_t>(2 * n));
        for (int64_t k = 0; k < n; ++k) {
          rc[2 * k] = buf[k * rank + ai];
          rc[2 * k + 1] = buf[k * rank + aj];
        }
        visit(rc.data(), n);
        std::vector<int64_t>().swap(buf);
      });
  return shape;
}

}  // namespace tensorkit::io
