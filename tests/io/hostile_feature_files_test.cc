// The hostile-input catalog of the feature-pipeline formats (libsvm, TFRecord, tf.Example and
// tf.SequenceExample): each entry is an input built to break a reader (sizes that lie, numbers
// past every limit, NUL bytes, a million features in one row, deep nesting) and the outcome it
// must give: an Error of the named code whose message names the place, or a correct result.
// Nothing may crash, hang, read out of bounds (ASan) or allocate what a length field claims.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "io/io_test_util.h"
#include "io/proto_encoder.h"
#include "tensorkit/io/crc32c.h"
#include "tensorkit/io/libsvm.h"
#include "tensorkit/io/tf_example.h"
#include "tensorkit/io/tfrecord.h"
#include "test_util.h"

namespace tensorkit::io {
namespace {

using tensorkit::testing::ExpectError;

using proto_test::Bytes;
using proto_test::Entry;
using proto_test::Example;
using proto_test::Fixed32;
using proto_test::Floats;
using proto_test::Int64s;
using proto_test::Ld;
using proto_test::Nested;
using proto_test::Tag;
using proto_test::Varint;

LibsvmData Svm(const std::string& text) {
  return ReadLibsvmFromMemory(text.data(), text.size(), "h.svm");
}
ExampleSpec VarLen(const std::string& key) {
  ExampleSpec s;
  s.var_len.push_back({key, DType::kInt64});
  return s;
}

// --- libsvm -----------------------------------------------------------------------------------

TEST(HostileLibsvm, AMillionFeaturesInOneLine) {
  std::string line = "1";
  for (int64_t i = 1; i <= 1000000; ++i) line += " " + std::to_string(i) + ":1";
  const LibsvmData d = Svm(line + "\n0 5:2\n");
  EXPECT_EQ(d.features.shape(), (std::vector<int64_t>{2, 1000000}));
  EXPECT_EQ(d.features.nnz(), 1000001);
  // The same line with its last index out of order: the line and the column are named.
  ExpectError([&] { Svm(line + " 17:1\n"); }, ErrorCode::kCorrupt,
              {"line 1", "column " + std::to_string(line.size() + 2), "index 17 follows"});
  // Streamed conversion of the same line holds it as one chunk of a million entries.
  testing::TempDir dir;
  testing::WriteText(dir / "big.svm", line + "\n");
  ConvertLibsvm(dir / "big.svm", dir / "big.npz");
  EXPECT_EQ(ReadNpzMembers(dir / "big.npz")[2].second.NumElements(), 1000000);  // indices
}

TEST(HostileLibsvm, NulBytesAndControlCharactersAreNamedEscaped) {
  ExpectError([] { Svm(std::string("1 1:2\n1 2:\0\n", 12)); }, ErrorCode::kCorrupt,
              {"line 2", "column 5", "value '\\x00'"});
  ExpectError([] { Svm(std::string("1\v 1:\x01\n", 8)); }, ErrorCode::kCorrupt,
              {"line 1", "\\x01"});
}

TEST(HostileLibsvm, NumbersPastEveryLimit) {
  ExpectError([] { Svm("1 99999999999999999999:1\n"); }, ErrorCode::kCorrupt,
              {"line 1", "is not an integer"});
  ExpectError([] { Svm("1 qid:99999999999999999999 1:1\n"); }, ErrorCode::kCorrupt,
              {"qid", "is not an integer"});
  // As strtod: too large is inf, too small is 0; a 400-digit mantissa is read exactly rounded.
  const LibsvmData d = Svm("1e99999 1:-1e99999 2:1e-99999 3:" + std::string(400, '7') + "\n");
  EXPECT_TRUE(std::isinf(d.labels.ToVector<double>()[0]));
  const std::vector<double> v = d.features.values().ToVector<double>();
  EXPECT_TRUE(std::isinf(v[0]) && v[0] < 0);
  EXPECT_EQ(v[1], 0.0);
  EXPECT_EQ(v[2], std::strtod(std::string(400, '7').c_str(), nullptr));
}

TEST(HostileLibsvm, TruncatedAndEmptyInputs) {
  ExpectError([] { Svm("1 1:1\n2 3:"); }, ErrorCode::kCorrupt, {"line 2", "is not a number"});
  ExpectError([] { Svm("1 1:1\n2 3"); }, ErrorCode::kCorrupt, {"line 2", "is not index:value"});
  const LibsvmData d = Svm(std::string(1000000, '\n'));  // a million empty lines
  EXPECT_EQ(d.features.shape(), (std::vector<int64_t>{0, 0}));
}

// --- TFRecord ---------------------------------------------------------------------------------

// A framed record of `data` whose length field says `length`, with that field's CRC right (so
// the length itself is what the reader must judge), or left as framed (`fix_crc` false).
std::string LyingHeader(uint64_t length, const std::string& data, bool fix_crc) {
  std::string framed = FrameTFRecords({data});
  std::memcpy(framed.data(), &length, 8);
  const uint32_t crc = MaskCrc(Crc32c(framed.data(), 8));
  if (fix_crc) std::memcpy(framed.data() + 8, &crc, 4);
  return framed;
}

TEST(HostileTfrecord, LengthFieldsOf4GiBAndMoreCostNothing) {
  for (uint64_t length :
       {uint64_t{1} << 32, (uint64_t{1} << 32) + 1, uint64_t{1} << 62, ~uint64_t{0}}) {
    SCOPED_TRACE(length);
    for (TFRecordCompression c : {TFRecordCompression::kNone, TFRecordCompression::kGzip}) {
      // Uncompressed: the length is judged against the file's size; GZIP: against
      // max_record_bytes and what deflate could make of the bytes left.
      std::string framed = LyingHeader(length, "tiny", true);
      if (c == TFRecordCompression::kGzip) framed = testing::ZlibCompress(framed, MAX_WBITS + 16);
      TFRecordOptions o;
      o.compression = c;
      ExpectError(
          [&] { ReadTFRecordBatchFromMemory(framed.data(), framed.size(), "h.tfrecord", o); },
          ErrorCode::kCorrupt, {"'h.tfrecord' record 0 at byte 0", "claims"});
    }
    // With the length's CRC left as it was, the CRC refuses it before its value is used.
    const std::string bad_crc = LyingHeader(length, "tiny", false);
    ExpectError([&] { ReadTFRecordBatchFromMemory(bad_crc.data(), bad_crc.size(), "h.tfrecord"); },
                ErrorCode::kCorrupt, {"record 0", "length field's CRC"});
  }
}

TEST(HostileTfrecord, BadCrcsAndTruncationsNameTheRecordAndOffset) {
  std::string framed = FrameTFRecords({"first", "second", "third"});
  const std::string good = framed;
  framed[framed.size() - 6] ^= 0x40;  // a data byte of the third record
  const int64_t third = static_cast<int64_t>(good.size()) - (12 + 5 + 4);
  ExpectError([&] { ReadTFRecordBatchFromMemory(framed.data(), framed.size(), "h.tfrecord"); },
              ErrorCode::kCorrupt, {"record 2 at byte " + std::to_string(third), "data CRC"});
  for (size_t cut : {size_t{3}, size_t{11}, size_t{14}, good.size() - 1}) {
    ExpectError([&] { ReadTFRecordBatchFromMemory(good.data(), cut, "h.tfrecord"); },
                ErrorCode::kCorrupt, {"'h.tfrecord'", "truncated"});
  }
}

// --- tf.Example and tf.SequenceExample --------------------------------------------------------

TEST(HostileExample, AMillionFeaturesOrValuesInOneRecord) {
  std::string entries;
  for (int i = 0; i < 1000000; ++i) entries += Entry("k" + std::to_string(i), Int64s({i}));
  const std::string many_keys = Example(entries);
  const ParsedExamples p = ParseExamples({many_keys}, VarLen("k999999"));
  EXPECT_EQ(p.var_len[0].values().ToVector<int64_t>(), std::vector<int64_t>{999999});
  EXPECT_EQ(SummarizeExamples({many_keys}).size(), 1000000u);
  std::vector<int64_t> values(1000000);
  for (int64_t i = 0; i < 1000000; ++i) values[i] = i * 7919;
  const std::string many_values = Example(Entry("v", Int64s(values)));
  EXPECT_EQ(ParseExamples({many_values}, VarLen("v")).var_len[0].values().ToVector<int64_t>(),
            values);
}

TEST(HostileExample, HugeVarintsAndLyingLengths) {
  // An 11-byte varint as a value.
  const std::string eleven =
      Example(Ld(1, Ld(1, "v") + Ld(2, Ld(3, Ld(1, std::string(10, '\xff') + "\x01")))));
  ExpectError([&] { ParseExamples({eleven}, VarLen("v")); }, ErrorCode::kCorrupt,
              {"record 0", "varint"});
  // A length claiming 4 GiB inside a 20-byte record.
  const std::string lying = "\x0a" + Varint(uint64_t{1} << 32) + "\x0a\x01v";
  ExpectError([&] { ParseExamples({lying}, VarLen("v")); }, ErrorCode::kCorrupt, {"record 0"});
  ExpectError([&] { SummarizeExamples({lying}); }, ErrorCode::kCorrupt, {"record 0"});
  // A varint length of 2^64 - 1.
  const std::string max = "\x0a" + Varint(~uint64_t{0});
  ExpectError([&] { ParseExamples({max}, VarLen("v")); }, ErrorCode::kCorrupt, {"record 0"});
}

TEST(HostileExample, DeepNestingIsSkippedWithoutRecursion) {
  // An unknown field holding 100,000 nested length-delimited messages, inside the Example, a
  // Features map entry and a SequenceExample's feature lists: skipped as bytes, never walked.
  std::string shallow = "x";  // the helper against the plain construction, 300 levels
  for (int i = 0; i < 300; ++i) shallow = Ld(9, shallow);
  ASSERT_EQ(Nested(300, 9, "x"), shallow);
  const std::string deep = Nested(100000, 9, "x");
  const std::string example = Example(Entry("v", Int64s({5})) + Ld(7, deep));
  EXPECT_EQ(ParseExamples({example}, VarLen("v")).var_len[0].values().ToVector<int64_t>(),
            std::vector<int64_t>{5});
  // SequenceExample{context = 1; feature_lists = 2}: a list "s" of two steps, plus the deep
  // field at every level.
  const std::string step = Int64s({1, 2});
  const std::string feature_list = Ld(1, step) + Ld(1, step) + Ld(5, deep);
  const std::string lists = Ld(1, Ld(1, "s") + Ld(2, feature_list)) + Ld(6, deep);
  const std::string seq = Ld(1, Entry("c", Int64s({3}))) + Ld(2, lists) + Ld(4, deep);
  SequenceExampleSpec spec;
  spec.context.var_len.push_back({"c", DType::kInt64});
  spec.feature_list_sparse.push_back({"s", DType::kInt64});
  const ParsedSequenceExamples p = ParseSequenceExamples({seq}, spec);
  EXPECT_EQ(p.context.var_len[0].values().ToVector<int64_t>(), std::vector<int64_t>{3});
  EXPECT_EQ(p.FeatureListSparse("s").nnz(), 4);
  // A group (wire type 3) is refused at once, however deep the rest.
  const std::string group = Example(Entry("v", Int64s({5})) + "\x3b" + deep);
  ExpectError([&] { ParseExamples({group}, VarLen("v")); }, ErrorCode::kCorrupt, {"record 0"});
}

TEST(HostileExample, NulBytesInKeysAndValuesAreData) {
  const std::string key("a\0b", 3);
  const std::string record =
      Example(Entry(key, Ld(1, Ld(1, std::string("\0\0", 2)))) + Entry("a", Int64s({1})));
  ExampleSpec spec;
  spec.var_len.push_back({key, DType::kString});
  const ParsedExamples p = ParseExamples({record}, spec);
  EXPECT_EQ(p.var_len[0].values().ToVector<std::string>(),
            std::vector<std::string>{std::string("\0\0", 2)});
  EXPECT_EQ(ParseExamples({record}, VarLen("a")).var_len[0].values().ToVector<int64_t>(),
            std::vector<int64_t>{1});
}

}  // namespace
}  // namespace tensorkit::io
