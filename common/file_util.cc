#include "tensorkit/common/file_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>  // renameat2, RENAME_EXCHANGE
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <system_error>
#include <thread>

#include "tensorkit/common/parallel.h"

namespace tensorkit::io {
namespace {

std::string OsReason() { return std::strerror(errno); }

// What `mode` is, for refusing anything but a regular file.
const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Opens `path` read-only and returns (fd, size); throws Error(kIo). O_NONBLOCK keeps the open of
// a FIFO from waiting for a writer; anything but a regular file is then refused at once.
std::pair<int, int64_t> OpenForRead(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  TK_CHECK(fd >= 0, kIo, "io: cannot open '", path, "' for reading: ", OsReason());
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    std::string why = OsReason();
    ::close(fd);
    Throw(ErrorCode::kIo, "io: cannot read '", path, "': ", why);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    Throw(ErrorCode::kIo, "io: cannot read '", path, "': it is ", KindOf(st.st_mode),
          "; tensorkit reads regular files only");
  }
  return {fd, static_cast<int64_t>(st.st_size)};
}

// A fault hook: the non-negative integer in environment variable `name`, or -1.
int64_t HookBytes(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return -1;
  char* end = nullptr;
  long long n = std::strtoll(v, &end, 10);
  return (end != v && n >= 0) ? n : -1;
}

// Named temporaries to remove on SIGINT/SIGTERM. Fixed slots of fixed size, so that the handler
// touches no allocator; a slot is claimed (1), filled, then published (2).
constexpr int kSlots = 256;
struct TempSlot {
  std::atomic<int> state{0};
  char path[4096];
};
TempSlot g_slots[kSlots];

int Register(const std::string& path) {
  if (path.size() >= sizeof(g_slots[0].path)) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (g_slots[i].state.compare_exchange_strong(expected, 1)) {
      std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
      g_slots[i].state.store(2);
      return i;
    }
  }
  return -1;  // more files in flight than slots: only --resume's sweep can catch these
}

void Unregister(int* slot) {
  if (*slot >= 0) g_slots[*slot].state.store(0);
  *slot = -1;
}

void OnSignal(int sig) {
  for (TempSlot& s : g_slots) {
    if (s.state.load() == 2) ::unlink(s.path);
  }
  std::signal(sig, SIG_DFL);
  std::raise(sig);
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
    // Read-ahead of the whole file; readers go through it in parallel chunks, so not
    // MADV_SEQUENTIAL (advice values are not flags: they cannot be or-ed together).
    ::madvise(p, size_, MADV_WILLNEED);
    data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);
}

void MappedFile::Release(size_t begin, size_t end) const {
  // A fault maps more than its page: the aligned fault-around window (64 KiB by default), or a
  // whole large folio of the page cache (up to 2 MiB). So reading [begin, end) may have mapped
  // the aligned 2 MiB blocks holding its ends, which go too (bytes of them still to be read are
  // faulted in again).
  const size_t window = std::max<size_t>(static_cast<size_t>(::sysconf(_SC_PAGESIZE)), 2 << 20);
  const size_t b = begin / window * window;
  const size_t e = std::min((std::min(end, size_) + window - 1) / window * window, size_);
  // Advice only: a failure leaves the pages mapped, which costs memory, not correctness.
  if (data_ != nullptr && b < e) ::madvise(const_cast<uint8_t*>(data_) + b, e - b, MADV_DONTNEED);
}

MappedFile::~MappedFile() {
  if (data_ == nullptr) return;
  void* p = const_cast<uint8_t*>(data_);
  // Unmapping tears down one page-table entry per 4 KiB page read: 10-15 ms for a 335 MB file
  // read whole, on one core, after the parallel parse (a tenth of a .mtx read). A large mapping
  // is given to a short-lived thread instead, so the reader returns without waiting; nothing
  // reads the pages after this, and they stay in the page cache either way.
  if (size_ >= kBackgroundUnmapBytes) {
    try {
      std::thread([p, n = size_] { ::munmap(p, n); }).detach();
      return;
    } catch (const std::system_error&) {
      // No thread to be had: unmap here.
    }
  }
  ::munmap(p, size_);
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

AtomicFile::AtomicFile(const std::string& path)
    : path_(path),
      fail_after_(HookBytes("TENSORKIT_IO_FAIL_AFTER_BYTES")),
      stall_after_(HookBytes("TENSORKIT_IO_STALL_AFTER_BYTES")) {
  static std::atomic<uint64_t> counter{0};
  tmp_path_ = DirOf(path) + "/." + BaseOf(path) + ".tmp." + std::to_string(::getpid()) + "." +
              std::to_string(counter.fetch_add(1));
  // Linking an unnamed file needs /proc/self/fd (AT_EMPTY_PATH needs a capability).
  if (HookBytes("TENSORKIT_IO_NO_TMPFILE") != 1 && ::access("/proc/self/fd", X_OK) == 0) {
    fd_ = ::open(DirOf(path).c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
    unnamed_ = fd_ >= 0;
    // A missing folder fails the same way below; other errors mean no O_TMPFILE here.
  }
  if (fd_ < 0) fd_ = CreateNamed();
}

int AtomicFile::CreateNamed() {
  slot_ = Register(tmp_path_);
  int fd = ::open(tmp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    std::string why = OsReason();
    Unregister(&slot_);
    Throw(ErrorCode::kIo, "io: cannot create '", path_, "' (temporary file '", tmp_path_,
          "'): ", why);
  }
  return fd;
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !unnamed_) ::unlink(tmp_path_.c_str());
  Unregister(&slot_);
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
    if (stall_after_ >= 0 && written_ + static_cast<int64_t>(want) > stall_after_) {
      std::fprintf(stderr, "io: stalled writing '%s' (TENSORKIT_IO_STALL_AFTER_BYTES)\n",
                   path_.c_str());
      std::fflush(stderr);
      for (;;) ::pause();
    }
    ssize_t got = ::write(fd_, p, want);
    if (got < 0 && errno == EINTR) continue;
    TK_CHECK(got > 0, kIo, "io: writing '", path_, "' failed at byte ", written_, ": ", OsReason());
    p += got;
    n -= static_cast<size_t>(got);
    written_ += got;
  }
}

void AtomicFile::Reserve(int64_t n) {
  TK_CHECK(fd_ >= 0 && !committed_, kIo, "io: write to '", path_, "' after it was closed");
  TK_CHECK(n >= 0 && written_ <= INT64_MAX - n, kInvalidArgument, "io: reserving ", n,
           " bytes at byte ", written_, " of '", path_, "' overflows a file offset");
  // The size is set now, so that a full disk fails here rather than half-way through the fill.
  // fallocate, not posix_fallocate: where the filesystem cannot, the latter writes every block.
  int rc = 0;
  if (n > 0) {
    do {
      rc = ::fallocate(fd_, 0, written_, n) == 0 ? 0 : errno;
    } while (rc == EINTR);
    if (rc == EOPNOTSUPP || rc == ENOSYS) rc = ::ftruncate(fd_, written_ + n) == 0 ? 0 : errno;
  }
  TK_CHECK(rc == 0, kIo, "io: reserving ", n, " bytes at byte ", written_, " of '", path_,
           "' failed: ", std::strerror(rc));
  TK_CHECK(::lseek(fd_, written_ + n, SEEK_SET) == written_ + n, kIo, "io: seeking in '", path_,
           "' failed: ", OsReason());
  written_ += n;
}

void AtomicFile::WriteAt(int64_t offset, const void* data, size_t n) {
  TK_CHECK(fd_ >= 0 && !committed_, kIo, "io: write to '", path_, "' after it was closed");
  TK_CHECK(offset >= 0 && offset <= written_ && static_cast<int64_t>(n) <= written_ - offset,
           kInvalidArgument, "io: WriteAt of ", n, " bytes at byte ", offset, " of '", path_,
           "' is past its reserved ", written_, " bytes");
  if (fail_after_ >= 0 && offset + static_cast<int64_t>(n) > fail_after_) {
    Throw(ErrorCode::kIo, "io: writing '", path_, "' failed at byte ", fail_after_,
          " (injected by TENSORKIT_IO_FAIL_AFTER_BYTES)");
  }
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const size_t want = std::min<size_t>(n, size_t{1} << 30);
    const ssize_t got = ::pwrite(fd_, p, want, offset);
    if (got < 0 && errno == EINTR) continue;
    TK_CHECK(got > 0, kIo, "io: writing '", path_, "' failed at byte ", offset, ": ", OsReason());
    p += got;
    n -= static_cast<size_t>(got);
    offset += got;
  }
}

bool AtomicFile::LinkUnnamed() {
  const std::string proc = "/proc/self/fd/" + std::to_string(fd_);
  if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, path_.c_str(), AT_SYMLINK_FOLLOW) == 0) {
    return true;  // the target did not exist: the data has its name, nothing else to do
  }
  TK_CHECK(errno == EEXIST, kIo, "io: cannot create '", path_, "': ", OsReason());
  // Replacing: give the data a temporary name, then swap it in as a named temporary would be.
  slot_ = Register(tmp_path_);
  if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, tmp_path_.c_str(), AT_SYMLINK_FOLLOW) != 0) {
    std::string why = OsReason();
    Unregister(&slot_);
    Throw(ErrorCode::kIo, "io: cannot create '", path_, "' (temporary file '", tmp_path_,
          "'): ", why);
  }
  unnamed_ = false;  // from here on tmp_path_ exists and the destructor must remove it
  return false;
}

void AtomicFile::Commit() {
  TK_CHECK(fd_ >= 0 && !committed_, kIo, "io: '", path_, "' committed twice");
  // A replaced file keeps its permission bits (a new one gets 0666 less the umask).
  struct stat st;
  const bool replacing = ::stat(path_.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  if (replacing) ::fchmod(fd_, st.st_mode & 07777);
  if (unnamed_ && LinkUnnamed()) {
    committed_ = true;
    TK_CHECK(::close(fd_) == 0, kIo, "io: closing '", path_, "' failed: ", OsReason());
    fd_ = -1;
    return;
  }
  int rc = ::close(fd_);
  fd_ = -1;
  TK_CHECK(rc == 0, kIo, "io: closing '", path_, "' failed: ", OsReason());
  // Replacing an existing file: swap the two names atomically, then delete the old data. A
  // plain rename over an existing file makes ext4 (auto_da_alloc) flush the new file to disk
  // before returning, which costs several times the write itself; the exchange does not, and a
  // reader still sees either the complete old file or the complete new one.
  if (::lstat(path_.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
      ::renameat2(AT_FDCWD, tmp_path_.c_str(), AT_FDCWD, path_.c_str(), RENAME_EXCHANGE) == 0) {
    committed_ = true;
    ::unlink(tmp_path_.c_str());  // now the old file
    Unregister(&slot_);
    return;
  }
  TK_CHECK(::rename(tmp_path_.c_str(), path_.c_str()) == 0, kIo, "io: cannot rename '", tmp_path_,
           "' to '", path_, "': ", OsReason());
  committed_ = true;
  Unregister(&slot_);
}

void RemoveTemporariesOnSignal() {
  static std::atomic<bool> installed{false};
  if (installed.exchange(true)) return;
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM}) ::sigaction(sig, &sa, nullptr);
}

int RemoveStaleTemporaries(const std::vector<std::string>& paths) {
  std::map<std::string, std::set<std::string>> names;  // folder -> output names in it
  for (const std::string& p : paths) names[DirOf(p)].insert(BaseOf(p));
  int removed = 0;
  for (const auto& [dir, bases] : names) {
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) continue;
    while (const dirent* e = ::readdir(d)) {
      // ".<name>.tmp.<pid>.<n>" of one of `paths`, by a pid that no longer runs (a live writer,
      // such as a second batch into the same folder, keeps its file).
      const std::string name = e->d_name;
      const size_t tmp = name.rfind(".tmp.");
      if (name.size() < 2 || name[0] != '.' || tmp == std::string::npos || tmp < 1) continue;
      if (bases.count(name.substr(1, tmp - 1)) == 0) continue;
      const std::string rest = name.substr(tmp + 5);
      const size_t dot = rest.find('.');
      if (dot == 0 || dot == std::string::npos ||
          rest.find_first_not_of("0123456789.") != std::string::npos) {
        continue;
      }
      const long pid = std::strtol(rest.c_str(), nullptr, 10);
      if (pid <= 0 || pid == ::getpid() || ::kill(static_cast<pid_t>(pid), 0) == 0 ||
          errno != ESRCH) {
        continue;
      }
      removed += ::unlink((dir + "/" + name).c_str()) == 0;
    }
    ::closedir(d);
  }
  return removed;
}

std::string Excerpt(std::string_view bytes, size_t max) {
  std::string out;
  size_t i = 0;
  for (; i < bytes.size() && out.size() < max; ++i) {
    const unsigned char c = static_cast<unsigned char>(bytes[i]);
    if (c == '\\' || c == '\'') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c >= 0x7f) {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (i < bytes.size()) out += "... (" + std::to_string(bytes.size()) + " bytes)";
  return out;
}

int64_t NextUtf8(std::string_view s, size_t* i) {
  const auto b = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  const uint8_t c = b(*i);
  const size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
  if (len == 0 || *i + len > s.size()) return -1;
  uint32_t v = len == 1 ? c : c & (0x7f >> len);
  for (size_t k = 1; k < len; ++k) {
    if ((b(*i + k) & 0xc0) != 0x80) return -1;
    v = (v << 6) | (b(*i + k) & 0x3f);
  }
  static const uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};  // shortest form only
  if (v < kMin[len] || v > 0x10ffff || (v >= 0xd800 && v < 0xe000)) return -1;
  *i += len;
  return v;
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
