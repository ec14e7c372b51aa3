// ParseExamples and ParseSequenceExamples into an OutputAllocator (tf_example.h): the same values
// as the plain parse, in TensorFlow's layout, strings straight into a host's storage.
#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <vector>

#include "io/proto_encoder.h"
#include "tensorkit/dense/outputs.h"
#include "tensorkit/io/tf_example.h"
#include "test_util.h"

namespace tensorkit::io {
namespace {

using proto_test::Bytes;
using proto_test::Entry;
using proto_test::Example;
using proto_test::Floats;
using proto_test::Int64s;
using tensorkit::testing::ExpectError;

// A host's string storage: its own vector per output, filled through Build.
struct HostStrings : StringOutput {
  explicit HostStrings(int64_t n) : values(static_cast<size_t>(n)) {}
  void Build(int64_t begin, int64_t end, CallRef<int64_t(int64_t)> size,
             CallRef<void(int64_t, char*)> write) override {
    for (int64_t i = begin; i < end; ++i) {
      values[i].assign(static_cast<size_t>(size(i)), '?');
      write(i, values[i].data());
    }
  }
  std::vector<std::string> values;
};

// Numbers as Tensors and strings in HostStrings, shown at Commit; output `fail_at` refused.
class HostOutputs : public OutputAllocator {
 public:
  explicit HostOutputs(int fail_at = -1) : fail_at_(fail_at) {}
  Tensor Allocate(int k, const std::vector<int64_t>& dims, DType dtype, Device device) override {
    std::lock_guard<std::mutex> lock(mu_);
    TK_CHECK(k != fail_at_, kResourceExhausted, "HostOutputs: no memory for output ", k);
    Grow(k);
    dims_[k] = dims;
    return numbers_[k] = Tensor::Empty(dims, dtype, device);
  }
  StringOutput* AllocateStrings(int k, const std::vector<int64_t>& dims) override {
    std::lock_guard<std::mutex> lock(mu_);
    TK_CHECK(k != fail_at_, kResourceExhausted, "HostOutputs: no memory for output ", k);
    Grow(k);
    dims_[k] = dims;
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    strings_[k] = std::make_unique<HostStrings>(n);
    return strings_[k].get();
  }
  void Commit() override { ++commits; }

  const Tensor& Numbers(int k) const { return numbers_.at(k); }
  const std::vector<std::string>& Strings(int k) const { return strings_.at(k)->values; }
  const std::vector<int64_t>& Dims(int k) const { return dims_.at(k); }
  int made() const {
    int n = 0;
    for (size_t k = 0; k < dims_.size(); ++k) n += numbers_[k].defined() || strings_[k] != nullptr;
    return n;
  }
  int commits = 0;

 private:
  void Grow(int k) {
    if (k >= static_cast<int>(dims_.size())) {
      dims_.resize(k + 1);
      numbers_.resize(k + 1);
      strings_.resize(k + 1);
    }
  }
  int fail_at_;
  std::mutex mu_;
  std::vector<std::vector<int64_t>> dims_;
  std::vector<Tensor> numbers_;
  std::vector<std::unique_ptr<HostStrings>> strings_;
};

std::vector<std::string> Records(int64_t B) {
  std::vector<std::string> records;
  for (int64_t r = 0; r < B; ++r) {
    std::string body = Entry("label", Int64s({r % 2}));
    if (r % 3 != 0) body += Entry("name", Bytes({"n" + std::to_string(r)}));
    std::vector<std::string> tags;
    std::vector<int64_t> ids;
    for (int64_t k = 0; k < r % 4; ++k) {
      tags.push_back(std::string(static_cast<size_t>(k + 1), static_cast<char>('a' + r % 26)));
      ids.push_back(10 * r + k);
    }
    body += Entry("tags", Bytes(tags)) + Entry("ids", Int64s(ids));
    body += Entry("seq", Floats(std::vector<float>(static_cast<size_t>(2 * (r % 3)), 0.5f)));
    records.push_back(Example(body));
  }
  return records;
}

ExampleSpec Spec() {
  ExampleSpec spec;
  spec.fixed = {{"label", DType::kInt64, {}, {}},
                {"name", DType::kString, {}, Tensor::FromScalar(std::string("none"))}};
  spec.var_len = {{"tags", DType::kString}};
  spec.fixed_sequence = {{"seq", DType::kFloat32, {2}, Tensor::FromScalar(-1.0f)}};
  RaggedFeature ids;
  ids.key = "ids";
  ids.dtype = DType::kInt64;
  spec.ragged = {ids};
  return spec;
}

TEST(ParseExamplesInto, TheOutputsOfThePlainParseInTensorFlowsLayout) {
  const std::vector<std::string> records = Records(700);  // past one chunk of records
  const std::vector<std::string_view> views(records.begin(), records.end());
  for (bool shared_key : {false, true}) {
    ExampleSpec spec = Spec();
    if (shared_key) {  // two features of one key: not the one-walk path
      RaggedFeature again = spec.ragged[0];
      again.key = "ids2";
      again.value_key = "ids";
      spec.ragged.push_back(again);
    }
    const ParsedExamples want = ParseExamples(views, spec);
    const ExampleOutputIndex index(spec);
    HostOutputs out;
    ParseExamples(views, spec, out);
    EXPECT_EQ(out.commits, 1);
    EXPECT_EQ(out.made(), index.end());
    EXPECT_EQ(out.Numbers(index.Fixed(0)).ToVector<int64_t>(), want.fixed[0].ToVector<int64_t>());
    EXPECT_EQ(out.Dims(index.Fixed(1)), (std::vector<int64_t>{700}));
    EXPECT_EQ(out.Strings(index.Fixed(1)), want.fixed[1].ToVector<std::string>());
    const SparseTensor tags = want.var_len[0].ToSparse();
    EXPECT_EQ(out.Numbers(index.VarLen(0)).ToVector<int64_t>(), tags.indices().ToVector<int64_t>());
    EXPECT_EQ(out.Strings(index.VarLen(0) + 1), tags.values().ToVector<std::string>());
    EXPECT_EQ(out.Numbers(index.VarLen(0) + 2).ToVector<int64_t>(), tags.shape());
    EXPECT_EQ(out.Dims(index.FixedSequence(0)), want.fixed_sequence[0].Dims());
    EXPECT_EQ(out.Numbers(index.FixedSequence(0)).ToVector<float>(),
              want.fixed_sequence[0].ToVector<float>());
    for (size_t j = 0; j < spec.ragged.size(); ++j) {
      const int k = index.Ragged(static_cast<int>(j));
      EXPECT_EQ(out.Numbers(k).ToVector<int64_t>(), want.ragged[j].flat_values.ToVector<int64_t>());
      EXPECT_EQ(out.Numbers(k + 1).ToVector<int32_t>(),
                want.ragged[j].nested_row_splits[0].ToVector<int32_t>());
    }
  }
}

TEST(ParseExamplesInto, OneRecordWithoutTheBatchDim) {
  const std::vector<std::string> records = Records(3);
  const std::vector<std::string_view> one = {records[2]};
  const ExampleSpec spec = Spec();
  const ExampleOutputIndex index(spec);
  HostOutputs out;
  ParseExamples(one, spec, out, /*batch=*/false);
  EXPECT_EQ(out.Dims(index.Fixed(0)), (std::vector<int64_t>{}));
  EXPECT_EQ(out.Strings(index.Fixed(1)), (std::vector<std::string>{"n2"}));
  EXPECT_EQ(out.Numbers(index.VarLen(0)).ToVector<int64_t>(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(out.Strings(index.VarLen(0) + 1), (std::vector<std::string>{"c", "cc"}));
  EXPECT_EQ(out.Numbers(index.VarLen(0) + 2).ToVector<int64_t>(), (std::vector<int64_t>{2}));
  EXPECT_EQ(out.Dims(index.FixedSequence(0)), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(out.Dims(index.Ragged(0) + 1), (std::vector<int64_t>{0}));
  HostOutputs two;
  const std::vector<std::string_view> both = {records[0], records[1]};
  ExpectError([&] { ParseExamples(both, spec, two, false); }, ErrorCode::kInvalidArgument,
              {"exactly one record"});
}

TEST(ParseExamplesInto, AFailureHalfWayShowsNoOutput) {
  const std::vector<std::string> records = Records(300);
  std::vector<std::string_view> views(records.begin(), records.end());
  const ExampleSpec spec = Spec();
  const ExampleOutputIndex index(spec);
  // Every allocation refused in turn: an Error, and no Commit.
  for (int k = 0; k < index.end(); ++k) {
    HostOutputs out(k);
    ExpectError([&] { ParseExamples(views, spec, out); }, ErrorCode::kResourceExhausted,
                {"output " + std::to_string(k)});
    EXPECT_EQ(out.commits, 0) << k;
  }
  // A bad record after the first chunk's outputs were written.
  const std::string bad = Example(Entry("label", Floats({1})));
  views[290] = bad;
  HostOutputs out;
  ExpectError([&] { ParseExamples(views, spec, out); }, ErrorCode::kInvalidArgument,
              {"record 290", "label"});
  EXPECT_EQ(out.commits, 0);
}

TEST(ParseSequenceExamplesInto, TheOutputsOfThePlainParse) {
  std::vector<std::string> records;
  for (int r = 0; r < 5; ++r) {
    std::string steps, words;
    for (int s = 0; s < r; ++s) {
      steps += proto_test::Ld(1, Int64s({r * 10 + s}));
      words += proto_test::Ld(1, Bytes(std::vector<std::string>(static_cast<size_t>(s % 3), "w")));
    }
    const std::string context = Entry("user", Bytes({"u" + std::to_string(r)}));
    const std::string lists = Entry("item", steps) + Entry("word", words) + Entry("phrase", words);
    records.push_back(proto_test::Ld(1, context) + proto_test::Ld(2, lists));
  }
  const std::vector<std::string_view> views(records.begin(), records.end());
  SequenceExampleSpec spec;
  spec.context.fixed = {{"user", DType::kString, {}, {}}};
  spec.feature_list_dense = {{"item", DType::kInt64, {}, {}, true}};
  spec.feature_list_sparse = {{"word", DType::kString}};
  RaggedFeature word;
  word.key = "word_r";
  word.value_key = "phrase";
  word.dtype = DType::kString;
  spec.feature_list_ragged = {word};
  const ParsedSequenceExamples want = ParseSequenceExamples(views, spec);
  const SequenceOutputIndex index(spec);
  HostOutputs out;
  ParseSequenceExamples(views, spec, out);
  EXPECT_EQ(out.commits, 1);
  EXPECT_EQ(out.made(), index.end());
  EXPECT_EQ(out.Strings(index.context().Fixed(0)), want.context.fixed[0].ToVector<std::string>());
  const int d = index.FeatureListDense(0);
  EXPECT_EQ(out.Numbers(d).ToVector<int64_t>(), want.feature_list_dense[0].ToVector<int64_t>());
  EXPECT_EQ(out.Numbers(d + 1).ToVector<int64_t>(),
            want.feature_list_lengths[0].ToVector<int64_t>());
  const int s = index.FeatureListSparse(0);
  const SparseTensor& st = want.feature_list_sparse[0];
  EXPECT_EQ(out.Numbers(s).ToVector<int64_t>(), st.indices().ToVector<int64_t>());
  EXPECT_EQ(out.Strings(s + 1), st.values().ToVector<std::string>());
  EXPECT_EQ(out.Numbers(s + 2).ToVector<int64_t>(), st.shape());
  const int g = index.FeatureListRagged(0);
  const RaggedOutput& r = want.feature_list_ragged[0];
  EXPECT_EQ(out.Strings(g), r.flat_values.ToVector<std::string>());
  EXPECT_EQ(out.Numbers(g + 1).ToVector<int32_t>(), r.nested_row_splits[0].ToVector<int32_t>());
  EXPECT_EQ(out.Numbers(g + 2).ToVector<int32_t>(), r.nested_row_splits[1].ToVector<int32_t>());
}

}  // namespace
}  // namespace tensorkit::io
