#include "tensorkit/io/file_util.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>

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

TEST(FormatTest, FromPath) {
  EXPECT_EQ(FormatFromPath("a/b.NPY"), Format::kNpy);
  EXPECT_EQ(FormatFromPath("x.tns"), Format::kTns);
  EXPECT_EQ(CatchError([] { FormatFromPath("dir.npy/file"); }).code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace tensorkit::io
