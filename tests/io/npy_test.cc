#include <gtest/gtest.h>

#include <cstring>

#include "io/io_test_util.h"
#include "tensorkit/dense/views.h"
#include "tensorkit/io/formats.h"
#include "tensorkit/io/io.h"

namespace tensorkit::io {
namespace {

using testing::CatchError;
using testing::TempDir;
using testing::WriteText;

// A .npy file image: version-1 header around `dict`, then `data`.
std::string NpyImage(const std::string& dict, const std::string& data, int version = 1) {
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(version);
  out += '\0';
  std::string padded = dict + "\n";
  if (version == 1) {
    out += static_cast<char>(padded.size() & 0xff);
    out += static_cast<char>(padded.size() >> 8);
  } else {
    for (int b = 0; b < 4; ++b) out += static_cast<char>((padded.size() >> (8 * b)) & 0xff);
  }
  return out + padded + data;
}

Tensor ReadImage(const std::string& image) {
  return ReadFromMemory(image.data(), image.size(), Format::kNpy, "mem.npy").dense;
}

// Values 0, 1, 2, ... (mod a small range) of type T for `n` elements.
template <typename T>
std::vector<T> Ramp(int64_t n) {
  std::vector<T> v;
  for (int64_t i = 0; i < n; ++i) {
    const int x = static_cast<int>((i * 7) % 23) - 5;
    if constexpr (std::is_same_v<T, bool>) {
      v.push_back(i % 3 == 1);
    } else if constexpr (std::is_integral_v<T>) {
      v.push_back(static_cast<T>(x));  // from int: well defined (wraps) for uint8
    } else {
      v.push_back(static_cast<T>(static_cast<float>(x)));
    }
  }
  return v;
}

TEST(NpyTest, RoundTripEveryNumericDType) {
  TempDir dir;
  constexpr DTypeSet kNpyTypes = kNumericDTypes & ~Bit(DType::kBFloat16);
  for (int d = 0; d < kNumDTypes; ++d) {
    const DType dtype = static_cast<DType>(d);
    if ((kNpyTypes & Bit(dtype)) == 0) continue;
    for (const std::vector<int64_t>& dims :
         std::vector<std::vector<int64_t>>{{}, {5}, {0, 3}, {2, 3, 4}}) {
      Dispatch<kNpyTypes>(dtype, "test", [&]<typename T>() {
        int64_t n = 1;
        for (int64_t x : dims) n *= x;
        Tensor t = Tensor::FromVector(Ramp<T>(n), dims);
        const std::string path = dir / "t.npy";
        Write(path, t);
        Tensor r = Read(path).dense;
        EXPECT_EQ(r.dtype(), dtype);
        EXPECT_EQ(r.Dims(), dims);
        EXPECT_EQ(r.ToVector<T>(), t.ToVector<T>()) << DTypeName(dtype);
      });
    }
  }
}

TEST(NpyTest, HeaderIsAlignedAndNumPyShaped) {
  Tensor t = Tensor::FromVector<float>({1, 2, 3});
  std::string h = NpyHeaderFor(t, false);
  EXPECT_EQ(h.size() % 64, 0u);
  EXPECT_EQ(h.back(), '\n');
  EXPECT_HAS(h, "'descr': '<f4', 'fortran_order': False, 'shape': (3,), }");
}

TEST(NpyTest, FortranOrderIsAViewAndWritesBackAsFortran) {
  // A transposed C-order tensor is Fortran-contiguous: written without a copy as fortran_order.
  Tensor c = Tensor::FromVector<int32_t>({0, 1, 2, 3, 4, 5}, {2, 3});
  Tensor f = Transpose(c, 0, 1);  // dims [3 2]
  TempDir dir;
  Write(dir / "f.npy", f);
  EXPECT_HAS(testing::ReadText(dir / "f.npy"), "'fortran_order': True");
  Tensor r = Read(dir / "f.npy").dense;
  EXPECT_EQ(r.Dims(), (std::vector<int64_t>{3, 2}));
  EXPECT_FALSE(r.IsContiguous());
  EXPECT_EQ(r.ToVector<int32_t>(), (std::vector<int32_t>{0, 3, 1, 4, 2, 5}));
}

TEST(NpyTest, FortranFileWithUnitAxes) {
  std::string data;
  for (int32_t v : {1, 2, 3, 4, 5, 6}) data.append(reinterpret_cast<char*>(&v), 4);
  Tensor r =
      ReadImage(NpyImage("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 1, 3), }", data));
  // Column-major: element (i, 0, k) is data[i + 2 * k].
  EXPECT_EQ(r.ToVector<int32_t>(), (std::vector<int32_t>{1, 3, 5, 2, 4, 6}));
}

TEST(NpyTest, BigEndianIsSwapped) {
  std::string data;
  for (uint32_t v : {1u, 256u, 0x01020304u}) {
    for (int b = 3; b >= 0; --b) data += static_cast<char>((v >> (8 * b)) & 0xff);
  }
  Tensor r = ReadImage(NpyImage("{'descr': '>i4', 'fortran_order': False, 'shape': (3,), }", data));
  EXPECT_EQ(r.ToVector<int32_t>(), (std::vector<int32_t>{1, 256, 0x01020304}));
  std::string d8(8, '\0');
  d8[0] = 0x3f;
  d8[1] = static_cast<char>(0xf0);  // 1.0 big-endian
  EXPECT_EQ(ReadImage(NpyImage("{'descr': '>f8', 'fortran_order': False, 'shape': (), }", d8))
                .ToVector<double>(),
            std::vector<double>{1.0});
}

TEST(NpyTest, Versions2And3AndPython2Longs) {
  std::string data(8, '\0');
  data[0] = 7;
  for (int v : {2, 3}) {
    Tensor r =
        ReadImage(NpyImage("{'descr': '<i8', 'fortran_order': False, 'shape': (1L,), }", data, v));
    EXPECT_EQ(r.ToVector<int64_t>(), std::vector<int64_t>{7});
  }
}

TEST(NpyTest, BoolBytesAreNormalised) {
  Tensor r = ReadImage(NpyImage("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
                                std::string("\0\2\1", 3)));
  EXPECT_EQ(r.ToVector<bool>(), (std::vector<bool>{false, true, true}));
}

TEST(NpyTest, MalformedHeadersAreCorruptOrUnsupported) {
  const std::string ok_dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  const std::string data(8, '\0');
  struct Case {
    std::string image;
    ErrorCode code;
    const char* part;
  };
  std::vector<Case> cases = {
      {"", ErrorCode::kCorrupt, "truncated"},
      {"NUMPY\x01\x00\x10\x00", ErrorCode::kCorrupt, "truncated"},
      {"xNUMPY\x01\x00\x10\x00" + ok_dict, ErrorCode::kCorrupt, "magic"},
      {NpyImage(ok_dict, data, 9), ErrorCode::kUnsupported, "version"},
      {NpyImage(ok_dict, data).substr(0, 30), ErrorCode::kCorrupt, "header claims"},
      {NpyImage(ok_dict, "abc"), ErrorCode::kCorrupt, "truncated"},
      {NpyImage("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", data),
       ErrorCode::kUnsupported, "<c8"},
      {NpyImage("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", data),
       ErrorCode::kUnsupported, "structured"},
      {NpyImage("{'descr': '<f4', 'shape': (2,), }", data), ErrorCode::kCorrupt, "keys"},
      {NpyImage("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }", data),
       ErrorCode::kCorrupt, "True or False"},
      {NpyImage("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", data),
       ErrorCode::kCorrupt, "dim"},
      {NpyImage("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }",
                data),
       ErrorCode::kCorrupt, "overflows"},
      {NpyImage("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }",
                data),
       ErrorCode::kCorrupt, "overflows"},
      {NpyImage("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 4, 5, 6, 7, 8, 9, 1), }",
                data),
       ErrorCode::kUnsupported, "axes"},
      {NpyImage("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", data),
       ErrorCode::kCorrupt, "unknown key"},
      {NpyImage("{'descr': '<f4', 'fortran_order': False, 'shape': (2,", data), ErrorCode::kCorrupt,
       "bad header"},
  };
  for (const Case& c : cases) {
    Error e = CatchError([&] { ReadImage(c.image); });
    EXPECT_EQ(e.code(), c.code) << e.what();
    EXPECT_HAS(e.what(), c.part);
    EXPECT_HAS(e.what(), "mem.npy");
  }
}

TEST(NpyTest, LyingShapeInAFileFailsBeforeAllocating) {
  // A 2^40-element claim in a 100-byte file: the size check runs before any allocation.
  TempDir dir;
  WriteText(dir / "lie.npy",
            NpyImage("{'descr': '<f8', 'fortran_order': False, 'shape': (1099511627776,), }",
                     std::string(16, '\0')));
  Error e = CatchError([&] { Read(dir / "lie.npy"); });
  EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
  EXPECT_HAS(e.what(), "truncated");
  EXPECT_HAS(e.what(), "lie.npy");
}

TEST(NpyTest, UnsupportedDTypeOnWrite) {
  TempDir dir;
  Tensor t = Tensor::Zeros({2}, DType::kBFloat16);
  EXPECT_EQ(CatchError([&] { Write(dir / "b.npy", t); }).code(), ErrorCode::kUnsupported);
  EXPECT_TRUE(dir.List().empty());
}

TEST(NpyTest, ByteAndUnicodeStringsReadAsStrings) {
  Tensor b = ReadImage(NpyImage("{'descr': '|S3', 'fortran_order': False, 'shape': (2,), }",
                                std::string("ab\0c\0d", 6)));
  EXPECT_EQ(b.dtype(), DType::kString);
  EXPECT_EQ(b.Dims(), std::vector<int64_t>{2});
  // NumPy drops trailing NULs only.
  EXPECT_EQ(b.ToVector<std::string>(), (std::vector<std::string>{"ab", std::string("c\0d", 3)}));
  // '<U2': UTF-32 code units; "é€" and "a".
  std::string le("\xe9\0\0\0\xac\x20\0\0a\0\0\0\0\0\0\0", 16);
  Tensor u = ReadImage(NpyImage("{'descr': '<U2', 'fortran_order': False, 'shape': (2, 1), }", le));
  EXPECT_EQ(u.dtype(), DType::kString);
  EXPECT_EQ(u.Dims(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(u.ToVector<std::string>(), (std::vector<std::string>{"\xc3\xa9\xe2\x82\xac", "a"}));
  std::string be("\0\0\0\x41\0\0\0\x42", 8);
  Tensor ub = ReadImage(NpyImage("{'descr': '>U1', 'fortran_order': True, 'shape': (2,), }", be));
  EXPECT_EQ(ub.ToVector<std::string>(), (std::vector<std::string>{"A", "B"}));
  Error bad = CatchError([&] {
    ReadImage(NpyImage("{'descr': '<U1', 'fortran_order': False, 'shape': (1,), }",
                       std::string("\0\xd8\0\0", 4)));  // a lone surrogate
  });
  EXPECT_EQ(bad.code(), ErrorCode::kCorrupt);
  EXPECT_HAS(bad.what(), "0xD800");
}

TEST(NpyTest, StringsWriteAsUnicodeAndReadBack) {
  TempDir dir;
  Tensor t = Tensor::FromVector<std::string>({"", "coo", "\xc3\xa9t\xc3\xa9", "x"}, {2, 2});
  Write(dir / "s.npy", t);
  Tensor r = Read(dir / "s.npy").dense;
  EXPECT_EQ(r.dtype(), DType::kString);
  EXPECT_EQ(r.Dims(), t.Dims());
  EXPECT_EQ(r.ToVector<std::string>(), t.ToVector<std::string>());
  EXPECT_HAS(testing::ReadText(dir / "s.npy"), "'descr': '<U3'");
  Tensor bad = Tensor::FromVector<std::string>({"\xff"});
  EXPECT_EQ(CatchError([&] { Write(dir / "bad.npy", bad); }).code(), ErrorCode::kUnsupported);
  EXPECT_FALSE(FileExists(dir / "bad.npy"));
}

TEST(NpyTest, StridedViewIsWrittenInCOrder) {
  Tensor t = Tensor::FromVector<double>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {3, 4});
  Tensor v = Slice(t, 1, 3, 0, -2);  // columns 3 and 1
  TempDir dir;
  Write(dir / "v.npy", v);
  EXPECT_EQ(Read(dir / "v.npy").dense.ToVector<double>(), v.ToVector<double>());
}

}  // namespace
}  // namespace tensorkit::io
