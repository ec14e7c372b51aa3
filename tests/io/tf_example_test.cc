#include "tensorkit/io/tf_example.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "io/io_test_util.h"
#include "io/proto_encoder.h"
#include "tensorkit/io/io.h"
#include "tensorkit/io/tf_example_internal.h"
#include "test_util.h"

namespace tensorkit::io {
namespace {

using tensorkit::testing::AtThreadCounts;
using tensorkit::testing::ExpectError;
using testing::CatchError;

using proto_test::Bytes;
using proto_test::Entry;
using proto_test::Example;
using proto_test::Fixed32;
using proto_test::Floats;
using proto_test::Int64s;
using proto_test::Ld;
using proto_test::Tag;
using proto_test::Varint;

ExampleSpec VarSpec(DType d, const std::string& key = "a") {
  ExampleSpec s;
  s.var_len.push_back({key, d});
  return s;
}
ExampleSpec FixedSpec(DType d, std::vector<int64_t> shape, Tensor def = {},
                      const std::string& key = "a") {
  ExampleSpec s;
  s.fixed.push_back({key, d, std::move(shape), std::move(def)});
  return s;
}

std::vector<int64_t> VarInt64(const std::string& record, const std::string& key = "a") {
  return ParseExamples({record}, VarSpec(DType::kInt64, key))
      .var_len[0]
      .values()
      .ToVector<int64_t>();
}
std::vector<float> VarFloat(const std::string& record) {
  return ParseExamples({record}, VarSpec(DType::kFloat32)).var_len[0].values().ToVector<float>();
}

TEST(TfExampleTest, ParsesEveryDTypeAsFixedAndVarLen) {
  const std::string r0 =
      Example(Entry("i", Int64s({1, -2, 3})) + Entry("f", Floats({1.5f})) +
              Entry("s", Bytes({"x", std::string("\0y", 2)})) + Entry("v", Int64s({})));
  const std::string r1 = Example(Entry("s", Bytes({"p", "q"})) + Entry("i", Int64s({4, 5, 6})) +
                                 Entry("v", Int64s({7, 8})) + Entry("f", Floats({-0.0f})));
  ExampleSpec spec;
  spec.fixed.push_back({"i", DType::kInt64, {3}, {}});
  spec.fixed.push_back({"f", DType::kFloat32, {}, {}});
  spec.fixed.push_back({"s", DType::kString, {1, 2}, {}});
  spec.var_len.push_back({"v", DType::kInt64});
  spec.var_len.push_back({"s", DType::kString});  // a key may not be both: checked below
  spec.var_len.pop_back();
  spec.var_len.push_back({"missing", DType::kFloat32});
  ParsedExamples p = ParseExamples({r0, r1}, spec);
  EXPECT_EQ(p.Fixed("i").Dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(p.Fixed("i").ToVector<int64_t>(), (std::vector<int64_t>{1, -2, 3, 4, 5, 6}));
  EXPECT_EQ(p.Fixed("f").Dims(), (std::vector<int64_t>{2}));
  EXPECT_EQ(p.Fixed("f").ToVector<float>()[0], 1.5f);
  EXPECT_TRUE(std::signbit(p.Fixed("f").ToVector<float>()[1]));
  EXPECT_EQ(p.Fixed("s").Dims(), (std::vector<int64_t>{2, 1, 2}));
  EXPECT_EQ(p.Fixed("s").ToVector<std::string>(),
            (std::vector<std::string>{"x", std::string("\0y", 2), "p", "q"}));
  const JaggedTensor& v = p.VarLen("v");
  EXPECT_EQ(v.values().ToVector<int64_t>(), (std::vector<int64_t>{7, 8}));
  EXPECT_EQ(v.offsets().ToVector<int64_t>(), (std::vector<int64_t>{0, 0, 2}));
  EXPECT_EQ(p.VarLen("missing").offsets().ToVector<int64_t>(), (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(p.VarLen("missing").dtype(), DType::kFloat32);
  // TensorFlow's VarLenFeature SparseTensor: indices (row, position), dense_shape [B, max_len].
  SparseTensor st = v.ToSparse();
  EXPECT_EQ(st.shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(st.indices().ToVector<int64_t>(), (std::vector<int64_t>{1, 0, 1, 1}));
  ExpectError([&] { p.Fixed("nope"); }, {"no FixedLenFeature 'nope'", "i, f, s"});
  ExpectError([&] { p.VarLen("i"); }, {"no VarLenFeature 'i'"});
}

TEST(TfExampleTest, DuplicateKeysTheLastEntryWinsAsInTensorFlow) {
  const std::string dup = Example(Entry("a", Int64s({1, 2})) + Entry("a", Int64s({7})));
  EXPECT_EQ(VarInt64(dup), std::vector<int64_t>{7});
  EXPECT_EQ(ParseExamples({dup}, FixedSpec(DType::kInt64, {1})).fixed[0].ToVector<int64_t>(),
            std::vector<int64_t>{7});
  ExpectError([&] { ParseExamples({dup}, FixedSpec(DType::kInt64, {2})); },
              {"record 0, feature 'a'", "holds 1 values", "needs 2"});
  // Two Example.features fields merge into one map: still the last entry.
  EXPECT_EQ(VarInt64(Example(Entry("a", Int64s({1, 2}))) + Example(Entry("a", Int64s({7})))),
            std::vector<int64_t>{7});
  // The last entry's type decides (TensorFlow: [7] for int64, an error for float).
  const std::string mixed = Example(Entry("a", Floats({1})) + Entry("a", Int64s({7})));
  EXPECT_EQ(VarInt64(mixed), std::vector<int64_t>{7});
  ExpectError([&] { VarFloat(mixed); }, {"holds a int64_list", "float32"});
}

TEST(TfExampleTest, WrongTypesMissingAndCountsAreErrorsNamingRecordAndFeature) {
  const std::string ok = Example(Entry("a", Int64s({1})));
  const std::string flt = Example(Entry("a", Floats({1})));
  ExpectError(
      [&] {
        ParseExamples({ok, ok, flt}, VarSpec(DType::kInt64));
      },
      ErrorCode::kInvalidArgument,
      {"ParseExamples: record 2, feature 'a'", "holds a float_list", "VarLenFeature", "int64"});
  ExpectError([&] { ParseExamples({flt}, FixedSpec(DType::kInt64, {1})); },
              {"record 0, feature 'a'", "FixedLenFeature"});
  // An empty list of the wrong type is still the wrong type (as TensorFlow says).
  ExpectError([&] { VarInt64(Example(Entry("a", Ld(2, "")))); }, {"holds a float_list"});
  // Missing: Error without default_value, the default with one.
  const std::string other = Example(Entry("b", Int64s({1})));
  ExpectError(
      [&] {
        ParseExamples({ok, other}, FixedSpec(DType::kInt64, {1}));
      },
      {"record 1: required feature 'a'", "no default_value"});
  Tensor def = Tensor::FromVector<int64_t>({3, 4});
  EXPECT_EQ(ParseExamples({other}, FixedSpec(DType::kInt64, {2}, def)).fixed[0].ToVector<int64_t>(),
            (std::vector<int64_t>{3, 4}));
  // A Feature without a list is missing; a present but empty list is not.
  const std::string empty_feature = Example(Entry("a", ""));
  EXPECT_EQ(ParseExamples({empty_feature}, FixedSpec(DType::kInt64, {2}, def))
                .fixed[0]
                .ToVector<int64_t>(),
            (std::vector<int64_t>{3, 4}));
  EXPECT_TRUE(VarInt64(empty_feature).empty());
  ExpectError(
      [&] { ParseExamples({Example(Entry("a", Ld(3, "")))}, FixedSpec(DType::kInt64, {2}, def)); },
      {"holds 0 values", "needs 2"});
  ExpectError(
      [&] {
        ParseExamples({Example(Entry("a", Int64s({1, 2, 3})))}, FixedSpec(DType::kInt64, {2}));
      },
      {"holds 3 values", "shape [2] needs 2"});
  // A scalar default repeats; an empty record takes every default.
  EXPECT_EQ(ParseExamples({""}, FixedSpec(DType::kFloat32, {3}, Tensor::FromVector<float>({2})))
                .fixed[0]
                .ToVector<float>(),
            (std::vector<float>{2, 2, 2}));
}

TEST(TfExampleTest, PackedUnpackedAndUnknownFieldsAsProtobufReadsThem) {
  // Unpacked int64 (TensorFlow: [5, 6]) and a mix of both encodings in one list.
  EXPECT_EQ(VarInt64(Example(Entry("a", Ld(3, Tag(1, 0) + Varint(5) + Tag(1, 0) + Varint(6))))),
            (std::vector<int64_t>{5, 6}));
  EXPECT_EQ(
      VarInt64(Example(Entry("a", Ld(3, Tag(1, 0) + Varint(5) + Ld(1, Varint(9) + Varint(10)))))),
      (std::vector<int64_t>{5, 9, 10}));
  EXPECT_EQ(VarFloat(Example(Entry("a", Ld(2, Tag(1, 5) + Fixed32(1) + Ld(1, Fixed32(2)))))),
            (std::vector<float>{1, 2}));
  // Two lists of one type concatenate; a later type clears an earlier one (oneof).
  EXPECT_EQ(VarInt64(Example(Entry("a", Int64s({1}) + Int64s({2, 3})))),
            (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(VarInt64(Example(Entry("a", Int64s({1}) + Floats({2}) + Int64s({4})))),
            (std::vector<int64_t>{4}));
  // Unknown fields of every wire type at every level are skipped.
  const std::string unknown = Tag(9, 0) + Varint(300) + Tag(10, 1) + std::string(8, 'x') +
                              Ld(11, "zz") + Tag(12, 5) + "abcd";
  const std::string rec =
      unknown +
      Ld(1, unknown + Ld(1, unknown + Ld(1, "a") + unknown +
                                Ld(2, unknown + Ld(3, unknown + Ld(1, Varint(42)) + unknown))));
  EXPECT_EQ(VarInt64(rec), std::vector<int64_t>{42});
  // A known field with another wire type is unknown, as in protobuf.
  EXPECT_TRUE(VarInt64(Example(Entry("a", Ld(3, Tag(1, 5) + "1234")))).empty());
  EXPECT_TRUE(VarInt64(Tag(1, 0) + Varint(0)).empty());
  // Negative values are 10-byte varints; a 10th byte keeps its low bit only.
  EXPECT_EQ(VarInt64(Example(Entry("a", Int64s({-1, INT64_MIN, INT64_MAX})))),
            (std::vector<int64_t>{-1, INT64_MIN, INT64_MAX}));
  EXPECT_EQ(VarInt64(Example(Entry("a", Ld(3, Ld(1, std::string(9, '\xff') + '\x7f'))))),
            std::vector<int64_t>{-1});
  // Keys and values are bytes: NUL included, and compared whole.
  const std::string nul_key("a\0b", 3);
  EXPECT_TRUE(VarInt64(Example(Entry(nul_key, Int64s({1}))), "a").empty());
  EXPECT_EQ(VarInt64(Example(Entry(nul_key, Int64s({1}))), nul_key), std::vector<int64_t>{1});
  // A value before its key, and a repeated key (the last one counts).
  EXPECT_EQ(VarInt64(Example(Ld(1, Ld(2, Int64s({4})) + Ld(1, "a")))), std::vector<int64_t>{4});
  EXPECT_EQ(VarInt64(Example(Ld(1, Ld(1, "zz") + Ld(1, "a") + Ld(2, Int64s({4}))))),
            std::vector<int64_t>{4});
}

// Writers' layout (one list, packed numbers) is read by a fast path, every other by the field
// loop: both give the same values to FixedLen and VarLen features, and the same count errors.
TEST(TfExampleTest, EveryLayoutOfAFeatureGivesTheSameValues) {
  const std::string i5 = Tag(1, 0) + Varint(5), i300 = Tag(1, 0) + Varint(300);
  const std::string f1 = Tag(1, 5) + Fixed32(1.5f), f2 = Tag(1, 5) + Fixed32(-2);
  const std::string unknown = Tag(9, 0) + Varint(1);
  // A length of 8 as a 3-byte varint, which protobuf accepts.
  const std::string long_length = Tag(1, 2) + "\x88\x80" + std::string(1, '\0');
  struct Layout {
    DType dtype;
    std::vector<std::string> features;  // each holds the values below
  };
  const std::vector<Layout> layouts = {
      {DType::kInt64,
       {Int64s({5, 300}), Ld(3, i5 + i300), Ld(3, i5) + Ld(3, i300), Ld(3, unknown + i5 + i300),
        unknown + Int64s({5, 300}), Ld(3, Ld(1, Varint(5)) + Ld(1, Varint(300))),
        Ld(3, Ld(1, Varint(5)) + i300)}},
      {DType::kFloat32,
       {Floats({1.5f, -2}), Ld(2, f1 + f2), Ld(2, f1) + Ld(2, f2), Ld(2, Ld(1, Fixed32(1.5f)) + f2),
        Ld(2, long_length + Fixed32(1.5f) + Fixed32(-2)), Floats({1.5f, -2}) + unknown}},
      {DType::kString,
       {Bytes({"ab", ""}), Bytes({"ab"}) + Bytes({""}), Ld(1, unknown + Ld(1, "ab") + Ld(1, "")),
        Ld(1, Tag(1, 2) + "\x82" + std::string(1, '\0') + "ab" + Ld(1, "")),
        Int64s({9}) + Bytes({"ab", ""})}},
  };
  for (const Layout& l : layouts) {
    for (size_t k = 0; k < l.features.size(); ++k) {
      SCOPED_TRACE(std::string(DTypeName(l.dtype)) + " layout " + std::to_string(k));
      const std::string rec = Example(Entry("a", l.features[k]));
      const Tensor fixed = ParseExamples({rec}, FixedSpec(l.dtype, {2})).fixed[0];
      const Tensor var = ParseExamples({rec}, VarSpec(l.dtype)).var_len[0].values();
      if (l.dtype == DType::kInt64) {
        EXPECT_EQ(fixed.ToVector<int64_t>(), (std::vector<int64_t>{5, 300}));
        EXPECT_EQ(var.ToVector<int64_t>(), (std::vector<int64_t>{5, 300}));
      } else if (l.dtype == DType::kFloat32) {
        EXPECT_EQ(fixed.ToVector<float>(), (std::vector<float>{1.5f, -2}));
        EXPECT_EQ(var.ToVector<float>(), (std::vector<float>{1.5f, -2}));
      } else {
        EXPECT_EQ(fixed.ToVector<std::string>(), (std::vector<std::string>{"ab", ""}));
        EXPECT_EQ(var.ToVector<std::string>(), (std::vector<std::string>{"ab", ""}));
      }
      for (int64_t n : {1, 3}) {
        ExpectError([&] { ParseExamples({rec}, FixedSpec(l.dtype, {n})); },
                    {"record 0, feature 'a'", "holds 2 values", "needs " + std::to_string(n)});
      }
    }
  }
}

// Keys are found by the one after the last found, else by a hash table: keys of every length,
// in any order, among keys that differ from them in one byte.
TEST(TfExampleTest, KeysOfEveryLengthInAnyOrderFindTheirFeature) {
  std::mt19937 rng(5);
  ExampleSpec spec;
  std::vector<std::string> entries;
  for (int len = 0; len <= 40; ++len) {
    std::string key;
    for (int i = 0; i < len; ++i) key.push_back(static_cast<char>('a' + (i * 7 + len) % 26));
    spec.fixed.push_back({key, DType::kInt64, {}, Tensor::FromScalar(int64_t{-1})});
    if (len % 10 == 9) continue;  // missing: its default
    entries.push_back(Entry(key, Int64s({len})));
    for (int i : {0, len / 3, len / 2, len - 1}) {
      if (len == 0) break;
      std::string near = key;
      near[static_cast<size_t>(i)] ^= 1;
      entries.push_back(Entry(near, Int64s({1000 + len})));
    }
  }
  for (int trial = 0; trial < 4; ++trial) {
    if (trial > 0) std::shuffle(entries.begin(), entries.end(), rng);
    std::string body;
    for (const std::string& e : entries) body += e;
    const ParsedExamples p = ParseExamples({Example(body)}, spec);
    for (int len = 0; len <= 40; ++len) {
      EXPECT_EQ(p.fixed[len].ToVector<int64_t>()[0], len % 10 == 9 ? -1 : len)
          << "key of " << len << " bytes, trial " << trial;
    }
  }
}

// Writers keep one key order per batch, not always the spec's; the parser learns it per chunk.
// Orders that change between records (runs of one order, then per-record shuffles, unknown keys
// among them, keys missing) must not change what each record's keys find.
TEST(TfExampleTest, KeyOrdersThatChangeBetweenRecordsFindTheirFeatures) {
  std::mt19937 rng(11);
  const int64_t B = 700, K = 12;
  ExampleSpec spec;
  for (int k = 0; k < K; ++k) {
    const std::string key = "key" + std::to_string(k);
    if (k % 3 == 2) {
      spec.var_len.push_back({key, DType::kInt64});
    } else {
      spec.fixed.push_back({key, DType::kInt64, {}, Tensor::FromScalar(int64_t{-7})});
    }
  }
  std::vector<int> order(K);
  for (int k = 0; k < K; ++k) order[k] = K - 1 - k;
  std::vector<std::string> records;
  std::vector<std::vector<int64_t>> want(K, std::vector<int64_t>());
  std::vector<std::vector<int64_t>> want_lengths(K, std::vector<int64_t>());
  for (int64_t r = 0; r < B; ++r) {
    if (r < 300 ? r % 100 == 0 : r >= 500) std::shuffle(order.begin(), order.end(), rng);
    std::string body;
    for (int k : order) {
      const bool missing = (r * 7 + k) % 11 == 0;
      if (r % 5 == 0) body += Entry("other" + std::to_string(k), Int64s({99}));
      if (k % 3 == 2) {
        const int n = missing ? 0 : static_cast<int>((r + k) % 4);
        std::vector<int64_t> v;
        for (int i = 0; i < n; ++i) v.push_back(r * 100 + k * 10 + i);
        if (!missing) body += Entry("key" + std::to_string(k), Int64s(v));
        want[k].insert(want[k].end(), v.begin(), v.end());
        want_lengths[k].push_back(n);
      } else {
        if (!missing) body += Entry("key" + std::to_string(k), Int64s({r * 100 + k}));
        want[k].push_back(missing ? -7 : r * 100 + k);
      }
    }
    records.push_back(Example(body));
  }
  const std::vector<std::string_view> views(records.begin(), records.end());
  for (const ParsedExamples& p :
       AtThreadCounts({1, 2}, [&] { return ParseExamples(views, spec); })) {
    int fixed = 0, var = 0;
    for (int k = 0; k < K; ++k) {
      if (k % 3 == 2) {
        EXPECT_EQ(p.var_len[var].values().ToVector<int64_t>(), want[k]) << "key" << k;
        EXPECT_EQ(p.var_len[var++].lengths().ToVector<int64_t>(), want_lengths[k]) << "key" << k;
      } else {
        EXPECT_EQ(p.fixed[fixed++].ToVector<int64_t>(), want[k]) << "key" << k;
      }
    }
  }
}

// The path of outputs a caller owns (internal::ParseFixedAndVarLen with targets: BytesRefs)
// gives the values ParseExamples gives: strings as refs into the records or the spec's defaults,
// VarLen values of every layout (the fast one, unpacked, several lists) and of many values per
// record, the string targets set once per chunk with the fixed outputs final.
TEST(TfExampleTest, BytesAsRefsAndTheChunkHookGiveTheParsedValues) {
  std::mt19937 rng(13);
  const int64_t B = 600;
  ExampleSpec spec;
  spec.fixed = {{"s", DType::kString, {}, Tensor::FromScalar(std::string("dflt"))},
                {"s2", DType::kString, {2}, Tensor::FromVector<std::string>({"a", "bb"})},
                {"s3", DType::kString, {3}, Tensor::FromVector<std::string>({"z"})},
                {"i", DType::kInt64, {2}, Tensor::FromVector<int64_t>({5, 6})}};
  spec.var_len = {{"vs", DType::kString}, {"vi", DType::kInt64}, {"vf", DType::kFloat32}};
  std::vector<std::string> records;
  for (int64_t r = 0; r < B; ++r) {
    std::string body;
    if (r % 4 != 0) body += Entry("s", Bytes({std::string(r % 7, static_cast<char>('a' + r % 5))}));
    if (r % 6 != 0) body += Entry("s2", Bytes({"x" + std::to_string(r), std::string(1, '\0')}));
    if (r % 5 != 0) body += Entry("s3", Bytes({"p", "q", std::to_string(r)}));
    if (r % 3 != 0) body += Entry("i", Int64s({r, -r}));
    const int n = r == 17 ? 600 : static_cast<int>(rng() % 5);  // 600: past the first buffer
    std::vector<std::string> vs;
    std::vector<int64_t> vi;
    std::vector<float> vf;
    for (int k = 0; k < n; ++k) {
      vs.push_back(std::string(rng() % 4, 'v'));
      vi.push_back(static_cast<int64_t>(rng()) >> (rng() % 64));
      vf.push_back(static_cast<float>(k) / 3);
    }
    if (r % 7 == 3) {  // not the writers' layout: each value its own list / unpacked
      std::string lists, unpacked;
      for (const std::string& v : vs) lists += Ld(1, Bytes({v}));
      for (int64_t v : vi) unpacked += Tag(1, 0) + Varint(static_cast<uint64_t>(v));
      body += Entry("vs", lists) + Entry("vi", Ld(3, unpacked));
    } else if (r % 9 != 4) {
      body += Entry("vs", Bytes(vs)) + Entry("vi", Int64s(vi));
    }
    body += Entry("vf", Floats(vf));
    records.push_back(Example(body));
  }
  const std::vector<std::string_view> views(records.begin(), records.end());
  const ParsedExamples want = ParseExamples(views, spec);
  auto strings = [](const Tensor& refs) {
    std::vector<std::string> out;
    const auto* r = reinterpret_cast<const internal::BytesRef*>(refs.data<int64_t>());
    for (int64_t i = 0; i < refs.NumElements() / 2; ++i) out.emplace_back(r[i].data, r[i].size);
    return out;
  };
  // A string target that keeps what it is given, and the ranges of its calls.
  struct Recording : StringOutput {
    explicit Recording(int64_t n) : values(static_cast<size_t>(n)) {}
    void Build(int64_t begin, int64_t end, CallRef<int64_t(int64_t)> size,
               CallRef<void(int64_t, char*)> write) override {
      std::lock_guard<std::mutex> lock(mu);
      calls.emplace_back(begin, end);
      for (int64_t i = begin; i < end; ++i) {
        values[i].resize(static_cast<size_t>(size(i)));
        write(i, values[i].data());
      }
    }
    std::vector<std::string> values;
    std::vector<std::pair<int64_t, int64_t>> calls;
    std::mutex mu;
  };
  for (int threads : {1, 2}) {
    std::vector<std::pair<int64_t, int64_t>> chunks;
    std::vector<std::vector<std::string>> at_hook(B);  // record r's "s2" seen by the hook
    Recording s_out(B), s2_out(2 * B), s3_out(3 * B);
    std::vector<internal::FixedTarget> targets(4);
    targets[0].strings = &s_out;
    targets[1].strings = &s2_out;
    targets[2].strings = &s3_out;
    targets[3].numbers = Tensor::Empty({B * 2}, DType::kInt64);
    const ParsedExamples got = AtThreadCounts(
        {threads}, [&] { return internal::ParseFixedAndVarLen(views, spec, &targets); })[0];
    // The hook of old: record ranges of the calls of "s2" (two values a record).
    for (const auto& [b, e] : s2_out.calls) chunks.emplace_back(b / 2, e / 2);
    for (int64_t r = 0; r < B; ++r) at_hook[r] = {s2_out.values[2 * r], s2_out.values[2 * r + 1]};
    EXPECT_EQ(s_out.values, want.fixed[0].ToVector<std::string>());
    EXPECT_EQ(s3_out.values, want.fixed[2].ToVector<std::string>());
    EXPECT_TRUE(SharesStorage(got.fixed[3], targets[3].numbers));
    std::sort(chunks.begin(), chunks.end());
    ASSERT_FALSE(chunks.empty());
    EXPECT_EQ(chunks.front().first, 0);
    EXPECT_EQ(chunks.back().second, B);
    for (size_t c = 0; c < chunks.size(); ++c) {
      EXPECT_LE(chunks[c].second - chunks[c].first, internal::kRecordChunk);
      if (c > 0) {
        EXPECT_EQ(chunks[c].first, chunks[c - 1].second);
      }
    }
    for (int f = 0; f < 3; ++f) {
      EXPECT_EQ(got.fixed[f].Dims().back(), 2);
      EXPECT_EQ(strings(got.fixed[f]), want.fixed[f].ToVector<std::string>()) << "fixed " << f;
    }
    const std::vector<std::string> s2 = want.fixed[1].ToVector<std::string>();
    for (int64_t r = 0; r < B; ++r) {
      EXPECT_EQ(at_hook[r], (std::vector<std::string>{s2[2 * r], s2[2 * r + 1]})) << r;
    }
    EXPECT_EQ(got.fixed[3].ToVector<int64_t>(), want.fixed[3].ToVector<int64_t>());
    EXPECT_EQ(strings(got.var_len[0].values()), want.var_len[0].values().ToVector<std::string>());
    EXPECT_EQ(got.var_len[1].values().ToVector<int64_t>(),
              want.var_len[1].values().ToVector<int64_t>());
    EXPECT_EQ(got.var_len[2].values().ToVector<float>(),
              want.var_len[2].values().ToVector<float>());
    for (int v = 0; v < 3; ++v) {
      EXPECT_EQ(got.var_len[v].offsets().ToVector<int64_t>(),
                want.var_len[v].offsets().ToVector<int64_t>());
    }
  }
  EXPECT_EQ(want.var_len[0].lengths().ToVector<int64_t>()[17], 600);
  EXPECT_EQ(want.fixed[2].ToVector<std::string>()[0], "z");  // a default of one, repeated
  EXPECT_EQ(want.fixed[0].ToVector<std::string>()[0], "dflt");
}

TEST(TfExampleTest, MalformedWireIsCorruptNamingTheRecordAndByte) {
  const std::string good = Example(Entry("a", Int64s({1})));
  auto corrupt = [&](const std::string& rec, const std::vector<std::string>& parts) {
    ExpectError(
        [&] {
          ParseExamples({good, rec}, VarSpec(DType::kInt64));
        },
        ErrorCode::kCorrupt, parts);
  };
  corrupt(good + Tag(5, 3), {"record 1", "group (wire type 3)"});
  corrupt(Example(Entry("a", Tag(7, 4) + Int64s({1}))), {"feature 'a'", "group (wire type 4)"});
  corrupt(good + Tag(5, 6), {"invalid wire type 6"});
  corrupt(Example(Entry("a", Ld(3, Ld(1, std::string(10, '\xff') + '\x01')))),
          {"record 1, feature 'a'", "longer than 10 bytes"});
  corrupt(good + std::string(11, '\x80'), {"longer than 10 bytes"});
  corrupt(good.substr(0, good.size() - 1),
          {"record 1: malformed tf.Example at byte 1 of 13", "runs past the end of its message"});
  corrupt(Tag(1, 2) + Varint(uint64_t{1} << 60), {"a length of 1152921504606846976 bytes"});
  corrupt(Example(Entry("a", Ld(2, Ld(1, "123")))), {"packed float list of 3 bytes"});
  corrupt(Example(Ld(1, Ld(1, "a") + Ld(2, Int64s({1})) + Ld(2, Int64s({2})))),
          {"a map entry with two values"});
  corrupt(Tag(0, 0) + Varint(1), {"field number 0 is invalid"});
  corrupt(good + Tag(9, 1) + "1234567", {"8-byte field runs past"});
  // A lying length inside the list.
  corrupt(Example(Entry("a", Ld(3, Tag(1, 2) + Varint(5) + Varint(1)))), {"a length of 5 bytes"});
}

// Every prefix of a record parses or fails cleanly (never reads past it: run under ASan).
TEST(TfExampleTest, TruncationAtEveryByteNeverReadsPastTheRecord) {
  const std::string rec =
      Example(Entry("i", Int64s({1, -1, 300})) + Entry("f", Floats({1, 2})) +
              Entry("s", Bytes({"hello", ""})) + Entry("u", Ld(3, Tag(1, 0) + Varint(77))));
  ExampleSpec spec;
  spec.var_len = {
      {"i", DType::kInt64}, {"f", DType::kFloat32}, {"s", DType::kString}, {"u", DType::kInt64}};
  int failures = 0;
  for (size_t n = 0; n < rec.size(); ++n) {
    std::vector<char> heap(rec.begin(), rec.begin() + n);  // exact size: ASan sees overreads
    try {
      ParseExamples({std::string_view(heap.data(), n)}, spec);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kCorrupt) << e.what();
      ++failures;
    }
  }
  EXPECT_EQ(failures, static_cast<int>(rec.size()) - 1);  // only the empty prefix is a record
}

TEST(TfExampleTest, SpecAndWriterErrors) {
  ExampleSpec dup;
  dup.fixed.push_back({"a", DType::kInt64, {}, {}});
  dup.var_len.push_back({"a", DType::kInt64});
  ExpectError([&] { ParseExamples({}, dup); }, {"key 'a' appears twice in the spec"});
  ExpectError([&] { ParseExamples({}, VarSpec(DType::kInt32)); },
              {"VarLenFeature 'a' has dtype int32", "int64, float32 or string"});
  ExpectError([&] { ParseExamples({}, FixedSpec(DType::kInt64, {-1})); }, {"shape [-1]"});
  ExpectError(
      [&] {
        ParseExamples({}, FixedSpec(DType::kInt64, {3}, Tensor::FromVector<int64_t>({1, 2})));
      },
      {"needs a default_value of 3 elements"});
  ExpectError(
      [&] { ParseExamples({}, FixedSpec(DType::kInt64, {1}, Tensor::FromVector<float>({1}))); },
      {"default_value is float32"});
  ExpectError(
      [&] {
        SerializeExample({{"a", Tensor::FromVector<int32_t>({1})}});
      },
      {"SerializeExample: feature 'a' has dtype int32", "Copy"});
  ExpectError(
      [&] {
        SerializeExample(
            {{"a", Tensor::FromVector<int64_t>({1})}, {"a", Tensor::FromVector<int64_t>({2})}});
      },
      {"key 'a' appears twice"});
  ExpectError(
      [&] {
        SerializeExamples(
            {{"a", Tensor::Zeros({2}, DType::kInt64)}, {"b", Tensor::Zeros({3}, DType::kInt64)}},
            {});
      },
      {"'b' has 3 rows but the ones before it have 2"});
}

// Random batches: serialized by SerializeExamples, parsed back, equal; and bit-identical at one
// and two threads (a hand-encoded copy checks the writer against the naive encoder).
TEST(TfExampleTest, RoundTripsRandomBatchesAtOneAndTwoThreads) {
  std::mt19937_64 rng(5);
  const int64_t B = 3000;
  std::vector<int64_t> ints(B * 2);
  std::vector<float> floats(B * 3);
  std::vector<std::string> strs(B);
  for (auto& v : ints) v = static_cast<int64_t>(rng());
  for (auto& v : floats) v = static_cast<float>(static_cast<int64_t>(rng() % 2000) - 1000) / 7;
  for (auto& s : strs) s = std::string(rng() % 5, static_cast<char>(rng() % 3));  // NULs
  std::vector<int64_t> lengths(B), jint;
  std::vector<std::string> jstr;
  for (int64_t i = 0; i < B; ++i) {
    lengths[i] = static_cast<int64_t>(rng() % 4);
    for (int64_t k = 0; k < lengths[i]; ++k) {
      jint.push_back(static_cast<int64_t>(rng()) >> (rng() % 64));
      jstr.push_back(std::string(rng() % 3, 'z'));
    }
  }
  Tensor ti = Tensor::FromVector(ints, {B, 2});
  Tensor tf = Tensor::FromVector(floats, {B, 3, 1});
  Tensor ts = Tensor::FromVector(strs, {B});
  Tensor tl = Tensor::FromVector(lengths);
  JaggedTensor ji = JaggedTensor::FromLengths(Tensor::FromVector(jint), tl);
  JaggedTensor js = JaggedTensor::FromLengths(Tensor::FromVector(jstr), tl);
  const std::string nul_key("k\0ey", 4);
  const auto records =
      SerializeExamples({{"i", ti}, {"f", tf}, {nul_key, ts}}, {{"ji", ji}, {"js", js}});
  ASSERT_EQ(static_cast<int64_t>(records.size()), B);
  // Row 0 by the naive encoder.
  {
    std::vector<std::string> row_js(jstr.begin(), jstr.begin() + lengths[0]);
    std::string want =
        Entry("i", Int64s({ints[0], ints[1]})) +
        Entry("f", Floats({floats[0], floats[1], floats[2]})) + Entry(nul_key, Bytes({strs[0]})) +
        Entry("ji", Int64s({jint.begin(), jint.begin() + lengths[0]})) + Entry("js", Bytes(row_js));
    if (lengths[0] == 0) {  // proto3 writes no packed field for an empty list
      want = Entry("i", Int64s({ints[0], ints[1]})) +
             Entry("f", Floats({floats[0], floats[1], floats[2]})) +
             Entry(nul_key, Bytes({strs[0]})) + Entry("ji", Ld(3, "")) + Entry("js", Ld(1, ""));
    }
    EXPECT_EQ(records[0], Example(want));
  }
  ExampleSpec spec;
  spec.fixed = {{"i", DType::kInt64, {2}, {}},
                {"f", DType::kFloat32, {3, 1}, {}},
                {nul_key, DType::kString, {}, {}}};
  spec.var_len = {{"ji", DType::kInt64}, {"js", DType::kString}};
  std::vector<std::string_view> views(records.begin(), records.end());
  auto parsed = AtThreadCounts({1, 2}, [&] { return ParseExamples(views, spec); });
  for (const ParsedExamples& p : parsed) {
    EXPECT_EQ(p.fixed[0].ToVector<int64_t>(), ints);
    EXPECT_EQ(p.fixed[1].Dims(), (std::vector<int64_t>{B, 3, 1}));
    EXPECT_EQ(p.fixed[1].ToVector<float>(), floats);
    EXPECT_EQ(p.fixed[2].ToVector<std::string>(), strs);
    EXPECT_EQ(p.var_len[0].values().ToVector<int64_t>(), jint);
    EXPECT_EQ(p.var_len[0].lengths().ToVector<int64_t>(), lengths);
    EXPECT_EQ(p.var_len[1].values().ToVector<std::string>(), jstr);
    EXPECT_EQ(p.var_len[1].offsets().ToVector<int64_t>(),
              p.var_len[0].offsets().ToVector<int64_t>());
  }
  // Through a TFRecord batch as well.
  const std::string framed = FrameTFRecords(views);
  TFRecordBatch batch = ReadTFRecordBatchFromMemory(framed.data(), framed.size(), "m");
  EXPECT_EQ(ParseExampleBatch(batch, spec).var_len[0].values().ToVector<int64_t>(), jint);
  // The first bad record is the one reported at any thread count.
  std::vector<std::string> bad(records.begin(), records.end());
  bad[2500] = Example(Entry("i", Floats({1, 2})));
  bad[700] = bad[700].substr(0, 5);
  std::vector<std::string_view> bad_views(bad.begin(), bad.end());
  auto msgs = AtThreadCounts({1, 2}, [&] {
    return std::string(CatchError([&] { ParseExamples(bad_views, spec); }).what());
  });
  EXPECT_HAS(msgs[0], "record 700");
  EXPECT_EQ(msgs[0], msgs[1]);
}

TEST(TfExampleTest, SerializeExampleOfOneRow) {
  const std::string rec = SerializeExample({{"x", Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2})},
                                            {"e", Tensor::Zeros({0}, DType::kInt64)}});
  EXPECT_EQ(rec, Example(Entry("x", Floats({1, 2, 3, 4})) + Entry("e", Ld(3, ""))));
  ParsedExamples p = ParseExamples({rec}, FixedSpec(DType::kFloat32, {4}, {}, "x"));
  EXPECT_EQ(p.fixed[0].ToVector<float>(), (std::vector<float>{1, 2, 3, 4}));
}

// --- SparseFeature and RaggedFeature ------------------------------------------------------

std::vector<int64_t> I64(const Tensor& t) { return t.ToVector<int64_t>(); }
std::vector<int64_t> Splits(const Tensor& t) {
  if (t.dtype() == DType::kInt64) return t.ToVector<int64_t>();
  const std::vector<int32_t> v = t.ToVector<int32_t>();
  return std::vector<int64_t>(v.begin(), v.end());
}
using Nested = std::vector<std::vector<int64_t>>;
Nested NestedSplits(const RaggedOutput& r) {
  Nested n;
  for (const Tensor& t : r.nested_row_splits) n.push_back(Splits(t));
  return n;
}

// The expected values are what tf.io.parse_example (TensorFlow 2.21) returns for the same
// records and features.
TEST(TfExampleTest, SparseFeatureAsTensorFlowMergesIt) {
  const std::vector<std::string> records = {
      Example(Entry("val", Floats({0.5f, -1.0f, 2.0f})) + Entry("ix0", Int64s({3, 1, 3})) +
              Entry("ix1", Int64s({1, 0, 0}))),
      Example(""),
      Example(Entry("val", Floats({7.0f})) + Entry("ix0", Int64s({0})) +
              Entry("ix1", Int64s({2})))};
  const std::vector<std::string_view> views(records.begin(), records.end());
  for (bool sorted : {false, true}) {
    ExampleSpec spec;
    spec.sparse.push_back({"sp", {"ix0", "ix1"}, "val", DType::kFloat32, {4, 3}, sorted});
    spec.sparse.push_back({"one", {"ix0"}, "val", DType::kFloat32, {4}, sorted});
    spec.var_len.push_back({"val", DType::kFloat32});  // shared with the SparseFeatures
    const ParsedExamples p = ParseExamples(views, spec);
    const SparseTensor& sp = p.Sparse("sp");
    const SparseTensor& one = p.Sparse("one");
    EXPECT_EQ(sp.shape(), (std::vector<int64_t>{3, 4, 3}));
    EXPECT_EQ(one.shape(), (std::vector<int64_t>{3, 4}));
    EXPECT_EQ(p.VarLen("val").values().ToVector<float>(),
              (std::vector<float>{0.5f, -1.0f, 2.0f, 7.0f}));
    if (!sorted) {
      EXPECT_EQ(I64(sp.indices()), (std::vector<int64_t>{0, 1, 0, 0, 3, 0, 0, 3, 1, 2, 0, 2}));
      EXPECT_EQ(sp.values().ToVector<float>(), (std::vector<float>{-1.0f, 2.0f, 0.5f, 7.0f}));
      EXPECT_EQ(I64(one.indices()), (std::vector<int64_t>{0, 1, 0, 3, 0, 3, 2, 0}));
      // A repeated index keeps the records' order (a stable sort).
      EXPECT_EQ(one.values().ToVector<float>(), (std::vector<float>{-1.0f, 0.5f, 2.0f, 7.0f}));
      EXPECT_TRUE(sp.OrderKnown());
    } else {
      EXPECT_EQ(I64(sp.indices()), (std::vector<int64_t>{0, 3, 1, 0, 1, 0, 0, 3, 0, 2, 0, 2}));
      EXPECT_EQ(sp.values().ToVector<float>(), (std::vector<float>{0.5f, -1.0f, 2.0f, 7.0f}));
      EXPECT_FALSE(sp.OrderKnown());
    }
  }
  // String values; an absent index key with absent values is an empty row.
  ExampleSpec s;
  s.sparse.push_back({"t", {"i"}, "w", DType::kString, {10}, false});
  const std::string r0 = Example(Entry("w", Bytes({"b", "a"})) + Entry("i", Int64s({9, 2})));
  const ParsedExamples p = ParseExamples({r0, Example("")}, s);
  EXPECT_EQ(p.sparse[0].values().ToVector<std::string>(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(I64(p.sparse[0].indices()), (std::vector<int64_t>{0, 2, 0, 9}));
}

TEST(TfExampleTest, SparseFeatureErrorsNameTheRecordAndKeys) {
  ExampleSpec s;
  s.sparse.push_back({"sp", {"i"}, "v", DType::kInt64, {5}, false});
  const std::string good = Example(Entry("v", Int64s({1})) + Entry("i", Int64s({4})));
  ExpectError(
      [&] {
        ParseExamples({good, Example(Entry("v", Int64s({1, 2})) + Entry("i", Int64s({0})))}, s);
      },
      ErrorCode::kInvalidArgument,
      {"record 1", "SparseFeature 'sp'", "index key 'i' holds 1 values", "'v' holds 2"});
  ExpectError(
      [&] { ParseExamples({Example(Entry("v", Int64s({1})) + Entry("i", Int64s({5})))}, s); },
      ErrorCode::kOutOfRange, {"record 0", "'i' holds 5 at position 0", "[0, 5)"});
  ExpectError(
      [&] { ParseExamples({Example(Entry("v", Int64s({1})) + Entry("i", Int64s({-1})))}, s); },
      ErrorCode::kOutOfRange, {"holds -1"});
  ExpectError(
      [&] { ParseExamples({Example(Entry("v", Int64s({1})) + Entry("i", Floats({1})))}, s); },
      {"record 0", "feature 'i'", "float_list"});
  ExampleSpec bad = s;
  bad.sparse[0].size = {5, 2};
  ExpectError([&] { ParseExamples({good}, bad); }, {"'sp' has 1 index keys and a size of 2"});
  bad = s;
  bad.fixed.push_back({"i", DType::kInt64, {1}, {}});
  ExpectError([&] { ParseExamples({good}, bad); }, {"'i' is a dense", "must not intersect"});
  bad = s;
  bad.var_len.push_back({"v", DType::kFloat32});
  ExpectError([&] { ParseExamples({good}, bad); }, ErrorCode::kDTypeMismatch,
              {"'v' is read as float32", "int64"});
  bad = s;
  bad.var_len.push_back({"sp", DType::kInt64});
  ExpectError([&] { ParseExamples({good}, bad); }, {"'sp' names two features"});
}

// FlatSpec: the VarLen keys of a spec whose composites each read a key of their own, in the
// order var_len, fixed_sequence, ragged; other specs are not flat, and bad ones are refused as
// ParseExamples refuses them.
TEST(TfExampleTest, FlatSpecsListEveryKeyOnceInOutputOrder) {
  ExampleSpec s;
  s.fixed.push_back({"f", DType::kInt64, {1}, {}});
  s.ragged.push_back({"r", DType::kString, "", {}, DType::kInt64});
  s.var_len.push_back({"v", DType::kFloat32});
  s.fixed_sequence.push_back({"q", DType::kInt64, {2}, {}});
  const std::optional<ExampleSpec> flat = internal::FlatSpec(s);
  ASSERT_TRUE(flat.has_value());
  ASSERT_EQ(flat->fixed.size(), 1u);
  EXPECT_EQ(flat->fixed[0].key, "f");
  std::vector<std::pair<std::string, DType>> keys;
  for (const VarLenFeature& f : flat->var_len) keys.push_back({f.key, f.dtype});
  EXPECT_EQ(keys, (std::vector<std::pair<std::string, DType>>{
                      {"v", DType::kFloat32}, {"q", DType::kInt64}, {"r", DType::kString}}));
  EXPECT_TRUE(flat->ragged.empty() && flat->fixed_sequence.empty() && flat->sparse.empty());

  ExampleSpec parts = s;
  parts.ragged[0].partitions.push_back(RaggedPartition::RowLengths("l"));
  EXPECT_FALSE(internal::FlatSpec(parts).has_value());
  ExampleSpec shared = s;  // two RaggedFeatures of one value key
  shared.ragged.push_back({"r2", DType::kString, "r", {}, DType::kInt64});
  EXPECT_FALSE(internal::FlatSpec(shared).has_value());
  ExampleSpec sparse = s;
  sparse.sparse.push_back({"sp", {"i"}, "w", DType::kFloat32, {4}, false});
  EXPECT_FALSE(internal::FlatSpec(sparse).has_value());
  ExampleSpec bad = s;
  bad.fixed_sequence[0].shape = {-1};
  ExpectError([&] { internal::FlatSpec(bad); }, {"'q' has shape", "every dim must be >= 0"});
  bad = s;
  bad.ragged.push_back({"f2", DType::kInt64, "f", {}, DType::kInt64});
  ExpectError([&] { internal::FlatSpec(bad); }, {"'f' is a dense", "must not intersect"});
}

TEST(TfExampleTest, RaggedFeatureEveryPartitionAsTensorFlowBuildsIt) {
  const std::string r0 =
      Example(Entry("w", Floats({1.5f, 2.5f})) + Entry("v", Int64s({3, 1, 4, 1, 5, 9})) +
              Entry("s1", Int64s({0, 2, 3, 3, 6})) + Entry("s2", Int64s({0, 2, 3, 4})) +
              Entry("l", Int64s({2, 0, 4})) + Entry("st", Int64s({0, 2, 2})) +
              Entry("lim", Int64s({2, 2, 6})) + Entry("ids", Int64s({0, 0, 2, 2, 2, 3})));
  const std::string r1 = Example(
      Entry("v", Int64s({2, 7, 1, 8, 2, 8, 1, 5})) + Entry("s1", Int64s({0, 3, 4, 5, 8})) +
      Entry("s2", Int64s({0, 1, 1, 4})) + Entry("l", Int64s({8})) + Entry("st", Int64s({0})) +
      Entry("lim", Int64s({8})) + Entry("ids", Int64s({1, 1, 1, 1, 1, 1, 1, 1})));
  const std::string r2 =
      Example(Entry("s1", Int64s({})) + Entry("s2", Int64s({})) + Entry("l", Int64s({})) +
              Entry("st", Int64s({})) + Entry("lim", Int64s({})) + Entry("ids", Int64s({})));
  using P = RaggedPartition;
  ExampleSpec spec;
  spec.ragged = {
      {"f1", DType::kInt64, "v", {}},
      {"w64", DType::kFloat32, "w", {}, DType::kInt64},
      {"f2", DType::kInt64, "v", {P::RowSplits("s1")}},
      {"f3", DType::kInt64, "v", {P::RowSplits("s2"), P::RowSplits("s1")}},
      {"len", DType::kInt64, "v", {P::RowLengths("l")}},
      {"st", DType::kInt64, "v", {P::RowStarts("st")}},
      {"lim", DType::kInt64, "v", {P::RowLimits("lim")}},
      {"ids", DType::kInt64, "v", {P::ValueRowIds("ids")}},
      {"u2", DType::kInt64, "v", {P::UniformRowLength(2)}},
      {"u2s", DType::kInt64, "v", {P::UniformRowLength(2), P::RowSplits("s1")}},
  };
  auto parsed = AtThreadCounts({1, 2}, [&] { return ParseExamples({r0, r1, r2}, spec); });
  const std::vector<int64_t> all = {3, 1, 4, 1, 5, 9, 2, 7, 1, 8, 2, 8, 1, 5};
  for (const ParsedExamples& p : parsed) {
    EXPECT_EQ(p.ragged_keys.size(), 10u);
    EXPECT_EQ(I64(p.Ragged("f1").flat_values), all);
    EXPECT_EQ(p.Ragged("f1").nested_row_splits[0].dtype(), DType::kInt32);
    EXPECT_EQ(NestedSplits(p.Ragged("f1")), (Nested{{0, 6, 14, 14}}));
    EXPECT_EQ(p.Ragged("w64").flat_values.ToVector<float>(), (std::vector<float>{1.5f, 2.5f}));
    EXPECT_EQ(p.Ragged("w64").nested_row_splits[0].dtype(), DType::kInt64);
    EXPECT_EQ(NestedSplits(p.Ragged("w64")), (Nested{{0, 2, 2, 2}}));
    EXPECT_EQ(NestedSplits(p.Ragged("f2")), (Nested{{0, 4, 8, 8}, {0, 2, 3, 3, 6, 9, 10, 11, 14}}));
    EXPECT_EQ(NestedSplits(p.Ragged("f3")),
              (Nested{{0, 3, 6, 6}, {0, 2, 3, 4, 5, 5, 8}, {0, 2, 3, 3, 6, 9, 10, 11, 14}}));
    for (const char* k : {"len", "st", "lim"}) {
      EXPECT_EQ(NestedSplits(p.Ragged(k)), (Nested{{0, 3, 4, 4}, {0, 2, 2, 6, 14}})) << k;
    }
    EXPECT_EQ(NestedSplits(p.Ragged("ids")), (Nested{{0, 4, 6, 6}, {0, 2, 2, 5, 6, 6, 14}}));
    EXPECT_EQ(p.Ragged("u2").flat_values.Dims(), (std::vector<int64_t>{7, 2}));
    EXPECT_EQ(I64(p.Ragged("u2").flat_values), all);
    EXPECT_EQ(NestedSplits(p.Ragged("u2")), (Nested{{0, 3, 7, 7}}));
    EXPECT_EQ(NestedSplits(p.Ragged("u2s")),
              (Nested{{0, 2, 4, 4}, {0, 2, 4, 6, 8}, {0, 2, 3, 3, 6, 9, 10, 11, 14}}));
  }
  // The value key defaults to the feature's own key; two trailing uniform lengths are two dense
  // dims.
  ExampleSpec own;
  own.ragged = {{"v", DType::kInt64, "", {P::UniformRowLength(1), P::UniformRowLength(2)}}};
  const RaggedOutput r = ParseExamples({r0, r1}, own).ragged[0];
  EXPECT_EQ(r.flat_values.Dims(), (std::vector<int64_t>{7, 1, 2}));
  EXPECT_EQ(NestedSplits(r), (Nested{{0, 3, 7}}));
}

TEST(TfExampleTest, RaggedFeaturePartitionsThatDoNotTileAreErrors) {
  using P = RaggedPartition;
  auto parse = [](const std::string& part, const std::vector<int64_t>& d, P p) {
    ExampleSpec s;
    s.ragged = {{"r", DType::kInt64, "v", {p}}};
    ParseExamples({Example(Entry("v", Int64s({1, 2, 3}))),
                   Example(Entry("v", Int64s({1, 2, 3})) + Entry(part, Int64s(d)))},
                  s);
  };
  // Record 0 has values and no partition: that alone is the error for every keyed kind.
  ExpectError([&] { parse("k", {}, P::RowLengths("k")); },
              {"record 0", "RaggedFeature 'r'", "RowLengths('k')", "sums to 0", "3 values"});
  ExampleSpec s;
  s.ragged = {{"r", DType::kInt64, "v", {P::RowLengths("k")}}};
  auto one = [&](P p, const std::vector<int64_t>& d) {
    s.ragged[0].partitions = {p};
    ParseExamples({Example(Entry("v", Int64s({1, 2, 3})) + Entry("k", Int64s(d)))}, s);
  };
  ExpectError([&] { one(P::RowLengths("k"), {2, 2}); }, {"row length 2 at position 1"});
  ExpectError([&] { one(P::RowLengths("k"), {-1, 4}); }, {"row length -1"});
  ExpectError([&] { one(P::RowSplits("k"), {1, 3}); }, {"RowSplits('k') starts at 1"});
  ExpectError([&] { one(P::RowSplits("k"), {0, 2, 1, 3}); }, {"holds 1 at position 2 after 2"});
  ExpectError([&] { one(P::RowSplits("k"), {0, 2}); }, {"ends at 2 but the record has 3 values"});
  ExpectError([&] { one(P::RowStarts("k"), {0, 4}); }, {"holds 4 at position 1"});
  ExpectError([&] { one(P::RowLimits("k"), {2, 1, 3}); }, {"holds 1 at position 1 after 2"});
  ExpectError([&] { one(P::RowLimits("k"), {1, 2}); }, {"ends at 2"});
  ExpectError([&] { one(P::ValueRowIds("k"), {0, 1}); }, {"holds 2 row ids for the record's 3"});
  ExpectError([&] { one(P::ValueRowIds("k"), {0, 2, 1}); }, {"row id 1 at position 2 after 2"});
  ExpectError(
      [&] {
        one(P::ValueRowIds("k"), {0, 0, int64_t{1} << 40});
      },
      {"row id 1099511627776", "empty rows"});
  ExpectError([&] { one(P::ValueRowIds("k"), {-1, 0, 0}); }, {"row id -1"});
  ExpectError([&] { one(P::UniformRowLength(2), {}); },
              {"UniformRowLength(2) does not divide the record's 3 values"});
  ExpectError([&] { one(P::UniformRowLength(0), {}); }, {"uniform row length is >= 1"});
  ExpectError(
      [&] {
        one(P::RowLengths("k"), {1, 2});
        s.ragged[0].row_splits_dtype = DType::kInt16;
        one(P::RowLengths("k"), {1, 2});
      },
      {"row_splits_dtype int16"});
  s.ragged[0].row_splits_dtype = DType::kInt32;
  ExampleSpec clash = s;
  clash.ragged.push_back({"q", DType::kInt64, "v", {}, DType::kInt64});
  ExpectError([&] { ParseExamples({Example("")}, clash); },
              {"'v' is read with row_splits_dtype int32", "int64"});
  clash = s;
  clash.var_len.push_back({"k", DType::kInt64});
  ExpectError([&] { ParseExamples({Example("")}, clash); }, {"'k' is a sparse", "a ragged"});
}

// Random nested structures, each partition level encoded by a random kind, parsed back to the
// lengths they were made from.
TEST(TfExampleTest, RaggedFeatureRandomNestingsRoundTrip) {
  using K = RaggedPartition::Kind;
  std::mt19937_64 rng(11);
  const K kinds[] = {K::kRowSplits, K::kRowLengths, K::kRowStarts, K::kRowLimits, K::kValueRowIds};
  for (int trial = 0; trial < 40; ++trial) {
    const int64_t B = 1 + static_cast<int64_t>(rng() % 300);
    const int L = 1 + static_cast<int>(rng() % 3);
    std::vector<K> kind(L);
    for (auto& k : kind) k = kinds[rng() % 5];
    // want[l]: every record's row lengths at level l (outermost 0), concatenated.
    std::vector<std::vector<int64_t>> want(L + 1);
    std::vector<std::string> records(B);
    std::vector<int64_t> values;
    for (int64_t r = 0; r < B; ++r) {
      int64_t units = static_cast<int64_t>(rng() % 12);
      std::string entries;
      std::vector<int64_t> v(units);
      for (auto& x : v) x = static_cast<int64_t>(rng() % 1000);
      values.insert(values.end(), v.begin(), v.end());
      entries += Entry("v", Int64s(v));
      std::vector<std::vector<int64_t>> rec(L);
      for (int l = L - 1; l >= 0; --l) {  // innermost first, as the parser applies them
        std::vector<int64_t> len;
        int64_t left = units;
        while (left > 0 || (rng() % 4 == 0 && len.size() < 5)) {
          const int64_t n = left == 0 ? 0 : static_cast<int64_t>(rng() % (left + 1));
          len.push_back(n);
          left -= n;
        }
        if (kind[l] == K::kValueRowIds) {
          while (!len.empty() && len.back() == 0) len.pop_back();  // ids cannot say those
        }
        std::vector<int64_t> d;
        int64_t acc = 0;
        if (kind[l] == K::kRowSplits) d.push_back(0);
        for (size_t j = 0; j < len.size(); ++j) {
          if (kind[l] == K::kRowStarts) d.push_back(acc);
          acc += len[j];
          if (kind[l] == K::kRowSplits || kind[l] == K::kRowLimits) d.push_back(acc);
          if (kind[l] == K::kRowLengths) d.push_back(len[j]);
          if (kind[l] == K::kValueRowIds) d.insert(d.end(), len[j], static_cast<int64_t>(j));
        }
        if (kind[l] == K::kRowSplits && len.empty() && rng() % 2) d.clear();  // [] or [0]
        entries += Entry("p" + std::to_string(l), Int64s(d));
        rec[l] = len;
        units = static_cast<int64_t>(len.size());
      }
      want[0].push_back(units);
      for (int l = 0; l < L; ++l)
        want[l + 1].insert(want[l + 1].end(), rec[l].begin(), rec[l].end());
      records[r] = Example(entries);
    }
    ExampleSpec spec;
    RaggedFeature f{"r", DType::kInt64, "v", {}, trial % 2 ? DType::kInt64 : DType::kInt32};
    for (int l = 0; l < L; ++l) {
      f.partitions.push_back({kind[l], "p" + std::to_string(l), 0});
    }
    spec.ragged.push_back(f);
    const std::vector<std::string_view> views(records.begin(), records.end());
    const RaggedOutput out = ParseExamples(views, spec).ragged[0];
    ASSERT_EQ(out.nested_row_splits.size(), static_cast<size_t>(L + 1));
    EXPECT_EQ(I64(out.flat_values), values);
    for (int l = 0; l <= L; ++l) {
      std::vector<int64_t> splits = {0};
      for (int64_t n : want[l]) splits.push_back(splits.back() + n);
      EXPECT_EQ(Splits(out.nested_row_splits[l]), splits) << "trial " << trial << " level " << l;
      EXPECT_EQ(out.nested_row_splits[l].dtype(), f.row_splits_dtype);
    }
  }
}

// As tf.io.parse_example reads FixedLenSequenceFeatures from tf.Examples: rows of `shape`,
// padded to the batch's longest record.
TEST(TfExampleTest, FixedLenSequenceFeaturePadsToTheLongestRecord) {
  const std::vector<std::string> records = {Example(Entry("s", Int64s({1, 2, 3, 4}))), Example(""),
                                            Example(Entry("s", Int64s({5, 6})))};
  const std::vector<std::string_view> views(records.begin(), records.end());
  ExampleSpec spec;
  spec.fixed_sequence.push_back({"s", DType::kInt64, {2}, Tensor::FromScalar<int64_t>(-1)});
  spec.fixed_sequence.push_back({"t", DType::kString, {}, {}});
  const ParsedExamples p = ParseExamples(views, spec);
  EXPECT_EQ(p.FixedSequence("s").Dims(), (std::vector<int64_t>{3, 2, 2}));
  EXPECT_EQ(I64(p.FixedSequence("s")),
            (std::vector<int64_t>{1, 2, 3, 4, -1, -1, -1, -1, 5, 6, -1, -1}));
  EXPECT_EQ(p.FixedSequence("t").Dims(), (std::vector<int64_t>{3, 0}));
  ExpectError(
      [&] {
        ParseExamples({records[0], Example(Entry("s", Int64s({1})))}, spec);
      },
      {"record 1", "FixedLenSequenceFeature 's'", "holds 1 values, not a multiple of the 2"});
  spec.fixed_sequence[0].default_value = Tensor::FromVector<int64_t>({1, 2});
  ExpectError([&] { ParseExamples(views, spec); }, {"default_value (the padding)", "one int64"});
}

// --- tf.SequenceExample -------------------------------------------------------------------

// SequenceExample{context = 1 (Features), feature_lists = 2 (FeatureLists)}; a FeatureList is
// its steps, each a Feature.
std::string Steps(const std::vector<std::string>& features) {
  std::string s;
  for (const std::string& f : features) s += Ld(1, f);
  return s;
}
std::string SeqExample(const std::string& context,
                       const std::vector<std::pair<std::string, std::string>>& lists) {
  std::string l;
  for (const auto& [key, steps] : lists) l += Ld(1, Ld(1, key) + Ld(2, steps));
  return Ld(1, context) + Ld(2, l);
}

// The expected values are what tf.io.parse_sequence_example (TensorFlow 2.21) returns.
TEST(TfExampleTest, SequenceExamplesAsTensorFlowParsesThem) {
  const std::string v = Steps({Int64s({1}), Int64s({}), Int64s({2, 3, 4})});
  const std::vector<std::string> records = {
      SeqExample(Entry("c", Int64s({1})),
                 {{"d", Steps({Int64s({1, 2}), Int64s({3, 4})})}, {"v", v}, {"v2", v}}),
      SeqExample(Entry("c", Int64s({2})), {{"d", Steps({Int64s({5, 6})})}, {"v", ""}}),
      SeqExample("", {})};
  const std::vector<std::string_view> views(records.begin(), records.end());
  SequenceExampleSpec spec;
  spec.context.fixed.push_back({"c", DType::kInt64, {}, Tensor::FromScalar<int64_t>(0)});
  spec.feature_list_dense.push_back({"d", DType::kInt64, {2}, {}, true});
  spec.feature_list_sparse.push_back({"v", DType::kInt64});
  spec.feature_list_ragged.push_back({"r", DType::kInt64, "v2", {}});
  auto parsed = AtThreadCounts({1, 2}, [&] { return ParseSequenceExamples(views, spec); });
  for (const ParsedSequenceExamples& p : parsed) {
    EXPECT_EQ(I64(p.context.Fixed("c")), (std::vector<int64_t>{1, 2, 0}));
    EXPECT_EQ(p.FeatureListDense("d").Dims(), (std::vector<int64_t>{3, 2, 2}));
    EXPECT_EQ(I64(p.FeatureListDense("d")),
              (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 0, 0, 0, 0, 0, 0}));
    EXPECT_EQ(I64(p.FeatureListLength("d")), (std::vector<int64_t>{2, 1, 0}));
    const SparseTensor& sv = p.FeatureListSparse("v");
    EXPECT_EQ(I64(sv.indices()), (std::vector<int64_t>{0, 0, 0, 0, 2, 0, 0, 2, 1, 0, 2, 2}));
    EXPECT_EQ(I64(sv.values()), (std::vector<int64_t>{1, 2, 3, 4}));
    EXPECT_EQ(sv.shape(), (std::vector<int64_t>{3, 3, 3}));
    EXPECT_EQ(I64(p.FeatureListRagged("r").flat_values), (std::vector<int64_t>{1, 2, 3, 4}));
    EXPECT_EQ(NestedSplits(p.FeatureListRagged("r")), (Nested{{0, 3, 3, 3}, {0, 1, 1, 4}}));
  }
  // A step with no list: no values for a VarLenFeature (TensorFlow: dense_shape [2, 2, 1]).
  SequenceExampleSpec vs;
  vs.feature_list_sparse.push_back({"v", DType::kInt64});
  const std::vector<std::string> empty_step = {SeqExample("", {{"v", Steps({"", Int64s({1})})}}),
                                               SeqExample("", {})};
  const ParsedSequenceExamples e = ParseSequenceExamples({empty_step[0], empty_step[1]}, vs);
  EXPECT_EQ(I64(e.feature_list_sparse[0].indices()), (std::vector<int64_t>{0, 1, 0}));
  EXPECT_EQ(e.feature_list_sparse[0].shape(), (std::vector<int64_t>{2, 2, 1}));
}

TEST(TfExampleTest, SequenceExampleRaggedPartitionsPerStep) {
  // Feature list "v" of two steps, partitioned per step by "l" (row lengths of each step).
  using P = RaggedPartition;
  const std::vector<std::string> records = {
      SeqExample("", {{"v", Steps({Int64s({1, 2, 3}), Int64s({4})})},
                      {"l", Steps({Int64s({2, 1}), Int64s({0, 1})})}}),
      SeqExample("", {{"v", Steps({Int64s({5, 6})})}, {"l", Steps({Int64s({2})})}})};
  const std::vector<std::string_view> views(records.begin(), records.end());
  SequenceExampleSpec spec;
  spec.feature_list_ragged.push_back(
      {"r", DType::kInt64, "v", {P::RowLengths("l")}, DType::kInt64});
  const RaggedOutput r = ParseSequenceExamples(views, spec).feature_list_ragged[0];
  EXPECT_EQ(I64(r.flat_values), (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
  // [B + 1] steps per record, [steps + 1] rows per step, [rows + 1] values per row.
  EXPECT_EQ(NestedSplits(r), (Nested{{0, 2, 3}, {0, 2, 4, 5}, {0, 2, 3, 3, 4, 6}}));
  // Partitions that do not align with the steps, or do not tile a step, are Errors.
  const std::string misaligned =
      SeqExample("", {{"v", Steps({Int64s({1})})}, {"l", Steps({Int64s({1}), Int64s({})})}});
  ExpectError([&] { ParseSequenceExamples({misaligned}, spec); },
              {"record 0", "RowLengths('l') has 2 steps but value key 'v' has 1"});
  const std::string untiled =
      SeqExample("", {{"v", Steps({Int64s({1})})}, {"l", Steps({Int64s({2})})}});
  ExpectError([&] { ParseSequenceExamples({untiled}, spec); },
              {"step (counted over the batch) 0", "RowLengths('l')"});
}

TEST(TfExampleTest, SequenceExampleErrorsNameRecordListAndStep) {
  SequenceExampleSpec spec;
  spec.feature_list_dense.push_back({"d", DType::kInt64, {2}, {}, false});
  const std::string good = SeqExample("", {{"d", Steps({Int64s({1, 2})})}});
  ExpectError(
      [&] {
        ParseSequenceExamples({good, SeqExample("", {})}, spec);
      },
      {"record 1", "feature list 'd'", "required but missing", "allow_missing"});
  ExpectError(
      [&] {
        ParseSequenceExamples({good, SeqExample("", {{"d", Steps({Int64s({1, 2}), Int64s({3})})}})},
                              spec);
      },
      {"record 1, feature list 'd', step 1: holds 1 values", "needs 2"});
  ExpectError(
      [&] {
        ParseSequenceExamples({SeqExample("", {{"d", Steps({""})}})}, spec);
      },
      {"step 0: holds 0 values"});
  ExpectError(
      [&] {
        ParseSequenceExamples({SeqExample("", {{"d", Steps({Int64s({1, 2}), Floats({1, 2})})}})},
                              spec);
      },
      {"record 0, feature list 'd', step 1: holds a float_list"});
  // A truncated feature list is corrupt, naming the record and the byte.
  std::string cut = good.substr(0, good.size() - 1);
  ExpectError([&] { ParseSequenceExamples({cut}, spec); }, ErrorCode::kCorrupt, {"record 0"});
  // The last entry of a key wins; a context key may also name a feature list.
  const std::string twice = SeqExample(
      Entry("d", Int64s({7})), {{"d", Steps({Int64s({1, 2})})}, {"d", Steps({Int64s({3, 4})})}});
  spec.context.var_len.push_back({"d", DType::kInt64});
  const ParsedSequenceExamples p = ParseSequenceExamples({twice}, spec);
  EXPECT_EQ(I64(p.feature_list_dense[0]), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(I64(p.context.var_len[0].values()), (std::vector<int64_t>{7}));
}

// Random batches at one and two threads: every step's values where they were written.
TEST(TfExampleTest, SequenceExampleRandomBatchesMatchTheirSteps) {
  std::mt19937_64 rng(21);
  const int64_t B = 700;
  std::vector<std::string> records(B);
  std::vector<int64_t> all, steps_per_record, values_per_step;
  for (int64_t r = 0; r < B; ++r) {
    const int n = static_cast<int>(rng() % 5);
    std::vector<std::string> steps;
    for (int i = 0; i < n; ++i) {
      std::vector<int64_t> v(rng() % 4);
      for (auto& x : v) x = static_cast<int64_t>(rng());
      all.insert(all.end(), v.begin(), v.end());
      values_per_step.push_back(static_cast<int64_t>(v.size()));
      steps.push_back(Int64s(v));
    }
    steps_per_record.push_back(n);
    records[r] = rng() % 2 ? SeqExample(Entry("x", Floats({1})), {{"s", Steps(steps)}})
                           : SeqExample("", {{"other", Steps({Int64s({9})})}, {"s", Steps(steps)}});
  }
  SequenceExampleSpec spec;
  spec.feature_list_ragged.push_back({"s", DType::kInt64, "", {}, DType::kInt64});
  const std::vector<std::string_view> views(records.begin(), records.end());
  auto parsed = AtThreadCounts({1, 2}, [&] { return ParseSequenceExamples(views, spec); });
  for (const ParsedSequenceExamples& p : parsed) {
    const RaggedOutput& r = p.feature_list_ragged[0];
    EXPECT_EQ(I64(r.flat_values), all);
    std::vector<int64_t> outer = {0}, inner = {0};
    for (int64_t n : steps_per_record) outer.push_back(outer.back() + n);
    for (int64_t n : values_per_step) inner.push_back(inner.back() + n);
    EXPECT_EQ(NestedSplits(r), (Nested{outer, inner}));
  }
}

// Steps in writers' layout (the fast path) and in every other layout (the field loop) side by
// side in one feature list: the same values, steps and errors either way.
TEST(TfExampleTest, SequenceExampleStepsOfEveryLayoutGiveTheSameValues) {
  // Int64 steps in other layouts than writers', with their values.
  const std::vector<std::pair<std::string, std::vector<int64_t>>> others = {
      {Ld(3, Tag(1, 0) + Varint(5) + Tag(1, 0) + Varint(6)), {5, 6}},  // unpacked
      {Int64s({7}) + Int64s({8, 9}), {7, 8, 9}},                       // two lists
      {Floats({1}) + Int64s({4}), {4}},                                // a later type clears
      {Tag(9, 0) + Varint(3) + Int64s({10}), {10}},                    // an unknown field
      {"", {}}};                                                       // no list: no values
  const std::string floats = Ld(2, Tag(1, 5) + Fixed32(1.5f) + Ld(1, Fixed32(2)));  // [1.5, 2]
  std::vector<std::string> records;
  std::vector<int64_t> want_i, want_steps;
  std::vector<float> want_f;
  std::mt19937_64 rng(17);
  for (int r = 0; r < 300; ++r) {
    std::vector<std::string> steps, fsteps;
    const int n = static_cast<int>(rng() % 6);
    for (int i = 0; i < n; ++i) {
      const size_t pick = rng() % (others.size() + 1);
      if (pick < others.size()) {
        steps.push_back(others[pick].first);
        want_i.insert(want_i.end(), others[pick].second.begin(), others[pick].second.end());
      } else {
        steps.push_back(Int64s({r, -r}));
        want_i.insert(want_i.end(), {r, -r});
      }
      fsteps.push_back(i % 2 ? floats : Floats({0.25f * r}));
      if (i % 2) {
        want_f.insert(want_f.end(), {1.5f, 2.0f});
      } else {
        want_f.push_back(0.25f * r);
      }
    }
    want_steps.push_back(n);
    records.push_back(SeqExample("", {{"i", Steps(steps)}, {"f", Steps(fsteps)}}));
  }
  SequenceExampleSpec spec;
  spec.feature_list_ragged.push_back({"i", DType::kInt64, "", {}, DType::kInt64});
  spec.feature_list_ragged.push_back({"f", DType::kFloat32, "", {}, DType::kInt64});
  const std::vector<std::string_view> views(records.begin(), records.end());
  for (const ParsedSequenceExamples& p :
       AtThreadCounts({1, 2}, [&] { return ParseSequenceExamples(views, spec); })) {
    EXPECT_EQ(I64(p.feature_list_ragged[0].flat_values), want_i);
    EXPECT_EQ(p.feature_list_ragged[1].flat_values.ToVector<float>(), want_f);
    std::vector<int64_t> outer = {0};
    for (int64_t n : want_steps) outer.push_back(outer.back() + n);
    EXPECT_EQ(I64(p.feature_list_ragged[0].nested_row_splits[0]), outer);
  }
  // A step of another list type is an error in either layout.
  for (const std::string& bad : {Floats({1}), Ld(2, Tag(1, 5) + Fixed32(1))}) {
    const std::string rec = SeqExample("", {{"i", Steps({Int64s({1}), bad})}});
    ExpectError([&] { ParseSequenceExamples({rec}, spec); },
                {"record 0", "feature list 'i'", "step 1", "float_list"});
  }
}

// --- ConvertExamplesToNpz ---------------------------------------------------------------------

// The npz members by name.
std::map<std::string, Tensor> Members(const std::string& path) {
  std::map<std::string, Tensor> m;
  for (auto& [name, t] : ReadNpzMembers(path)) m.emplace(name, t);
  return m;
}

TEST(TfExampleTest, ConvertToNpzGivesEachFeatureAsRaggedArrays) {
  testing::TempDir dir;
  // Records over two batches (2^16 records each): "late" appears only in the second, "s" holds
  // bytes with NULs and empty values, "f" is absent from some records and empty in others.
  std::mt19937_64 rng(5);
  std::vector<std::string> records;
  const int64_t n = (int64_t{1} << 16) + 300;
  for (int64_t r = 0; r < n; ++r) {
    std::string e = Entry("i", Int64s({r, -r}));
    if (r % 3 != 0) e += Entry("f", Floats(std::vector<float>(r % 4, 0.5f * r)));
    if (r % 5 == 0) e += Entry("s", Bytes({std::string("a\0b", 3), "", std::to_string(r)}));
    if (r > n - 10) e += Entry("late", Int64s({7}));
    records.push_back(Example(e));
  }
  for (TFRecordCompression c : {TFRecordCompression::kNone, TFRecordCompression::kGzip}) {
    SCOPED_TRACE(TFRecordCompressionName(c));
    TFRecordOptions o;
    o.compression = c;
    {
      TFRecordWriter w(dir / "in.tfrecord", o);
      for (const std::string& r : records) w.Write(r);
      w.Close();
    }
    const auto runs = AtThreadCounts({1, 2}, [&] {
      ConvertExamplesToNpz(dir / "in.tfrecord", dir / "out.npz", o);
      return testing::ReadText(dir / "out.npz");
    });
    EXPECT_EQ(runs[0], runs[1]);
    const std::map<std::string, Tensor> m = Members(dir / "out.npz");
    std::vector<std::string> names;
    for (const auto& [name, t] : m) names.push_back(name);
    EXPECT_EQ(names, (std::vector<std::string>{"f.row_splits", "f.values", "i.row_splits",
                                               "i.values", "late.row_splits", "late.values",
                                               "s.row_splits", "s.value_splits", "s.values"}));
    // Each against ParseExamples of all records at once.
    std::vector<std::string_view> views(records.begin(), records.end());
    ExampleSpec spec;
    spec.var_len = {{"f", DType::kFloat32},
                    {"i", DType::kInt64},
                    {"late", DType::kInt64},
                    {"s", DType::kString}};
    const ParsedExamples p = ParseExamples(views, spec);
    for (const char* key : {"f", "i", "late", "s"}) {
      SCOPED_TRACE(key);
      const JaggedTensor& j = p.VarLen(key);
      EXPECT_EQ(m.at(std::string(key) + ".row_splits").ToVector<int64_t>(),
                j.offsets().ToVector<int64_t>());
    }
    EXPECT_EQ(m.at("f.values").ToVector<float>(), p.VarLen("f").values().ToVector<float>());
    EXPECT_EQ(m.at("i.values").ToVector<int64_t>(), p.VarLen("i").values().ToVector<int64_t>());
    EXPECT_EQ(m.at("late.values").ToVector<int64_t>(), std::vector<int64_t>(9, 7));
    const std::vector<uint8_t> bytes = m.at("s.values").ToVector<uint8_t>();
    const std::vector<int64_t> splits = m.at("s.value_splits").ToVector<int64_t>();
    const Tensor sv = p.VarLen("s").values();
    ASSERT_EQ(static_cast<int64_t>(splits.size()), sv.NumElements() + 1);
    for (int64_t k = 0; k < sv.NumElements(); ++k) {
      EXPECT_EQ(std::string(bytes.begin() + splits[k], bytes.begin() + splits[k + 1]),
                sv.data<std::string>()[k]);
    }
  }
}

TEST(TfExampleTest, SummarizeExampleFileMergesItsBatchesAsOneSummary) {
  testing::TempDir dir;
  std::vector<std::string> records;
  const int64_t n = (int64_t{1} << 16) + 5000;  // two batches
  for (int64_t r = 0; r < n; ++r) {
    std::string e = Entry("i", Int64s(std::vector<int64_t>(r % 4, r)));
    if (r % 7 == 0) e += Entry("s", Bytes({"ab", std::string(r % 3, 'x')}));
    if (r == n - 1) e += Entry("late", Floats({1, 2}));
    if (r == n - 2) e += Entry("i", Floats({1}));  // a second list type, in the second batch
    records.push_back(Example(e));
  }
  WriteTFRecords(dir / "in.tfrecord",
                 std::vector<std::string_view>(records.begin(), records.end()));
  const ExampleFileSummary f = SummarizeExampleFile(dir / "in.tfrecord", {}, true);
  const std::vector<ExampleFeatureSummary> all =
      SummarizeExamples(std::vector<std::string_view>(records.begin(), records.end()), true);
  EXPECT_EQ(f.records, n);
  int64_t bytes = 0;
  for (const std::string& r : records) bytes += static_cast<int64_t>(r.size());
  EXPECT_EQ(f.bytes, bytes);
  ASSERT_EQ(f.features.size(), all.size());
  for (size_t k = 0; k < all.size(); ++k) {
    SCOPED_TRACE(all[k].key);
    const ExampleFeatureSummary &a = f.features[k], &b = all[k];
    EXPECT_EQ(std::tie(a.key, a.dtype, a.mixed_types, a.records, a.values, a.bytes, a.min_values,
                       a.max_values, a.lengths),
              std::tie(b.key, b.dtype, b.mixed_types, b.records, b.values, b.bytes, b.min_values,
                       b.max_values, b.lengths));
  }
  EXPECT_TRUE(f.features[0].mixed_types);  // "i"
  // A malformed record in the second batch: named with the batch's first record.
  records[n - 3] = "\x0a\x05";
  WriteTFRecords(dir / "in.tfrecord",
                 std::vector<std::string_view>(records.begin(), records.end()));
  ExpectError([&] { SummarizeExampleFile(dir / "in.tfrecord"); }, ErrorCode::kCorrupt,
              {"SummarizeExampleFile", "records 65536 to " + std::to_string(n - 1),
               "record " + std::to_string(n - 3 - 65536)});
}

TEST(TfExampleTest, ConvertToNpzErrorsNameTheFeatureAndRecordsAndLeaveNothing) {
  testing::TempDir dir;
  auto write = [&](const std::vector<std::string>& records) {
    TFRecordWriter w(dir / "in.tfrecord");
    for (const std::string& r : records) w.Write(r);
    w.Close();
  };
  write({Example(Entry("a", Int64s({1}))), Example(Entry("a", Floats({1})))});
  ExpectError([&] { ConvertExamplesToNpz(dir / "in.tfrecord", dir / "out.npz"); },
              ErrorCode::kInvalidArgument, {"feature 'a' is a int64_list first", "records 0 to 1"});
  write({Example(Entry("a", Int64s({1}))), "\x0a\x05"});
  ExpectError([&] { ConvertExamplesToNpz(dir / "in.tfrecord", dir / "out.npz"); },
              ErrorCode::kCorrupt, {"'" + dir / "in.tfrecord" + "' records 0 to 1", "record 1"});
  ExpectError([&] { ConvertExamplesToNpz(dir / "in.tfrecord", dir / "out.mtx"); },
              ErrorCode::kUnsupported, {"is not an .npz"});
  EXPECT_EQ(dir.List(), (std::vector<std::string>{"in.tfrecord"}));
  write({});
  ConvertExamplesToNpz(dir / "in.tfrecord", dir / "out.npz");
  EXPECT_TRUE(Members(dir / "out.npz").empty());
}

}  // namespace
}  // namespace tensorkit::io
