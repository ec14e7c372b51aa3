#include "tensorkit/io/io.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <iterator>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "tensorkit/common/alloc_fault.h"
#include "tensorkit/common/file_util.h"
#include "tensorkit/io/formats.h"
#include "tensorkit/io/libsvm.h"

namespace tensorkit::io {

namespace {

const FormatInfo& InfoOf(Format format) {
  const auto i = static_cast<size_t>(format);
  TK_INTERNAL_CHECK(i < std::size(kFileFormats) && kFileFormats[i].format == format);
  return kFileFormats[i];
}

}  // namespace

std::optional<Format> FormatFromExtension(std::string_view extension) {
  std::string ext(extension);
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const FormatInfo& f : kFileFormats) {
    if (ext == f.extension) return f.format;
  }
  for (const FormatAlias& a : kFormatAliases) {
    if (ext == a.extension) return a.format;
  }
  return std::nullopt;
}

Format FormatFromPath(const std::string& path) {
  std::string ext;
  size_t dot = path.find_last_of('.');
  size_t slash = path.find_last_of('/');
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash)) {
    ext = path.substr(dot + 1);
  }
  if (const std::optional<Format> f = FormatFromExtension(ext)) return *f;
  Throw(ErrorCode::kInvalidArgument, "io: cannot tell the format of '", path,
        "' from its extension; use ", FormatList(".", ", ", " or "));
}

const char* FormatName(Format format) {
  const auto i = static_cast<size_t>(format);
  return i < std::size(kFileFormats) ? kFileFormats[i].extension : "unknown";
}

std::string FormatList(const char* prefix, const char* sep, const char* last_sep) {
  std::string out;
  const size_t n = std::size(kFileFormats);
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) out += i + 1 == n ? last_sep : sep;
    out += std::string(prefix) + kFileFormats[i].extension;
  }
  return out;
}

bool FormatHoldsDense(Format format) { return InfoOf(format).dense; }
bool FormatHoldsSparse(Format format) { return InfoOf(format).sparse; }

TensorData Read(const std::string& path) { return Read(path, ReadOptions{}); }

TensorData Read(const std::string& path, const ReadOptions& options) {
  const Format format = FormatFromPath(path);
  const std::string op = "io::Read: '" + path + "'";
  return alloc_fault::ReportingAllocationFailure(op.c_str(), [&] {
    if (format == Format::kNpy) {  // binary: read straight into the tensor's storage
      TensorData out;
      out.dense = ReadNpyFile(path);
      return out;
    }
    MappedFile file(path);
    Bytes bytes = file.bytes();
    return ReadFromMemory(bytes.data, bytes.size, format, path, options);
  });
}

namespace {

// `st` with a known order when its entries are already sorted: {0..rank-1}, or {1, 0} for a
// matrix; otherwise `st` as it is.
SparseTensor WithFoundOrder(const SparseTensor& st) {
  if (st.OrderKnown() || st.rank() == 0 || !st.indices().device().is_cpu()) return st;
  std::vector<int> order(static_cast<size_t>(st.rank()));
  std::iota(order.begin(), order.end(), 0);
  if (st.SortedIn(order)) {
    return SparseTensor::Create(st.indices(), st.values(), st.shape(), order);
  }
  if (st.rank() == 2 && st.SortedIn({1, 0})) {
    return SparseTensor::Create(st.indices(), st.values(), st.shape(), {1, 0});
  }
  return st;
}

TensorData ReadAny(const Bytes& bytes, Format format, const ReadOptions& options) {
  switch (format) {
    case Format::kNpy: {
      TensorData out;
      out.dense = ReadNpyBytes(bytes);
      return out;
    }
    case Format::kNpz:
      return ReadNpzBytes(bytes, options);
    case Format::kMtx:
      return ReadMtxBytes(bytes, options);
    case Format::kTns:
      return ReadTnsBytes(bytes, options);
    case Format::kLibsvm: {
      LibsvmReadOptions lo;
      lo.base = options.index_base;
      TensorData out;
      out.sparse = ReadLibsvmFromMemory(bytes.data, bytes.size, bytes.name, lo).features;
      return out;
    }
  }
  Throw(ErrorCode::kInvalidArgument, "io: unknown format for '", bytes.name, "'");
}

}  // namespace

TensorData ReadFromMemory(const void* data, size_t size, Format format, const std::string& name,
                          const ReadOptions& options) {
  const std::string op = "io::ReadFromMemory: '" + name + "'";
  return alloc_fault::ReportingAllocationFailure(op.c_str(), [&] {
    TensorData out = ReadAny(Bytes{static_cast<const uint8_t*>(data), size, name}, format, options);
    if (out.is_sparse()) out.sparse = WithFoundOrder(out.sparse);
    return out;
  });
}

std::vector<std::pair<std::string, Tensor>> ReadNpzMembers(const std::string& path) {
  MappedFile file(path);
  return ReadNpzMembersBytes(file.bytes());
}

namespace {

using AxesChooser = std::function<std::pair<int, int>(const std::vector<int64_t>& shape)>;

// The (row, column) blocks of a 2-D format (.mtx or libsvm) as the (axis i, axis j) pairs that
// choose_axes picks: swapped, a block at a time, when it picks (1, 0).
std::vector<int64_t> VisitRowColumnPositions(const std::string& path, Format format,
                                             const AxesChooser& choose_axes,
                                             const PositionVisitor& visit) {
  bool swap = false;
  const auto on_shape = [&](const std::vector<int64_t>& shape) {
    const std::pair<int, int> axes = choose_axes(shape);
    TK_CHECK((axes.first == 0 && axes.second == 1) || (axes.first == 1 && axes.second == 0),
             kInvalidArgument, "VisitPositions: axes ", axes.first, " and ", axes.second,
             " for a rank-2 tensor");
    swap = axes.first == 1;
  };
  const PositionVisitor pairs = [&](const int64_t* rc, int64_t n) {
    if (!swap) return visit(rc, n);
    std::vector<int64_t> cr(static_cast<size_t>(2 * n));
    for (int64_t k = 0; k < n; ++k) {
      cr[2 * k] = rc[2 * k + 1];
      cr[2 * k + 1] = rc[2 * k];
    }
    visit(cr.data(), n);
  };
  if (format == Format::kLibsvm) return VisitLibsvmPositions(path, pairs, on_shape);
  return VisitMtxPositions(path, pairs, on_shape);
}

// Whether the .mtx `path` says "coordinate" on its first line (within its first 256 bytes).
bool MtxIsCoordinate(const std::string& path) {
  const std::vector<uint8_t> head = [&] {
    InputFile in(path);
    std::vector<uint8_t> b(static_cast<size_t>(std::min<int64_t>(in.size(), 256)));
    in.ReadAt(0, b.data(), static_cast<int64_t>(b.size()));
    return b;
  }();
  std::string first(head.begin(), head.end());
  first = first.substr(0, first.find('\n'));
  for (char& c : first) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return first.find("coordinate") != std::string::npos;
}

}  // namespace

std::vector<int64_t> VisitPositions(const std::string& path, const AxesChooser& choose_axes,
                                    const PositionVisitor& visit) {
  const Format format = FormatFromPath(path);
  switch (format) {
    case Format::kNpz:
      return VisitNpzPositions(path, choose_axes, visit);
    case Format::kTns:
      return VisitTnsPositions(path, choose_axes, visit);
    case Format::kMtx:
    case Format::kLibsvm:
      return VisitRowColumnPositions(path, format, choose_axes, visit);
    default:
      Throw(ErrorCode::kUnsupported, "VisitPositions: '", path, "' is a .", FormatName(format),
            " file, which holds no positions to stream; read it with io::Read");
  }
}

bool StreamsPositions(const std::string& path) {
  switch (FormatFromPath(path)) {
    case Format::kLibsvm:
    case Format::kTns:
      return true;
    case Format::kNpz:
      return NpzStreamsPositions(path);
    case Format::kMtx:
      return MtxIsCoordinate(path);
    default:
      return false;
  }
}

void Write(const std::string& path, const TensorData& data) { Write(path, data, WriteOptions{}); }

void Write(const std::string& path, const Tensor& dense) {
  TensorData d;
  d.dense = dense;
  Write(path, d, WriteOptions{});
}

void Write(const std::string& path, const SparseTensor& sparse) {
  TensorData d;
  d.sparse = sparse;
  Write(path, d, WriteOptions{});
}

namespace {

void WriteAny(const std::string& path, const TensorData& data, const WriteOptions& options) {
  const Format format = FormatFromPath(path);
  if (data.is_sparse()) {
    TK_CHECK(data.sparse.values().defined(), kInvalidArgument, "io::Write: '", path,
             "': the TensorData holds neither a dense nor a sparse tensor");
  }
  switch (format) {
    case Format::kNpy:
      TK_CHECK(!data.is_sparse(), kInvalidArgument, "io::Write: .npy holds dense arrays; call ",
               "ToDense() before writing a sparse tensor to '", path, "'");
      WriteNpy(path, data.dense);
      return;
    case Format::kNpz:
      WriteNpz(path, data, options);
      return;
    case Format::kMtx:
      WriteMtx(path, data);
      return;
    case Format::kTns:
      TK_CHECK(data.is_sparse(), kInvalidArgument, "io::Write: .tns holds sparse tensors; call ",
               "SparseTensor::FromDense before writing a dense tensor to '", path, "'");
      WriteTns(path, data.sparse);
      return;
    case Format::kLibsvm: {
      TK_CHECK(data.is_sparse(), kInvalidArgument, "io::Write: .svm holds sparse matrices; call ",
               "SparseTensor::FromDense before writing a dense tensor to '", path, "'");
      LibsvmData d;
      d.features = data.sparse;  // labels 0: WriteLibsvm with LibsvmData writes real ones
      WriteLibsvm(path, d);
      return;
    }
  }
}

}  // namespace

void Write(const std::string& path, const TensorData& data, const WriteOptions& options) {
  const std::string op = "io::Write: '" + path + "'";
  alloc_fault::ReportingAllocationFailure(op.c_str(), [&] { WriteAny(path, data, options); });
}

}  // namespace tensorkit::io
