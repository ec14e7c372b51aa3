#include "tensorkit/io/tfrecord.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "io/io_test_util.h"
#include "tensorkit/io/crc32c.h"
#include "test_util.h"

namespace tensorkit::io {
namespace {

using tensorkit::testing::AtThreadCounts;
using testing::CatchError;
using testing::ReadText;
using testing::TempDir;
using testing::WriteText;

// Bit-at-a-time CRC-32C: the definition, for checking the fast paths.
uint32_t NaiveCrc(const std::string& s) {
  uint32_t c = 0xffffffffu;
  for (unsigned char b : s) {
    c ^= b;
    for (int i = 0; i < 8; ++i) c = (c >> 1) ^ ((c & 1) ? 0x82f63b78u : 0);
  }
  return ~c;
}

// The framing written out by hand from the format's definition.
std::string NaiveFrame(const std::vector<std::string>& records) {
  std::string out;
  auto put = [&](uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
  };
  auto mask = [](uint32_t c) { return ((c >> 15) | (c << 17)) + 0xa282ead8u; };
  for (const std::string& r : records) {
    std::string len;
    for (int i = 0; i < 8; ++i) len.push_back(static_cast<char>(uint64_t{r.size()} >> (8 * i)));
    put(r.size(), 8);
    put(mask(NaiveCrc(len)), 4);
    out += r;
    put(mask(NaiveCrc(r)), 4);
  }
  return out;
}

std::string RandomBytes(std::mt19937_64& rng, size_t n) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

std::vector<std::string> SomeRecords() {
  std::mt19937_64 rng(7);
  std::vector<std::string> r = {"", std::string("a\0b", 3), "hello", std::string(5, '\0')};
  for (size_t n : {1, 7, 8, 255, 256, 767, 768, 769, 4096, 24576, 24577, 100000}) {
    r.push_back(RandomBytes(rng, n));
  }
  return r;
}

std::vector<std::string_view> Views(const std::vector<std::string>& v) {
  return std::vector<std::string_view>(v.begin(), v.end());
}

std::vector<std::string> ReadAllFromMemory(const std::string& bytes, TFRecordCompression c) {
  TFRecordOptions o;
  o.compression = c;
  auto reader = TFRecordReader::FromMemory(bytes.data(), bytes.size(), "mem", o);
  std::vector<std::string> out;
  std::string_view r;
  while (reader.Next(&r)) out.emplace_back(r);
  EXPECT_EQ(reader.records_read(), static_cast<int64_t>(out.size()));
  return out;
}

std::vector<std::string> BatchFromMemory(const std::string& bytes, TFRecordCompression c) {
  TFRecordOptions o;
  o.compression = c;
  TFRecordBatch b = ReadTFRecordBatchFromMemory(bytes.data(), bytes.size(), "mem", o);
  std::vector<std::string> out;
  for (int64_t i = 0; i < b.size(); ++i) out.emplace_back(b[i]);
  return out;
}

std::string Decompress(const std::string& s, int window_bits) {
  z_stream zs{};
  EXPECT_EQ(inflateInit2(&zs, window_bits), Z_OK);
  std::string out;
  char buf[65536];
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(s.data()));
  zs.avail_in = static_cast<uInt>(s.size());
  int rc = Z_OK;
  while (rc == Z_OK) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buf, sizeof buf - zs.avail_out);
  }
  EXPECT_EQ(rc, Z_STREAM_END);
  inflateEnd(&zs);
  return out;
}

constexpr TFRecordCompression kAll[] = {TFRecordCompression::kNone, TFRecordCompression::kGzip,
                                        TFRecordCompression::kZlib};

TEST(TFRecordCrc32cTest, KnownVectors) {
  EXPECT_EQ(Crc32c("123456789", 9), 0xe3069283u);
  EXPECT_EQ(Crc32c("", 0), 0u);
  // RFC 3720 (iSCSI) B.4.
  EXPECT_EQ(Crc32c(std::string(32, '\0').data(), 32), 0x8a9136aau);
  EXPECT_EQ(Crc32c(std::string(32, '\xff').data(), 32), 0x62a8ab43u);
  std::string inc;
  for (int i = 0; i < 32; ++i) inc.push_back(static_cast<char>(i));
  EXPECT_EQ(Crc32c(inc.data(), 32), 0x46dd794eu);
}

TEST(TFRecordCrc32cTest, EveryLengthAndAlignmentMatchesTheDefinition) {
  std::mt19937_64 rng(1);
  const std::string data = RandomBytes(rng, 3 * 3 * 8192 + 4000);
  // Every length up to a few short rounds, then lengths around the interleaving boundaries.
  std::vector<size_t> lengths;
  for (size_t n = 0; n <= 2000; ++n) lengths.push_back(n);
  for (size_t base : {3 * 8192, 2 * 3 * 8192, 3 * 3 * 8192}) {
    for (size_t d = 0; d < 20; ++d) lengths.push_back(base - 10 + d);
  }
  for (size_t n : lengths) {
    for (size_t off : {0, 1, 3}) {
      if (off + n > data.size()) continue;
      const std::string s = data.substr(off, n);
      const uint32_t want = NaiveCrc(s);
      ASSERT_EQ(Crc32c(s.data(), n), want) << "length " << n << " offset " << off;
      ASSERT_EQ(Crc32cPortable(0, s.data(), n), want) << "length " << n;
    }
  }
  // Extending piece by piece is the CRC of the whole.
  const uint32_t whole = Crc32c(data.data(), data.size());
  const size_t cut = 12345;
  EXPECT_EQ(Crc32cExtend(Crc32c(data.data(), cut), data.data() + cut, data.size() - cut), whole);
  std::printf("CRC-32C hardware: %s\n", Crc32cIsHardware() ? "yes" : "no");
}

TEST(TFRecordCrc32cTest, MaskRoundTrips) {
  for (uint32_t c : {0u, 1u, 0xffffffffu, 0x12345678u, 0xa282ead8u}) {
    EXPECT_EQ(UnmaskCrc(MaskCrc(c)), c);
    EXPECT_EQ(MaskCrc(c), ((c >> 15) | (c << 17)) + 0xa282ead8u);
  }
}

TEST(TFRecordTest, FramingMatchesTheDefinition) {
  const auto records = SomeRecords();
  EXPECT_EQ(FrameTFRecords(Views(records)), NaiveFrame(records));
  EXPECT_EQ(ReadAllFromMemory(NaiveFrame(records), TFRecordCompression::kNone), records);
  EXPECT_EQ(BatchFromMemory(NaiveFrame(records), TFRecordCompression::kNone), records);
}

TEST(TFRecordTest, WriteAndReadEveryCompression) {
  TempDir dir;
  const auto records = SomeRecords();
  for (TFRecordCompression c : kAll) {
    SCOPED_TRACE(TFRecordCompressionName(c));
    TFRecordOptions o;
    o.compression = c;
    const std::string path = dir / "r.tfrecord";
    WriteTFRecords(path, Views(records), o);
    EXPECT_EQ(ReadTFRecords(path, o), records);
    auto reader = TFRecordReader::Open(path, o);
    std::string_view r;
    size_t i = 0;
    while (reader.Next(&r)) {
      ASSERT_LT(i, records.size());
      EXPECT_EQ(r, records[i++]);
    }
    EXPECT_EQ(i, records.size());
    // The bytes are exactly the framing, wrapped as zlib itself reads it.
    const std::string file = ReadText(path);
    if (c == TFRecordCompression::kNone) {
      EXPECT_EQ(file, NaiveFrame(records));
    } else {
      EXPECT_EQ(Decompress(file, c == TFRecordCompression::kGzip ? 31 : 15), NaiveFrame(records));
    }
  }
}

TEST(TFRecordTest, ReadsWhatZlibCompressesAndConcatenatedGzipMembers) {
  const auto records = SomeRecords();
  const std::string framed = NaiveFrame(records);
  EXPECT_EQ(ReadAllFromMemory(testing::ZlibCompress(framed, 31), TFRecordCompression::kGzip),
            records);
  EXPECT_EQ(ReadAllFromMemory(testing::ZlibCompress(framed, 15), TFRecordCompression::kZlib),
            records);
  // Two gzip members (cat a.gz b.gz) read as one stream.
  const std::string first = NaiveFrame({records.begin(), records.begin() + 5});
  const std::string rest = NaiveFrame({records.begin() + 5, records.end()});
  EXPECT_EQ(ReadAllFromMemory(testing::ZlibCompress(first, 31) + testing::ZlibCompress(rest, 31),
                              TFRecordCompression::kGzip),
            records);
  // Reading the gzip stream as zlib (or as uncompressed) fails cleanly.
  EXPECT_EQ(CatchError([&] {
              ReadAllFromMemory(testing::ZlibCompress(framed, 31), TFRecordCompression::kZlib);
            }).code(),
            ErrorCode::kCorrupt);
}

TEST(TFRecordTest, EmptyFilesHoldNoRecords) {
  TempDir dir;
  for (TFRecordCompression c : kAll) {
    EXPECT_TRUE(ReadAllFromMemory("", c).empty());
    TFRecordOptions o;
    o.compression = c;
    WriteTFRecords(dir / "e", {}, o);
    EXPECT_TRUE(ReadTFRecords(dir / "e", o).empty());
  }
}

// Every prefix of a file either ends at a record boundary (and reads those records) or is an
// Error(kCorrupt) that names a record and a byte.
TEST(TFRecordTest, TruncationAtEveryByte) {
  const std::vector<std::string> records = {"first", "", std::string("x\0y\0z", 5), "last one"};
  const std::string file = NaiveFrame(records);
  std::vector<size_t> ends = {0};
  for (const auto& r : records) ends.push_back(ends.back() + r.size() + 16);
  for (size_t len = 0; len < file.size(); ++len) {
    const std::string cut = file.substr(0, len);
    auto it = std::find(ends.begin(), ends.end(), len);
    if (it != ends.end()) {
      const std::vector<std::string> want(records.begin(), records.begin() + (it - ends.begin()));
      EXPECT_EQ(ReadAllFromMemory(cut, TFRecordCompression::kNone), want);
      EXPECT_EQ(BatchFromMemory(cut, TFRecordCompression::kNone), want);
      continue;
    }
    const size_t rec = std::upper_bound(ends.begin(), ends.end(), len) - ends.begin() - 1;
    for (auto read : {ReadAllFromMemory, BatchFromMemory}) {
      Error e = CatchError([&] { read(cut, TFRecordCompression::kNone); });
      EXPECT_EQ(e.code(), ErrorCode::kCorrupt) << e.what();
      EXPECT_HAS(e.what(),
                 "'mem' record " + std::to_string(rec) + " at byte " + std::to_string(ends[rec]));
      EXPECT_HAS(e.what(), "truncated");
    }
  }
  // The compressed stream cut at every byte: never a wrong record, always kCorrupt or fewer
  // whole records.
  for (TFRecordCompression c : {TFRecordCompression::kGzip, TFRecordCompression::kZlib}) {
    const std::string z = testing::ZlibCompress(file, c == TFRecordCompression::kGzip ? 31 : 15);
    for (size_t len = 0; len < z.size(); ++len) {
      try {
        auto got = ReadAllFromMemory(z.substr(0, len), c);
        EXPECT_EQ(len, 0u) << "a cut stream of " << len << " bytes read without an error";
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::kCorrupt) << e.what();
      }
    }
  }
}

// A single flipped bit anywhere (length, either CRC, data) is caught: CRC-32C detects every
// 1-bit error.
TEST(TFRecordTest, AFlippedBitInEveryByteIsCaught) {
  const std::vector<std::string> records = {"abc", "", "0123456789"};
  const std::string file = NaiveFrame(records);
  for (size_t i = 0; i < file.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = file;
      bad[i] = static_cast<char>(bad[i] ^ (1 << bit));
      for (auto read : {ReadAllFromMemory, BatchFromMemory}) {
        Error e = CatchError([&] { read(bad, TFRecordCompression::kNone); });
        ASSERT_EQ(e.code(), ErrorCode::kCorrupt) << "byte " << i << " bit " << bit;
        EXPECT_HAS(e.what(), "record ");
      }
    }
  }
}

TEST(TFRecordTest, ErrorsNameTheRecordAndTheOffset) {
  const std::vector<std::string> records = {"aa", "bbb", "cccc", "d"};
  std::string file = NaiveFrame(records);
  const size_t third = (2 + 16) + (3 + 16);
  file[third + 12 + 1] ^= 1;  // the data of record 2
  for (auto read : {ReadAllFromMemory, BatchFromMemory}) {
    Error e = CatchError([&] { read(file, TFRecordCompression::kNone); });
    EXPECT_HAS(e.what(), "record 2 at byte " + std::to_string(third));
    EXPECT_HAS(e.what(), "data CRC does not match");
  }
  // The length CRC of record 1 broken.
  file = NaiveFrame(records);
  file[18 + 8] ^= 0x40;
  EXPECT_HAS(CatchError([&] { ReadAllFromMemory(file, TFRecordCompression::kNone); }).what(),
             "record 1 at byte 18: the length field's CRC does not match");
}

// The batch reader checks data CRCs after the header walk but reports what the sequential
// reader reports: the first bad record in file order.
TEST(TFRecordTest, BatchReportsTheEarliestBadRecord) {
  std::vector<std::string> records;
  for (int i = 0; i < 500; ++i) records.push_back(std::string(100 + i % 7, static_cast<char>(i)));
  std::string file = NaiveFrame(records);
  std::vector<size_t> starts = {0};
  for (const auto& r : records) starts.push_back(starts.back() + r.size() + 16);
  file[starts[300] + 20] ^= 4;  // data of record 300
  file[starts[400] + 3] ^= 4;   // header of record 400
  for (int threads : {1, 2}) {
    auto msgs = AtThreadCounts({threads}, [&] {
      return std::string(
          CatchError([&] { BatchFromMemory(file, TFRecordCompression::kNone); }).what());
    });
    EXPECT_HAS(msgs[0], "record 300 at byte " + std::to_string(starts[300]));
  }
  file = NaiveFrame(records);
  file[starts[400] + 3] ^= 4;
  EXPECT_HAS(CatchError([&] { BatchFromMemory(file, TFRecordCompression::kNone); }).what(),
             "record 400 at byte " + std::to_string(starts[400]));
}

// Builds a header claiming `length` with a correct length CRC.
std::string HeaderClaiming(uint64_t length) {
  std::string h(12, '\0');
  for (int i = 0; i < 8; ++i) h[i] = static_cast<char>(length >> (8 * i));
  const uint32_t m = MaskCrc(Crc32c(h.data(), 8));
  for (int i = 0; i < 4; ++i) h[8 + i] = static_cast<char>(m >> (8 * i));
  return h;
}

TEST(TFRecordTest, AHugeOrLyingLengthIsAnErrorNotAnAllocation) {
  const std::string good = NaiveFrame({"ok"});
  for (uint64_t claim : {uint64_t{1} << 60, ~uint64_t{0}, uint64_t{1} << 40, uint64_t{100}}) {
    const std::string file = good + HeaderClaiming(claim) + "short data";
    for (auto read : {ReadAllFromMemory, BatchFromMemory}) {
      Error e = CatchError([&] { read(file, TFRecordCompression::kNone); });
      EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
      EXPECT_HAS(e.what(), "record 1 at byte 18: the record claims " + std::to_string(claim) +
                               " bytes but only 10 follow its header");
    }
    for (TFRecordCompression c : {TFRecordCompression::kGzip, TFRecordCompression::kZlib}) {
      const std::string z = testing::ZlibCompress(file, c == TFRecordCompression::kGzip ? 31 : 15);
      Error e = CatchError([&] { ReadAllFromMemory(z, c); });
      EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
      EXPECT_HAS(e.what(), "record 1 at byte 18 of the decompressed stream");
    }
  }
  // A compressed length above max_record_bytes names the option.
  TFRecordOptions o;
  o.compression = TFRecordCompression::kGzip;
  o.max_record_bytes = 1000;
  const std::string big = NaiveFrame({std::string(5000, 'z')});
  const std::string z = testing::ZlibCompress(big, 31);
  std::string_view r;
  EXPECT_HAS(
      CatchError([&] { TFRecordReader::FromMemory(z.data(), z.size(), "m", o).Next(&r); }).what(),
      "max_record_bytes");
  o.max_record_bytes = 5000;
  auto reader = TFRecordReader::FromMemory(z.data(), z.size(), "m", o);
  EXPECT_TRUE(reader.Next(&r));
  EXPECT_EQ(r.size(), 5000u);
}

TEST(TFRecordTest, BatchIsBitIdenticalAtOneAndTwoThreads) {
  std::mt19937_64 rng(3);
  std::vector<std::string> records;
  for (int i = 0; i < 3000; ++i) records.push_back(RandomBytes(rng, rng() % 2000));
  const std::string file = NaiveFrame(records);
  auto out = AtThreadCounts({1, 2}, [&] {
    TFRecordBatch b = ReadTFRecordBatchFromMemory(file.data(), file.size(), "m");
    return std::make_pair(b.bytes, b.offsets);
  });
  EXPECT_EQ(out[0], out[1]);
  EXPECT_EQ(BatchFromMemory(file, TFRecordCompression::kNone), records);
}

TEST(TFRecordTest, ABatchReusedForAnotherFileHoldsOnlyThatFile) {
  const std::vector<std::string> big = {std::string(5000, 'b'), "bb"}, small = {"s", ""};
  for (TFRecordCompression c : {TFRecordCompression::kNone, TFRecordCompression::kGzip}) {
    TFRecordOptions o;
    o.compression = c;
    TFRecordBatch batch;
    for (const auto* records : {&big, &small}) {
      std::string file = NaiveFrame(*records);
      if (c == TFRecordCompression::kGzip) file = testing::ZlibCompress(file, 31);
      ReadTFRecordBatchFromMemory(file.data(), file.size(), "m", o, &batch);
      ASSERT_EQ(batch.size(), static_cast<int64_t>(records->size()));
      EXPECT_EQ(batch.bytes.size(), (*records)[0].size() + (*records)[1].size());
      for (int64_t i = 0; i < batch.size(); ++i) EXPECT_EQ(batch[i], (*records)[i]);
    }
  }
}

TEST(TFRecordTest, WriterIsAtomic) {
  TempDir dir;
  const std::string path = dir / "w.tfrecord";
  {
    TFRecordWriter w(path);
    w.Write("never seen");
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  WriteText(path, "old");
  {
    TFRecordWriter w(path);
    w.Write("x");
    EXPECT_EQ(ReadText(path), "old");
    w.Close();
    EXPECT_EQ(w.records_written(), 1);
    EXPECT_HAS(CatchError([&] { w.Write("y"); }).what(), "closed");
  }
  EXPECT_EQ(ReadTFRecords(path), std::vector<std::string>{"x"});
  TFRecordOptions bad;
  bad.compression = TFRecordCompression::kGzip;
  bad.compression_level = 12;
  EXPECT_HAS(CatchError([&] { TFRecordWriter w(dir / "b", bad); }).what(), "compression_level");
  EXPECT_EQ(CatchError([&] { ReadTFRecords(dir / "missing"); }).code(), ErrorCode::kIo);
}

TEST(TFRecordTest, CompressionNames) {
  EXPECT_EQ(TFRecordCompressionFromName(""), TFRecordCompression::kNone);
  EXPECT_EQ(TFRecordCompressionFromName("NONE"), TFRecordCompression::kNone);
  EXPECT_EQ(TFRecordCompressionFromName("GZIP"), TFRecordCompression::kGzip);
  EXPECT_EQ(TFRecordCompressionFromName("ZLIB"), TFRecordCompression::kZlib);
  EXPECT_HAS(CatchError([] { TFRecordCompressionFromName("gzip"); }).what(), "\"GZIP\"");
}

}  // namespace
}  // namespace tensorkit::io
