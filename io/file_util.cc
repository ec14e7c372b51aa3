#include "tensorkit/io/file_util.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>  // renameat2, RENAME_EXCHANGE
#include <cstdlib>
#include <cstring>

#include "tensorkit/common/parallel.h"

namespace tensorkit::io {
namespace {

std::string OsReason() { return std::strerror(errno); }

// Opens `path` read-only and returns (fd, size); throws Error(kIo).
std::pair<int, int64_t> OpenForRead(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  TK_CHECK(fd >= 0, kIo, "io: cannot open '", path, "' for reading: ", OsReason());
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    std::string why = S_ISDIR(st.st_mode) ? "it is a directory" : OsReason();
    ::close(fd);
    Throw(ErrorCode::kIo, "io: cannot read '", path, "': ", why);
  }
  return {fd, static_cast<int64_t>(st.st_size)};
}

// The fault hook: TENSORKIT_IO_FAIL_AFTER_BYTES, or -1.
int64_t FailAfterBytes() {
  const char* v = std::getenv("TENSORKIT_IO_FAIL_AFTER_BYTES");
  if (v == nullptr || *v == '\0') return -1;
  char* end = nullptr;
  long long n = std::strtoll(v, &end, 10);
  return (end != v && n >= 0) ? n : -1;
}

std::string DirOf(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string BaseOf(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

MappedFile::MappedFile(const std::string& path) : path_(path) {
  auto [fd, size] = OpenForRead(path);
  size_ = static_cast<size_t>(size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      std::string why = OsReason();
      ::close(fd);
      Throw(ErrorCode::kIo, "io: cannot map '", path, "': ", why);
    }
    ::madvise(p, size_, MADV_SEQUENTIAL | MADV_WILLNEED);
    data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
}

InputFile::InputFile(const std::string& path) : path_(path) {
  auto [fd, size] = OpenForRead(path);
  fd_ = fd;
  size_ = size;
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void InputFile::ReadAt(int64_t offset, void* dst, int64_t n) const {
  auto* out = static_cast<char*>(dst);
  while (n > 0) {
    // Large reads in pieces: Linux caps one read at about 2 GiB.
    size_t want = static_cast<size_t>(std::min<int64_t>(n, int64_t{1} << 30));
    ssize_t got = ::pread(fd_, out, want, offset);
    if (got < 0 && errno == EINTR) continue;
    TK_CHECK(got >= 0, kIo, "io: reading '", path_, "' at byte ", offset, " failed: ", OsReason());
    TK_CHECK(got > 0, kCorrupt, "io: '", path_, "' is truncated: expected ", n,
             " more bytes at byte ", offset);
    out += got;
    offset += got;
    n -= got;
  }
}

AtomicFile::AtomicFile(const std::string& path) : path_(path), fail_after_(FailAfterBytes()) {
  static std::atomic<uint64_t> counter{0};
  tmp_path_ = DirOf(path) + "/." + BaseOf(path) + ".tmp." + std::to_string(::getpid()) + "." +
              std::to_string(counter.fetch_add(1));
  fd_ = ::open(tmp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  TK_CHECK(fd_ >= 0, kIo, "io: cannot create '", path, "' (temporary file '", tmp_path_,
           "'): ", OsReason());
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(tmp_path_.c_str());
}

void AtomicFile::Write(const void* data, size_t n) {
  TK_CHECK(fd_ >= 0 && !committed_, kIo, "io: write to '", path_, "' after it was closed");
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    size_t want = std::min<size_t>(n, size_t{1} << 30);
    if (fail_after_ >= 0 && written_ + static_cast<int64_t>(want) > fail_after_) {
      Throw(ErrorCode::kIo, "io: writing '", path_, "' failed at byte ", fail_after_,
            " (injected by TENSORKIT_IO_FAIL_AFTER_BYTES)");
    }
    ssize_t got = ::write(fd_, p, want);
    if (got < 0 && errno == EINTR) continue;
    TK_CHECK(got > 0, kIo, "io: writing '", path_, "' failed at byte ", written_, ": ", OsReason());
    p += got;
    n -= static_cast<size_t>(got);
    written_ += got;
  }
}

void AtomicFile::Commit() {
  TK_CHECK(fd_ >= 0 && !committed_, kIo, "io: '", path_, "' committed twice");
  int rc = ::close(fd_);
  fd_ = -1;
  TK_CHECK(rc == 0, kIo, "io: closing '", path_, "' failed: ", OsReason());
  // Replacing an existing file: swap the two names atomically, then delete the old data. A
  // plain rename over an existing file makes ext4 (auto_da_alloc) flush the new file to disk
  // before returning, which costs several times the write itself; the exchange does not, and a
  // reader still sees either the complete old file or the complete new one.
  struct stat st;
  if (::lstat(path_.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
      ::renameat2(AT_FDCWD, tmp_path_.c_str(), AT_FDCWD, path_.c_str(), RENAME_EXCHANGE) == 0) {
    committed_ = true;
    ::unlink(tmp_path_.c_str());  // now the old file
    return;
  }
  TK_CHECK(::rename(tmp_path_.c_str(), path_.c_str()) == 0, kIo, "io: cannot rename '", tmp_path_,
           "' to '", path_, "': ", OsReason());
  committed_ = true;
}

std::vector<uint8_t> ReadWholeFile(const std::string& path) {
  InputFile f(path);
  std::vector<uint8_t> out(static_cast<size_t>(f.size()));
  f.ReadAt(0, out.data(), f.size());
  return out;
}

bool FileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

int64_t CheckedMul(int64_t a, int64_t b, const std::string& name, const char* what) {
  int64_t r = 0;
  TK_CHECK(!__builtin_mul_overflow(a, b, &r), kCorrupt, "io: '", name, "': ", what, " (", a, " x ",
           b, ") overflows int64");
  return r;
}

int64_t CheckedAdd(int64_t a, int64_t b, const std::string& name, const char* what) {
  int64_t r = 0;
  TK_CHECK(!__builtin_add_overflow(a, b, &r), kCorrupt, "io: '", name, "': ", what, " (", a, " + ",
           b, ") overflows int64");
  return r;
}

int64_t CheckedProduct(const std::vector<int64_t>& dims, const std::string& name) {
  int64_t n = 1;
  for (int64_t d : dims) {
    TK_CHECK(d >= 0, kCorrupt, "io: '", name, "': negative dim ", d, " in shape ",
             ShapeString(dims));
    n = CheckedMul(n, d, name, "the element count of the shape");
  }
  return n;
}

void SwapBytes(void* data, int64_t n, int width) {
  if (width <= 1 || n <= 0) return;
  auto* base = static_cast<uint8_t*>(data);
  ParallelFor(0, n, GrainFor(width), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) std::reverse(base + i * width, base + (i + 1) * width);
  });
}

}  // namespace tensorkit::io
