// VocabularyCounter and Vocabulary against the naive reference and against ids recorded from
// Keras 3 (TensorFlow 2.21) StringLookup / IntegerLookup.
#include "tensorkit/features/vocabulary.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "io/io_test_util.h"
#include "reference/features_reference.h"
#include "tensorkit/dense/views.h"
#include "tensorkit/features/hash.h"
#include "test_util.h"

namespace tensorkit {
namespace {

using io::testing::ReadText;
using io::testing::TempDir;
using io::testing::WriteText;
using testing::AtThreadCounts;
using testing::ExpectError;

Tensor Strings(std::vector<std::string> v) { return Tensor::FromVector<std::string>(std::move(v)); }
Tensor Ints(std::vector<int64_t> v) { return Tensor::FromVector<int64_t>(std::move(v)); }

// Random strings from a small alphabet (so that they repeat) with NUL, tab, newline, a
// backslash, non-ASCII UTF-8 and a byte that is not UTF-8.
std::vector<std::string> RandomStrings(int64_t n, int distinct, uint64_t seed) {
  static const std::vector<std::string> pieces = {"a",  "b",  std::string(1, '\0'), "\t",   "\n",
                                                  "\\", "\r", "\xc3\xa9",           "\xff", "zz"};
  std::mt19937_64 rng(seed);
  std::vector<std::string> pool(static_cast<size_t>(distinct));
  for (auto& s : pool) {
    const int len = static_cast<int>(rng() % 5);
    for (int k = 0; k < len; ++k) s += pieces[rng() % pieces.size()];
  }
  std::vector<std::string> out(static_cast<size_t>(n));
  // Skewed, so that counts differ and also tie.
  for (auto& s : out) s = pool[(rng() % distinct) * (rng() % distinct) / distinct];
  return out;
}

std::vector<int64_t> RandomInts(int64_t n, int64_t distinct, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (auto& v : out) {
    const int64_t k =
        static_cast<int64_t>(rng() % distinct) * static_cast<int64_t>(rng() % distinct);
    v = (k / distinct - distinct / 2) * 1000003;  // negatives too
  }
  return out;
}

std::vector<std::string> TokensOf(const Vocabulary& v) {
  return v.tokens().ToVector<std::string>();
}
std::vector<int64_t> IntTokensOf(const Vocabulary& v) { return v.tokens().ToVector<int64_t>(); }

// --- counting and fitting --------------------------------------------------------------------

TEST(VocabularyCounter, CountsStringsExactly) {
  VocabularyCounter c;
  c.Add(Strings({"b", "a", "c", "a", "b", "d"}));
  c.Add(Strings({"a"}));
  EXPECT_EQ(c.dtype(), DType::kString);
  EXPECT_EQ(c.num_tokens(), 4);
  EXPECT_EQ(c.total_count(), 7);
  EXPECT_EQ(c.CountOf("a"), 3);
  EXPECT_EQ(c.CountOf("b"), 2);
  EXPECT_EQ(c.CountOf("zz"), 0);
  const auto s = c.SortedCounts();
  EXPECT_EQ(s.tokens.ToVector<std::string>(), (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(s.counts.ToVector<int64_t>(), (std::vector<int64_t>{3, 2, 1, 1}));
}

TEST(Vocabulary, TieOrders) {
  const Tensor values = Strings({"b", "a", "c", "a", "b", "d"});
  EXPECT_EQ(TokensOf(Vocabulary::Fit({values})), (std::vector<std::string>{"a", "b", "c", "d"}));
  VocabularyFitOptions keras;
  keras.ties = TieOrder::kValueDescending;  // what Keras's adapt gave: [UNK], b, a, d, c
  EXPECT_EQ(TokensOf(Vocabulary::Fit({values}, keras)),
            (std::vector<std::string>{"b", "a", "d", "c"}));
  // Integers tie by their numbers, not their decimal strings (Keras adapt: 9, 3, 5, 1).
  const Tensor ints = Ints({5, 3, 3, 9, 9, 1, 10, 10});
  EXPECT_EQ(IntTokensOf(Vocabulary::Fit({ints})), (std::vector<int64_t>{3, 9, 10, 1, 5}));
  EXPECT_EQ(IntTokensOf(Vocabulary::Fit({ints}, keras)), (std::vector<int64_t>{10, 9, 3, 5, 1}));
  // Bytes compare unsigned: "\xff" after "z", NUL before "a".
  const Tensor bytes = Strings({"\xff", "z", std::string(1, '\0'), "a"});
  EXPECT_EQ(TokensOf(Vocabulary::Fit({bytes})),
            (std::vector<std::string>{std::string(1, '\0'), "a", "z", "\xff"}));
}

TEST(Vocabulary, FitMatchesReference) {
  const std::vector<std::string> s = RandomStrings(20000, 300, 1);
  const std::vector<int64_t> v = RandomInts(20000, 500, 2);
  for (int64_t min_frequency : {1, 2, 7, 1000000}) {
    for (int64_t max_tokens : {-1, 0, 1, 17, 100000}) {
      for (TieOrder ties : {TieOrder::kValueAscending, TieOrder::kValueDescending}) {
        const VocabularyFitOptions fit{min_frequency, max_tokens, ties};
        const bool asc = ties == TieOrder::kValueAscending;
        EXPECT_EQ(TokensOf(Vocabulary::Fit({Strings(s)}, fit)),
                  ref::VocabularyFit(s, min_frequency, max_tokens, asc))
            << min_frequency << " " << max_tokens;
        EXPECT_EQ(IntTokensOf(Vocabulary::Fit({Ints(v)}, fit)),
                  ref::VocabularyFit(v, min_frequency, max_tokens, asc))
            << min_frequency << " " << max_tokens;
      }
    }
  }
}

TEST(Vocabulary, FitDropsTheMask) {
  LookupOptions lookup;
  lookup.mask_token = "";
  const std::vector<std::string> s = {"", "", "", "x", "y", "y"};
  const std::string mask;
  const Vocabulary v = Vocabulary::Fit({Strings(s)}, {}, lookup);
  EXPECT_EQ(TokensOf(v), ref::VocabularyFit(s, 1, -1, true, &mask));
  EXPECT_EQ(TokensOf(v), (std::vector<std::string>{"y", "x"}));
  // max_tokens counts tokens, not the mask slot.
  EXPECT_EQ(Vocabulary::Fit({Strings(s)}, {1, 1}, lookup).size(), 1);
  LookupOptions int_mask;
  int_mask.mask_value = 0;
  EXPECT_EQ(IntTokensOf(Vocabulary::Fit({Ints({0, 0, 4})}, {}, int_mask)),
            (std::vector<int64_t>{4}));
}

TEST(Vocabulary, CountingIsTheSameAtEveryThreadCount) {
  // Large enough for several private counters (one per 64Ki values and thread).
  const Tensor s = Strings(RandomStrings(300000, 5000, 3));
  const Tensor v = Ints(RandomInts(300000, 5000, 4));
  const auto runs = AtThreadCounts({1, 2, 3}, [&] {
    VocabularyCounter cs, ci;
    cs.Add(s);
    ci.Add(v);
    return std::make_pair(cs.Serialize(), ci.Serialize());
  });
  EXPECT_EQ(runs[0], runs[1]);
  EXPECT_EQ(runs[0], runs[2]);
  const std::vector<std::string> sv = s.ToVector<std::string>();
  VocabularyCounter one;
  for (const std::string& x : sv) one.AddToken(x);
  EXPECT_EQ(one.Serialize(), runs[0].first);
}

TEST(Vocabulary, MergedShardsEqualTheWhole) {
  const std::vector<std::string> all = RandomStrings(30000, 400, 5);
  VocabularyCounter whole;
  whole.Add(Strings(all));
  TempDir dir;
  VocabularyCounter merged;
  for (int k = 0; k < 3; ++k) {
    std::vector<std::string> part(all.begin() + k * 10000, all.begin() + (k + 1) * 10000);
    VocabularyCounter shard;
    // A shard as jagged and sparse input too: only their values count.
    const Tensor t = Strings(part);
    if (k == 0) shard.Add(t);
    if (k == 1) shard.Add(JaggedTensor::FromLengths(t, Ints({4000, 0, 6000})));
    if (k == 2) {
      std::vector<int64_t> idx(part.size());
      for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<int64_t>(i);
      const int64_t n = static_cast<int64_t>(part.size());
      shard.Add(SparseTensor::Create(Tensor::FromVector<int64_t>(idx, {n, 1}), t, {n}));
    }
    const std::string path = dir / ("shard" + std::to_string(k) + ".tsv");
    shard.Save(path);
    merged.Merge(VocabularyCounter::Load(path));
  }
  EXPECT_EQ(merged.Serialize(), whole.Serialize());
  EXPECT_EQ(merged.total_count(), 30000);
  EXPECT_EQ(TokensOf(Vocabulary::Fit(merged, {2, 50})), TokensOf(Vocabulary::Fit(whole, {2, 50})));
}

// --- counts files ----------------------------------------------------------------------------

TEST(VocabularyCounter, CountsFileText) {
  VocabularyCounter c;
  c.AddToken(std::string("a\tb\\c\nd\re", 9), 3);
  c.AddToken(std::string("\0\x01\x7f", 3), 2);
  c.AddToken("caf\xc3\xa9 \xff", 2);
  EXPECT_EQ(c.Serialize(),
            "#tensorkit-vocabulary-counts\t1\tstring\n"
            "3\ta\\tb\\\\c\\nd\\re\n"
            "2\t\\x00\\x01\\x7f\n"
            "2\tcaf\xc3\xa9 \\xff\n");
  EXPECT_EQ(VocabularyCounter::Parse(c.Serialize(), "x").Serialize(), c.Serialize());
  VocabularyCounter i;
  i.AddToken(int64_t{-5}, 4);
  i.AddToken(int64_t{7}, 4);
  EXPECT_EQ(i.Serialize(), "#tensorkit-vocabulary-counts\t1\tint64\n4\t-5\n4\t7\n");
  const VocabularyCounter back = VocabularyCounter::Parse(i.Serialize(), "x");
  EXPECT_EQ(back.dtype(), DType::kInt64);
  EXPECT_EQ(back.CountOf(int64_t{7}), 4);
  // An empty counter of integers keeps its kind through a file.
  VocabularyCounter empty_ints;
  empty_ints.Add(Tensor::Empty({0}, DType::kInt32));
  EXPECT_EQ(VocabularyCounter::Parse(empty_ints.Serialize(), "x").dtype(), DType::kInt64);
}

TEST(VocabularyCounter, MalformedCountsFiles) {
  const std::string h = "#tensorkit-vocabulary-counts\t1\tstring\n";
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"", {"'bad.tsv' is empty"}},
      {"token\tcount\n", {"line 1", "is not a counts file"}},
      {"#tensorkit-vocabulary-counts\t2\tstring\n", {"line 1", "version and dtype"}},
      {h + "3\ta\n2", {"line 3", "does not end in '\\n'"}},
      {h + "3 a\n", {"line 2", "expected COUNT<TAB>TOKEN"}},
      {h + "0\ta\n", {"line 2 column 1", "'0' is not a whole number of at least 1"}},
      {h + "-1\ta\n", {"line 2", "not a whole number"}},
      {h + "1x\ta\n", {"line 2", "not a whole number"}},
      {h + "99999999999999999999\ta\n", {"line 2", "not a whole number"}},
      {h + "1\ta\\q\n", {"line 2 column 4", "bad escape"}},
      {h + "1\ta\\x4\n", {"line 2", "bad escape"}},
      {h + "1\ta\tb\n", {"line 2 column 4", "raw control byte 0x09"}},
      {h + "2\ta\n1\ta\n", {"line 3", "token 'a' is repeated"}},
      {h + "9223372036854775807\ta\n1\tb\n", {"line 3", "overflows int64"}},
      {"#tensorkit-vocabulary-counts\t1\tint64\n1\t12a\n", {"line 2 column 3", "not an int64"}},
      {"#tensorkit-vocabulary-counts\t1\tint64\n1\t5\n2\t5\n", {"line 3", "5 is repeated"}},
  };
  for (const auto& [text, parts] : cases) {
    SCOPED_TRACE(text);
    std::vector<std::string> want = parts;
    want.push_back("VocabularyCounter::Load");
    ExpectError([&] { VocabularyCounter::Parse(text, "bad.tsv"); }, ErrorCode::kCorrupt, want);
  }
  ExpectError([] { VocabularyCounter::Load("/nonexistent/counts.tsv"); }, ErrorCode::kIo,
              {"/nonexistent/counts.tsv"});
}

// --- lookup ----------------------------------------------------------------------------------

// Ids printed by Keras 3.15 (TensorFlow 2.21) for these layers and inputs.
TEST(Vocabulary, KerasStringLookupIds) {
  const Vocabulary v = Vocabulary::FromTokens({"a", "b", "c"});
  EXPECT_EQ(v.num_ids(), 4);
  EXPECT_EQ(v.Lookup(Strings({"a", "c", "zz", ""})).ToVector<int64_t>(),
            (std::vector<int64_t>{1, 3, 0, 0}));
  LookupOptions mask;
  mask.mask_token = "";
  EXPECT_EQ(v.WithOptions(mask).Lookup(Strings({"a", "c", "zz", ""})).ToVector<int64_t>(),
            (std::vector<int64_t>{2, 4, 1, 0}));
  LookupOptions oov3;
  oov3.num_oov_indices = 3;
  const Tensor oov = Strings({"zz", "q", "hello", "w", "x"});
  EXPECT_EQ(v.WithOptions(oov3).Lookup(oov).ToVector<int64_t>(),
            (std::vector<int64_t>{1, 2, 1, 2, 2}));
  EXPECT_EQ(v.WithOptions(oov3).Lookup(oov).ToVector<int64_t>(),
            HashBucketFast(oov, 3).ToVector<int64_t>());
  oov3.mask_token = "";
  EXPECT_EQ(v.WithOptions(oov3)
                .Lookup(Strings({"zz", "q", "hello", "w", "x", "", "a"}))
                .ToVector<int64_t>(),
            (std::vector<int64_t>{2, 3, 2, 3, 3, 0, 4}));
  LookupOptions none;
  none.num_oov_indices = 0;
  EXPECT_EQ(v.WithOptions(none).Lookup(Strings({"a", "c"})).ToVector<int64_t>(),
            (std::vector<int64_t>{0, 2}));
}

TEST(Vocabulary, KerasIntegerLookupIds) {
  const Vocabulary v = Vocabulary::FromIntegers({10, 20, 30});
  EXPECT_EQ(v.Lookup(Ints({10, 30, 5, 0, -1})).ToVector<int64_t>(),
            (std::vector<int64_t>{1, 3, 0, 0, 0}));
  LookupOptions mask;
  mask.mask_value = 0;
  EXPECT_EQ(v.WithOptions(mask).Lookup(Ints({10, 30, 5, 0, -1})).ToVector<int64_t>(),
            (std::vector<int64_t>{2, 4, 1, 0, 1}));
  LookupOptions oov3;
  oov3.num_oov_indices = 3;
  const std::vector<int64_t> ys = {5, 6, 7, 8, -1, -7, 1000, 123456789012};
  EXPECT_EQ(v.WithOptions(oov3).Lookup(Ints(ys)).ToVector<int64_t>(),
            (std::vector<int64_t>{2, 0, 1, 2, 2, 2, 1, 0}));
  std::vector<int64_t> ys0 = ys;
  ys0.push_back(0);
  oov3.mask_value = 0;
  EXPECT_EQ(v.WithOptions(oov3).Lookup(Ints(ys0)).ToVector<int64_t>(),
            (std::vector<int64_t>{3, 1, 2, 3, 3, 3, 2, 1, 0}));
  // oov_method="farmhash": the fingerprint of the decimal string.
  LookupOptions farm;
  farm.num_oov_indices = 3;
  farm.oov_method = OovMethod::kFarmHash;
  EXPECT_EQ(v.WithOptions(farm).Lookup(Ints(ys)).ToVector<int64_t>(),
            HashBucketFast(Ints(ys), 3).ToVector<int64_t>());
  // int32 values look up the same.
  EXPECT_EQ(v.Lookup(Tensor::FromVector<int32_t>({30, 7})).ToVector<int64_t>(),
            (std::vector<int64_t>{3, 0}));
}

TEST(Vocabulary, LookupMatchesReferenceAtEveryThreadCount) {
  const std::vector<std::string> s = RandomStrings(100000, 3000, 6);
  const std::vector<int64_t> iv = RandomInts(100000, 3000, 7);
  const Tensor st = Strings(s), it = Ints(iv);
  const std::string mask = "\xff";  // both in the data
  const int64_t imask = 0;
  for (int64_t num_oov : {1, 2, 5}) {
    for (bool masked : {false, true}) {
      const std::vector<std::string> vocab =
          ref::VocabularyFit(s, 3, 700, true, masked ? &mask : nullptr);
      const std::vector<int64_t> ivocab =
          ref::VocabularyFit(iv, 3, 700, true, masked ? &imask : nullptr);
      LookupOptions o;
      o.num_oov_indices = num_oov;
      if (masked) o.mask_token = mask;
      const Vocabulary v = Vocabulary::FromTokens(vocab, o);
      const auto bucket = [&](const std::string& x) {
        return static_cast<int64_t>(Fingerprint64(x) % static_cast<uint64_t>(num_oov));
      };
      const std::vector<int64_t> want =
          ref::VocabularyLookup(vocab, s, num_oov, masked ? &mask : nullptr, bucket);
      const auto got = AtThreadCounts({1, 2}, [&] { return v.Lookup(st).ToVector<int64_t>(); });
      EXPECT_EQ(got[0], want);
      EXPECT_EQ(got[1], want);
      LookupOptions io = o;
      io.mask_token.reset();
      if (masked) io.mask_value = imask;
      const Vocabulary w = Vocabulary::FromIntegers(ivocab, io);
      const auto floormod = [&](int64_t x) { return ((x % num_oov) + num_oov) % num_oov; };
      const std::vector<int64_t> iwant =
          ref::VocabularyLookup(ivocab, iv, num_oov, masked ? &imask : nullptr, floormod);
      const auto igot = AtThreadCounts({1, 2}, [&] { return w.Lookup(it).ToVector<int64_t>(); });
      EXPECT_EQ(igot[0], iwant);
      EXPECT_EQ(igot[1], iwant);
    }
  }
}

TEST(Vocabulary, LookupKeepsTheStructure) {
  const Vocabulary v = Vocabulary::FromTokens({"x", "y"});
  // A strided dense view: [2, 3] transposed.
  const Tensor dense = Tensor::FromVector<std::string>({"x", "q", "y", "y", "x", "q"}, {2, 3});
  const Tensor ids = v.Lookup(Transpose(dense, 0, 1));
  EXPECT_EQ(ids.Dims(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(ids.dtype(), DType::kInt64);
  EXPECT_EQ(ids.ToVector<int64_t>(), (std::vector<int64_t>{1, 2, 0, 1, 2, 0}));
  const JaggedTensor jt = JaggedTensor::FromLengths(Strings({"y", "q", "x"}), Ints({2, 0, 1}),
                                                    Tensor::FromVector<float>({1, 2, 3}));
  const JaggedTensor jids = v.Lookup(jt);
  EXPECT_EQ(jids.values().ToVector<int64_t>(), (std::vector<int64_t>{2, 0, 1}));
  EXPECT_TRUE(SharesStorage(jids.offsets(), jt.offsets()));
  EXPECT_TRUE(jids.has_weights());
  const SparseTensor sp = SparseTensor::FromDense(dense);
  const SparseTensor sids = v.Lookup(sp);
  EXPECT_TRUE(SharesStorage(sids.indices(), sp.indices()));
  EXPECT_EQ(sids.shape(), sp.shape());
  EXPECT_EQ(sids.values().ToVector<int64_t>(), v.Lookup(sp.values()).ToVector<int64_t>());
  EXPECT_EQ(v.Lookup(Tensor::Empty({0, 4}, DType::kString)).Dims(), (std::vector<int64_t>{0, 4}));
  // The default vocabulary is empty: everything is OOV.
  EXPECT_EQ(Vocabulary().Lookup(Strings({"a"})).ToVector<int64_t>(), (std::vector<int64_t>{0}));
}

TEST(Vocabulary, OovWithoutOovIdsNamesTheFirstValue) {
  LookupOptions none;
  none.num_oov_indices = 0;
  const Vocabulary v = Vocabulary::FromTokens({"a"}, none);
  // Several chunks, an OOV value in a late one and in an earlier one: the earlier is named.
  std::vector<std::string> s(100000, "a");
  s[90000] = "late";
  s[40000] = "first\n";
  const auto errs =
      AtThreadCounts({1, 2}, [&] { return testing::ErrorOf([&] { v.Lookup(Strings(s)); }); });
  EXPECT_EQ(errs[0], errs[1]);
  ExpectError([&] { v.Lookup(Strings(s)); }, ErrorCode::kInvalidArgument,
              {"Vocabulary::Lookup", "value 40000 ('first\\n')", "num_oov_indices is 0"});
  const Vocabulary w = Vocabulary::FromIntegers({1, 2}, none);
  ExpectError([&] { w.Lookup(Ints({1, 2, -9})); }, ErrorCode::kInvalidArgument, {"value 2 (-9)"});
}

// --- vocabulary files ------------------------------------------------------------------------

TEST(Vocabulary, SaveLoadRoundTrip) {
  TempDir dir;
  const std::vector<std::string> tokens = {
      "the", std::string("n\0l", 3), "caf\xc3\xa9", "\xff", "tab\there", " ", "\\"};
  const Vocabulary v = Vocabulary::FromTokens(tokens);
  v.Save(dir / "v.txt");
  std::string want;
  for (const std::string& t : tokens) want += t + "\n";
  EXPECT_EQ(ReadText(dir / "v.txt"), want);
  const Vocabulary back = Vocabulary::Load(dir / "v.txt");
  EXPECT_EQ(TokensOf(back), tokens);
  EXPECT_EQ(back.Lookup(Strings(tokens)).ToVector<int64_t>(),
            v.Lookup(Strings(tokens)).ToVector<int64_t>());
  const Vocabulary iv = Vocabulary::FromIntegers({-3, 9223372036854775807LL, 0});
  iv.Save(dir / "i.txt");
  EXPECT_EQ(ReadText(dir / "i.txt"), "-3\n9223372036854775807\n0\n");
  EXPECT_EQ(IntTokensOf(Vocabulary::Load(dir / "i.txt", DType::kInt64)), IntTokensOf(iv));
  Vocabulary::FromTokens({}).Save(dir / "e.txt");
  EXPECT_EQ(ReadText(dir / "e.txt"), "");
  EXPECT_EQ(Vocabulary::Load(dir / "e.txt").size(), 0);
}

TEST(Vocabulary, LoadReadsTensorFlowFiles) {
  TempDir dir;
  // As TensorFlow's TextFileInitializer: CRLF lines, no final newline.
  WriteText(dir / "crlf.txt", "x\r\ny\nz");
  EXPECT_EQ(TokensOf(Vocabulary::Load(dir / "crlf.txt")),
            (std::vector<std::string>{"x", "y", "z"}));
  WriteText(dir / "ints.txt", "10\n20\n30\n");
  LookupOptions o;
  const Vocabulary iv = Vocabulary::Load(dir / "ints.txt", DType::kInt64, o);
  EXPECT_EQ(iv.Lookup(Ints({20, 7})).ToVector<int64_t>(), (std::vector<int64_t>{2, 0}));
}

TEST(Vocabulary, BadVocabularyFiles) {
  TempDir dir;
  WriteText(dir / "empty_line.txt", "x\ny\n\nz\n");
  ExpectError([&] { Vocabulary::Load(dir / "empty_line.txt"); }, ErrorCode::kCorrupt,
              {"Vocabulary::Load", "line 3 is empty"});
  WriteText(dir / "dup.txt", "x\ny\nx\n");
  ExpectError([&] { Vocabulary::Load(dir / "dup.txt"); }, ErrorCode::kCorrupt,
              {"token 'x' at line 3 of", "repeats line 1"});
  WriteText(dir / "ints.txt", "1\n2\n 3\n");
  ExpectError([&] { Vocabulary::Load(dir / "ints.txt", DType::kInt64); }, ErrorCode::kCorrupt,
              {"line 3 (' 3') is not an int64"});
  WriteText(dir / "masked.txt", "a\n\xff\n");
  LookupOptions mask;
  mask.mask_token = "\xff";
  ExpectError([&] { Vocabulary::Load(dir / "masked.txt", DType::kString, mask); },
              ErrorCode::kInvalidArgument, {"the mask token '\\xff' is token 1"});
  ExpectError([&] { Vocabulary::Load(dir / "none.txt"); }, ErrorCode::kIo, {"none.txt"});
  ExpectError([&] { Vocabulary::Load(dir / "ints.txt", DType::kFloat32); },
              ErrorCode::kDTypeMismatch, {"strings or int64"});
  // Tokens a line-per-token file cannot hold; nothing is written.
  for (const std::string& bad : {std::string(""), std::string("a\nb"), std::string("a\r")}) {
    ExpectError(
        [&] {
          Vocabulary::FromTokens({"ok", bad}).Save(dir / "bad.txt");
        },
        ErrorCode::kInvalidArgument, {"Vocabulary::Save: token 1"});
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "bad.txt"));
}

TEST(Vocabulary, Errors) {
  ExpectError(
      [] {
        Vocabulary::FromTokens({"a", "b", "a"});
      },
      ErrorCode::kInvalidArgument, {"token 'a' at token 2 repeats token 0"});
  ExpectError(
      [] {
        Vocabulary::FromIntegers({4, 4});
      },
      ErrorCode::kInvalidArgument, {"token 4 at token 1 repeats token 0"});
  LookupOptions neg;
  neg.num_oov_indices = -1;
  ExpectError([&] { Vocabulary::FromTokens({"a"}, neg); }, ErrorCode::kInvalidArgument,
              {"num_oov_indices -1"});
  neg.num_oov_indices = INT64_MAX - 1;
  ExpectError([&] { Vocabulary::FromTokens({"a"}, neg); }, ErrorCode::kInvalidArgument,
              {"leave the ids"});
  LookupOptions wrong_mask;
  wrong_mask.mask_value = 0;
  ExpectError([&] { Vocabulary::FromTokens({"a"}, wrong_mask); }, ErrorCode::kInvalidArgument,
              {"takes a mask_token"});
  LookupOptions in_vocab;
  in_vocab.mask_value = 3;
  ExpectError(
      [&] {
        Vocabulary::FromIntegers({1, 3}, in_vocab);
      },
      ErrorCode::kInvalidArgument, {"the mask value 3 is token 1"});
  const Vocabulary v = Vocabulary::FromTokens({"a"});
  ExpectError([&] { v.Lookup(Ints({1})); }, ErrorCode::kDTypeMismatch,
              {"int64 cannot be looked up in a vocabulary of strings"});
  ExpectError([&] { v.Lookup(Tensor::FromVector<float>({1})); }, ErrorCode::kDTypeMismatch,
              {"float32 are not tokens"});
  ExpectError([&] { v.Lookup(Tensor()); }, ErrorCode::kInvalidArgument, {"undefined"});
  ExpectError(
      [] {
        Vocabulary::Fit({Strings({"a"})}, {0, -1});
      },
      ErrorCode::kInvalidArgument, {"min_frequency 0"});
  ExpectError(
      [] {
        Vocabulary::Fit({Strings({"a"})}, {1, -2});
      },
      ErrorCode::kInvalidArgument, {"max_tokens -2"});
  VocabularyCounter c;
  c.Add(Strings({"a"}));
  ExpectError([&] { c.Add(Ints({1})); }, ErrorCode::kDTypeMismatch,
              {"holds strings and cannot count integers"});
  VocabularyCounter ci;
  ci.AddToken(int64_t{1});
  ExpectError([&] { c.Merge(ci); }, ErrorCode::kDTypeMismatch, {"VocabularyCounter::Merge"});
  ExpectError([&] { c.AddToken("a", 0); }, ErrorCode::kInvalidArgument, {"count 0"});
  ExpectError([&] { c.AddToken("a", INT64_MAX); }, ErrorCode::kOutOfRange, {"overflows int64"});
  ExpectError([&] { v.StringToken(1); }, ErrorCode::kOutOfRange, {"token 1 is out of range"});
  ExpectError([&] { v.IntegerToken(0); }, ErrorCode::kDTypeMismatch, {"holds strings"});
}

}  // namespace
}  // namespace tensorkit
