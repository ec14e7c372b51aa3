// tensorkit/io/tfrecord.h: TFRecord files, the record container of TensorFlow's input pipelines.
//
// Glossary
//   record       one opaque byte string (usually a serialized tf.Example).
//   framing      each record is stored as: uint64 length (little-endian), uint32 masked CRC-32C
//                of those 8 bytes, the `length` data bytes, uint32 masked CRC-32C of the data
//                (crc32c.h). A file is records back to back; an empty file holds none.
//   compression  kNone, or the whole framed stream compressed as tf.io.TFRecordOptions writes
//                it: kGzip (gzip wrapper; concatenated gzip members are read as one stream) or
//                kZlib (zlib wrapper). Names as TensorFlow spells them: "", "NONE", "GZIP",
//                "ZLIB".
//   offset       where a record's header starts: a byte of the file for kNone, a byte of the
//                decompressed stream otherwise. Errors name the record number (0-based) and
//                the offset.
//   corrupt      a bad CRC, a header or record cut short by the end of the file, or a length
//                larger than what follows it: Error(kCorrupt), before any allocation of that
//                length. Compressed streams are inflated piece by piece, so memory follows the
//                bytes actually present, never the length claimed, which is also bounded by
//                max_record_bytes and by what deflate can produce from the bytes left.
//   zero-copy    TFRecordReader over an uncompressed file hands out views into a memory map.
//   batch        TFRecordBatch: every record of a file in one buffer with int64 offsets
//                (record i is bytes[offsets[i], offsets[i + 1])), CRCs checked in parallel.
//   atomic       TFRecordWriter writes a temporary file that takes `path`'s name on Close():
//                a failed or abandoned writer leaves nothing behind (io.h).
#ifndef TENSORKIT_IO_TFRECORD_H_
#define TENSORKIT_IO_TFRECORD_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tensorkit::io {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

enum class TFRecordCompression { kNone, kGzip, kZlib };

// "", "NONE" -> kNone, "GZIP" -> kGzip, "ZLIB" -> kZlib (exact, as TensorFlow takes them);
// anything else is Error(kInvalidArgument) listing these.
TFRecordCompression TFRecordCompressionFromName(std::string_view name);
const char* TFRecordCompressionName(TFRecordCompression c);  // "NONE", "GZIP", "ZLIB"

struct TFRecordOptions {
  TFRecordCompression compression = TFRecordCompression::kNone;
  // Compressed streams: the longest record accepted (its length cannot be checked against the
  // file's size before inflating). Uncompressed files are bounded by their size instead.
  int64_t max_record_bytes = int64_t{1} << 31;
  // Writer: zlib's level 0..9, or -1 for zlib's default (what TensorFlow writes by default).
  int compression_level = -1;
};

// Reads one record after another.
class TFRecordReader {
 public:
  // Opens `path` (a regular file); throws Error(kIo) when it cannot.
  static TFRecordReader Open(const std::string& path, const TFRecordOptions& options = {});
  // Reads bytes already in memory that outlive the reader; `name` appears in errors.
  static TFRecordReader FromMemory(const void* data, size_t size, const std::string& name,
                                   const TFRecordOptions& options = {});
  TFRecordReader(TFRecordReader&&) noexcept;
  TFRecordReader& operator=(TFRecordReader&&) noexcept;
  ~TFRecordReader();

  // The next record into *record and true; false at the end of the file. The view lives as
  // long as the reader for kNone, and until the next call otherwise. Throws Error(kCorrupt).
  bool Next(std::string_view* record);
  // Records returned so far.
  int64_t records_read() const;
  // Gives back the memory-mapped pages of the file read so far (Open maps the file): a loop over
  // a file larger than memory calls it between batches, once it is done with their views, so
  // its resident memory stays bounded. The pages stay in the page cache.
  void ReleaseRead();

 private:
  struct Impl;
  explicit TFRecordReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

struct TFRecordBatch {
  std::string bytes;             // the records back to back, without framing
  std::vector<int64_t> offsets;  // size() + 1 entries, offsets[0] == 0
  int64_t size() const { return static_cast<int64_t>(offsets.size()) - 1; }
  std::string_view operator[](int64_t i) const {
    return std::string_view(bytes).substr(offsets[i], offsets[i + 1] - offsets[i]);
  }
};

// Every record of a file. The data CRCs of an uncompressed file are checked in parallel; the
// first bad record (in file order) is the one reported.
TFRecordBatch ReadTFRecordBatch(const std::string& path, const TFRecordOptions& options = {});
TFRecordBatch ReadTFRecordBatchFromMemory(const void* data, size_t size, const std::string& name,
                                          const TFRecordOptions& options = {});
// The same into *batch, reusing its buffers: a loop over files then touches no fresh pages
// (first-touch page faults of a new buffer cost more than the CRCs and the copy).
void ReadTFRecordBatchFromMemory(const void* data, size_t size, const std::string& name,
                                 const TFRecordOptions& options, TFRecordBatch* batch);
std::vector<std::string> ReadTFRecords(const std::string& path,
                                       const TFRecordOptions& options = {});

// Writes records to `path` (atomically: the file appears, or is replaced, on Close()).
class TFRecordWriter {
 public:
  explicit TFRecordWriter(const std::string& path, const TFRecordOptions& options = {});
  TFRecordWriter(TFRecordWriter&&) noexcept;
  TFRecordWriter& operator=(TFRecordWriter&&) noexcept;
  // Without Close() the output is discarded (an exception unwinding past the writer).
  ~TFRecordWriter();

  void Write(std::string_view record);
  // Finishes the stream and gives the file its name; Write after Close is an Error.
  void Close();
  int64_t records_written() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Frames `records` into one uncompressed TFRecord byte string (tests, in-memory pipelines).
std::string FrameTFRecords(const std::vector<std::string_view>& records);
// Writes `records` to `path` in one call.
void WriteTFRecords(const std::string& path, const std::vector<std::string_view>& records,
                    const TFRecordOptions& options = {});

}  // namespace tensorkit::io

#endif  // TENSORKIT_IO_TFRECORD_H_
