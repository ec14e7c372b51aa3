#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <random>

#include "io/io_test_util.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/io/formats.h"
#include "tensorkit/io/io.h"
#include "test_util.h"

namespace tensorkit::io {
namespace {

using testing::CatchError;
using testing::ReadText;
using testing::TempDir;
using testing::WriteText;

SparseTensor SmallSparse() {
  Tensor idx = Tensor::FromVector<int64_t>({0, 1, 2, 0, 1, 3}, {3, 2});
  Tensor val = Tensor::FromVector<float>({1.5f, -2.0f, 3.25f});
  return SparseTensor::Create(idx, val, {3, 4});
}

// An archive of `members` (name -> npy bytes of a tensor), stored or deflated.
std::string Archive(const TempDir& dir, const std::vector<std::pair<std::string, Tensor>>& members,
                    bool compress) {
  const std::string path = dir / "built.npz";
  {
    AtomicFile f(path);
    ZipWriter zip(&f);
    for (const auto& [name, t] : members) {
      std::string header = NpyHeaderFor(t, false);
      std::string_view data(static_cast<const char*>(t.raw_data()),
                            t.NumElements() * DTypeSize(t.dtype()));
      zip.Add(name, {header, data}, compress);
    }
    zip.Finish();
    f.Commit();
  }
  return path;
}

TEST(NpzTest, DenseRoundTripStoredAndCompressed) {
  TempDir dir;
  Tensor t = Tensor::FromVector<int16_t>({1, -2, 3, -4, 5, -6}, {2, 3});
  for (bool compress : {false, true}) {
    WriteOptions wo;
    wo.compress = compress;
    TensorData d;
    d.dense = t;
    Write(dir / "d.npz", d, wo);
    TensorData r = Read(dir / "d.npz");
    ASSERT_FALSE(r.is_sparse());
    EXPECT_EQ(r.dense.Dims(), t.Dims());
    EXPECT_EQ(r.dense.ToVector<int16_t>(), t.ToVector<int16_t>());
    auto members = ReadNpzMembers(dir / "d.npz");
    ASSERT_EQ(members.size(), 1u);
    EXPECT_EQ(members[0].first, "arr_0");
  }
}

TEST(NpzTest, SparseRoundTripAsScipyCoo) {
  TempDir dir;
  SparseTensor st = SmallSparse();
  for (bool compress : {false, true}) {
    TensorData d;
    d.sparse = st;
    WriteOptions wo;
    wo.compress = compress;
    Write(dir / "s.npz", d, wo);
    TensorData r = Read(dir / "s.npz");
    ASSERT_TRUE(r.is_sparse());
    EXPECT_EQ(r.sparse.shape(), st.shape());
    EXPECT_EQ(r.sparse.indices().ToVector<int64_t>(), st.indices().ToVector<int64_t>());
    EXPECT_EQ(r.sparse.values().ToVector<float>(), st.values().ToVector<float>());
    auto names = ReadNpzMembers(dir / "s.npz");
    ASSERT_EQ(names.size(), 5u);
    EXPECT_EQ(names[0].first, "format");
    EXPECT_EQ(names[0].second.dtype(), DType::kString);  // NumPy bytes (|S3) read as a string
    EXPECT_EQ(names[0].second.ToVector<std::string>(), std::vector<std::string>{"coo"});
    EXPECT_EQ(names[1].second.ToVector<int64_t>(), (std::vector<int64_t>{3, 4}));
  }
}

TEST(NpzTest, MembersAndChosenMember) {
  TempDir dir;
  Tensor a = Tensor::FromVector<float>({1, 2});
  Tensor b = Tensor::FromVector<int64_t>({7, 8, 9}, {3, 1});
  for (bool compress : {false, true}) {
    std::string path = Archive(dir, {{"a.npy", a}, {"b.npy", b}}, compress);
    auto members = ReadNpzMembers(path);
    ASSERT_EQ(members.size(), 2u);
    EXPECT_EQ(members[1].first, "b");
    EXPECT_EQ(members[1].second.ToVector<int64_t>(), b.ToVector<int64_t>());
    ReadOptions ro;
    ro.member = "b";
    EXPECT_EQ(Read(path, ro).dense.Dims(), (std::vector<int64_t>{3, 1}));
    EXPECT_EQ(Read(path).dense.ToVector<float>(), a.ToVector<float>());
    ro.member = "zzz";
    Error e = CatchError([&] { Read(path, ro); });
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
    EXPECT_HAS(e.what(), "no member 'zzz'");
  }
}

TEST(NpzTest, CsrAndCscMembers) {
  TempDir dir;
  // The 2x3 matrix [[0 5 0] [7 0 9]] as CSR and CSC.
  struct Layout {
    std::string format;
    std::vector<int32_t> indptr, indices;
    std::vector<double> data;
  };
  for (const Layout& l : {Layout{"csr", {0, 1, 3}, {1, 0, 2}, {5, 7, 9}},
                          Layout{"csc", {0, 1, 2, 3}, {1, 0, 1}, {7, 5, 9}}}) {
    const std::string path = dir / (l.format + ".npz");
    {
      AtomicFile f(path);
      ZipWriter zip(&f);
      std::string fh = NpyByteStringHeader(3);
      zip.Add("format.npy", {fh, l.format}, true);
      std::vector<std::pair<std::string, Tensor>> arrays = {
          {"shape.npy", Tensor::FromVector<int64_t>({2, 3})},
          {"indptr.npy", Tensor::FromVector(l.indptr)},
          {"indices.npy", Tensor::FromVector(l.indices)},
          {"data.npy", Tensor::FromVector(l.data)}};
      std::vector<std::string> headers;
      for (auto& [name, t] : arrays) {
        headers.push_back(NpyHeaderFor(t, false));
        zip.Add(name,
                {headers.back(), std::string_view(static_cast<const char*>(t.raw_data()),
                                                  t.NumElements() * DTypeSize(t.dtype()))},
                true);
      }
      zip.Finish();
      f.Commit();
    }
    TensorData r = Read(path);
    ASSERT_TRUE(r.is_sparse()) << l.format;
    EXPECT_EQ(r.sparse.ToDense().ToVector<double>(), (std::vector<double>{0, 5, 0, 7, 0, 9}));
  }
}

TEST(NpzTest, CorruptArchivesAreErrors) {
  TempDir dir;
  Tensor t = Tensor::FromVector<double>(std::vector<double>(64, 1.0));
  const std::string good = ReadText(Archive(dir, {{"x.npy", t}}, false));
  const std::string good_z = ReadText(Archive(dir, {{"x.npy", t}}, true));
  auto read = [&](const std::string& bytes) {
    return ReadFromMemory(bytes.data(), bytes.size(), Format::kNpz, "bad.npz");
  };
  std::vector<std::pair<std::string, const char*>> cases;
  cases.push_back({"", "not a zip"});
  cases.push_back({good.substr(0, good.size() - 30), "central"});
  cases.push_back({good.substr(good.size() - 60), "past the end"});
  std::string flipped = good;
  flipped[200] ^= 0x40;  // inside the member data
  cases.push_back({flipped, "CRC"});
  std::string bad_z = good_z;
  bad_z[50] ^= 0x55;
  cases.push_back({bad_z, "bad.npz"});
  std::string lying = good_z;
  // Claim a 2 GiB member in the central directory: refused by the deflate ratio check.
  size_t cd = lying.rfind(std::string("PK\x01\x02", 4));
  lying[cd + 24] = lying[cd + 25] = lying[cd + 26] = 0;
  lying[cd + 27] = 0x7f;
  cases.push_back({lying, "more than deflate can produce"});
  for (const auto& c : cases) {
    const std::string& bytes = c.first;
    const char* part = c.second;
    Error e = CatchError([&] { read(bytes); });
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt) << e.what();
    EXPECT_HAS(e.what(), part);
  }
}

// Other ranks than 2 go out as scipy n-D coo arrays (coords [rank, nnz]) and read back; a
// rank-0 sparse tensor has no scipy form.
TEST(NpzTest, SparseOfOtherRanksRoundTripsThroughCoords) {
  TempDir dir;
  for (std::vector<int64_t> shape : std::vector<std::vector<int64_t>>{{2, 3, 4}, {9}}) {
    const int rank = static_cast<int>(shape.size());
    std::vector<int64_t> idx =
        rank == 3 ? std::vector<int64_t>{1, 2, 3, 0, 1, 0, 1, 0, 2} : std::vector<int64_t>{7, 2, 5};
    const int64_t nnz = static_cast<int64_t>(idx.size()) / rank;
    SparseTensor st = SparseTensor::Create(Tensor::FromVector(idx, {nnz, rank}),
                                           Tensor::FromVector<float>({1.5f, -2, 3}), shape);
    const std::string path = dir / ("r" + std::to_string(rank) + ".npz");
    Write(path, st);
    TensorData back = Read(path);
    ASSERT_TRUE(back.is_sparse());
    EXPECT_EQ(back.sparse.shape(), shape);
    EXPECT_EQ(back.sparse.indices().ToVector<int64_t>(), idx);
    EXPECT_EQ(back.sparse.values().ToVector<float>(), (std::vector<float>{1.5f, -2, 3}));
    std::vector<std::string> names;
    for (const auto& [name, t] : ReadNpzMembers(path)) names.push_back(name);
    std::sort(names.begin(), names.end());
    EXPECT_EQ(names, (std::vector<std::string>{"_is_array", "coords", "data", "format", "shape"}));
  }
  SparseTensor scalar = SparseTensor::Create(Tensor::Zeros({1, 0}, DType::kInt64),
                                             Tensor::FromVector<float>({1}), {});
  EXPECT_EQ(CatchError([&] { Write(dir / "x.npz", scalar); }).code(), ErrorCode::kUnsupported);
  EXPECT_FALSE(std::filesystem::exists(dir / "x.npz"));
}

// Entries already sorted in the file give a known order; unsorted ones leave it unknown.
TEST(NpzTest, ReadFindsTheOrderOfSortedEntries) {
  TempDir dir;
  auto round_trip = [&](const std::string& name, std::vector<int64_t> idx) {
    const int64_t nnz = static_cast<int64_t>(idx.size()) / 2;
    Write(dir / name,
          SparseTensor::Create(Tensor::FromVector(idx, {nnz, 2}),
                               Tensor::FromVector(std::vector<double>(nnz, 1.0)), {3, 3}));
    return Read(dir / name).sparse;
  };
  EXPECT_EQ(round_trip("rows.npz", {0, 1, 0, 2, 2, 0}).order(), (std::vector<int>{0, 1}));
  EXPECT_EQ(round_trip("cols.npz", {1, 0, 0, 1, 2, 1}).order(), (std::vector<int>{1, 0}));
  EXPECT_FALSE(round_trip("mixed.npz", {1, 1, 0, 2, 2, 0}).OrderKnown());
}

}  // namespace
}  // namespace tensorkit::io

namespace tensorkit::io {
namespace {

// A scipy.sparse-style archive: format member plus integer/value members.
std::string ScipyArchive(const TempDir& dir, const std::string& format,
                         const std::vector<std::pair<std::string, Tensor>>& members) {
  const std::string path = dir / (format + "_lie.npz");
  AtomicFile f(path);
  ZipWriter zip(&f);
  std::string fh = NpyByteStringHeader(format.size());
  zip.Add("format.npy", {fh, format}, false);
  std::vector<std::string> headers;
  headers.reserve(members.size());
  for (const auto& [name, t] : members) {
    headers.push_back(NpyHeaderFor(t, false));
    zip.Add(name + ".npy",
            {headers.back(), std::string_view(static_cast<const char*>(t.raw_data()),
                                              t.NumElements() * DTypeSize(t.dtype()))},
            false);
  }
  zip.Finish();
  f.Commit();
  return path;
}

// Resident memory from /proc/self/status: "VmRSS" (now) or "VmHWM" (the peak since the last
// ResetPeakMemory), in bytes; -1 when unknown.
int64_t MemoryBytes(const std::string& key) {
  std::string status = ReadText("/proc/self/status");
  size_t at = status.find(key + ":");
  if (at == std::string::npos) return -1;
  return std::strtoll(status.c_str() + at + key.size() + 1, nullptr, 10) * 1024;
}

bool ResetPeakMemory() {
  FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (f == nullptr) return false;
  const bool ok = std::fputs("5", f) >= 0;
  return std::fclose(f) == 0 && ok;
}

// How much the peak resident memory rises above today's while fn runs; -1 when it cannot be
// told (no /proc, or a sanitizer whose shadow memory follows every allocation).
template <typename Fn>
int64_t PeakGrowth(Fn&& fn) {
#if defined(__SANITIZE_ADDRESS__)
  constexpr bool kMeasurable = false;
#else
  constexpr bool kMeasurable = true;
#endif
  const int64_t before = MemoryBytes("VmRSS");
  if (!kMeasurable || !ResetPeakMemory() || before < 0) {
    fn();
    return -1;
  }
  fn();
  return MemoryBytes("VmHWM") - before;
}

// Bytes that deflate cannot shrink, from a fixed generator.
Tensor NoiseBytes(int64_t n) {
  Tensor t = Tensor::Empty({n}, DType::kUInt8);
  uint64_t x = 0x9e3779b97f4a7c15ull;
  uint8_t* p = t.data<uint8_t>();
  for (int64_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    p[i] = static_cast<uint8_t>(x);
  }
  return t;
}

// Overwrites the uncompressed size of the only member in its central directory entry.
void ClaimSize(std::string* zip, uint32_t size) {
  const size_t cd = zip->rfind(std::string("PK\x01\x02", 4));
  for (int b = 0; b < 4; ++b) (*zip)[cd + 24 + b] = static_cast<char>((size >> (8 * b)) & 0xff);
}

// A member that claims about 1000 times its compressed size costs only what it inflates to,
// whether the npy header inside matches the claim or not.
TEST(NpzTest, LyingDeflatedSizeCostsNoMemory) {
  TempDir dir;
  constexpr int64_t kData = 1 << 20;
  const Tensor noise = NoiseBytes(kData);
  // The npy header of the member claims 1000 times the data as well.
  const Tensor claimed = Tensor::Empty({1000 * kData}, DType::kUInt8);  // never touched
  const std::string big_header = NpyHeaderFor(claimed, false);
  std::string honest_header_zip = ReadText(Archive(dir, {{"x.npy", noise}}, true));
  std::string big_header_zip;
  {
    AtomicFile f(dir / "big.npz");
    ZipWriter zip(&f);
    zip.Add("x.npy",
            {big_header, std::string_view(static_cast<const char*>(noise.raw_data()), kData)},
            true);
    zip.Finish();
    f.Commit();
    big_header_zip = ReadText(dir / "big.npz");
  }
  for (std::string* bytes : {&honest_header_zip, &big_header_zip}) {
    const std::string header = bytes == &big_header_zip ? big_header : NpyHeaderFor(noise, false);
    ClaimSize(bytes, static_cast<uint32_t>(header.size() + 1000 * kData));
    Error e(ErrorCode::kInternal, "not run");
    const int64_t growth = PeakGrowth([&] {
      e = CatchError(
          [&] { ReadFromMemory(bytes->data(), bytes->size(), Format::kNpz, "lie.npz"); });
    });
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt) << e.what();
    EXPECT_HAS(e.what(), "lie.npz:x.npy");
    EXPECT_HAS(e.what(), "corrupt or");
    if (growth >= 0) {
      EXPECT_LT(growth, 40 * kData) << "the claim was " << 1000 * kData << " bytes";
    }
  }
}

// A genuine member inflates straight into the tensor: the peak is the tensor, not twice it.
TEST(NpzTest, DeflatedMemberInflatesIntoTheTensor) {
  TempDir dir;
  constexpr int64_t kBytes = int64_t{64} << 20;
  Tensor zeros = Tensor::Zeros({kBytes / 8}, DType::kFloat64);
  const std::string zip = ReadText(Archive(dir, {{"z.npy", zeros}}, true));
  zeros = Tensor();
  EXPECT_LT(zip.size(), static_cast<size_t>(kBytes / 500));
  Tensor t;
  const int64_t growth =
      PeakGrowth([&] { t = ReadFromMemory(zip.data(), zip.size(), Format::kNpz, "z.npz").dense; });
  ASSERT_EQ(t.NumElements(), kBytes / 8);
  EXPECT_EQ(t.ToVector<double>()[12345], 0.0);
  if (growth >= 0) {
    EXPECT_LT(growth, kBytes + kBytes / 4);
  }
}

// SciPy on Python 3 wrote 'format' as a unicode string (<U3) for a while.
TEST(NpzTest, UnicodeFormatMemberIsRead) {
  TempDir dir;
  const std::string path = dir / "u.npz";
  {
    AtomicFile f(path);
    ZipWriter zip(&f);
    std::vector<NpyImage> images(5);
    const std::vector<std::pair<std::string, Tensor>> members = {
        {"format.npy", Tensor::FromVector<std::string>({"csc"}, {})},
        {"shape.npy", Tensor::FromVector<int64_t>({2, 3})},
        {"indptr.npy", Tensor::FromVector<int32_t>({0, 1, 1, 2})},
        {"indices.npy", Tensor::FromVector<int32_t>({1, 0})},
        {"data.npy", Tensor::FromVector<double>({5, 7})}};
    for (size_t i = 0; i < members.size(); ++i) {
      MakeNpyImage(members[i].second, &images[i]);
      zip.Add(members[i].first, {images[i].header, images[i].data}, i % 2 == 1);
    }
    zip.Finish();
    f.Commit();
  }
  EXPECT_HAS(ReadText(path), "'<U3'");
  TensorData d = Read(path);
  ASSERT_TRUE(d.is_sparse());
  EXPECT_EQ(d.sparse.ToDense().ToVector<double>(), (std::vector<double>{0, 0, 7, 5, 0, 0}));
}

// Members that contradict each other or the shape are Errors naming the file and the entry.
TEST(NpzTest, ScipyMembersThatLieAreErrors) {
  TempDir dir;
  const Tensor shape = Tensor::FromVector<int64_t>({2, 3});
  const Tensor data = Tensor::FromVector<double>({1, 2, 3});
  struct Case {
    std::string format;
    std::vector<std::pair<std::string, Tensor>> members;
    std::string part;
  };
  const std::vector<Case> cases = {
      {"csr",
       {{"shape", shape},
        {"indptr", Tensor::FromVector<int32_t>({0, 1, 3})},
        {"indices", Tensor::FromVector<int32_t>({1, 0, 3})},
        {"data", data}},
       "index 3 on axis 1 of entry 2 is out of range [0, 3)"},
      {"csr",
       {{"shape", shape},
        {"indptr", Tensor::FromVector<int64_t>({0, 2, 1, 3})},
        {"indices", Tensor::FromVector<int32_t>({1, 0, 2})},
        {"data", data}},
       "indptr (4 entries"},
      // int32 pointers near 2^31 (scipy writes int32 below 2^31 entries): checked in int64.
      {"csr",
       {{"shape", shape},
        {"indptr", Tensor::FromVector<int32_t>({0, 1, 2147483647})},
        {"indices", Tensor::FromVector<int32_t>({1, 0, 2})},
        {"data", data}},
       "from 0 to 2147483647) does not fit shape [2 3] with 3 values"},
      {"csr",
       {{"shape", shape},
        {"indptr", Tensor::FromVector<int32_t>({0, 2147483647, 3})},
        {"indices", Tensor::FromVector<int32_t>({1, 0, 2})},
        {"data", data}},
       "indptr decreases at 1 (2147483647 then 3)"},
      {"csr",
       {{"shape", shape},
        {"indptr", Tensor::FromVector<int32_t>({0, -2147483647 - 1, 3})},
        {"indices", Tensor::FromVector<int32_t>({1, 0, 2})},
        {"data", data}},
       "indptr decreases at 0 (0 then -2147483648)"},
      {"csc",
       {{"shape", shape},
        {"indptr", Tensor::FromVector<int32_t>({0, 2, 1, 3})},
        {"indices", Tensor::FromVector<int32_t>({1, 0, 1})},
        {"data", data}},
       "indptr decreases at 1"},
      {"coo",
       {{"shape", shape},
        {"row", Tensor::FromVector<int32_t>({0, -1, 1})},
        {"col", Tensor::FromVector<int32_t>({0, 1, 2})},
        {"data", data}},
       "index -1 on axis 0 of entry 1"},
      {"coo",
       {{"shape", shape},
        {"row", Tensor::FromVector<int32_t>({0, 1})},
        {"col", Tensor::FromVector<int32_t>({0, 1, 2})},
        {"data", data}},
       "member 'row' has dims [2], expected [3]"},
      {"coo",
       {{"shape", Tensor::FromVector<int64_t>({2, 3, 4})},
        {"coords", Tensor::FromVector<int64_t>({0, 1, 1, 0, 2, 2}, {2, 3})},
        {"data", data}},
       "member 'coords' has dims [2 3], expected [3 3]"},
      {"coo",
       {{"shape", Tensor::FromVector<int64_t>({2, 3, 4})},
        {"row", Tensor::FromVector<int32_t>({0, 1, 1})},
        {"col", Tensor::FromVector<int32_t>({0, 1, 2})},
        {"data", data}},
       "needs a coords member"},
  };
  {  // a 'format' member holding a number
    const std::string path = dir / "num_format.npz";
    AtomicFile f(path);
    ZipWriter zip(&f);
    NpyImage image;
    for (const auto& [name, t] : std::vector<std::pair<std::string, Tensor>>{
             {"format.npy", Tensor::FromVector<int32_t>({7})},
             {"shape.npy", shape},
             {"data.npy", data}}) {
      MakeNpyImage(t, &image);
      zip.Add(name, {image.header, image.data}, false);
    }
    zip.Finish();
    f.Commit();
    Error e = CatchError([&] { Read(path); });
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt) << e.what();
    EXPECT_HAS(e.what(), "member 'format' should hold one string (such as 'csr'), but holds int32");
  }
  for (const Case& c : cases) {
    const std::string path = ScipyArchive(dir, c.format, c.members);
    Error e = CatchError([&] { Read(path); });
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt) << e.what();
    EXPECT_HAS(e.what(), c.part);
    EXPECT_HAS(e.what(), path);
  }
}

// A sparse tensor of `shape` holding the given entries (flattened [nnz, rank]), float64 values.
SparseTensor Entries(const std::vector<int64_t>& shape, const std::vector<int64_t>& idx) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  const int64_t nnz = static_cast<int64_t>(idx.size()) / rank;
  std::vector<double> vals(static_cast<size_t>(nnz));
  for (int64_t i = 0; i < nnz; ++i) vals[static_cast<size_t>(i)] = 0.5 * static_cast<double>(i);
  return SparseTensor::Create(Tensor::FromVector(idx, {nnz, rank}), Tensor::FromVector(vals),
                              shape);
}

// The dtype of each member the writer wrote, by name.
std::map<std::string, DType> MemberDTypes(const std::string& path) {
  std::map<std::string, DType> out;
  for (const auto& [name, t] : ReadNpzMembers(path)) out[name] = t.dtype();
  return out;
}

TEST(NpzTest, IndexMembersTakeTheDTypeScipyGivesThem) {
  TempDir dir;
  constexpr int64_t k32 = std::numeric_limits<int32_t>::max();
  constexpr int64_t k40 = int64_t{1} << 40;
  struct Case {
    std::vector<int64_t> shape;
    std::vector<int64_t> idx;
    std::string member;  // the index member
    DType want;
  };
  const std::vector<Case> cases = {
      {{3, 4}, {0, 1, 2, 3}, "row", DType::kInt32},
      {{k32, 5}, {k32 - 1, 4, 0, 0}, "col", DType::kInt32},  // every dim fits int32
      {{k32 + 1, 5}, {k32, 4, 0, 0}, "row", DType::kInt64},
      {{5, k32 + 1}, {4, k32}, "col", DType::kInt64},
      // A hypersparse 2^40 x 2^40 matrix: its volume overflows int64, which a sparse file never
      // needs (scipy reads and writes it).
      {{k40, k40}, {k40 - 1, 0, 3, k40 - 2, 7, 7}, "row", DType::kInt64},
      {{10}, {9, 0, 4}, "coords", DType::kInt32},  // a 1-D coo_array
      {{k32 + 1}, {k32}, "coords", DType::kInt64},
      {{2, 3, 4}, {1, 2, 3, 0, 0, 0}, "coords", DType::kInt64},  // n-D coo: SciPy keeps int64
      {{0, 7}, {}, "row", DType::kInt32},
  };
  for (const Case& c : cases) {
    for (bool compress : {false, true}) {
      SCOPED_TRACE(ShapeString(c.shape) + (compress ? " deflated" : " stored"));
      const SparseTensor st = Entries(c.shape, c.idx);
      TensorData d;
      d.sparse = st;
      WriteOptions wo;
      wo.compress = compress;
      const std::string path = dir / "w.npz";
      Write(path, d, wo);
      const std::map<std::string, DType> dtypes = MemberDTypes(path);
      ASSERT_EQ(dtypes.count(c.member), 1u);
      EXPECT_EQ(dtypes.at(c.member), c.want);
      if (c.member == "row") {
        EXPECT_EQ(dtypes.at("col"), c.want);
      }
      EXPECT_EQ(dtypes.at("shape"), DType::kInt64);
      const TensorData back = Read(path);
      EXPECT_EQ(back.sparse.shape(), c.shape);
      EXPECT_EQ(back.sparse.indices().ToVector<int64_t>(), c.idx);
      EXPECT_EQ(back.sparse.values().ToVector<double>(), st.values().ToVector<double>());
    }
  }
}

TEST(NpzTest, SparseValuesOfEveryNumericDTypeRoundTrip) {
  TempDir dir;
  const Tensor idx = Tensor::FromVector<int64_t>({0, 1, 2, 0, 1, 3}, {3, 2});
  const Tensor f64 = Tensor::FromVector<double>({1.5, -2.0, 0.0});
  for (DType dtype : {DType::kBool, DType::kInt8, DType::kUInt8, DType::kInt16, DType::kInt32,
                      DType::kInt64, DType::kFloat16, DType::kFloat32, DType::kFloat64}) {
    SCOPED_TRACE(DTypeName(dtype));
    Tensor vals = Tensor::Empty({3}, dtype);
    Copy(f64, &vals);
    TensorData d;
    d.sparse = SparseTensor::Create(idx, vals, {3, 4});
    for (bool compress : {false, true}) {
      WriteOptions wo;
      wo.compress = compress;
      Write(dir / "v.npz", d, wo);
      const TensorData back = Read(dir / "v.npz");
      ASSERT_EQ(back.sparse.dtype(), dtype);
      Tensor got = Tensor::Empty({3}, DType::kFloat64);
      Copy(back.sparse.values(), &got);
      Tensor want = Tensor::Empty({3}, DType::kFloat64);
      Copy(vals, &want);
      EXPECT_EQ(got.ToVector<double>(), want.ToVector<double>());
    }
  }
}

// The CRC-32 zlib computes over each stored member's bytes, against what the archive says.
void ExpectStoredCrcs(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(f)), {});
  const Bytes b{reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), path};
  for (const ZipEntry& e : ListZip(b)) {
    ASSERT_EQ(e.method, 0) << e.name;
    const uint8_t* local = b.data + e.local_offset;
    const uint64_t start =
        e.local_offset + 30 + (local[26] | local[27] << 8) + (local[28] | local[29] << 8);
    uLong crc = crc32(0, nullptr, 0);
    for (uint64_t at = 0; at < e.size;) {
      const uInt n = static_cast<uInt>(std::min<uint64_t>(e.size - at, 1u << 30));
      crc = crc32(crc, b.data + start + at, n);
      at += n;
    }
    EXPECT_EQ(static_cast<uint32_t>(crc), e.crc) << e.name;
  }
}

TEST(NpzTest, LargeMembersAreWrittenInPiecesFromAllThreads) {
  TempDir dir;
  // Enough entries for many 512 KiB pieces per member, rank 2 (row, col) and rank 3 (coords).
  std::mt19937_64 rng(8);
  for (const std::vector<int64_t>& shape :
       std::vector<std::vector<int64_t>>{{1 << 20, 3 << 20}, {1000, 2000, 3000}}) {
    const int rank = static_cast<int>(shape.size());
    const int64_t nnz = 700001;
    std::vector<int64_t> idx(static_cast<size_t>(nnz * rank));
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<int64_t>(rng() % shape[i % rank]);
    const SparseTensor st = Entries(shape, idx);
    TensorData d;
    d.sparse = st;
    const auto files = tensorkit::testing::AtThreadCounts({1, 2, 3}, [&] {
      const std::string path = dir / "big.npz";
      Write(path, d);
      ExpectStoredCrcs(path);
      const TensorData back = Read(path);
      EXPECT_EQ(back.sparse.indices().ToVector<int64_t>(), idx);
      EXPECT_EQ(back.sparse.values().ToVector<double>(), st.values().ToVector<double>());
      return ReadText(path);
    });
    EXPECT_EQ(files[0], files[1]);  // the same bytes at any thread count
    EXPECT_EQ(files[0], files[2]);
  }
}

}  // namespace
}  // namespace tensorkit::io
