// Every checked-in fuzz seed and crash regression (tests/fuzz/corpus/<format>/*) must read
// cleanly or fail with tensorkit::Error: never a crash, never another exception.
#include <gtest/gtest.h>

#include <filesystem>

#include "io/io_test_util.h"
#include "tensorkit/io/file_util.h"
#include "tensorkit/io/io.h"

namespace tensorkit::io {
namespace {

TEST(FuzzCorpusTest, EveryFileReadsOrThrowsError) {
  const std::filesystem::path root =
      std::filesystem::path(TENSORKIT_SOURCE_DIR) / "tests" / "fuzz" / "corpus";
  int files = 0, ok = 0;
  for (const char* fmt : {"npy", "npz", "mtx", "tns"}) {
    const std::filesystem::path dir = root / fmt;
    if (!std::filesystem::exists(dir)) continue;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      std::vector<uint8_t> bytes = ReadWholeFile(entry.path().string());
      ++files;
      try {
        ReadFromMemory(bytes.data(), bytes.size(), FormatFromPath(std::string("x.") + fmt),
                       entry.path().string());
        ++ok;
      } catch (const Error&) {
      } catch (const std::exception& e) {
        ADD_FAILURE() << entry.path() << " threw a non-tensorkit exception: " << e.what();
      }
    }
  }
  EXPECT_GT(files, 8);  // the corpus is checked in
  EXPECT_GT(ok, 4);     // and holds valid seeds too
}

}  // namespace
}  // namespace tensorkit::io
