// tensorkit/io/formats.h: the per-format readers and writers behind io.h (internal to io/).
//
// Glossary
//   NpyHeader  what a .npy header says: element kind and size, byte order, C or Fortran order,
//              dims, and where the data starts.
//   member     one file inside a zip archive (.npz): "arr_0.npy", "row.npy", ...
//   ZipEntry   a member's place in the archive, from the central directory.
//   ByteSource a sequential reader of a file's or a member's bytes, so that a .npy is read (or
//              inflated) straight into the tensor's storage whatever holds it.
#ifndef TENSORKIT_IO_FORMATS_H_
#define TENSORKIT_IO_FORMATS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tensorkit/common/file_util.h"
#include "tensorkit/io/io.h"

namespace tensorkit::io {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// --- sources ---
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // The next n bytes into dst; throws Error(kCorrupt) naming the source when they are missing.
  virtual void Read(void* dst, int64_t n) = 0;
  // How many bytes the source holds (for a zip member: what the archive claims).
  virtual int64_t size() const = 0;
  virtual const std::string& name() const = 0;
  // Called once everything wanted is read: checks what remains (a zip member's CRC).
  virtual void Finish() {}
};

class MemorySource : public ByteSource {
 public:
  explicit MemorySource(const Bytes& bytes) : bytes_(bytes) {}
  void Read(void* dst, int64_t n) override;
  int64_t size() const override { return static_cast<int64_t>(bytes_.size); }
  const std::string& name() const override { return bytes_.name; }

 private:
  Bytes bytes_;
  int64_t pos_ = 0;
};

// --- .npy ---
struct NpyHeader {
  char kind = 'f';        // NumPy kind: b, i, u, f, S (bytes) or U (UTF-32); S and U read as string
  int64_t item_size = 4;  // bytes per element
  bool swap = false;      // the file's byte order differs from this machine's
  bool fortran = false;   // column-major data
  DType dtype = DType::kFloat32;
  std::vector<int64_t> dims;
  int64_t data_offset = 0;  // bytes from the start of the file
  int64_t data_bytes = 0;   // elements * item_size
};

// Parses the magic, version and header dict from the first `size` bytes of a .npy.
NpyHeader ParseNpyHeader(const uint8_t* data, size_t size, const std::string& name);
// Reads a whole .npy from `source` (header, then the data straight into the tensor's storage).
Tensor ReadNpy(ByteSource& source);
// Reads and checks the header of the .npy `source` holds, leaving the source at its data (for
// readers that stream the data themselves).
NpyHeader ReadNpyHeader(ByteSource& source);
Tensor ReadNpyFile(const std::string& path);
Tensor ReadNpyBytes(const Bytes& bytes);
// The header (magic, version, length and padded dict) for numeric `t` written in C order, or in
// Fortran order when `fortran`.
std::string NpyHeaderFor(const Tensor& t, bool fortran);
// The same for a numeric array of `dims` in C order that is not in memory (streaming writers).
std::string NpyHeaderFor(DType dtype, const std::vector<int64_t>& dims);
std::string NpyByteStringHeader(size_t length);
// `t` on the CPU with its data in C order, or in Fortran order (then *fortran = true), without a
// copy when it already is one of the two.
Tensor NpyLayout(const Tensor& t, bool* fortran);
// What a .npy of `t` holds: the header and a view of the data, which lives in `keep` (the laid
// out tensor) or, for strings (written as NumPy unicode '<U'), in `encoded`.
struct NpyImage {
  std::string header;
  Tensor keep;
  std::string encoded;
  std::string_view data;
};
void MakeNpyImage(const Tensor& t, NpyImage* image);
void WriteNpy(const std::string& path, const Tensor& t);

// --- zip ---
struct ZipEntry {
  std::string name;
  uint16_t method = 0;  // 0 stored, 8 deflate
  uint32_t crc = 0;
  uint64_t compressed_size = 0;
  uint64_t size = 0;
  uint64_t local_offset = 0;
};

std::vector<ZipEntry> ListZip(const Bytes& zip);

// A member's bytes, copied (stored) or inflated (deflate) into the caller's buffer as they are
// read, so memory follows the data actually produced, never the size the archive claims.
// Finish() reads what is left and checks the end of the deflate stream and the CRC-32.
class ZipMemberSource : public ByteSource {
 public:
  ZipMemberSource(const Bytes& zip, const ZipEntry& entry);
  ~ZipMemberSource() override;
  ZipMemberSource(const ZipMemberSource&) = delete;
  ZipMemberSource& operator=(const ZipMemberSource&) = delete;
  void Read(void* dst, int64_t n) override;
  int64_t size() const override { return static_cast<int64_t>(entry_.size); }
  const std::string& name() const override { return name_; }
  void Finish() override;

 private:
  const ZipEntry& entry_;
  std::string name_;
  const uint8_t* src_ = nullptr;  // the member's compressed (or stored) bytes
  uint64_t start_ = 0;            // their offset in the archive
  uint64_t in_done_ = 0, out_done_ = 0;
  uint32_t crc_ = 0;
  void* zs_ = nullptr;  // the z_stream when deflated
  bool ended_ = false;  // the deflate stream reached its end
};

class ZipWriter {
 public:
  explicit ZipWriter(AtomicFile* file) : file_(file) {}
  // Adds a member made of `pieces` concatenated; deflates it when `compress`.
  void Add(const std::string& name, const std::vector<std::string_view>& pieces, bool compress);
  // Adds a stored member of `size` bytes whose content the caller writes afterwards with
  // AtomicFile::WriteAt, in any order, from the returned offset on; SetCrc (its CRC-32 over those
  // bytes, Crc32Combine of the pieces') completes it, before Finish.
  struct Reserved {
    size_t entry;
    int64_t data_offset;  // where the member's bytes go in the file
  };
  Reserved Reserve(const std::string& name, uint64_t size);
  void SetCrc(const Reserved& member, uint32_t crc);
  // Writes the central directory (zip64 records when needed).
  void Finish();

 private:
  // Sets e->local_offset and writes e's local header (zip64 fields when its sizes need them).
  void WriteLocalHeader(ZipEntry* e);

  AtomicFile* file_;
  std::vector<ZipEntry> entries_;
};

// The CRC-32 of `bytes` continued from `crc` (0 to start), and of two pieces from theirs
// (io/crc32.h).
uint32_t Crc32(uint32_t crc, std::string_view bytes);
uint32_t Crc32Combine(uint32_t first, uint32_t second, uint64_t second_bytes);

// A stored .npz member `name`.npy holding a 1-D array of `elements` items of `dtype` whose size
// is known before its content (streaming writers): reserved in the archive at construction,
// its header written with `lead` (bytes of the first elements, e.g. a leading 0 of offsets),
// then filled by `pieces` pieces put at their element positions in any order, from any thread
// (each piece once), and sealed (its CRC set) once all are in.
class StreamedNpyMember {
 public:
  StreamedNpyMember(ZipWriter* zip, AtomicFile* file, const std::string& name, DType dtype,
                    int64_t elements, std::string lead, size_t pieces);
  // An array of `dims` in C order (no lead); positions count elements in that order.
  StreamedNpyMember(ZipWriter* zip, AtomicFile* file, const std::string& name, DType dtype,
                    const std::vector<int64_t>& dims, size_t pieces);
  // Piece `piece`: `bytes` holding the elements from `at` on (counted after the lead).
  void Put(size_t piece, int64_t at, std::string_view bytes);
  void Seal();

 private:
  StreamedNpyMember(ZipWriter* zip, AtomicFile* file, const std::string& name, std::string header,
                    std::string lead, int64_t data_bytes, int64_t item, size_t pieces);

  ZipWriter* zip_;
  AtomicFile* file_;
  std::string header_;  // with the lead
  int64_t item_;
  ZipWriter::Reserved member_{};
  std::vector<uint32_t> crc_;
  std::vector<uint64_t> bytes_;
};

// The bytes of a vector's elements, for Put and ZipWriter::Add.
template <typename T, typename Allocator>
std::string_view BytesOf(const std::vector<T, Allocator>& v) {
  return std::string_view(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

// --- .npz ---
// The index dtype of the members SciPy writes for a sparse matrix or array it builds itself
// (mmread, coo_matrix, tocsr): int32 when the largest value an index member must hold fits (the
// largest dim for coo; for csr also nnz, which indptr reaches), else int64; always int64 for coo
// of rank > 2 (SciPy's n-D coo keeps int64 coords). The .npz writers use it; load_npz and
// ReadNpz read both widths.
DType ScipyIndexDType(bool csr, const std::vector<int64_t>& shape, int64_t nnz);
TensorData ReadNpzBytes(const Bytes& bytes, const ReadOptions& options);
std::vector<std::pair<std::string, Tensor>> ReadNpzMembersBytes(const Bytes& bytes);
void WriteNpz(const std::string& path, const TensorData& data, const WriteOptions& options);

// --- .mtx and .tns ---
TensorData ReadMtxBytes(const Bytes& bytes, const ReadOptions& options);
void WriteMtx(const std::string& path, const TensorData& data);
// The banner and size line of a general coordinate .mtx of `dtype` values (real or integer).
std::string MtxCoordinateHeader(DType dtype, int64_t rows, int64_t cols, int64_t nnz);

TensorData ReadTnsBytes(const Bytes& bytes, const ReadOptions& options);
void WriteTns(const std::string& path, const SparseTensor& st);

// The sparse tensor's indices and values on the CPU in C-contiguous layout.
SparseTensor HostContiguous(const SparseTensor& st);

}  // namespace tensorkit::io

#endif  // TENSORKIT_IO_FORMATS_H_
