// A minimal zip reader and writer for .npz: the central directory (zip64 when needed), members
// stored or deflated (raw deflate through zlib).
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "tensorkit/io/crc32.h"
#include "tensorkit/io/formats.h"
#include "tensorkit/io/zlib_memory.h"

namespace tensorkit::io {
namespace {

constexpr uint32_t kLocalSig = 0x04034b50;
constexpr uint32_t kCentralSig = 0x02014b50;
constexpr uint32_t kEndSig = 0x06054b50;
constexpr uint32_t kEnd64Sig = 0x06064b50;
constexpr uint32_t kEnd64LocatorSig = 0x07064b50;
constexpr uint32_t k32Max = 0xffffffffu;
constexpr int64_t kLocalCrcAt = 14;  // the CRC-32's place in a local header
// Deflate cannot compress better than about 1032:1, so a larger claimed size is a lie.
constexpr uint64_t kMaxDeflateRatio = 1032;

// Bounds-checked little-endian reads over the archive; errors name the byte.
class Reader {
 public:
  explicit Reader(const Bytes& b) : b_(b) {}
  void Need(uint64_t pos, uint64_t n, const char* what) const {
    TK_CHECK(pos <= b_.size && n <= b_.size - pos, kCorrupt, "npz: '", b_.name, "': the ", what,
             " at byte ", pos, " runs past the end of the file (", b_.size, " bytes)");
  }
  uint64_t U(uint64_t pos, int bytes) const {
    Need(pos, bytes, "field");
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | b_.data[pos + i];
    return v;
  }
  const Bytes& bytes() const { return b_; }

 private:
  const Bytes& b_;
};

// Offset of the end-of-central-directory record (searched backwards over the comment).
uint64_t FindEnd(const Reader& r) {
  const Bytes& b = r.bytes();
  TK_CHECK(b.size >= 22, kCorrupt, "npz: '", b.name, "' is not a zip archive: ", b.size,
           " bytes is shorter than a zip end record");
  const uint64_t lowest = b.size >= 22 + 0xffff ? b.size - 22 - 0xffff : 0;
  for (uint64_t pos = b.size - 22;; --pos) {
    if (r.U(pos, 4) == kEndSig) return pos;
    if (pos == lowest) break;
  }
  Throw(ErrorCode::kCorrupt, "npz: '", b.name,
        "' is not a zip archive (no end of central directory record)");
}

// Replaces 0xffffffff fields by the zip64 extra field's values.
void ApplyZip64(const Reader& r, uint64_t extra, uint64_t extra_len, ZipEntry* e) {
  uint64_t pos = extra, end = extra + extra_len;
  while (pos + 4 <= end) {
    uint64_t id = r.U(pos, 2), len = r.U(pos + 2, 2);
    uint64_t p = pos + 4;
    if (id == 1) {
      auto take = [&](uint64_t* field) {
        if (*field != k32Max) return;
        TK_CHECK(p + 8 <= pos + 4 + len, kCorrupt, "npz: '", r.bytes().name,
                 "': zip64 extra field at byte ", pos, " is too short");
        *field = r.U(p, 8);
        p += 8;
      };
      take(&e->size);
      take(&e->compressed_size);
      take(&e->local_offset);
      return;
    }
    pos = p + len;
  }
}

}  // namespace

std::vector<ZipEntry> ListZip(const Bytes& zip) {
  Reader r(zip);
  const uint64_t end = FindEnd(r);
  uint64_t count = r.U(end + 10, 2);
  uint64_t cd_size = r.U(end + 12, 4);
  uint64_t cd_offset = r.U(end + 16, 4);
  if ((count == 0xffff || cd_offset == k32Max || cd_size == k32Max) && end >= 20 &&
      r.U(end - 20, 4) == kEnd64LocatorSig) {
    uint64_t end64 = r.U(end - 20 + 8, 8);
    TK_CHECK(r.U(end64, 4) == kEnd64Sig, kCorrupt, "npz: '", zip.name,
             "': bad zip64 end record at byte ", end64);
    count = r.U(end64 + 32, 8);
    cd_size = r.U(end64 + 40, 8);
    cd_offset = r.U(end64 + 48, 8);
  }
  r.Need(cd_offset, cd_size, "central directory");
  // Each entry takes at least 46 bytes, which bounds `count` before anything is allocated.
  TK_CHECK(count <= cd_size / 46, kCorrupt, "npz: '", zip.name, "': the central directory claims ",
           count, " members in ", cd_size, " bytes");
  std::vector<ZipEntry> entries;
  entries.reserve(count);
  uint64_t pos = cd_offset;
  for (uint64_t i = 0; i < count; ++i) {
    TK_CHECK(r.U(pos, 4) == kCentralSig, kCorrupt, "npz: '", zip.name,
             "': bad central directory entry at byte ", pos);
    ZipEntry e;
    const uint64_t flags = r.U(pos + 8, 2);
    e.method = static_cast<uint16_t>(r.U(pos + 10, 2));
    e.crc = static_cast<uint32_t>(r.U(pos + 16, 4));
    e.compressed_size = r.U(pos + 20, 4);
    e.size = r.U(pos + 24, 4);
    const uint64_t name_len = r.U(pos + 28, 2), extra_len = r.U(pos + 30, 2),
                   comment_len = r.U(pos + 32, 2);
    e.local_offset = r.U(pos + 42, 4);
    r.Need(pos + 46, name_len + extra_len + comment_len, "central directory entry");
    e.name.assign(reinterpret_cast<const char*>(zip.data + pos + 46), name_len);
    ApplyZip64(r, pos + 46 + name_len, extra_len, &e);
    TK_CHECK((flags & 1) == 0, kUnsupported, "npz: '", zip.name, "': member '", e.name,
             "' is encrypted");
    entries.push_back(std::move(e));
    pos += 46 + name_len + extra_len + comment_len;
  }
  return entries;
}

ZipMemberSource::ZipMemberSource(const Bytes& zip, const ZipEntry& e)
    : entry_(e), name_(zip.name + ":" + Excerpt(e.name, 100)) {
  Reader r(zip);
  TK_CHECK(r.U(e.local_offset, 4) == kLocalSig, kCorrupt, "npz: '", name_,
           "': bad local header at byte ", e.local_offset);
  start_ = e.local_offset + 30 + r.U(e.local_offset + 26, 2) + r.U(e.local_offset + 28, 2);
  r.Need(start_, e.compressed_size, "member data");
  src_ = zip.data + start_;
  if (e.method == 0) {
    TK_CHECK(e.size == e.compressed_size, kCorrupt, "npz: '", name_, "': stored member of ",
             e.compressed_size, " bytes claims ", e.size, " bytes uncompressed");
  } else if (e.method == 8) {
    // A cheap first test; the claim is only trusted as far as the inflated data backs it.
    TK_CHECK(e.size <= e.compressed_size * kMaxDeflateRatio + 1024, kCorrupt, "npz: '", name_,
             "': claims ", e.size, " bytes from ", e.compressed_size,
             " compressed bytes, more than deflate can produce");
    auto* zs = new z_stream;
    PrepareZStream(zs);
    const int rc = inflateInit2(zs, -MAX_WBITS);
    if (rc != Z_OK) {
      delete zs;
      CheckZlibMemory(rc, "npz: '" + name_ + "'");
      Throw(ErrorCode::kInternal, "npz: zlib inflateInit2 failed with ", rc);
    }
    zs_ = zs;
  } else {
    Throw(ErrorCode::kUnsupported, "npz: '", name_, "': compression method ", e.method,
          " is not supported (only stored and deflate)");
  }
}

ZipMemberSource::~ZipMemberSource() {
  if (zs_ != nullptr) {
    inflateEnd(static_cast<z_stream*>(zs_));
    delete static_cast<z_stream*>(zs_);
  }
}

void ZipMemberSource::Read(void* dst, int64_t n) {
  TK_CHECK(n >= 0 && static_cast<uint64_t>(n) <= entry_.size - out_done_, kCorrupt, "npz: '", name_,
           "' is truncated: expected ", n, " more bytes at byte ", out_done_, " of ", entry_.size);
  auto* out = static_cast<uint8_t*>(dst);
  if (zs_ == nullptr) {
    if (n > 0) std::memcpy(out, src_ + out_done_, static_cast<size_t>(n));
  } else {
    auto* zs = static_cast<z_stream*>(zs_);
    uint64_t produced = 0;
    while (produced < static_cast<uint64_t>(n)) {
      // zlib counts in 32-bit units: feed and drain at most 1 GiB a call.
      const uInt in_chunk =
          static_cast<uInt>(std::min<uint64_t>(entry_.compressed_size - in_done_, 1u << 30));
      const uInt out_chunk = static_cast<uInt>(std::min<uint64_t>(n - produced, 1u << 30));
      zs->next_in = const_cast<Bytef*>(src_ + in_done_);
      zs->avail_in = in_chunk;
      zs->next_out = out + produced;
      zs->avail_out = out_chunk;
      const int rc = ended_ ? Z_STREAM_END : inflate(zs, Z_NO_FLUSH);
      in_done_ += in_chunk - zs->avail_in;
      produced += out_chunk - zs->avail_out;
      ended_ = rc == Z_STREAM_END;
      const bool progress = in_chunk != zs->avail_in || out_chunk != zs->avail_out;
      CheckZlibMemory(rc, "npz: '" + name_ + "'");
      if ((rc != Z_OK && rc != Z_STREAM_END) || (ended_ && produced < static_cast<uint64_t>(n)) ||
          !progress) {
        Throw(ErrorCode::kCorrupt, "npz: '", name_,
              "': the deflate data is corrupt or truncated (inflated ", out_done_ + produced,
              " of the ", entry_.size, " bytes claimed, member data at byte ", start_, ")");
      }
    }
  }
  crc_ = Crc32(crc_, std::string_view(reinterpret_cast<const char*>(out), static_cast<size_t>(n)));
  out_done_ += static_cast<uint64_t>(n);
}

void ZipMemberSource::Finish() {
  uint8_t rest[1 << 12];
  while (out_done_ < entry_.size) {  // bytes past what the reader wanted still count for the CRC
    Read(rest, static_cast<int64_t>(std::min<uint64_t>(entry_.size - out_done_, sizeof(rest))));
  }
  if (zs_ != nullptr && !ended_) {
    // The stream must end exactly here: one more call may only report its end.
    auto* zs = static_cast<z_stream*>(zs_);
    uint8_t extra = 0;
    zs->next_in = const_cast<Bytef*>(src_ + in_done_);
    zs->avail_in =
        static_cast<uInt>(std::min<uint64_t>(entry_.compressed_size - in_done_, 1u << 30));
    zs->next_out = &extra;
    zs->avail_out = 1;
    const int rc = inflate(zs, Z_NO_FLUSH);
    CheckZlibMemory(rc, "npz: '" + name_ + "'");
    TK_CHECK(rc == Z_STREAM_END && zs->avail_out == 1, kCorrupt, "npz: '", name_,
             "': the deflate data is corrupt or does not end after the ", entry_.size,
             " bytes claimed (member data at byte ", start_, ")");
    ended_ = true;
  }
  TK_CHECK(crc_ == entry_.crc, kCorrupt, "npz: '", name_,
           "': CRC-32 mismatch (member data at byte ", start_, ")");
}

namespace {

void Put(std::string* s, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) s->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// Raw deflate of the concatenated pieces.
std::string Deflate(const std::vector<std::string_view>& pieces) {
  z_stream zs;
  PrepareZStream(&zs);
  const int init =
      deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  CheckZlibMemory(init, "npz writer");
  TK_CHECK(init == Z_OK, kInternal, "npz: zlib deflateInit2 failed with ", init);
  std::string out;
  std::vector<char> chunk(1 << 16);
  for (size_t i = 0; i < pieces.size(); ++i) {
    std::string_view p = pieces[i];
    const bool last_piece = i + 1 == pieces.size();
    size_t done = 0;
    for (;;) {
      const uInt n = static_cast<uInt>(std::min<size_t>(p.size() - done, 1u << 30));
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(p.data() + done));
      zs.avail_in = n;
      const bool finish = last_piece && done + n == p.size();
      int rc;
      do {
        zs.next_out = reinterpret_cast<Bytef*>(chunk.data());
        zs.avail_out = static_cast<uInt>(chunk.size());
        rc = deflate(&zs, finish ? Z_FINISH : Z_NO_FLUSH);
        out.append(chunk.data(), chunk.size() - zs.avail_out);
      } while (zs.avail_out == 0 || (finish && rc != Z_STREAM_END));
      done += n;
      if (done == p.size()) break;
    }
  }
  if (pieces.empty()) {
    zs.avail_in = 0;
    zs.next_out = reinterpret_cast<Bytef*>(chunk.data());
    zs.avail_out = static_cast<uInt>(chunk.size());
    deflate(&zs, Z_FINISH);
    out.append(chunk.data(), chunk.size() - zs.avail_out);
  }
  deflateEnd(&zs);
  return out;
}

bool IsZip64(const ZipEntry& e) { return e.size >= k32Max || e.compressed_size >= k32Max; }

}  // namespace

void ZipWriter::Add(const std::string& name, const std::vector<std::string_view>& pieces,
                    bool compress) {
  ZipEntry e;
  e.name = name;
  e.method = compress ? 8 : 0;
  for (std::string_view p : pieces) {
    e.crc = Crc32(e.crc, p);
    e.size += p.size();
  }
  std::string deflated;
  if (compress) deflated = Deflate(pieces);
  e.compressed_size = compress ? deflated.size() : e.size;
  WriteLocalHeader(&e);
  if (compress) {
    file_->Write(deflated);
  } else {
    for (std::string_view p : pieces) file_->Write(p);
  }
  entries_.push_back(std::move(e));
}

ZipWriter::Reserved ZipWriter::Reserve(const std::string& name, uint64_t size) {
  ZipEntry e;
  e.name = name;
  e.size = e.compressed_size = size;
  WriteLocalHeader(&e);
  const Reserved r{entries_.size(), file_->position()};
  file_->Reserve(static_cast<int64_t>(size));
  entries_.push_back(std::move(e));
  return r;
}

void ZipWriter::SetCrc(const Reserved& member, uint32_t crc) {
  ZipEntry& e = entries_.at(member.entry);
  e.crc = crc;
  std::string field;
  Put(&field, crc, 4);
  file_->WriteAt(static_cast<int64_t>(e.local_offset) + kLocalCrcAt, field.data(), 4);
}

void ZipWriter::WriteLocalHeader(ZipEntry* e) {
  e->local_offset = static_cast<uint64_t>(file_->position());
  const bool zip64 = IsZip64(*e);
  std::string h;
  Put(&h, kLocalSig, 4);
  Put(&h, zip64 ? 45 : 20, 2);  // version needed
  Put(&h, 0, 2);                // flags
  Put(&h, e->method, 2);
  Put(&h, 0, 4);  // time, date
  Put(&h, e->crc, 4);
  Put(&h, zip64 ? k32Max : e->compressed_size, 4);
  Put(&h, zip64 ? k32Max : e->size, 4);
  Put(&h, e->name.size(), 2);
  Put(&h, zip64 ? 20 : 0, 2);
  h += e->name;
  if (zip64) {
    Put(&h, 1, 2);
    Put(&h, 16, 2);
    Put(&h, e->size, 8);
    Put(&h, e->compressed_size, 8);
  }
  file_->Write(h);
}

StreamedNpyMember::StreamedNpyMember(ZipWriter* zip, AtomicFile* file, const std::string& name,
                                     DType dtype, int64_t elements, std::string lead, size_t pieces)
    : StreamedNpyMember(zip, file, name, NpyHeaderFor(dtype, {elements}), std::move(lead),
                        elements * static_cast<int64_t>(DTypeSize(dtype)), DTypeSize(dtype),
                        pieces) {}

StreamedNpyMember::StreamedNpyMember(ZipWriter* zip, AtomicFile* file, const std::string& name,
                                     DType dtype, const std::vector<int64_t>& dims, size_t pieces)
    : StreamedNpyMember(zip, file, name, NpyHeaderFor(dtype, dims), "",
                        CheckedProduct(dims, name) * static_cast<int64_t>(DTypeSize(dtype)),
                        DTypeSize(dtype), pieces) {}

StreamedNpyMember::StreamedNpyMember(ZipWriter* zip, AtomicFile* file, const std::string& name,
                                     std::string header, std::string lead, int64_t data_bytes,
                                     int64_t item, size_t pieces)
    : zip_(zip),
      file_(file),
      header_(std::move(header) + lead),
      item_(item),
      crc_(pieces, 0),
      bytes_(pieces, 0) {
  const int64_t header_bytes = static_cast<int64_t>(header_.size() - lead.size());
  member_ = zip->Reserve(name + ".npy", static_cast<uint64_t>(header_bytes + data_bytes));
  file->WriteAt(member_.data_offset, header_.data(), header_.size());
}

void StreamedNpyMember::Put(size_t piece, int64_t at, std::string_view bytes) {
  // The CRC first: a piece just made is still in the cache, and the write reads it from there.
  crc_.at(piece) = Crc32(0, bytes);
  bytes_[piece] = bytes.size();
  file_->WriteAt(member_.data_offset + static_cast<int64_t>(header_.size()) + at * item_,
                 bytes.data(), bytes.size());
}

void StreamedNpyMember::Seal() {
  uint32_t crc = Crc32(0, header_);
  for (size_t c = 0; c < crc_.size(); ++c) crc = Crc32Combine(crc, crc_[c], bytes_[c]);
  zip_->SetCrc(member_, crc);
}

uint32_t Crc32(uint32_t crc, std::string_view bytes) {
  return Crc32Extend(crc, bytes.data(), bytes.size());
}

uint32_t Crc32Combine(uint32_t first, uint32_t second, uint64_t second_bytes) {
  return Crc32Join(first, second, second_bytes);
}

void ZipWriter::Finish() {
  const uint64_t cd_offset = static_cast<uint64_t>(file_->position());
  std::string cd;
  for (const ZipEntry& e : entries_) {
    const bool big_size = e.size >= k32Max || e.compressed_size >= k32Max;
    const bool big_offset = e.local_offset >= k32Max;
    std::string extra;
    if (big_size) {
      Put(&extra, e.size, 8);
      Put(&extra, e.compressed_size, 8);
    }
    if (big_offset) Put(&extra, e.local_offset, 8);
    if (!extra.empty()) {
      std::string head;
      Put(&head, 1, 2);
      Put(&head, extra.size(), 2);
      extra = head + extra;
    }
    Put(&cd, kCentralSig, 4);
    Put(&cd, 45, 2);  // made by
    Put(&cd, extra.empty() ? 20 : 45, 2);
    Put(&cd, 0, 2);
    Put(&cd, e.method, 2);
    Put(&cd, 0, 4);
    Put(&cd, e.crc, 4);
    Put(&cd, big_size ? k32Max : e.compressed_size, 4);
    Put(&cd, big_size ? k32Max : e.size, 4);
    Put(&cd, e.name.size(), 2);
    Put(&cd, extra.size(), 2);
    Put(&cd, 0, 2);  // comment
    Put(&cd, 0, 2);  // disk
    Put(&cd, 0, 2);  // internal attributes
    Put(&cd, 0644u << 16, 4);
    Put(&cd, big_offset ? k32Max : e.local_offset, 4);
    cd += e.name;
    cd += extra;
  }
  const uint64_t cd_size = cd.size();
  const uint64_t n = entries_.size();
  const bool zip64 = n >= 0xffff || cd_offset >= k32Max || cd_size >= k32Max;
  if (zip64) {
    const uint64_t end64 = cd_offset + cd_size;
    Put(&cd, kEnd64Sig, 4);
    Put(&cd, 44, 8);
    Put(&cd, 45, 2);
    Put(&cd, 45, 2);
    Put(&cd, 0, 4);
    Put(&cd, 0, 4);
    Put(&cd, n, 8);
    Put(&cd, n, 8);
    Put(&cd, cd_size, 8);
    Put(&cd, cd_offset, 8);
    Put(&cd, kEnd64LocatorSig, 4);
    Put(&cd, 0, 4);
    Put(&cd, end64, 8);
    Put(&cd, 1, 4);
  }
  Put(&cd, kEndSig, 4);
  Put(&cd, 0, 4);
  Put(&cd, zip64 ? 0xffff : n, 2);
  Put(&cd, zip64 ? 0xffff : n, 2);
  Put(&cd, zip64 ? k32Max : cd_size, 4);
  Put(&cd, zip64 ? k32Max : cd_offset, 4);
  Put(&cd, 0, 2);
  file_->Write(cd);
}

}  // namespace tensorkit::io
