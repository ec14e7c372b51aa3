#include "tensorkit/sparse/host_outputs.h"

#include <dlpack/dlpack.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "sparse/sparse_test_util.h"
#include "tensorkit/dense/external.h"
#include "tensorkit/dense/outputs.h"

namespace tensorkit {
namespace {

using testing::MakeSparse;
using testing::Rows;

// Random rows inside `shape` (with repeats) and float values 0, 1, 2, ...
SparseTensor RandomSparse(const std::vector<int64_t>& shape, int64_t nnz, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int64_t> rows;
  std::vector<float> vals;
  for (int64_t i = 0; i < nnz; ++i) {
    for (int64_t d : shape) rows.push_back(std::uniform_int_distribution<int64_t>(0, d - 1)(rng));
    vals.push_back(static_cast<float>(i));
  }
  return MakeSparse(rows, vals, shape);
}

// ReorderInto writing the caller's tensors: output 0 is *indices, output 1 *values (undefined
// when null).
void ReorderIntoGiven(const SparseTensor& st, const std::vector<int>& order, Tensor* indices,
                      Tensor* values) {
  CallbackOutputs out([&](int k, const std::vector<int64_t>&, DType) {
    Tensor* given = k == 0 ? indices : values;
    return given != nullptr ? *given : Tensor();
  });
  ReorderInto(st, order, out);
}

TEST(ReorderIntoTest, EqualsReorderAndWritesTheCallersBuffers) {
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{50},
                                            {7, 9},
                                            {4, 5, 6},
                                            {3, 1, 4, 2, 5},
                                            {1 << 20, 1 << 20, 1 << 30}}) {
    for (int64_t nnz : {0, 1, 333, 5000}) {
      SparseTensor st = RandomSparse(shape, nnz, static_cast<uint32_t>(nnz + shape.size()));
      std::vector<int> order(shape.size());
      for (size_t a = 0; a < order.size(); ++a) order[a] = static_cast<int>(order.size() - 1 - a);
      std::vector<int64_t> out_rows(static_cast<size_t>(nnz) * shape.size());
      std::vector<float> out_vals(static_cast<size_t>(nnz));
      Tensor idx = WrapExternal(out_rows.data(), {nnz, static_cast<int64_t>(shape.size())}, {},
                                DType::kInt64, Device::Cpu());
      Tensor vals = WrapExternal(out_vals.data(), {nnz}, {}, DType::kFloat32, Device::Cpu());
      const std::vector<int64_t> before = Rows(st);
      ReorderIntoGiven(st, order, &idx, &vals);
      EXPECT_EQ(Rows(st), before);  // the input is untouched
      SparseTensor ref = st;
      ref.Reorder(order);
      EXPECT_EQ(out_rows, Rows(ref));
      EXPECT_EQ(out_vals, ref.values().ToVector<float>());
    }
  }
}

TEST(ReorderIntoTest, StringsAndStridedValueOutputs) {
  SparseTensor st = MakeSparse<std::string>({2, 0, 1}, {"c", "a", "b"}, {3});
  Tensor idx = Tensor::Empty({3, 1}, DType::kInt64);
  Tensor vals = Tensor::Empty({3}, DType::kString);
  ReorderIntoGiven(st, {0}, &idx, &vals);
  EXPECT_EQ(vals.ToVector<std::string>(), (std::vector<std::string>{"a", "b", "c"}));
  SparseTensor nums = MakeSparse<double>({2, 0, 1}, {3, 1, 2}, {3});
  Tensor wide = Tensor::Zeros({3, 2}, DType::kFloat64);
  Tensor column = Select(wide, 1, 1);  // a strided output
  ReorderIntoGiven(nums, {0}, &idx, &column);
  EXPECT_EQ(wide.ToVector<double>(), (std::vector<double>{0, 1, 0, 2, 0, 3}));
}

TEST(ReorderIntoTest, BadArgumentsAreErrorsAndWriteNothing) {
  SparseTensor st = MakeSparse<float>({0, 1, 5, 0}, {1, 2}, {2, 2});
  Tensor idx = Tensor::Zeros({2, 2}, DType::kInt64);
  Tensor vals = Tensor::Zeros({2}, DType::kFloat32);
  try {
    ReorderIntoGiven(st, {0, 1}, &idx, &vals);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ReorderInto: entry 1 at [5 0] is out of bounds"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(vals.ToVector<float>(), (std::vector<float>{0, 0}));
  SparseTensor ok = MakeSparse<float>({0, 1, 1, 0}, {1, 2}, {2, 2});
  Tensor small = Tensor::Zeros({1, 2}, DType::kInt64);
  Tensor ints = Tensor::Zeros({2}, DType::kInt32);
  EXPECT_THROW(ReorderIntoGiven(ok, {0, 0}, &idx, &vals), Error);
  EXPECT_THROW(ReorderIntoGiven(ok, {0, 1}, &small, &vals), Error);
  EXPECT_THROW(ReorderIntoGiven(ok, {0, 1}, &idx, &ints), Error);
  EXPECT_THROW(ReorderIntoGiven(ok, {0, 1}, &idx, nullptr), Error);
  Tensor strided = Transpose(Tensor::Zeros({2, 2}, DType::kInt64), 0, 1);
  EXPECT_THROW(ReorderIntoGiven(ok, {0, 1}, &strided, &vals), Error);
  Tensor aliased = ok.indices();
  EXPECT_THROW(ReorderIntoGiven(ok, {0, 1}, &aliased, &vals), Error);
  EXPECT_THROW(ReorderIntoGiven(SparseTensor(), {}, &idx, &vals), Error);
}

// A host that shows its outputs at Commit: a failure half-way (here the values' allocation)
// shows none, and the values are written as views of the input's strings.
TEST(ReorderIntoTest, ShowsOutputsOnlyWhenAllAreWritten) {
  struct Staged : OutputAllocator {
    bool fail_values = false;
    std::vector<Tensor> staged, shown;
    Tensor Allocate(int k, const std::vector<int64_t>& dims, DType dtype, Device) override {
      TK_CHECK(!(fail_values && k == 1), kResourceExhausted, "no memory for output 1");
      staged.push_back(Tensor::Zeros(dims, dtype));
      return staged.back();
    }
    void Commit() override { shown = staged; }
  };
  SparseTensor st = MakeSparse<std::string>({2, 0, 1}, {"c", "a", "b"}, {3});
  Staged failing;
  failing.fail_values = true;
  EXPECT_THROW(ReorderInto(st, {0}, failing), Error);
  EXPECT_EQ(failing.staged.size(), 1u);
  EXPECT_TRUE(failing.shown.empty());
  Staged ok;
  ReorderInto(st, {0}, ok);
  ASSERT_EQ(ok.shown.size(), 2u);
  EXPECT_EQ(ok.shown[0].ToVector<int64_t>(), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(ok.shown[1].ToVector<std::string>(), (std::vector<std::string>{"a", "b", "c"}));
}

TEST(CheckIndexBoundsTest, NamesTheOpAndTheFirstEntryOutside) {
  CheckIndexBounds(MakeSparse<float>({0, 1, 1, 1, 1, 1}, {1, 2, 3}, {2, 2}), "op");  // repeats ok
  try {
    CheckIndexBounds(MakeSparse<float>({0, 1, 1, -1, 9, 9}, {1, 2, 3}, {2, 2}), "MyOp input 3");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kOutOfRange);
    EXPECT_NE(std::string(e.what()).find("MyOp input 3: entry 1 at [1 -1]"), std::string::npos)
        << e.what();
  }
}

TEST(SparseDLPackTest, RoundTripSharesMemory) {
  SparseTensor st = MakeSparse<float>({1, 0, 0, 2}, {5, 7}, {2, 3});
  st.Reorder({0, 1});
  SparseDLPack out = ToDLPack(st);
  EXPECT_EQ(out.indices->dl_tensor.data, st.indices().raw_data());
  EXPECT_EQ(out.values->dl_tensor.data, st.values().raw_data());
  EXPECT_EQ(out.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(out.order, (std::vector<int>{0, 1}));
  SparseTensor back = FromDLPack(out.indices, out.values, out.shape, out.order);
  EXPECT_EQ(back.indices().raw_data(), st.indices().raw_data());
  EXPECT_EQ(back.values().raw_data(), st.values().raw_data());
  EXPECT_EQ(back.order(), st.order());
  EXPECT_EQ(back.ToDense().ToVector<float>(), st.ToDense().ToVector<float>());
  st = SparseTensor();  // the DLPack owners keep the memory alive
  EXPECT_EQ(back.values().ToVector<float>(), (std::vector<float>{7, 5}));
}

TEST(SparseDLPackTest, FailuresReleaseBothTensors) {
  static int deleted = 0;
  deleted = 0;
  auto make = [](void* data, int64_t* shape, int ndim, DLDataType dt) {
    auto* m = new DLManagedTensor{};
    m->dl_tensor.data = data;
    m->dl_tensor.device = {kDLCPU, 0};
    m->dl_tensor.ndim = ndim;
    m->dl_tensor.dtype = dt;
    m->dl_tensor.shape = shape;
    m->deleter = [](DLManagedTensor* self) {
      ++deleted;
      delete self;
    };
    return m;
  };
  std::vector<int64_t> rows = {0, 1, 1, 0};
  std::vector<float> vals = {1, 2, 3};
  int64_t ishape[2] = {2, 2}, vshape[1] = {3};
  const DLDataType i64{kDLInt, 64, 1}, f32{kDLFloat, 32, 1}, c64{kDLComplex, 64, 1};
  // Values of the wrong length: Create's check.
  EXPECT_THROW(
      FromDLPack(make(rows.data(), ishape, 2, i64), make(vals.data(), vshape, 1, f32), {2, 2}),
      Error);
  EXPECT_EQ(deleted, 2);
  // A dtype DLPack has but tensorkit lacks, in either tensor.
  EXPECT_THROW(
      FromDLPack(make(rows.data(), ishape, 2, c64), make(vals.data(), vshape, 1, f32), {2, 2}),
      Error);
  EXPECT_EQ(deleted, 4);
  EXPECT_THROW(
      FromDLPack(make(rows.data(), ishape, 2, i64), make(vals.data(), vshape, 1, c64), {2, 2}),
      Error);
  EXPECT_EQ(deleted, 6);
  EXPECT_THROW(FromDLPack(nullptr, make(vals.data(), vshape, 1, f32), {2, 2}), Error);
  EXPECT_EQ(deleted, 7);
  EXPECT_THROW(ToDLPack(MakeSparse<std::string>({0}, {"a"}, {2})), Error);
  EXPECT_THROW(ToDLPack(SparseTensor()), Error);
}

}  // namespace
}  // namespace tensorkit
