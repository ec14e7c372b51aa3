// tensorkit/io/formats.h: the per-format readers and writers behind io.h (internal to io/).
//
// Glossary
//   NpyHeader  what a .npy header says: element kind and size, byte order, C or Fortran order,
//              dims, and where the data starts.
//   member     one file inside a zip archive (.npz): "arr_0.npy", "row.npy", ...
//   ZipEntry   a member's place in the archive, from the central directory.
#ifndef TENSORKIT_IO_FORMATS_H_
#define TENSORKIT_IO_FORMATS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tensorkit/io/file_util.h"
#include "tensorkit/io/io.h"

namespace tensorkit::io {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// --- .npy ---
struct NpyHeader {
  char kind = 'f';       // NumPy kind: b, i, u, f, or S (byte strings: read as uint8 [..., size])
  int item_size = 4;     // bytes per element
  bool swap = false;     // the file's byte order differs from this machine's
  bool fortran = false;  // column-major data
  DType dtype = DType::kFloat32;  // for kinds b, i, u, f
  std::vector<int64_t> dims;
  int64_t data_offset = 0;  // bytes from the start of the file
  int64_t data_bytes = 0;   // elements * item_size
};

// Parses the magic, version and header dict from the first `size` bytes of a .npy.
NpyHeader ParseNpyHeader(const uint8_t* data, size_t size, const std::string& name);
Tensor ReadNpyFile(const std::string& path);
Tensor ReadNpyBytes(const Bytes& bytes);
// The text of a 0-d or 1-element byte-string array ('|S3' b'coo').
std::string ReadNpyByteString(const Bytes& bytes);
// The header (magic, version, length and padded dict) for `t` written in C order, or in
// Fortran order when `fortran`.
std::string NpyHeaderFor(const Tensor& t, bool fortran);
std::string NpyByteStringHeader(size_t length);
// `t` on the CPU with its data in C order, or in Fortran order (then *fortran = true), without a
// copy when it already is one of the two.
Tensor NpyLayout(const Tensor& t, bool* fortran);
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
// The member's bytes: a view into `zip` when stored, else inflated into *buffer.
Bytes ZipMemberBytes(const Bytes& zip, const ZipEntry& entry, std::vector<uint8_t>* buffer);

class ZipWriter {
 public:
  explicit ZipWriter(AtomicFile* file) : file_(file) {}
  // Adds a member made of `pieces` concatenated; deflates it when `compress`.
  void Add(const std::string& name, const std::vector<std::string_view>& pieces, bool compress);
  // Writes the central directory (zip64 records when needed).
  void Finish();

 private:
  AtomicFile* file_;
  std::vector<ZipEntry> entries_;
};

// --- .npz ---
TensorData ReadNpzBytes(const Bytes& bytes, const ReadOptions& options);
std::vector<std::pair<std::string, Tensor>> ReadNpzMembersBytes(const Bytes& bytes);
void WriteNpz(const std::string& path, const TensorData& data, const WriteOptions& options);

// --- .mtx and .tns ---
TensorData ReadMtxBytes(const Bytes& bytes, const ReadOptions& options);
void WriteMtx(const std::string& path, const TensorData& data);
TensorData ReadTnsBytes(const Bytes& bytes, const ReadOptions& options);
void WriteTns(const std::string& path, const SparseTensor& st);

// The sparse tensor's indices and values on the CPU in C-contiguous layout.
SparseTensor HostContiguous(const SparseTensor& st);

}  // namespace tensorkit::io

#endif  // TENSORKIT_IO_FORMATS_H_
