#include "tensorkit/common/outputs.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "staged_outputs.h"
#include "tensorkit/common/error.h"
#include "tensorkit/dense/external.h"
#include "tensorkit/dense/outputs.h"

namespace tensorkit {
namespace {

TEST(TensorOutputs, MakesTensorsOfTheDimsAndDTypeAskedAndKeepsThemByIndex) {
  TensorOutputs out;
  Tensor a = AllocateChecked(out, 2, {3, 4}, DType::kFloat32, Device::Cpu(), "Op");
  Tensor b = out.Allocate(0, {0}, DType::kInt64, Device::Cpu());
  EXPECT_EQ(a.Dims(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(a.dtype(), DType::kFloat32);
  EXPECT_TRUE(a.IsContiguous());
  EXPECT_EQ(b.NumElements(), 0);
  EXPECT_EQ(out.size(), 3);
  EXPECT_TRUE(SharesStorage(out[2], a));
  EXPECT_FALSE(out[1].defined());
  EXPECT_FALSE(out[7].defined());
  EXPECT_THROW(out.Allocate(-1, {1}, DType::kInt64, Device::Cpu()), Error);
}

TEST(TensorOutputs, StringOutputsAreStringTensorsWrittenBySetAndBuild) {
  TensorOutputs out;
  StringOutput* s = out.AllocateStrings(1, {2, 2});
  const std::vector<std::string> src = {"a", "", "long enough to live on the heap", "d"};
  s->Set(0, 2, [&](int64_t i) { return std::string_view(src[i]); });
  s->Build(
      2, 4, [&](int64_t i) { return static_cast<int64_t>(src[i].size()); },
      [&](int64_t i, char* dst) { src[i].copy(dst, src[i].size()); });
  ASSERT_EQ(out[1].dtype(), DType::kString);
  EXPECT_EQ(out[1].Dims(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(out[1].ToVector<std::string>(), src);
}

// A host's buffers: the caller's vectors, wrapped.
TEST(CallbackOutputs, HandsOutTheCallersBuffersAndAllocateCheckedRefusesWrongOnes) {
  std::vector<int64_t> rows(6, -1);
  std::vector<double> wide(8, 0);
  CallbackOutputs out([&](int k, const std::vector<int64_t>& dims, DType dtype) {
    if (k == 0) return WrapExternal(rows.data(), dims, {}, dtype, Device::Cpu());
    if (k == 1) return WrapExternal(wide.data(), {4}, {2}, DType::kFloat64, Device::Cpu());
    if (k == 2) return Tensor::Zeros({1}, dtype);
    return Tensor();
  });
  Tensor r = AllocateChecked(out, 0, {3, 2}, DType::kInt64, Device::Cpu(), "MyOp");
  r.data<int64_t>()[5] = 42;
  EXPECT_EQ(rows[5], 42);
  // Strided: refused where the operation writes raw memory, accepted where it copies.
  EXPECT_THROW(AllocateChecked(out, 1, {4}, DType::kFloat64, Device::Cpu(), "MyOp"), Error);
  EXPECT_NO_THROW(AllocateChecked(out, 1, {4}, DType::kFloat64, Device::Cpu(), "MyOp", false));
  try {
    AllocateChecked(out, 2, {5}, DType::kFloat32, Device::Cpu(), "MyOp");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("MyOp: the allocator gave output 2 as float32 [1]"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(AllocateChecked(out, 3, {5}, DType::kFloat32, Device::Cpu(), "MyOp"), Error);
  EXPECT_THROW(out.Allocate(0, {1}, DType::kInt64, Device::Cuda(0)), Error);
}

// An Arrow binary column: offsets from every size first, then the bytes, appended in order.
class ArrowLikeColumn : public StringOutput {
 public:
  void Build(int64_t begin, int64_t end, CallRef<int64_t(int64_t)> size,
             CallRef<void(int64_t, char*)> write) override {
    EXPECT_EQ(begin, static_cast<int64_t>(offsets.size()) - 1);  // in order
    for (int64_t i = begin; i < end; ++i) offsets.push_back(offsets.back() + size(i));
    data.resize(static_cast<size_t>(offsets.back()));
    for (int64_t i = begin; i < end; ++i) write(i, data.data() + offsets[i]);
  }
  bool InOrder() const override { return true; }
  std::vector<int64_t> offsets = {0};
  std::string data;
};

TEST(StringOutput, SetWritesThroughBuildIntoAHostLayout) {
  ArrowLikeColumn col;
  const std::vector<std::string> src = {"ab", "", "cde", "f"};
  col.Set(0, 3, [&](int64_t i) { return std::string_view(src[i]); });
  const ByteSpan last[] = {{src[3].data(), 1}};
  col.SetSpans(3, 4, last);
  EXPECT_EQ(col.offsets, (std::vector<int64_t>{0, 2, 2, 5, 6}));
  EXPECT_EQ(col.data, "abcdef");
}

using testing::StagedOutputs;

TEST(OutputAllocator, TheDefaultStringOutputGoesThroughAllocate) {
  StagedOutputs out(-1);
  StringOutput* s = out.AllocateStrings(0, {2});
  s->Set(0, 2, [](int64_t i) { return std::string_view(i == 0 ? "x" : "yz"); });
  ASSERT_EQ(out.staged.size(), 1u);
  EXPECT_EQ(out.staged[0].ToVector<std::string>(), (std::vector<std::string>{"x", "yz"}));
  EXPECT_TRUE(out.shown.empty());
  StagedOutputs numbers_only(0);
  EXPECT_THROW(numbers_only.AllocateStrings(0, {2}), Error);
}

}  // namespace
}  // namespace tensorkit
