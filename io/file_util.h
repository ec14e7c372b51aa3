// tensorkit/io/file_util.h: files for the readers and writers (internal to io/ and tools/).
//
// Glossary
//   MappedFile   a read-only memory map of a whole file (empty files map to nothing).
//   AtomicFile   writes "<dir>/.<name>.tmp.<pid>.<n>" and renames it over the target on
//                Commit(); destroyed without Commit() it removes the temporary file, so a
//                failed write never leaves a partial output and never touches the original.
//   fault hook   the environment variable TENSORKIT_IO_FAIL_AFTER_BYTES=N makes every
//                AtomicFile fail with Error(kIo) once N bytes are written (tests use it to
//                prove that an interrupted write leaves nothing behind).
//   Checked*     int64 arithmetic that throws Error(kCorrupt) naming the file on overflow.
#ifndef TENSORKIT_IO_FILE_UTIL_H_
#define TENSORKIT_IO_FILE_UTIL_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tensorkit/common/error.h"

namespace tensorkit::io {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

// A view of bytes with the name used in error messages (a path, or "a.npz:arr_0.npy").
struct Bytes {
  const uint8_t* data = nullptr;
  size_t size = 0;
  std::string name;
};

class MappedFile {
 public:
  // Maps `path`; throws Error(kIo) naming the path and the OS reason.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  Bytes bytes() const { return Bytes{data_, size_, path_}; }
  size_t size() const { return size_; }

 private:
  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// An open file for pread; throws Error(kIo) naming the path.
class InputFile {
 public:
  explicit InputFile(const std::string& path);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  int64_t size() const { return size_; }
  // Reads exactly n bytes at `offset` into dst; a short read throws Error(kCorrupt).
  void ReadAt(int64_t offset, void* dst, int64_t n) const;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  int64_t size_ = 0;
};

class AtomicFile {
 public:
  // Creates the temporary file beside `path`; throws Error(kIo) when it cannot.
  explicit AtomicFile(const std::string& path);
  ~AtomicFile();  // removes the temporary file unless committed
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void Write(const void* data, size_t n);
  void Write(std::string_view s) { Write(s.data(), s.size()); }
  int64_t position() const { return written_; }
  // Closes and renames the temporary file over the target.
  void Commit();

 private:
  std::string path_;
  std::string tmp_path_;
  int fd_ = -1;
  int64_t written_ = 0;
  int64_t fail_after_ = -1;  // fault hook, -1 when off
  bool committed_ = false;
};

// Whole file into memory (for small files and tests); throws Error(kIo).
std::vector<uint8_t> ReadWholeFile(const std::string& path);
bool FileExists(const std::string& path);

// Overflow-checked arithmetic on sizes read from files.
int64_t CheckedMul(int64_t a, int64_t b, const std::string& name, const char* what);
int64_t CheckedAdd(int64_t a, int64_t b, const std::string& name, const char* what);
// Product of dims (each >= 0), checked.
int64_t CheckedProduct(const std::vector<int64_t>& dims, const std::string& name);

// Reverses the bytes of each `width`-byte element of [data, data + n * width) (in parallel).
void SwapBytes(void* data, int64_t n, int width);

// True when this machine stores integers little-endian (every supported target does).
constexpr bool kLittleEndian = std::endian::native == std::endian::little;

}  // namespace tensorkit::io

#endif  // TENSORKIT_IO_FILE_UTIL_H_
