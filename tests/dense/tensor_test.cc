// Tests of dense/tensor.h: creation for every dtype, rank 0 and dim 0, ToVector from any
// pattern (checked against tests/reference), copies, storage sharing and printing.
#include "tensorkit/dense/tensor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "reference/reference.h"
#include "tensorkit/common/error.h"
#include "tensorkit/dense/views.h"
#include "test_util.h"

namespace tensorkit {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

using ::tensorkit::testing::ExpectError;

// Calls fn.template operator()<T>() for the C type of every dtype.
template <typename F>
void ForEveryDType(F&& fn) {
  for (int d = 0; d < kNumDTypes; ++d) {
    const DType dtype = static_cast<DType>(d);
    SCOPED_TRACE(DTypeName(dtype));
    Dispatch(dtype, "test", [&]<typename T>() { fn.template operator()<T>(); });
  }
}

TEST(TensorTest, ZerosForEveryDType) {
  ForEveryDType([]<typename T>() {
    Tensor t = Tensor::Zeros({2, 3}, DTypeOf<T>);
    EXPECT_EQ(t.dtype(), DTypeOf<T>);
    EXPECT_EQ(t.device(), Device::Cpu());
    EXPECT_EQ(t.Dims(), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(t.Strides(), (std::vector<int64_t>{3, 1}));
    EXPECT_TRUE(t.IsContiguous());
    EXPECT_EQ(t.ToVector<T>(), std::vector<T>(6, T{}));
    EXPECT_EQ(ref::Elements<T>(t), std::vector<T>(6, T{}));
  });
}

TEST(TensorTest, EmptyHasDimsAndDefaultStrides) {
  ForEveryDType([]<typename T>() {
    Tensor t = Tensor::Empty({4, 1, 5}, DTypeOf<T>);
    EXPECT_EQ(t.NumAxes(), 3);
    EXPECT_EQ(t.NumElements(), 20);
    EXPECT_EQ(t.Strides(), (std::vector<int64_t>{5, 0, 1}));
    EXPECT_TRUE(t.IsContiguous());  // (values are uninitialised: reading a bool would be UB)
  });
  Tensor s = Tensor::Empty({3}, DType::kString);  // strings are constructed empty
  EXPECT_EQ(s.ToVector<std::string>(), std::vector<std::string>(3));
}

TEST(TensorTest, FromVectorRoundTripsEveryDType) {
  ref::Rng rng(11);
  ForEveryDType([&]<typename T>() {
    for (const std::vector<int64_t>& dims :
         std::vector<std::vector<int64_t>>{{}, {0}, {5}, {3, 4}, {2, 0, 3}, {2, 1, 3, 2}}) {
      std::vector<T> values;
      for (int64_t i = 0; i < ref::NumElements(dims); ++i)
        values.push_back(ref::RandomValue<T>(rng));
      Tensor t = Tensor::FromVector(values, dims);
      EXPECT_EQ(t.Dims(), dims);
      EXPECT_EQ(t.NumElements(), static_cast<int64_t>(values.size()));
      EXPECT_EQ(t.ToVector<T>(), values);
      EXPECT_EQ(ref::Elements<T>(t), values);  // C order, read through the strides
    }
  });
}

TEST(TensorTest, FromVectorOneDimensional) {
  Tensor t = Tensor::FromVector(std::vector<int64_t>{4, 5, 6});
  EXPECT_EQ(t.Dims(), (std::vector<int64_t>{3}));
  EXPECT_EQ(t.ToVector<int64_t>(), (std::vector<int64_t>{4, 5, 6}));
  Tensor b = Tensor::FromVector(std::vector<bool>{true, false, true});
  EXPECT_EQ(b.dtype(), DType::kBool);
  EXPECT_EQ(b.ToVector<bool>(), (std::vector<bool>{true, false, true}));
}

TEST(TensorTest, RankZero) {
  ForEveryDType([]<typename T>() {
    ref::Rng rng(12);
    const T v = ref::RandomValue<T>(rng);
    Tensor t = Tensor::FromScalar(v);
    EXPECT_EQ(t.NumAxes(), 0);
    EXPECT_EQ(t.NumElements(), 1);
    EXPECT_TRUE(t.Dims().empty());
    EXPECT_EQ(t.ToVector<T>(), std::vector<T>{v});
    EXPECT_EQ(ref::Get<T>(t, {}), v);
    Tensor z = Tensor::Zeros({}, DTypeOf<T>);
    EXPECT_EQ(z.ToVector<T>(), std::vector<T>{T{}});
  });
}

TEST(TensorTest, DimZero) {
  Tensor t = Tensor::Zeros({0, 3}, DType::kFloat32);
  EXPECT_EQ(t.NumElements(), 0);
  EXPECT_EQ(t.Dims(), (std::vector<int64_t>{0, 3}));
  EXPECT_TRUE(t.ToVector<float>().empty());
  EXPECT_TRUE(t.To(Device::Cpu()).ToVector<float>().empty());
  EXPECT_TRUE(t.Clone().ToVector<float>().empty());
  Tensor s = Tensor::FromVector(std::vector<std::string>{}, {3, 0});
  EXPECT_EQ(s.NumElements(), 0);
  EXPECT_TRUE(s.ToVector<std::string>().empty());
}

TEST(TensorTest, CreationErrors) {
  ExpectError(
      [] {
        Tensor::FromVector(std::vector<float>{1, 2, 3}, {2, 2});
      },
      ErrorCode::kShapeMismatch, {"Tensor::FromVector", "3 values", "[2 2]"});
  ExpectError(
      [] {
        Tensor::Zeros({2, -3}, DType::kFloat32);
      },
      ErrorCode::kInvalidArgument, {"Tensor::Zeros", "negative dim -3"});
  ExpectError(
      [] {
        Tensor::Empty({1, 1, 1, 1, 1, 1, 1, 1, 1}, DType::kInt32);
      },
      ErrorCode::kInvalidArgument, {"Tensor::Empty", "at most 8"});
  Tensor t = Tensor::Zeros({2}, DType::kInt32);
  ExpectError([&] { t.ToVector<float>(); }, ErrorCode::kDTypeMismatch,
              {"Tensor::ToVector", "float32", "int32"});
  ExpectError([&] { t.data<double>(); }, ErrorCode::kDTypeMismatch, {"Tensor::data", "float64"});
}

TEST(TensorTest, UndefinedTensorIsRejected) {
  Tensor u;
  EXPECT_FALSE(u.defined());
  ExpectError([&] { u.ToVector<float>(); }, ErrorCode::kInvalidArgument,
              {"Tensor::ToVector", "undefined"});
  ExpectError([&] { u.Clone(); }, ErrorCode::kInvalidArgument, {"Tensor::Clone"});
  ExpectError([&] { u.raw_data(); }, ErrorCode::kInvalidArgument, {"undefined"});
  EXPECT_FALSE(SharesStorage(u, u));
  std::ostringstream os;
  os << u;
  EXPECT_EQ(os.str(), "Tensor(undefined)");
}

TEST(TensorTest, DimAndStrideAcceptNegativeAxes) {
  Tensor t = Tensor::Zeros({2, 3, 4}, DType::kFloat64);
  EXPECT_EQ(t.Dim(-1), 4);
  EXPECT_EQ(t.Dim(0), 2);
  EXPECT_EQ(t.Stride(-3), 12);
  ExpectError([&] { t.Dim(3); }, ErrorCode::kOutOfRange, {"Tensor::Dim", "axis 3"});
  ExpectError([&] { t.Stride(-4); }, ErrorCode::kOutOfRange, {"Tensor::Stride", "axis -4"});
}

// ToVector, To and Clone on random strided views give the reference's C-order elements.
TEST(TensorTest, ToVectorToAndCloneOfStridedViews) {
  ref::Rng rng(13);
  ForEveryDType([&]<typename T>() {
    for (int iter = 0; iter < 30; ++iter) {
      Tensor t = ref::RandomStridedTensor<T>(rng, ref::RandomDims(rng, 0, 4, 4));
      t = ref::RandomView(rng, t, {.num_ops = 2});
      const std::vector<T> want = ref::Elements<T>(t);
      EXPECT_EQ(t.ToVector<T>(), want) << t.pattern();
      for (Tensor copy : {t.To(Device::Cpu()), t.Clone()}) {
        EXPECT_FALSE(SharesStorage(copy, t));
        EXPECT_TRUE(copy.IsContiguous());
        EXPECT_EQ(copy.pattern().offset, 0);
        EXPECT_EQ(copy.Dims(), t.Dims());
        EXPECT_EQ(copy.dtype(), t.dtype());
        EXPECT_EQ(ref::Elements<T>(copy), want);
      }
    }
  });
}

TEST(TensorTest, CloneIsIndependent) {
  Tensor t = Tensor::FromVector(std::vector<int32_t>{1, 2, 3, 4}, {2, 2});
  Tensor c = t.Clone();
  ref::Set<int32_t>(c, {0, 1}, 99);
  EXPECT_EQ(t.ToVector<int32_t>(), (std::vector<int32_t>{1, 2, 3, 4}));
  EXPECT_EQ(c.ToVector<int32_t>(), (std::vector<int32_t>{1, 99, 3, 4}));
}

TEST(TensorTest, CopiesShareStorage) {
  Tensor t = Tensor::FromVector(std::vector<float>{1, 2, 3}, {3});
  Tensor h = t;  // copies the handle
  EXPECT_TRUE(SharesStorage(t, h));
  ref::Set<float>(h, {2}, 7.0f);
  EXPECT_EQ(t.ToVector<float>(), (std::vector<float>{1, 2, 7}));
  EXPECT_FALSE(SharesStorage(t, Tensor::FromVector(std::vector<float>{1, 2, 3}, {3})));
}

TEST(TensorTest, WithPattern) {
  Tensor t = Tensor::FromVector(std::vector<int64_t>{0, 1, 2, 3, 4, 5}, {6});
  Tensor v = t.WithPattern(MakePattern({3}, {-2}, 5));
  EXPECT_TRUE(SharesStorage(t, v));
  EXPECT_EQ(v.ToVector<int64_t>(), (std::vector<int64_t>{5, 3, 1}));
  EXPECT_EQ(*v.data<int64_t>(), 5);  // data() points at the all-zero index
  ExpectError([&] { t.WithPattern(MakePattern({4}, {2})); }, ErrorCode::kOutOfRange,
              {"reaches element 6", "holds 6 elements", "int64"});
  Pattern bad;
  bad.num_axes = 2;
  bad.dims[0] = 3;
  bad.dims[1] = 2;
  bad.strides[0] = 1;
  bad.strides[1] = 1;
  ExpectError([&] { t.WithPattern(bad); }, ErrorCode::kInvalidArgument,
              {"invalid pattern", "axis-dominance"});
  // An empty pattern may point anywhere.
  EXPECT_EQ(t.WithPattern(MakePattern({0, 100}, {100, 1}, 1000)).NumElements(), 0);
}

TEST(TensorTest, Stream) {
  Tensor t = Tensor::FromVector(std::vector<float>{1, 2.5f, 3, 4, 5, 6}, {2, 3});
  std::ostringstream os;
  os << t;
  EXPECT_EQ(os.str(), "Tensor float32 cpu dims=[2 3] strides=[3 1] [1 2.5 3 4 5 6]");

  std::ostringstream big;
  big << Tensor::Zeros({100}, DType::kInt8);
  EXPECT_THAT(big.str(), StartsWith("Tensor int8 cpu dims=[100]"));
  EXPECT_THAT(big.str(), HasSubstr("... (100 elements)"));

  std::ostringstream strings;
  strings << Tensor::FromVector(std::vector<std::string>{"ab", "c"});
  EXPECT_EQ(strings.str(), "Tensor string cpu dims=[2] strides=[1] [ab c]");

  std::ostringstream halves;
  halves << Tensor::FromVector(std::vector<Half>{Half(1.5f)});
  EXPECT_THAT(halves.str(), HasSubstr("[1.5]"));
}

// Without a device, moving to one is a clear Error (the device tests live in tests/gpu/).
// A contiguous CPU tensor is its own host copy; any other becomes a C-order CPU copy.
TEST(TensorTest, HostContiguous) {
  Tensor t = Tensor::FromVector<int>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor same = t.HostContiguous();
  EXPECT_TRUE(SharesStorage(same, t));
  EXPECT_TRUE(Identical(same, t));
  Tensor tr = Transpose(t, 0, 1);
  Tensor packed = tr.HostContiguous();
  EXPECT_FALSE(SharesStorage(packed, tr));
  EXPECT_TRUE(packed.IsContiguous());
  EXPECT_TRUE(packed.device().is_cpu());
  EXPECT_EQ(packed.Dims(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(packed.ToVector<int>(), (std::vector<int>{1, 4, 2, 5, 3, 6}));
}

TEST(TensorTest, ToMissingCudaDeviceFails) {
  const Device missing = Device::Cuda(CudaDeviceCount());
  ExpectError([&] { Tensor::Zeros({2}, DType::kFloat32).To(missing); },
              BuiltWithCuda() ? ErrorCode::kInvalidArgument : ErrorCode::kUnsupported,
              {"Tensor::To", missing.ToString()});
}

}  // namespace
}  // namespace tensorkit

namespace tensorkit {
namespace {

TEST(TensorPredicatesTest, BroadcastableCompatibleIdenticalOverlap) {
  Tensor a = Tensor::Zeros({3, 4}, DType::kFloat32);
  Tensor row = Tensor::Zeros({4}, DType::kFloat32);
  Tensor col = Tensor::Zeros({3, 1}, DType::kFloat64);
  Tensor other = Tensor::Zeros({2, 4}, DType::kFloat32);
  EXPECT_TRUE(Broadcastable(a, row));  // [3 4] with [1 4] after padding
  EXPECT_TRUE(Broadcastable(a, col));
  EXPECT_TRUE(Broadcastable(row, col, a));
  EXPECT_FALSE(Broadcastable(a, other));
  EXPECT_FALSE(Broadcastable(a, row, other));
  EXPECT_TRUE(Compatible(a, row));
  EXPECT_FALSE(Compatible(a, col));  // float64
  EXPECT_FALSE(Compatible(a, row, col));
  EXPECT_FALSE(Compatible(a, Tensor()));
  // Views of one storage: identical only with the same pattern; overlap by elements.
  Tensor first_row = Select(a, 0, 0), last_row = Select(a, 0, 2);
  EXPECT_TRUE(Identical(first_row, Select(a, 0, 0)));
  EXPECT_FALSE(Identical(first_row, last_row));
  EXPECT_FALSE(Identical(a, a.Clone()));
  EXPECT_TRUE(Overlap(a, last_row));
  EXPECT_FALSE(Overlap(first_row, last_row));
  EXPECT_TRUE(Overlap(Select(a, 1, 1), last_row));  // column 1 meets row 2 at (2, 1)
  EXPECT_FALSE(Overlap(Slice(a, 1, 0, 4, 2), Slice(a, 1, 1, 4, 2)));  // even / odd columns
  EXPECT_FALSE(Overlap(a, a.Clone()));
}

// Contiguous keeps a tensor with default strides (the same storage) and copies any other on its
// own device.
TEST(TensorTest, ContiguousCopiesOnlyStridedTensors) {
  const Tensor t = Tensor::FromVector<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_TRUE(SharesStorage(t.Contiguous(), t));
  const Tensor tr = Transpose(t, 0, 1);
  const Tensor c = tr.Contiguous();
  EXPECT_FALSE(SharesStorage(c, tr));
  EXPECT_TRUE(c.IsContiguous());
  EXPECT_EQ(c.device(), tr.device());
  EXPECT_EQ(c.ToVector<int32_t>(), (std::vector<int32_t>{1, 4, 2, 5, 3, 6}));
  EXPECT_FALSE(Tensor().Contiguous().defined());
}

}  // namespace
}  // namespace tensorkit
