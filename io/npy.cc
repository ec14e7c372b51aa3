// .npy: NumPy's array file. A magic string, a version, a little-endian header length, a Python
// dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded with spaces
// to a multiple of 64 bytes, then the raw elements.
#include <algorithm>
#include <charconv>
#include <cstdio>
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
          " (header: '", Excerpt(s_, 80), "')");
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

// Fills kind, item size, byte order and dtype from a descr such as '<f4' or '<U8'.
void ParseDescr(const std::string& descr, const std::string& name, NpyHeader* h) {
  auto unsupported = [&]() {
    Throw(ErrorCode::kUnsupported, "npy: '", name, "': dtype '", Excerpt(descr),
          "' is not supported; tensorkit reads bool, int8/16/32/64, uint8, float16/32/64 and "
          "strings (|S, <U)");
  };
  if (descr.size() < 3) unsupported();
  char order = descr[0];
  h->kind = descr[1];
  int64_t size = 0;
  auto [p, ec] = std::from_chars(descr.data() + 2, descr.data() + descr.size(), size);
  if (ec != std::errc() || p != descr.data() + descr.size() || size <= 0) unsupported();
  if (order != '<' && order != '>' && order != '=' && order != '|') unsupported();
  const bool file_little = order == '<' || (order == '=' && kLittleEndian) || order == '|';
  h->item_size = size;
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
    case 'S':  // bytes, NUL-padded
      h->dtype = DType::kString;
      break;
    case 'U':  // UTF-32 code units; the descr counts characters
      h->dtype = DType::kString;
      h->item_size = CheckedMul(size, 4, name, "the unicode item size");
      break;
    default:
      unsupported();
  }
  const int unit = h->kind == 'U' ? 4 : h->kind == 'S' ? 1 : static_cast<int>(h->item_size);
  h->swap = unit > 1 && file_little != kLittleEndian;
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

// Appends code point `c` as UTF-8; false when it is not a Unicode scalar value.
bool AppendUtf8(uint32_t c, std::string* out) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xc0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3f)));
  } else if (c < 0x10000) {
    if (c >= 0xd800 && c < 0xe000) return false;  // a surrogate
    out->push_back(static_cast<char>(0xe0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3f)));
  } else if (c < 0x110000) {
    out->push_back(static_cast<char>(0xf0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3f)));
  } else {
    return false;
  }
  return true;
}

// NumPy's strings from n NUL-padded items of `raw` (bytes, or UTF-32 code units), trailing NULs
// dropped as NumPy drops them.
void DecodeStrings(const uint8_t* raw, const NpyHeader& h, int64_t n, std::string* out,
                   const std::string& name) {
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t* item = raw + i * h.item_size;
    if (h.kind == 'S') {
      int64_t len = h.item_size;
      while (len > 0 && item[len - 1] == 0) --len;
      out[i].assign(reinterpret_cast<const char*>(item), static_cast<size_t>(len));
      continue;
    }
    std::vector<uint32_t> units(static_cast<size_t>(h.item_size / 4));
    std::memcpy(units.data(), item, units.size() * 4);
    if (h.swap) SwapBytes(units.data(), static_cast<int64_t>(units.size()), 4);
    while (!units.empty() && units.back() == 0) units.pop_back();
    for (uint32_t c : units) {
      if (AppendUtf8(c, &out[i])) continue;
      char code[16];
      std::snprintf(code, sizeof(code), "%X", c);
      Throw(ErrorCode::kCorrupt, "npy: '", name, "': element ", i, " of the unicode array holds ",
            "code 0x", code, ", which is not a Unicode character");
    }
  }
}

// Reads the data the header describes from `source` into a new tensor: numbers straight into
// its storage (then swapped, bools normalised), strings through a buffer of the raw items.
Tensor ReadNpyData(ByteSource& source, const NpyHeader& h) {
  const int64_t n = CheckedProduct(h.dims, source.name());
  std::shared_ptr<Storage> storage;
  if (h.dtype == DType::kString) {
    // The raw items first, not zero-filled: their pages cost memory only as the source fills
    // them, and the strings (which are written at once) are made only for data that exists.
    auto raw = Storage::Allocate(DType::kUInt8, h.data_bytes, Device::Cpu());
    source.Read(raw->data(), h.data_bytes);
    storage = Storage::Allocate(h.dtype, n, Device::Cpu());
    DecodeStrings(static_cast<const uint8_t*>(raw->data()), h, n,
                  static_cast<std::string*>(storage->data()), source.name());
  } else {
    storage = Storage::Allocate(h.dtype, n, Device::Cpu());
    source.Read(storage->data(), h.data_bytes);
    if (h.swap) SwapBytes(storage->data(), n, static_cast<int>(h.item_size));
  }
  void* data = storage->data();
  if (h.dtype == DType::kBool) {  // any nonzero byte is True; a bool must hold 0 or 1
    auto* b = static_cast<uint8_t*>(data);
    for (int64_t i = 0; i < n; ++i) b[i] = b[i] != 0;
  }
  Pattern p = h.fortran ? MakePattern(h.dims, FortranStrides(h.dims), 0, "npy")
                        : DefaultPattern(h.dims, "npy");
  return Tensor(std::move(storage), p, h.dtype);
}

// Checks that the data fits in the source's bytes after the header.
void CheckDataSize(const NpyHeader& h, int64_t size, const std::string& name) {
  TK_CHECK(size - h.data_offset >= h.data_bytes, kCorrupt, "npy: '", name,
           "' is truncated: the header (shape ", ShapeString(h.dims), ", ", h.item_size,
           "-byte elements) needs ", h.data_bytes, " bytes of data from byte ", h.data_offset,
           " but the file has ", size - h.data_offset);
}

// The bytes before the header dict (magic, version, length field): 10 or 12. Throws unless
// `data` starts with a supported .npy prefix.
size_t PrefixSize(const uint8_t* data, size_t size, const std::string& name) {
  TK_CHECK(size >= kMagicLen + 4, kCorrupt, "npy: '", name, "' is truncated: ", size,
           " bytes is shorter than the smallest header");
  TK_CHECK(std::memcmp(data, kMagic, kMagicLen) == 0, kCorrupt, "npy: '", name,
           "' does not start with the .npy magic \\x93NUMPY (byte 0)");
  const int major = data[6];
  TK_CHECK(major >= 1 && major <= 3, kUnsupported, "npy: '", name, "': format version ", major, ".",
           int{data[7]}, " is not supported (byte 6); versions 1, 2 and 3 are");
  return major == 1 ? 10 : 12;
}

// A regular file read from its start.
class FileSource : public ByteSource {
 public:
  explicit FileSource(const std::string& path) : file_(path) {}
  void Read(void* dst, int64_t n) override {
    file_.ReadAt(pos_, dst, n);
    pos_ += n;
  }
  int64_t size() const override { return file_.size(); }
  const std::string& name() const override { return file_.path(); }

 private:
  InputFile file_;
  int64_t pos_ = 0;
};

}  // namespace

void MemorySource::Read(void* dst, int64_t n) {
  TK_CHECK(n <= size() - pos_, kCorrupt, "io: '", bytes_.name, "' is truncated: expected ", n,
           " more bytes at byte ", pos_);
  if (n > 0) std::memcpy(dst, bytes_.data + pos_, static_cast<size_t>(n));
  pos_ += n;
}

NpyHeader ParseNpyHeader(const uint8_t* data, size_t size, const std::string& name) {
  const size_t prefix = PrefixSize(data, size, name);
  TK_CHECK(size >= prefix, kCorrupt, "npy: '", name, "' is truncated inside the header length");
  uint64_t len = data[8] | (uint64_t{data[9]} << 8);
  if (prefix == 12) len |= (uint64_t{data[10]} << 16) | (uint64_t{data[11]} << 24);
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
      dp.Fail("unknown key '" + Excerpt(key) + "'");
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

NpyHeader ReadNpyHeader(ByteSource& source) {
  const std::string& name = source.name();
  const int64_t size = source.size();
  std::vector<uint8_t> header(10);
  TK_CHECK(size >= 10, kCorrupt, "npy: '", name, "' is truncated: ", size,
           " bytes is shorter than the smallest header");
  source.Read(header.data(), 10);
  const size_t prefix = PrefixSize(header.data(), header.size(), name);
  if (prefix == 12) {
    TK_CHECK(size >= 12, kCorrupt, "npy: '", name, "' is truncated inside the header length");
    header.resize(12);
    source.Read(header.data() + 10, 2);
  }
  uint64_t len = header[8] | (uint64_t{header[9]} << 8);
  if (prefix == 12) len |= (uint64_t{header[10]} << 16) | (uint64_t{header[11]} << 24);
  TK_CHECK(len <= static_cast<uint64_t>(size) - prefix, kCorrupt, "npy: '", name,
           "' is truncated: the header claims ", len, " bytes at byte ", prefix,
           " but the file has ", size - static_cast<int64_t>(prefix));
  // In pieces, so that a length the data does not back costs no memory.
  for (uint64_t done = 0; done < len;) {
    const uint64_t piece = std::min<uint64_t>(len - done, uint64_t{1} << 20);
    header.resize(prefix + done + piece);
    source.Read(header.data() + prefix + done, static_cast<int64_t>(piece));
    done += piece;
  }
  NpyHeader h = ParseNpyHeader(header.data(), header.size(), name);
  CheckDataSize(h, size, name);
  return h;
}

Tensor ReadNpy(ByteSource& source) {
  const NpyHeader h = ReadNpyHeader(source);
  Tensor t = ReadNpyData(source, h);
  source.Finish();
  return t;
}

Tensor ReadNpyFile(const std::string& path) {
  FileSource source(path);
  return ReadNpy(source);
}

Tensor ReadNpyBytes(const Bytes& bytes) {
  MemorySource source(bytes);
  return ReadNpy(source);
}

std::string NpyHeaderFor(const Tensor& t, bool fortran) {
  return BuildHeader(DescrFor(t.dtype()), fortran, t.Dims());
}

std::string NpyHeaderFor(DType dtype, const std::vector<int64_t>& dims) {
  return BuildHeader(DescrFor(dtype), false, dims);
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

void MakeNpyImage(const Tensor& t, NpyImage* image) {
  bool fortran = false;
  image->keep = NpyLayout(t, &fortran);
  const Tensor& k = image->keep;
  const int64_t n = k.NumElements();
  if (k.dtype() != DType::kString) {
    image->header = NpyHeaderFor(k, fortran);
    image->data = std::string_view(static_cast<const char*>(k.raw_data()),
                                   static_cast<size_t>(n * DTypeSize(k.dtype())));
    return;
  }
  // NumPy unicode: UTF-32 code units, each item padded with zeros to the longest.
  const std::string* s = n > 0 ? k.data<std::string>() : nullptr;
  std::vector<std::vector<uint32_t>> units(static_cast<size_t>(n));
  size_t longest = 1;  // NumPy's smallest unicode dtype is <U1
  for (int64_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < s[i].size();) {
      const int64_t c = NextUtf8(s[i], &j);
      TK_CHECK(c >= 0, kUnsupported, "npy: write: string element ", i, " ('", Excerpt(s[i]),
               "') is not valid UTF-8, which NumPy's unicode arrays need");
      units[i].push_back(static_cast<uint32_t>(c));
    }
    longest = std::max(longest, units[i].size());
  }
  image->encoded.assign(static_cast<size_t>(n) * longest * 4, '\0');
  for (int64_t i = 0; i < n; ++i) {
    if (units[i].empty()) continue;  // "" stays all zeros (and memcpy wants a real source)
    std::memcpy(image->encoded.data() + static_cast<size_t>(i) * longest * 4, units[i].data(),
                units[i].size() * 4);
  }
  image->header = BuildHeader(
      std::string(kLittleEndian ? "<" : ">") + "U" + std::to_string(longest), fortran, k.Dims());
  image->data = image->encoded;
}

void WriteNpy(const std::string& path, const Tensor& t) {
  NpyImage image;
  MakeNpyImage(t, &image);
  AtomicFile file(path);
  file.Write(image.header);
  file.Write(image.data);
  file.Commit();
}

}  // namespace tensorkit::io
