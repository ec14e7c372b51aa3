// tensorkit/common/file_util.h: files for the readers and writers (internal to io/, features/
// and tools/). Its names live in namespace tensorkit::io, where the file layer began; it sits in
// common/ so that features/ (vocabulary files) uses it without depending on io/.
//
// Glossary
//   MappedFile   a read-only memory map of a whole file (empty files map to nothing).
//   AtomicFile   writes an unnamed file in the target's folder (O_TMPFILE) and links it in
//                place of the target on Commit(), so an interrupted process (even SIGKILL)
//                leaves nothing behind. Where the filesystem has no O_TMPFILE it writes
//                "<dir>/.<name>.tmp.<pid>.<n>" instead and renames it over the target; such a
//                temporary is removed when the write fails, on SIGINT/SIGTERM once
//                RemoveTemporariesOnSignal() ran, and by RemoveStaleTemporaries() after a
//                SIGKILL. A replaced file keeps its permission bits.
//   fault hooks  environment variables for tests: TENSORKIT_IO_FAIL_AFTER_BYTES=N makes every
//                AtomicFile fail with Error(kIo) once N bytes are written;
//                TENSORKIT_IO_STALL_AFTER_BYTES=N makes it print "stalled" on stderr and wait
//                for a signal there; TENSORKIT_IO_NO_TMPFILE=1 forces the named temporary.
//   excerpt      what a message quotes of a file's bytes: at most a few dozen characters, with
//                control and non-ASCII bytes escaped (\n, \x00), and the full length when cut.
//   Checked*     int64 arithmetic that throws Error(kCorrupt) naming the file on overflow.
#ifndef TENSORKIT_COMMON_FILE_UTIL_H_
#define TENSORKIT_COMMON_FILE_UTIL_H_

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
  // Mappings of at least this size are unmapped by a thread of their own when destroyed (below
  // it, or when no thread can be started, in the destructor).
  static constexpr size_t kBackgroundUnmapBytes = size_t{64} << 20;

  // Maps `path`; throws Error(kIo) naming the path and the OS reason.
  explicit MappedFile(const std::string& path);
  // Unmaps the file: at once, or for large mappings soon after, off the caller's thread.
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  Bytes bytes() const { return Bytes{data_, size_, path_}; }
  size_t size() const { return size_; }
  // Gives back the pages holding bytes [begin, end): a streaming reader calls it on what it has
  // parsed, so a file larger than memory does not pile up in the process's resident set. The
  // pages stay in the page cache, and any later read maps them again (so a page shared with
  // bytes still being read costs one more fault, nothing else).
  void Release(size_t begin, size_t end) const;

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
  // Creates the temporary file in `path`'s folder; throws Error(kIo) when it cannot.
  explicit AtomicFile(const std::string& path);
  ~AtomicFile();  // removes the temporary file unless committed
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void Write(const void* data, size_t n);
  void Write(std::string_view s) { Write(s.data(), s.size()); }
  int64_t position() const { return written_; }
  // Leaves the next n bytes for WriteAt (the file grows to cover them): writers that know a
  // part's size before its content lay the file out first and fill it in parallel.
  void Reserve(int64_t n);
  // Writes n bytes at `offset`, below position(); safe from several threads at once (pwrite).
  void WriteAt(int64_t offset, const void* data, size_t n);
  // Gives the data the target's name (replacing it atomically), then closes the file.
  void Commit();

 private:
  // Creates tmp_path_ (registered for removal on a signal) and returns its descriptor.
  int CreateNamed();
  // Links the unnamed file at tmp_path_ (or straight at path_ when that is free).
  bool LinkUnnamed();

  std::string path_;
  std::string tmp_path_;
  int fd_ = -1;
  bool unnamed_ = false;  // O_TMPFILE: nothing visible until Commit
  int slot_ = -1;         // signal-cleanup slot of tmp_path_, -1 when none
  int64_t written_ = 0;
  int64_t fail_after_ = -1;   // fault hook, -1 when off
  int64_t stall_after_ = -1;  // fault hook, -1 when off
  bool committed_ = false;
};

// Installs SIGINT/SIGTERM handlers (once) that remove the named temporaries of unfinished
// AtomicFiles and then let the signal end the process as it would have. For programs (the
// tool), not for libraries embedding tensorkit.
void RemoveTemporariesOnSignal();
// Removes the temporaries ".<name>.tmp.<pid>.<n>" of `paths` left by processes that no longer
// run (a SIGKILL during a write); returns how many were removed. Lists each folder once.
int RemoveStaleTemporaries(const std::vector<std::string>& paths);

// At most `max` characters of `bytes` for an error message: printable ASCII as it is,
// other bytes escaped, and "... (N bytes)" when cut.
std::string Excerpt(std::string_view bytes, size_t max = 40);

// The code point of the UTF-8 sequence at s[*i], moving *i past it; -1 (and *i unchanged) when
// the bytes there are not valid UTF-8 (overlong forms and surrogates included).
int64_t NextUtf8(std::string_view s, size_t* i);

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

#endif  // TENSORKIT_COMMON_FILE_UTIL_H_
