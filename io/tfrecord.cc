// TFRecord framing over a memory map (zero-copy) or a streamed inflate, and its writer.
#include "tensorkit/io/tfrecord.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <optional>

#include "tensorkit/common/alloc_fault.h"
#include "tensorkit/common/cancel.h"
#include "tensorkit/common/error.h"
#include "tensorkit/common/file_util.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/io/crc32c.h"
#include "tensorkit/io/zlib_memory.h"

namespace tensorkit::io {
namespace {

constexpr int64_t kHeaderBytes = 12;  // length + its masked CRC
constexpr int64_t kFooterBytes = 4;   // masked CRC of the data
// Deflate cannot expand better than about 1032:1; a longer claim than the compressed bytes left
// could produce is a lie found before inflating (zip.cc uses the same bound).
constexpr int64_t kMaxDeflateRatio = 1032;
// Inflated bytes are produced at most this many at a time, so memory follows the data.
constexpr int64_t kInflateStep = int64_t{1} << 20;

uint64_t LoadU64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
uint32_t LoadU32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}
void StoreU64(uint64_t v, uint8_t* p) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
void StoreU32(uint32_t v, uint8_t* p) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

std::string Hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

// "TFRecord: 'f' record 3 at byte 120" (of the decompressed stream when compressed).
struct Where {
  const std::string* name;
  int64_t record;
  int64_t offset;
  bool compressed;
};
std::ostream& operator<<(std::ostream& os, const Where& w) {
  os << "TFRecord: '" << *w.name << "' record " << w.record << " at byte " << w.offset;
  if (w.compressed) os << " of the decompressed stream";
  return os;
}

// Checks a header's length CRC and returns the length. `after` is how many bytes follow the
// header for sure (uncompressed) or may follow at most (compressed).
uint64_t CheckHeader(const uint8_t* h, const Where& w, uint64_t after, int64_t max_record) {
  const uint64_t length = LoadU64(h);
  const uint32_t stored = UnmaskCrc(LoadU32(h + 8)), actual = Crc32c(h, 8);
  TK_CHECK(stored == actual, kCorrupt, w, ": the length field's CRC does not match (stored ",
           Hex(stored), ", computed ", Hex(actual), "): the file is corrupt");
  if (w.compressed) {
    TK_CHECK(length <= static_cast<uint64_t>(max_record), kCorrupt, w, ": the record claims ",
             length, " bytes, more than max_record_bytes (", max_record,
             "); raise TFRecordOptions::max_record_bytes if the file is right");
  }
  TK_CHECK(after >= kFooterBytes && length <= after - kFooterBytes, kCorrupt, w,
           ": the record claims ", length, " bytes but only ", after,
           w.compressed ? " can follow its header" : " follow its header",
           " (with the 4-byte data CRC): the file is truncated or corrupt");
  return length;
}

void CheckData(const uint8_t* data, uint64_t length, const Where& w) {
  const uint32_t stored = UnmaskCrc(LoadU32(data + length)), actual = Crc32c(data, length);
  TK_CHECK(stored == actual, kCorrupt, w, ": the data CRC does not match (stored ", Hex(stored),
           ", computed ", Hex(actual), ") over ", length, " bytes: the file is corrupt");
}

// A header cut short by the end of the stream.
[[noreturn]] void ThrowTruncatedHeader(const Where& w, int64_t have) {
  Throw(ErrorCode::kCorrupt, w, ": the stream ends ", have,
        " bytes into a 12-byte record header: the file is truncated");
}

int WindowBits(TFRecordCompression c) {
  return c == TFRecordCompression::kGzip ? MAX_WBITS + 16 : MAX_WBITS;
}

}  // namespace

TFRecordCompression TFRecordCompressionFromName(std::string_view name) {
  if (name.empty() || name == "NONE") return TFRecordCompression::kNone;
  if (name == "GZIP") return TFRecordCompression::kGzip;
  if (name == "ZLIB") return TFRecordCompression::kZlib;
  Throw(ErrorCode::kInvalidArgument, "TFRecord: unknown compression type '", Excerpt(name),
        "'; use \"\", \"NONE\", \"GZIP\" or \"ZLIB\"");
}

const char* TFRecordCompressionName(TFRecordCompression c) {
  switch (c) {
    case TFRecordCompression::kGzip:
      return "GZIP";
    case TFRecordCompression::kZlib:
      return "ZLIB";
    default:
      return "NONE";
  }
}

// ---------------------------------------------------------------------------------------------
// Reader
// ---------------------------------------------------------------------------------------------

struct TFRecordReader::Impl {
  std::unique_ptr<MappedFile> file;  // null for FromMemory
  std::string name;
  const uint8_t* in = nullptr;  // the file's bytes
  uint64_t in_size = 0;
  TFRecordOptions options;
  int64_t records = 0;
  uint64_t pos = 0;       // kNone: offset in the file of the next header
  uint64_t released = 0;  // ReleaseRead has given back the file's pages below this offset

  // Compressed streams: inflated bytes [head, tail) of buf, at stream offset `stream_pos`.
  std::optional<z_stream> zs;
  uint64_t in_done = 0;
  bool stream_ended = false;
  std::string buf;
  size_t head = 0, tail = 0;
  uint64_t stream_pos = 0;

  ~Impl() {
    if (zs) inflateEnd(&*zs);
  }

  bool compressed() const { return options.compression != TFRecordCompression::kNone; }

  void InitInflate() {
    zs.emplace();
    PrepareZStream(&*zs);
    const int rc = inflateInit2(&*zs, WindowBits(options.compression));
    if (rc != Z_OK) {
      zs.reset();
      CheckZlibMemory(rc, "TFRecord: '" + name + "'");
      Throw(ErrorCode::kInternal, "TFRecord: zlib inflateInit2 failed with ", rc);
    }
    stream_ended = in_size == 0;  // an empty file holds no records, compressed or not
  }

  // Inflates until [head, tail) holds n bytes or the stream ends; returns tail - head.
  size_t Fill(size_t n) {
    while (tail - head < n && !(stream_ended && in_done == in_size)) {
      if (stream_ended) {
        // Another member follows (gzip allows concatenation; zlib data must be a new stream).
        TK_CHECK(inflateReset(&*zs) == Z_OK, kInternal, "TFRecord: zlib inflateReset failed");
        stream_ended = false;
      }
      if (head > 0) {  // keep the window at the front so the buffer only grows with the data
        std::memmove(buf.data(), buf.data() + head, tail - head);
        tail -= head;
        head = 0;
      }
      const size_t want = std::max<size_t>(n - tail, 1);
      if (buf.size() - tail < std::min<size_t>(want, kInflateStep)) {
        buf.resize(tail + std::min<size_t>(std::max<size_t>(want, 64 * 1024), kInflateStep));
      }
      const uInt in_chunk = static_cast<uInt>(std::min<uint64_t>(in_size - in_done, 1u << 30));
      const uInt out_chunk = static_cast<uInt>(std::min<size_t>(buf.size() - tail, 1u << 30));
      zs->next_in = const_cast<Bytef*>(in + in_done);
      zs->avail_in = in_chunk;
      zs->next_out = reinterpret_cast<Bytef*>(buf.data() + tail);
      zs->avail_out = out_chunk;
      const int rc = inflate(&*zs, Z_NO_FLUSH);
      in_done += in_chunk - zs->avail_in;
      tail += out_chunk - zs->avail_out;
      const bool progress = in_chunk != zs->avail_in || out_chunk != zs->avail_out;
      CheckZlibMemory(rc, "TFRecord: '" + name + "'");
      if (rc == Z_STREAM_END) {
        stream_ended = true;
      } else if (rc != Z_OK || !progress) {
        const bool truncated = in_done == in_size && (rc == Z_OK || rc == Z_BUF_ERROR);
        Throw(ErrorCode::kCorrupt, "TFRecord: '", name, "': the ",
              TFRecordCompressionName(options.compression), " stream is ",
              truncated ? "truncated" : "corrupt", " at compressed byte ", in_done, " (",
              stream_pos + (tail - head), " bytes decompressed",
              zs->msg != nullptr ? std::string(": ") + zs->msg : std::string(), ")");
      }
    }
    return tail - head;
  }

  bool NextPlain(std::string_view* record) {
    if (pos == in_size) return false;
    const Where w{&name, records, static_cast<int64_t>(pos), false};
    if (in_size - pos < kHeaderBytes) ThrowTruncatedHeader(w, static_cast<int64_t>(in_size - pos));
    const uint64_t length = CheckHeader(in + pos, w, in_size - pos - kHeaderBytes, 0);
    const uint8_t* data = in + pos + kHeaderBytes;
    CheckData(data, length, w);
    *record = std::string_view(reinterpret_cast<const char*>(data), length);
    pos += kHeaderBytes + length + kFooterBytes;
    ++records;
    return true;
  }

  bool NextCompressed(std::string_view* record) {
    const Where w{&name, records, static_cast<int64_t>(stream_pos), true};
    const size_t have = Fill(kHeaderBytes);
    if (have == 0) return false;
    if (have < kHeaderBytes) ThrowTruncatedHeader(w, static_cast<int64_t>(have));
    // What can still follow: the inflated bytes at hand and what deflate could make of the rest.
    const uint64_t left = in_size - in_done;
    const uint64_t could = (have - kHeaderBytes) + (left > (uint64_t{1} << 52) / kMaxDeflateRatio
                                                        ? uint64_t{1} << 52
                                                        : left * kMaxDeflateRatio + 1024);
    const uint64_t length = CheckHeader(reinterpret_cast<const uint8_t*>(buf.data() + head), w,
                                        could, options.max_record_bytes);
    const size_t total = kHeaderBytes + length + kFooterBytes;
    const size_t got = Fill(total);
    TK_CHECK(got >= total, kCorrupt, w, ": the stream ends ", got - kHeaderBytes,
             " bytes into the record's ", length + kFooterBytes,
             " bytes of data and CRC: the file is truncated");
    const uint8_t* data = reinterpret_cast<const uint8_t*>(buf.data() + head + kHeaderBytes);
    CheckData(data, length, w);
    *record = std::string_view(reinterpret_cast<const char*>(data), length);
    head += total;
    stream_pos += total;
    ++records;
    return true;
  }
};

TFRecordReader::TFRecordReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {
  if (impl_->compressed()) impl_->InitInflate();
}
TFRecordReader::TFRecordReader(TFRecordReader&&) noexcept = default;
TFRecordReader& TFRecordReader::operator=(TFRecordReader&&) noexcept = default;
TFRecordReader::~TFRecordReader() = default;

TFRecordReader TFRecordReader::Open(const std::string& path, const TFRecordOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->file = std::make_unique<MappedFile>(path);
  const Bytes b = impl->file->bytes();
  impl->in = b.data;
  impl->in_size = b.size;
  impl->name = path;
  impl->options = options;
  return TFRecordReader(std::move(impl));
}

TFRecordReader TFRecordReader::FromMemory(const void* data, size_t size, const std::string& name,
                                          const TFRecordOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->in = static_cast<const uint8_t*>(data);
  impl->in_size = size;
  impl->name = name;
  impl->options = options;
  return TFRecordReader(std::move(impl));
}

bool TFRecordReader::Next(std::string_view* record) {
  return impl_->compressed() ? impl_->NextCompressed(record) : impl_->NextPlain(record);
}

int64_t TFRecordReader::records_read() const { return impl_->records; }

void TFRecordReader::ReleaseRead() {
  Impl& m = *impl_;
  if (m.file == nullptr) return;
  const uint64_t upto = m.compressed() ? m.in_done : m.pos;
  if (upto <= m.released) return;
  m.file->Release(m.released, upto);
  m.released = upto;
}

// ---------------------------------------------------------------------------------------------
// Batches
// ---------------------------------------------------------------------------------------------

namespace {

// An uncompressed file: the headers are walked in order (each gives the next one's place), then
// the data CRCs are checked and the data copied in parallel over fixed chunks of records. A bad
// header stops the walk, but a bad data CRC of an earlier record is still the one reported, so
// the error is the one the sequential reader gives.
void PlainBatch(const uint8_t* in, uint64_t size, const std::string& name, TFRecordBatch* out) {
  std::vector<uint64_t> starts;  // header offsets
  TFRecordBatch& batch = *out;
  batch.offsets.assign(1, 0);
  std::exception_ptr header_error;
  try {
    for (uint64_t pos = 0; pos < size;) {
      const Where w{&name, static_cast<int64_t>(starts.size()), static_cast<int64_t>(pos), false};
      if (size - pos < kHeaderBytes) ThrowTruncatedHeader(w, static_cast<int64_t>(size - pos));
      const uint64_t length = CheckHeader(in + pos, w, size - pos - kHeaderBytes, 0);
      starts.push_back(pos);
      batch.offsets.push_back(batch.offsets.back() + static_cast<int64_t>(length));
      pos += kHeaderBytes + length + kFooterBytes;
    }
  } catch (const Error&) {
    header_error = std::current_exception();
  }
  const int64_t n = static_cast<int64_t>(starts.size());
  alloc_fault::MaybeFailBuffer();
  batch.bytes.resize(static_cast<size_t>(batch.offsets.back()));
  // Chunks of records of about 1 MiB on average, at least 64 records.
  const int64_t avg = n > 0 ? batch.offsets.back() / n + kHeaderBytes + kFooterBytes : 1;
  const int64_t chunk = std::max<int64_t>(64, (int64_t{1} << 20) / std::max<int64_t>(avg, 1));
  std::vector<int64_t> bad(static_cast<size_t>(NumChunks(n, chunk)), -1);  // first bad record
  ParallelChunks(n, chunk, [&](int64_t c, int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const uint64_t length = batch.offsets[i + 1] - batch.offsets[i];
      const uint8_t* data = in + starts[i] + kHeaderBytes;
      if (UnmaskCrc(LoadU32(data + length)) != Crc32c(data, length)) {
        bad[c] = i;
        return;
      }
      if (length > 0) std::memcpy(batch.bytes.data() + batch.offsets[i], data, length);
    }
  });
  for (int64_t i : bad) {
    if (i < 0) continue;
    const uint64_t length = batch.offsets[i + 1] - batch.offsets[i];
    CheckData(in + starts[i] + kHeaderBytes, length,
              Where{&name, i, static_cast<int64_t>(starts[i]), false});
  }
  if (header_error) std::rethrow_exception(header_error);
}

void StreamBatch(TFRecordReader reader, TFRecordBatch* batch) {
  batch->bytes.clear();
  batch->offsets.assign(1, 0);
  std::string_view r;
  for (int64_t k = 1; reader.Next(&r); ++k) {
    if (k % 1024 == 0) ThrowIfCancelled();  // decompression is sequential: poll every few records
    batch->bytes.append(r);
    batch->offsets.push_back(static_cast<int64_t>(batch->bytes.size()));
  }
}

}  // namespace

void ReadTFRecordBatchFromMemory(const void* data, size_t size, const std::string& name,
                                 const TFRecordOptions& options, TFRecordBatch* batch) {
  if (options.compression == TFRecordCompression::kNone) {
    PlainBatch(static_cast<const uint8_t*>(data), size, name, batch);
  } else {
    StreamBatch(TFRecordReader::FromMemory(data, size, name, options), batch);
  }
}

TFRecordBatch ReadTFRecordBatchFromMemory(const void* data, size_t size, const std::string& name,
                                          const TFRecordOptions& options) {
  const std::string op = "TFRecord: '" + name + "'";
  return alloc_fault::ReportingAllocationFailure(op.c_str(), [&] {
    TFRecordBatch batch;
    ReadTFRecordBatchFromMemory(data, size, name, options, &batch);
    return batch;
  });
}

TFRecordBatch ReadTFRecordBatch(const std::string& path, const TFRecordOptions& options) {
  MappedFile file(path);
  const Bytes b = file.bytes();
  return ReadTFRecordBatchFromMemory(b.data, b.size, path, options);
}

std::vector<std::string> ReadTFRecords(const std::string& path, const TFRecordOptions& options) {
  TFRecordBatch batch = ReadTFRecordBatch(path, options);
  std::vector<std::string> out;
  out.reserve(static_cast<size_t>(batch.size()));
  for (int64_t i = 0; i < batch.size(); ++i) out.emplace_back(batch[i]);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Writer
// ---------------------------------------------------------------------------------------------

namespace {

// Appends one framed record to *out.
void AppendFramed(std::string_view record, std::string* out) {
  uint8_t header[kHeaderBytes], footer[kFooterBytes];
  StoreU64(record.size(), header);
  StoreU32(MaskCrc(Crc32c(header, 8)), header + 8);
  StoreU32(MaskCrc(Crc32c(record.data(), record.size())), footer);
  out->append(reinterpret_cast<const char*>(header), kHeaderBytes);
  out->append(record);
  out->append(reinterpret_cast<const char*>(footer), kFooterBytes);
}

constexpr size_t kWriteBuffer = size_t{1} << 20;

}  // namespace

struct TFRecordWriter::Impl {
  AtomicFile file;
  TFRecordOptions options;
  std::string pending;  // framed bytes not yet written (or compressed)
  std::string out;      // compressed bytes
  std::optional<z_stream> zs;
  int64_t records = 0;
  bool closed = false;

  Impl(const std::string& path, const TFRecordOptions& o) : file(path), options(o) {
    if (o.compression == TFRecordCompression::kNone) return;
    TK_CHECK(o.compression_level >= -1 && o.compression_level <= 9, kInvalidArgument,
             "TFRecordWriter: compression_level ", o.compression_level,
             " is out of range; use -1 (zlib's default) or 0..9");
    zs.emplace();
    PrepareZStream(&*zs);
    const int rc = deflateInit2(&*zs, o.compression_level, Z_DEFLATED, WindowBits(o.compression), 8,
                                Z_DEFAULT_STRATEGY);
    if (rc != Z_OK) {
      zs.reset();
      CheckZlibMemory(rc, "TFRecordWriter");
      Throw(ErrorCode::kInternal, "TFRecordWriter: zlib deflateInit2 failed with ", rc);
    }
  }
  ~Impl() {
    if (zs) deflateEnd(&*zs);
  }

  // Writes (or deflates) the pending bytes; `finish` ends the compressed stream.
  void Flush(bool finish) {
    if (!zs) {
      file.Write(pending);
      pending.clear();
      return;
    }
    size_t done = 0;
    for (;;) {
      const uInt in_chunk = static_cast<uInt>(std::min<size_t>(pending.size() - done, 1u << 30));
      const bool last = done + in_chunk == pending.size();
      out.resize(kWriteBuffer);
      zs->next_in = reinterpret_cast<Bytef*>(pending.data() + done);
      zs->avail_in = in_chunk;
      zs->next_out = reinterpret_cast<Bytef*>(out.data());
      zs->avail_out = static_cast<uInt>(out.size());
      const int rc = deflate(&*zs, finish && last ? Z_FINISH : Z_NO_FLUSH);
      TK_CHECK(rc == Z_OK || rc == Z_STREAM_END || rc == Z_BUF_ERROR, kInternal,
               "TFRecordWriter: zlib deflate failed (", rc, ")");
      done += in_chunk - zs->avail_in;
      file.Write(out.data(), out.size() - zs->avail_out);
      if (rc == Z_STREAM_END) break;
      if (!finish && done == pending.size() && zs->avail_out != 0) break;
    }
    pending.clear();
  }
};

TFRecordWriter::TFRecordWriter(const std::string& path, const TFRecordOptions& options)
    : impl_(std::make_unique<Impl>(path, options)) {}
TFRecordWriter::TFRecordWriter(TFRecordWriter&&) noexcept = default;
TFRecordWriter& TFRecordWriter::operator=(TFRecordWriter&&) noexcept = default;
TFRecordWriter::~TFRecordWriter() = default;

void TFRecordWriter::Write(std::string_view record) {
  TK_CHECK(!impl_->closed, kInvalidArgument, "TFRecordWriter::Write: the writer is closed");
  AppendFramed(record, &impl_->pending);
  ++impl_->records;
  if (impl_->pending.size() >= kWriteBuffer) impl_->Flush(false);
}

void TFRecordWriter::Close() {
  TK_CHECK(!impl_->closed, kInvalidArgument, "TFRecordWriter::Close: the writer is closed");
  impl_->Flush(true);
  impl_->file.Commit();
  impl_->closed = true;
}

int64_t TFRecordWriter::records_written() const { return impl_->records; }

std::string FrameTFRecords(const std::vector<std::string_view>& records) {
  std::string out;
  size_t total = 0;
  for (std::string_view r : records) total += r.size() + kHeaderBytes + kFooterBytes;
  out.reserve(total);
  for (std::string_view r : records) AppendFramed(r, &out);
  return out;
}

void WriteTFRecords(const std::string& path, const std::vector<std::string_view>& records,
                    const TFRecordOptions& options) {
  TFRecordWriter writer(path, options);
  for (std::string_view r : records) writer.Write(r);
  writer.Close();
}

}  // namespace tensorkit::io
