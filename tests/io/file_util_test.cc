#include "tensorkit/common/file_util.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <string>
#include <thread>

#include "io/io_test_util.h"
#include "tensorkit/io/io.h"

namespace tensorkit::io {
namespace {

using testing::CatchError;
using testing::ReadText;
using testing::TempDir;
using testing::WriteText;

TEST(AtomicFileTest, CommitRenamesAndLeavesNoTemporary) {
  TempDir dir;
  {
    AtomicFile f(dir / "out.txt");
    f.Write("hello");
    EXPECT_FALSE(FileExists(dir / "out.txt"));  // nothing visible before Commit
    f.Commit();
  }
  EXPECT_EQ(ReadText(dir / "out.txt"), "hello");
  EXPECT_EQ(dir.List(), std::vector<std::string>{"out.txt"});
}

TEST(AtomicFileTest, CommitReplacesAnExistingFile) {
  TempDir dir;
  WriteText(dir / "out.txt", "old contents");
  {
    AtomicFile f(dir / "out.txt");
    f.Write("new");
    EXPECT_EQ(ReadText(dir / "out.txt"), "old contents");
    f.Commit();
  }
  EXPECT_EQ(ReadText(dir / "out.txt"), "new");
  EXPECT_EQ(dir.List(), std::vector<std::string>{"out.txt"});
}

TEST(AtomicFileTest, AbandonedWriteRemovesTemporaryAndKeepsOriginal) {
  TempDir dir;
  WriteText(dir / "out.txt", "original");
  {
    AtomicFile f(dir / "out.txt");
    f.Write("partial");
  }
  EXPECT_EQ(ReadText(dir / "out.txt"), "original");
  EXPECT_EQ(dir.List(), std::vector<std::string>{"out.txt"});
}

TEST(AtomicFileTest, InjectedFailureLeavesNothingBehind) {
  TempDir dir;
  WriteText(dir / "a.npy", "original");
  ::setenv("TENSORKIT_IO_FAIL_AFTER_BYTES", "100", 1);
  Error e = CatchError([&] { Write(dir / "a.npy", Tensor::Zeros({1000}, DType::kFloat32)); });
  Error e2 = CatchError([&] { Write(dir / "b.mtx", Tensor::Zeros({50, 50}, DType::kFloat64)); });
  ::unsetenv("TENSORKIT_IO_FAIL_AFTER_BYTES");
  EXPECT_EQ(e.code(), ErrorCode::kIo);
  EXPECT_HAS(e.what(), "a.npy");
  EXPECT_EQ(e2.code(), ErrorCode::kIo);
  EXPECT_EQ(ReadText(dir / "a.npy"), "original");
  EXPECT_EQ(dir.List(), std::vector<std::string>{"a.npy"});
}

TEST(AtomicFileTest, MissingFolderIsAnIoError) {
  TempDir dir;
  Error e =
      CatchError([&] { Write(dir / "no/such/dir/x.npy", Tensor::Zeros({2}, DType::kInt32)); });
  EXPECT_EQ(e.code(), ErrorCode::kIo);
  EXPECT_HAS(e.what(), "no/such/dir/x.npy");
}

TEST(InputFileTest, MissingFileAndDirectoryAreIoErrors) {
  TempDir dir;
  Error e = CatchError([&] { Read(dir / "missing.npy"); });
  EXPECT_EQ(e.code(), ErrorCode::kIo);
  EXPECT_HAS(e.what(), "missing.npy");
  ::mkdir((dir / "d.mtx").c_str(), 0755);
  EXPECT_EQ(CatchError([&] { Read(dir / "d.mtx"); }).code(), ErrorCode::kIo);
}

// Reads `path` on another thread; a read that blocks (a FIFO opened for reading waits for a
// writer) fails the test, and opening the writer end then releases it.
Error ReadRefusedPromptly(const std::string& path) {
  auto result = std::async(std::launch::async, [&] { return CatchError([&] { Read(path); }); });
  if (result.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    ADD_FAILURE() << "reading " << path << " blocked";
    int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK);
    if (fd >= 0) ::close(fd);
  }
  return result.get();
}

TEST(InputFileTest, FifoIsRefusedWithoutBlocking) {
  TempDir dir;
  for (const char* name : {"f.npy", "f.mtx", "f.npz", "f.tns"}) {
    ASSERT_EQ(::mkfifo((dir / name).c_str(), 0600), 0);
    Error e = ReadRefusedPromptly(dir / name);
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_HAS(e.what(), name);
    EXPECT_HAS(e.what(), "FIFO");
  }
}

TEST(InputFileTest, CharacterDeviceIsRefusedWithTheReason) {
  TempDir dir;
  ASSERT_EQ(::symlink("/dev/zero", (dir / "z.npy").c_str()), 0);
  Error e = CatchError([&] { Read(dir / "z.npy"); });
  EXPECT_EQ(e.code(), ErrorCode::kIo);
  EXPECT_HAS(e.what(), "character device");
  EXPECT_EQ(std::string(e.what()).find("Success"), std::string::npos) << e.what();
}

TEST(AtomicFileTest, ReplacedFileKeepsItsMode) {
  TempDir dir;
  for (const char* hook : {"0", "1"}) {  // unnamed temporary, then the named fallback
    ::setenv("TENSORKIT_IO_NO_TMPFILE", hook, 1);
    const std::string path = dir / (std::string("m") + hook + ".npy");
    WriteText(path, "old");
    ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
    Write(path, Tensor::Zeros({3}, DType::kInt32));
    struct stat st;
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0600u) << "hook " << hook;
    EXPECT_EQ(Read(path).dense.Dims(), std::vector<int64_t>{3});
  }
  ::unsetenv("TENSORKIT_IO_NO_TMPFILE");
  EXPECT_EQ(dir.List().size(), 2u);
}

TEST(AtomicFileTest, NothingIsVisibleBeforeCommit) {
  TempDir dir;
  WriteText(dir / "old.txt", "x");
  for (const std::string& name : {std::string("new.txt"), std::string("old.txt")}) {
    const std::vector<std::string> before = dir.List();
    AtomicFile f(dir / name);
    f.Write("data");
    EXPECT_EQ(dir.List(), before) << name;  // no temporary, no new name
    f.Commit();
  }
  std::vector<std::string> names = dir.List();
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"new.txt", "old.txt"}));
  EXPECT_EQ(ReadText(dir / "old.txt"), "data");
}

TEST(AtomicFileTest, NamedFallbackCommitsAndCleansUp) {
  TempDir dir;
  ::setenv("TENSORKIT_IO_NO_TMPFILE", "1", 1);
  {
    AtomicFile f(dir / "a.txt");
    f.Write("abc");
    EXPECT_EQ(dir.List().size(), 1u);  // the hidden temporary
    EXPECT_EQ(dir.List()[0].rfind(".a.txt.tmp.", 0), 0u) << dir.List()[0];
    f.Commit();
  }
  { AtomicFile abandoned(dir / "b.txt"); }
  ::unsetenv("TENSORKIT_IO_NO_TMPFILE");
  EXPECT_EQ(dir.List(), std::vector<std::string>{"a.txt"});
  EXPECT_EQ(ReadText(dir / "a.txt"), "abc");
}

TEST(AtomicFileTest, StaleTemporariesOfDeadProcessesAreRemoved) {
  TempDir dir;
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);  // a pid that no longer runs
  const std::string dead = std::to_string(child);
  WriteText(dir / (".a.npy.tmp." + dead + ".0"), "partial");
  WriteText(dir / (".b.npy.tmp." + dead + ".3"), "partial");
  WriteText(dir / (".a.npy.tmp." + std::to_string(::getpid()) + ".1"), "live writer");
  WriteText(dir / ".a.npy.tmp.1.2", "pid 1 runs");
  WriteText(dir / (".c.npy.tmp." + dead + ".0"), "not an output of this call");
  WriteText(dir / "a.npy", "complete");
  EXPECT_EQ(RemoveStaleTemporaries({dir / "a.npy", dir / "b.npy"}), 2);
  std::vector<std::string> names = dir.List();
  std::sort(names.begin(), names.end());
  std::vector<std::string> kept = {".a.npy.tmp." + std::to_string(::getpid()) + ".1",
                                   ".a.npy.tmp.1.2", ".c.npy.tmp." + dead + ".0", "a.npy"};
  std::sort(kept.begin(), kept.end());
  EXPECT_EQ(names, kept);
}

// Whether address p lies in a mapping of `path` listed in /proc/self/maps.
bool MapsFile(const void* p, const std::string& path) {
  std::ifstream maps("/proc/self/maps");
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  std::string line;
  while (std::getline(maps, line)) {
    unsigned long lo = 0, hi = 0;  // NOLINT(runtime/int): sscanf's %lx
    if (std::sscanf(line.c_str(), "%lx-%lx", &lo, &hi) == 2 && a >= lo && a < hi) {
      return line.size() >= path.size() &&
             line.compare(line.size() - path.size(), path.size(), path) == 0;
    }
  }
  return false;
}

TEST(MappedFileTest, SmallAndLargeMappingsAreGoneAfterTheFileIsDestroyed) {
  TempDir dir;
  for (size_t size : {size_t{1} << 20, MappedFile::kBackgroundUnmapBytes + 4096}) {
    const std::string path = dir / ("sparse" + std::to_string(size));
    const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(size)), 0);  // a hole: reads as zeros
    ::close(fd);
    const uint8_t* data = nullptr;
    {
      const MappedFile file(path);
      data = file.bytes().data;
      ASSERT_EQ(file.size(), size);
      EXPECT_EQ(data[0] + data[size - 1], 0);
      EXPECT_TRUE(MapsFile(data, path));
    }
    if (size < MappedFile::kBackgroundUnmapBytes) {
      EXPECT_FALSE(MapsFile(data, path)) << "a small mapping is unmapped by the destructor";
      continue;
    }
    // A large one is unmapped by a thread of its own, soon after.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (MapsFile(data, path) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_FALSE(MapsFile(data, path)) << "the mapping of " << size << " bytes is still there";
  }
}

TEST(ExcerptTest, ShortEscapedAndCut) {
  EXPECT_EQ(Excerpt("abc"), "abc");
  EXPECT_EQ(Excerpt(std::string("1\v1\0x\n", 6)), "1\\x0b1\\x00x\\n");
  EXPECT_EQ(Excerpt("\xff'"), "\\xff\\'");
  const std::string huge(1000000, '7');
  const std::string e = Excerpt(huge);
  EXPECT_LT(e.size(), 80u);
  EXPECT_HAS(e, "(1000000 bytes)");
}

TEST(Utf8Test, DecodesValidAndRefusesMalformed) {
  const std::string s = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";
  size_t i = 0;
  std::vector<int64_t> codes;
  while (i < s.size()) codes.push_back(NextUtf8(s, &i));
  EXPECT_EQ(codes, (std::vector<int64_t>{'a', 0xe9, 0x20ac, 0x1f600}));
  for (const char* bad : {"\xff", "\xc3", "\xc0\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80"}) {
    size_t j = 0;
    EXPECT_EQ(NextUtf8(bad, &j), -1) << Excerpt(bad);
    EXPECT_EQ(j, 0u);
  }
}

TEST(CheckedTest, OverflowIsCorrupt) {
  EXPECT_EQ(CheckedProduct({3, 4, 5}, "f"), 60);
  EXPECT_EQ(CatchError([] {
              CheckedProduct({int64_t{1} << 40, int64_t{1} << 40}, "f");
            }).code(),
            ErrorCode::kCorrupt);
  EXPECT_EQ(CatchError([] { CheckedAdd(INT64_MAX, 1, "f", "x"); }).code(), ErrorCode::kCorrupt);
}

TEST(SwapBytesTest, ReversesEachElement) {
  std::vector<uint32_t> v = {0x01020304u, 0xa0b0c0d0u};
  SwapBytes(v.data(), 2, 4);
  EXPECT_EQ(v[0], 0x04030201u);
  EXPECT_EQ(v[1], 0xd0c0b0a0u);
}

TEST(FormatTest, OneTableNamesEveryFormat) {
  for (size_t i = 0; i < std::size(kFileFormats); ++i) {
    const FormatInfo& f = kFileFormats[i];
    EXPECT_EQ(static_cast<size_t>(f.format), i);
    EXPECT_STREQ(FormatName(f.format), f.extension);
    EXPECT_EQ(FormatFromExtension(f.extension), f.format);
    EXPECT_EQ(FormatFromPath(std::string("a.") + f.extension), f.format);
    EXPECT_EQ(FormatHoldsDense(f.format), f.dense);
    EXPECT_EQ(FormatHoldsSparse(f.format), f.sparse);
  }
  EXPECT_EQ(FormatFromExtension("MTX"), Format::kMtx);
  EXPECT_EQ(FormatFromExtension("csv"), std::nullopt);
  EXPECT_EQ(FormatFromExtension(""), std::nullopt);
  EXPECT_EQ(FormatList(".", ", ", " or "), ".npy, .npz, .mtx, .tns or .svm");
  EXPECT_EQ(FormatFromExtension("LibSVM"), Format::kLibsvm);
  EXPECT_EQ(FormatFromPath("a.svmlight"), Format::kLibsvm);
  EXPECT_EQ(FormatList("", ", ", ", "), "npy, npz, mtx, tns, svm");
}

TEST(FormatTest, FromPath) {
  EXPECT_EQ(FormatFromPath("a/b.NPY"), Format::kNpy);
  EXPECT_EQ(FormatFromPath("x.tns"), Format::kTns);
  EXPECT_EQ(CatchError([] { FormatFromPath("dir.npy/file"); }).code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace tensorkit::io
