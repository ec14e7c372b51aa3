// Helpers shared by the io tests: temporary folders and raw file bytes.
#ifndef TENSORKIT_TESTS_IO_IO_TEST_UTIL_H_
#define TENSORKIT_TESTS_IO_IO_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tensorkit/common/error.h"

// Expects `text` to contain `part`.
#define EXPECT_HAS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << "in: " << (text)

namespace tensorkit::io::testing {

// A fresh folder under the system temp dir, removed at destruction.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "tk_io_test.XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }
  // Names of the files in the folder (hidden ones included).
  std::vector<std::string> List() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(path_)) {
      out.push_back(e.path().filename().string());
    }
    return out;
  }

 private:
  std::string path_;
};

inline void WriteText(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}

inline std::string ReadText(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// zlib's own compressor with TensorFlow's window bits: gzip (31) or zlib (15) wrapper.
inline std::string ZlibCompress(const std::string& s, int window_bits) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, 6, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&zs, s.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(s.data()));
  zs.avail_in = static_cast<uInt>(s.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

// Runs `fn` and returns the Error it throws; fails the test when it throws nothing.
template <typename Fn>
Error CatchError(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "expected tensorkit::Error";
  return Error(ErrorCode::kInternal, "no error");
}

}  // namespace tensorkit::io::testing

#endif  // TENSORKIT_TESTS_IO_IO_TEST_UTIL_H_
