// .npy: NumPy's array file. A magic string, a version, a little-endian header length, a Python
// dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded with spaces
// to a multiple of 64 bytes, then the raw elements.
#include <algorithm>
#include <charconv>
#include <cstring>

#include "tensorkit/io/formats.h"

namespace tensorkit::io {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

// A cursor over the header dict; errors name the byte offset in the file.
class DictParser {
 public:
  DictParser(std::string_view text, int64_t base, const std::string& name)
      : s_(text), base_(base), name_(name) {}

  [[noreturn]] void Fail(const std::string& what) const {
    Throw(ErrorCode::kCorrupt, "npy: '", name_, "': bad header at byte ", base_ + pos_, ": ", what,
          " (header: ", std::string(s_.substr(0, 120)), ")");
  }
  void SkipSpace() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }
  bool Peek(char c) {
    SkipSpace();
    return pos_ < s_.size() && s_[pos_] == c;
  }
  void Expect(char c) {
    if (!Peek(c)) Fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  bool Accept(char c) {
    if (!Peek(c)) return false;
    ++pos_;
    return true;
  }
  std::string String() {
    SkipSpace();
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) Fail("expected a string");
    char quote = s_[pos_++];
    size_t end = s_.find(quote, pos_);
    if (end == std::string_view::npos) Fail("unterminated string");
    std::string out(s_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return out;
  }
  bool Bool() {
    SkipSpace();
    if (s_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (s_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    Fail("expected True or False");
  }
  int64_t Int() {
    SkipSpace();
    int64_t v = 0;
    auto [p, ec] = std::from_chars(s_.data() + pos_, s_.data() + s_.size(), v);
    if (ec == std::errc::result_out_of_range) Fail("a dim overflows int64");
    if (ec != std::errc() || v < 0) Fail("expected a dim (an integer >= 0)");
    pos_ = static_cast<size_t>(p - s_.data());
    if (pos_ < s_.size() && s_[pos_] == 'L') ++pos_;  // Python 2 long suffix
    return v;
  }
  std::vector<int64_t> Tuple() {
    Expect('(');
    std::vector<int64_t> dims;
    while (!Accept(')')) {
      if (dims.size() > 64) Fail("too many dims");
      dims.push_back(Int());
      if (!Accept(',')) {
        Expect(')');
        break;
      }
    }
    return dims;
  }

 private:
  std::string_view s_;
  size_t pos_ = 0;
  int64_t base_;
  const std::string& name_;
};

// Fills kind, item size, byte order and dtype from a descr such as '<f4'.
void ParseDescr(const std::string& descr, const std::string& name, NpyHeader* h) {
  auto unsupported = [&]() {
    Throw(ErrorCode::kUnsupported, "npy: '", name, "': dtype '", descr,
          "' is not supported; tensorkit reads bool, int8/16/32/64, uint8 and float16/32/64");
  };
  if (descr.size() < 3) unsupported();
  char order = descr[0];
  h->kind = descr[1];
  int size = 0;
  auto [p, ec] = std::from_chars(descr.data() + 2, descr.data() + descr.size(), size);
  if (ec != std::errc() || p != descr.data() + descr.size() || size <= 0) unsupported();
  h->item_size = size;
  const bool file_little = order == '<' || (order == '=' && kLittleEndian) || order == '|';
  if (order != '<' && order != '>' && order != '=' && order != '|') unsupported();
  h->swap = size > 1 && file_little != kLittleEndian;
  switch (h->kind) {
    case 'b':
      if (size != 1) unsupported();
      h->dtype = DType::kBool;
      break;
    case 'i':
      if (size == 1)
        h->dtype = DType::kInt8;
      else if (size == 2)
        h->dtype = DType::kInt16;
      else if (size == 4)
        h->dtype = DType::kInt32;
      else if (size == 8)
        h->dtype = DType::kInt64;
      else
        unsupported();
      break;
    case 'u':
      if (size != 1) unsupported();
      h->dtype = DType::kUInt8;
      break;
    case 'f':
      if (size == 2)
        h->dtype = DType::kFloat16;
      else if (size == 4)
        h->dtype = DType::kFloat32;
      else if (size == 8)
        h->dtype = DType::kFloat64;
      else
        unsupported();
      break;
    case 'S':
      h->dtype = DType::kUInt8;
      break;
    default:
      unsupported();
  }
}

// The descr NumPy uses for `dtype` (this machine's byte order).
std::string DescrFor(DType dtype) {
  const char* le = kLittleEndian ? "<" : ">";
  switch (dtype) {
    case DType::kBool:
      return "|b1";
    case DType::kInt8:
      return "|i1";
    case DType::kUInt8:
      return "|u1";
    case DType::kInt16:
      return std::string(le) + "i2";
    case DType::kInt32:
      return std::string(le) + "i4";
    case DType::kInt64:
      return std::string(le) + "i8";
    case DType::kFloat16:
      return std::string(le) + "f2";
    case DType::kFloat32:
      return std::string(le) + "f4";
    case DType::kFloat64:
      return std::string(le) + "f8";
    default:
      Throw(ErrorCode::kUnsupported, "npy: dtype ", DTypeName(dtype),
            " has no NumPy equivalent; Copy into a float32 tensor first");
  }
}

// Magic, version, length field and the dict padded so that the data starts 64-byte aligned.
std::string BuildHeader(const std::string& descr, bool fortran, const std::vector<int64_t>& dims) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
                     ", 'shape': (";
  for (size_t i = 0; i < dims.size(); ++i) {
    dict += std::to_string(dims[i]);
    if (dims.size() == 1 || i + 1 < dims.size()) dict += ",";
    if (i + 1 < dims.size()) dict += " ";
  }
  dict += "), }";
  for (int version = 1; version <= 2; ++version) {
    const size_t prefix = kMagicLen + 2 + (version == 1 ? 2 : 4);
    size_t total = prefix + dict.size() + 1;
    total = (total + 63) / 64 * 64;
    const size_t len = total - prefix;
    if (version == 1 && len > 0xffff) continue;
    std::string out(kMagic, kMagicLen);
    out += static_cast<char>(version);
    out += '\0';
    for (size_t b = 0; b < (version == 1 ? 2u : 4u); ++b) {
      out += static_cast<char>((len >> (8 * b)) & 0xff);
    }
    out += dict;
    out.append(len - dict.size() - 1, ' ');
    out += '\n';
    return out;
  }
  Throw(ErrorCode::kUnsupported, "npy: header of ", dict.size(), " bytes is too long");
}

// Fortran-order strides (elements) for `dims`, 0 on dim-1 axes.
std::vector<int64_t> FortranStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 0);
  int64_t s = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    strides[i] = dims[i] == 1 ? 0 : s;
    s *= dims[i];
  }
  return strides;
}

// Turns raw file bytes already in `storage` into a Tensor: swap, normalise bools, order.
Tensor Finish(std::shared_ptr<Storage> storage, const NpyHeader& h, int64_t n) {
  void* data = storage->data();
  if (h.swap && h.kind != 'S') SwapBytes(data, n, h.item_size);
  if (h.dtype == DType::kBool) {  // any nonzero byte is True; a bool must hold 0 or 1
    auto* b = static_cast<uint8_t*>(data);
    for (int64_t i = 0; i < n; ++i) b[i] = b[i] != 0;
  }
  std::vector<int64_t> dims = h.dims;
  if (h.kind == 'S') dims.push_back(h.item_size);  // each string's bytes along a last axis
  Pattern p =
      h.fortran ? MakePattern(dims, FortranStrides(dims), 0, "npy") : DefaultPattern(dims, "npy");
  return Tensor(std::move(storage), p, h.dtype);
}

// Checks that the data fits in `available` bytes after the header.
void CheckDataSize(const NpyHeader& h, int64_t file_size, const std::string& name) {
  TK_CHECK(file_size - h.data_offset >= h.data_bytes, kCorrupt, "npy: '", name,
           "' is truncated: the header (shape ", ShapeString(h.dims), ", ", h.item_size,
           "-byte elements) needs ", h.data_bytes, " bytes of data from byte ", h.data_offset,
           " but the file has ", file_size - h.data_offset);
  TK_CHECK(h.kind != 'S' || (!h.fortran && static_cast<int>(h.dims.size()) < kMaxAxes),
           kUnsupported, "npy: '", name, "': byte strings are read as uint8 in C order with one ",
           "more axis; this one is Fortran-ordered or has ", kMaxAxes, " axes already");
}

}  // namespace

NpyHeader ParseNpyHeader(const uint8_t* data, size_t size, const std::string& name) {
  TK_CHECK(size >= kMagicLen + 4, kCorrupt, "npy: '", name, "' is truncated: ", size,
           " bytes is shorter than the smallest header");
  TK_CHECK(std::memcmp(data, kMagic, kMagicLen) == 0, kCorrupt, "npy: '", name,
           "' does not start with the .npy magic \\x93NUMPY (byte 0)");
  const int major = data[6];
  TK_CHECK(major >= 1 && major <= 3, kUnsupported, "npy: '", name, "': format version ", major, ".",
           int{data[7]}, " is not supported (byte 6); versions 1, 2 and 3 are");
  size_t prefix = major == 1 ? 10 : 12;
  TK_CHECK(size >= prefix, kCorrupt, "npy: '", name, "' is truncated inside the header length");
  uint64_t len = data[8] | (uint64_t{data[9]} << 8);
  if (major > 1) len |= (uint64_t{data[10]} << 16) | (uint64_t{data[11]} << 24);
  TK_CHECK(len <= size - prefix, kCorrupt, "npy: '", name, "' is truncated: the header claims ",
           len, " bytes at byte ", prefix, " but the file has ", size - prefix);
  std::string_view text(reinterpret_cast<const char*>(data + prefix), len);
  DictParser dp(text, static_cast<int64_t>(prefix), name);
  NpyHeader h;
  bool have_descr = false, have_order = false, have_shape = false;
  dp.Expect('{');
  while (!dp.Accept('}')) {
    std::string key = dp.String();
    dp.Expect(':');
    if (key == "descr") {
      if (dp.Peek('[')) {
        Throw(ErrorCode::kUnsupported, "npy: '", name,
              "': structured dtypes (a list descr) are not supported");
      }
      ParseDescr(dp.String(), name, &h);
      have_descr = true;
    } else if (key == "fortran_order") {
      h.fortran = dp.Bool();
      have_order = true;
    } else if (key == "shape") {
      h.dims = dp.Tuple();
      have_shape = true;
    } else {
      dp.Fail("unknown key '" + key + "'");
    }
    if (!dp.Accept(',')) {
      dp.Expect('}');
      break;
    }
  }
  if (!have_descr || !have_order || !have_shape) {
    dp.Fail("the dict needs the keys 'descr', 'fortran_order' and 'shape'");
  }
  TK_CHECK(h.dims.size() <= static_cast<size_t>(kMaxAxes), kUnsupported, "npy: '", name,
           "': shape ", ShapeString(h.dims), " has more than ", kMaxAxes, " axes");
  h.data_offset = static_cast<int64_t>(prefix + len);
  h.data_bytes = CheckedMul(CheckedProduct(h.dims, name), h.item_size, name, "the data size");
  return h;
}

Tensor ReadNpyFile(const std::string& path) {
  InputFile file(path);
  // The header is at most prefix + 4 GiB in theory; read the fixed part first, then the dict.
  uint8_t fixed[12] = {};
  const int64_t head = std::min<int64_t>(file.size(), 12);
  file.ReadAt(0, fixed, head);
  TK_CHECK(head >= 10, kCorrupt, "npy: '", path, "' is truncated: ", file.size(),
           " bytes is shorter than the smallest header");
  const int64_t prefix = fixed[6] == 1 ? 10 : 12;
  uint64_t len = fixed[8] | (uint64_t{fixed[9]} << 8);
  if (prefix == 12) len |= (uint64_t{fixed[10]} << 16) | (uint64_t{fixed[11]} << 24);
  const int64_t header_size =
      std::min<int64_t>(file.size(), prefix + static_cast<int64_t>(len));  // never past the file
  std::vector<uint8_t> header(static_cast<size_t>(header_size));
  file.ReadAt(0, header.data(), header_size);
  NpyHeader h = ParseNpyHeader(header.data(), header.size(), path);
  CheckDataSize(h, file.size(), path);
  const int64_t n = h.kind == 'S' ? h.data_bytes : h.data_bytes / h.item_size;
  auto storage = Storage::Allocate(h.dtype, n, Device::Cpu());
  file.ReadAt(h.data_offset, storage->data(), h.data_bytes);
  return Finish(std::move(storage), h, n);
}

Tensor ReadNpyBytes(const Bytes& bytes) {
  NpyHeader h = ParseNpyHeader(bytes.data, bytes.size, bytes.name);
  CheckDataSize(h, static_cast<int64_t>(bytes.size), bytes.name);
  const int64_t n = h.kind == 'S' ? h.data_bytes : h.data_bytes / h.item_size;
  auto storage = Storage::Allocate(h.dtype, n, Device::Cpu());
  if (h.data_bytes > 0) std::memcpy(storage->data(), bytes.data + h.data_offset, h.data_bytes);
  return Finish(std::move(storage), h, n);
}

std::string ReadNpyByteString(const Bytes& bytes) {
  NpyHeader h = ParseNpyHeader(bytes.data, bytes.size, bytes.name);
  TK_CHECK(h.kind == 'S' && h.data_bytes == h.item_size, kCorrupt, "npz: '", bytes.name,
           "' should hold one byte string (dtype |S...), but has kind '", h.kind, "' and shape ",
           ShapeString(h.dims));
  TK_CHECK(static_cast<int64_t>(bytes.size) - h.data_offset >= h.data_bytes, kCorrupt, "npz: '",
           bytes.name, "' is truncated");
  std::string s(reinterpret_cast<const char*>(bytes.data + h.data_offset), h.data_bytes);
  s.erase(std::find(s.begin(), s.end(), '\0'), s.end());  // NumPy pads with NULs
  return s;
}

std::string NpyHeaderFor(const Tensor& t, bool fortran) {
  return BuildHeader(DescrFor(t.dtype()), fortran, t.Dims());
}

std::string NpyByteStringHeader(size_t length) {
  return BuildHeader("|S" + std::to_string(length), false, {});
}

Tensor NpyLayout(const Tensor& t, bool* fortran) {
  t.CheckDefined("npy: write");
  *fortran = false;
  Tensor host = t.device().is_cpu() ? t : t.To(Device::Cpu());
  if (host.IsContiguous()) return host;
  const std::vector<int64_t> dims = host.Dims();
  std::vector<int64_t> fs = FortranStrides(dims);
  if (host.NumElements() > 0 && host.Strides() == fs) {
    *fortran = true;
    return host;
  }
  return host.Clone();
}

void WriteNpy(const std::string& path, const Tensor& t) {
  bool fortran = false;
  Tensor data = NpyLayout(t, &fortran);
  std::string header = NpyHeaderFor(data, fortran);
  AtomicFile file(path);
  file.Write(header);
  file.Write(data.raw_data(), static_cast<size_t>(data.NumElements() * DTypeSize(data.dtype())));
  file.Commit();
}

}  // namespace tensorkit::io
