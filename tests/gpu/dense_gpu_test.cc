// Every dense op on the device against the CPU engine, over the randomised patterns of
// tests/reference/ (strides, negative steps, broadcasting, summation, dim 0 and 1). Skipped
// with a message when no CUDA device is visible.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gpu/gpu_test_util.h"
#include "reference/reference.h"
#include "tensorkit/common/stream.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/dense/views.h"
#include "test_util.h"

namespace tensorkit {
namespace {

using gpu_testing::ExpectSame;
using gpu_testing::SamePatternOn;
using gpu_testing::SubDims;
using ref::Rng;
using testing::ExpectError;

const Device kGpu = Device::Cuda(0);

using UnaryOp = void (*)(const Tensor&, Tensor*);
using BinaryOp = void (*)(const Tensor&, const Tensor&, Tensor*);

const std::vector<std::pair<std::string, UnaryOp>> kUnary = {
    {"Exp", &Exp},   {"Log", &Log}, {"Relu", &Relu}, {"Sigmoid", &Sigmoid},
    {"Tanh", &Tanh}, {"Abs", &Abs}, {"Sqrt", &Sqrt}, {"Neg", &Neg}};
const std::vector<std::pair<std::string, BinaryOp>> kBinary = {
    {"Add", &Add}, {"Sub", &Sub}, {"Mul", &Mul}, {"Div", &Div},
    {"Pow", &Pow}, {"Max", &Max}, {"Min", &Min}};

// The tolerance of a function whose last bit comes from libm (host) or CUDA's math library.
template <typename T>
double Tolerance(const std::string& name) {
  const bool libm = name == "Pow" || (name == "Tanh" && !std::is_same_v<T, float>);
  if (!libm) return 0;
  return std::is_same_v<T, double> ? 1e-14 : std::is_same_v<T, float> ? 1e-6 : 1e-2;
}

template <typename T>
void CheckUnary(uint64_t seed, int rounds) {
  Rng rng(seed);
  for (int round = 0; round < rounds; ++round) {
    for (const auto& [name, op] : kUnary) {
      const std::vector<int64_t> space = ref::RandomDims(rng, 0, 4, 6);
      std::vector<int64_t> od = SubDims(rng, space, 3);
      if (std::is_integral_v<T> && name == "Exp") od = space;
      const Tensor src = ref::RandomStridedTensor<T>(rng, SubDims(rng, space, 4));
      Tensor want = ref::RandomStridedTensor<T>(rng, od);
      Tensor got = SamePatternOn(want, kGpu);
      op(src, &want);
      op(SamePatternOn(src, kGpu), &got);
      ExpectSame<T>(got, want,
                    name + " " + DTypeName(DTypeOf<T>) + " src " + ShapeString(src.Dims()) +
                        " out " + ShapeString(od),
                    Tolerance<T>(name));
    }
  }
}

TEST(DenseGpuTest, UnaryInt32) {
  TK_REQUIRE_GPU();
  CheckUnary<int32_t>(1, 4);
}
TEST(DenseGpuTest, UnaryInt64) {
  TK_REQUIRE_GPU();
  CheckUnary<int64_t>(2, 4);
}
TEST(DenseGpuTest, UnaryFloat32) {
  TK_REQUIRE_GPU();
  CheckUnary<float>(3, 6);
}
TEST(DenseGpuTest, UnaryFloat64) {
  TK_REQUIRE_GPU();
  CheckUnary<double>(4, 4);
}
TEST(DenseGpuTest, UnaryFloat16) {
  TK_REQUIRE_GPU();
  CheckUnary<Half>(5, 3);
}
TEST(DenseGpuTest, UnaryBFloat16) {
  TK_REQUIRE_GPU();
  CheckUnary<BFloat16>(6, 3);
}

template <typename T>
void CheckBinary(uint64_t seed, int rounds) {
  Rng rng(seed);
  for (int round = 0; round < rounds; ++round) {
    for (const auto& [name, op] : kBinary) {
      const std::vector<int64_t> space = ref::RandomDims(rng, 0, 4, 6);
      std::vector<int64_t> od = SubDims(rng, space, 3);
      if (std::is_integral_v<T> && name == "Pow") od = space;
      const Tensor a = ref::RandomStridedTensor<T>(rng, SubDims(rng, space, 4));
      const Tensor b = ref::RandomStridedTensor<T>(rng, SubDims(rng, space, 4));
      Tensor want = ref::RandomStridedTensor<T>(rng, od);
      Tensor got = SamePatternOn(want, kGpu);
      op(a, b, &want);
      op(SamePatternOn(a, kGpu), SamePatternOn(b, kGpu), &got);
      ExpectSame<T>(got, want,
                    name + " " + DTypeName(DTypeOf<T>) + " a " + ShapeString(a.Dims()) + " b " +
                        ShapeString(b.Dims()) + " c " + ShapeString(od),
                    Tolerance<T>(name));
    }
  }
}

TEST(DenseGpuTest, BinaryInt32) {
  TK_REQUIRE_GPU();
  CheckBinary<int32_t>(11, 4);
}
TEST(DenseGpuTest, BinaryInt64) {
  TK_REQUIRE_GPU();
  CheckBinary<int64_t>(12, 4);
}
TEST(DenseGpuTest, BinaryFloat32) {
  TK_REQUIRE_GPU();
  CheckBinary<float>(13, 6);
}
TEST(DenseGpuTest, BinaryFloat64) {
  TK_REQUIRE_GPU();
  CheckBinary<double>(14, 4);
}
TEST(DenseGpuTest, BinaryFloat16) {
  TK_REQUIRE_GPU();
  CheckBinary<Half>(15, 3);
}
TEST(DenseGpuTest, BinaryBFloat16) {
  TK_REQUIRE_GPU();
  CheckBinary<BFloat16>(16, 3);
}

// Fills, scaling and accumulation into strided device outputs.
TEST(DenseGpuTest, SetScaleCopyScaledAddTo) {
  TK_REQUIRE_GPU();
  Rng rng(21);
  for (int round = 0; round < 20; ++round) {
    const std::vector<int64_t> space = ref::RandomDims(rng, 0, 4, 6);
    const Tensor src = ref::RandomStridedTensor<float>(rng, SubDims(rng, space, 4));
    Tensor want = ref::RandomStridedTensor<float>(rng, SubDims(rng, space, 3));
    Tensor got = SamePatternOn(want, kGpu);
    const Tensor gsrc = SamePatternOn(src, kGpu);
    AddTo(1.5, -0.5, src, &want);
    AddTo(1.5, -0.5, gsrc, &got);
    ExpectSame<float>(got, want, "AddTo");
    Scale(-2, &want);
    Scale(-2, &got);
    ExpectSame<float>(got, want, "Scale");
    CopyScaled(0.25, src, &want);
    CopyScaled(0.25, gsrc, &got);
    ExpectSame<float>(got, want, "CopyScaled");
    Set(3.5, &want);
    Set(3.5, &got);
    ExpectSame<float>(got, want, "Set");
    SetZero(&want);
    SetZero(&got);
    ExpectSame<float>(got, want, "SetZero");
  }
  Tensor ints = Tensor::Zeros({5, 7}, DType::kInt8, kGpu);
  Tensor sliced = Slice(ints, 1, 6, -1, -2);
  Set(-3, &sliced);
  std::vector<int8_t> v = ints.ToVector<int8_t>();
  for (int64_t i = 0; i < 35; ++i) EXPECT_EQ(v[i], (i % 7) % 2 == 0 && i % 7 != 0 ? -3 : 0) << i;
}

// Copies between every pair of numeric dtypes over random patterns, on the device.
TEST(DenseGpuTest, ConversionsBetweenAllNumericDTypes) {
  TK_REQUIRE_GPU();
  Rng rng(31);
  const std::vector<DType> dtypes = {
      DType::kBool,  DType::kInt8,    DType::kUInt8,    DType::kInt16,   DType::kInt32,
      DType::kInt64, DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64};
  for (DType from : dtypes) {
    for (DType to : dtypes) {
      const std::vector<int64_t> dims = ref::RandomDims(rng, 0, 4, 6);
      Tensor src64 = ref::RandomStridedTensor<double>(rng, dims);
      Scale(37.25, &src64);  // values beyond small types' ranges: saturation is exercised
      Tensor src = Tensor::Empty(dims, from);
      Copy(src64, &src);
      Tensor want = Tensor::Empty(dims, to);
      Copy(src, &want);
      Tensor gsrc = SamePatternOn(ref::RandomView(rng, src, {0, false}), kGpu);
      // The device output in reversed axis order: the conversion writes a transposed layout.
      const int n = static_cast<int>(dims.size());
      std::vector<int> reverse(n);
      for (int i = 0; i < n; ++i) reverse[i] = n - 1 - i;
      Tensor got = Permute(
          Tensor::Empty(std::vector<int64_t>(dims.rbegin(), dims.rend()), to, kGpu), reverse);
      Copy(gsrc, &got);
      Tensor back = Tensor::Empty(dims, DType::kFloat64),
             wantd = Tensor::Empty(dims, DType::kFloat64);
      Copy(got, &back);  // device to host, converting on the host
      Copy(want, &wantd);
      ExpectSame<double>(back, wantd,
                         std::string("Copy ") + DTypeName(from) + " -> " + DTypeName(to));
    }
  }
}

// Transposes and permutations take the tiled shared-memory path; odd sizes test the edges.
TEST(DenseGpuTest, TransposesAndPermutations) {
  TK_REQUIRE_GPU();
  Rng rng(41);
  for (int64_t rows : {1, 31, 33, 100, 257}) {
    for (int64_t cols : {17, 32, 65, 300}) {
      const Tensor a = ref::RandomTensor<float>(rng, {rows, cols});
      const Tensor ga = a.To(kGpu);
      Tensor got = Tensor::Empty({cols, rows}, DType::kFloat32, kGpu);
      Copy(Transpose(ga, 0, 1), &got);
      ExpectSame<float>(got, Transpose(a, 0, 1).Clone(), "transpose " + std::to_string(rows));
      Tensor h = Tensor::Empty({cols, rows}, DType::kFloat16, kGpu);
      Copy(Transpose(ga, 0, 1), &h);  // converting transpose: the strided path
      Tensor wh = Tensor::Empty({cols, rows}, DType::kFloat16);
      Copy(Transpose(a, 0, 1), &wh);
      ExpectSame<Half>(h, wh, "converting transpose");
    }
  }
  const Tensor t = ref::RandomTensor<int64_t>(rng, {6, 40, 50, 3});
  for (const std::vector<int>& perm :
       {std::vector<int>{3, 2, 1, 0}, {0, 2, 1, 3}, {2, 0, 3, 1}, {1, 3, 0, 2}}) {
    ExpectSame<int64_t>(Permute(t.To(kGpu), perm).Clone(), Permute(t, perm).Clone(), "permute");
  }
}

// Sums over every axis set, including splits into partials and sums of all elements; the bits
// are the same on every run (and, with the exactly representable test values, the CPU's).
TEST(DenseGpuTest, SumsAreDeterministicAndMatchTheCpu) {
  TK_REQUIRE_GPU();
  Rng rng(51);
  const std::vector<std::vector<int64_t>> shapes = {
      {1 << 20}, {3000, 70}, {70, 3000}, {40, 600, 5}, {2, 3, 4, 5, 6}, {0, 5}, {5, 0}};
  for (const std::vector<int64_t>& dims : shapes) {
    const Tensor t = ref::RandomStridedTensor<float>(rng, dims);
    const Tensor g = SamePatternOn(t, kGpu);
    const int n = static_cast<int>(dims.size());
    for (int mask = 1; mask < (1 << n); ++mask) {
      std::vector<int> axes;
      for (int a = 0; a < n; ++a) {
        if (mask >> a & 1) axes.push_back(a);
      }
      const Tensor want = Sum(t, axes);
      const Tensor first = Sum(g, axes);
      ExpectSame<float>(first, want, "Sum " + ShapeString(dims) + " axes " + ShapeString(axes));
      for (int rep = 0; rep < 2; ++rep) {
        EXPECT_EQ(Sum(g, axes).ToVector<float>(), first.ToVector<float>()) << "rerun differs";
      }
    }
  }
  // Inexact float32 values: the bits repeat run to run although they need not be the CPU's.
  Tensor noisy = Tensor::Empty({1 << 22}, DType::kFloat32, kGpu);
  std::vector<float> v(1 << 22);
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(static_cast<float>(i)) * 1e3f;
  Copy(Tensor::FromVector(v), &noisy);
  const std::vector<float> s0 = Sum(noisy, {0}).ToVector<float>();
  for (int rep = 0; rep < 3; ++rep) EXPECT_EQ(Sum(noisy, {0}).ToVector<float>(), s0);
  EXPECT_NEAR(s0[0], Sum(noisy.To(Device::Cpu()), {0}).ToVector<float>()[0], 1.0);
}

template <typename T>
void CheckAddProduct(uint64_t seed) {
  Rng rng(seed);
  auto dim = [&](int hi) { return ref::internal::Uniform(rng, 1, hi); };
  for (int round = 0; round < 6; ++round) {
    const int64_t bt = dim(3), i = dim(40), j = dim(40), k = dim(40);
    const auto shapes = testing::ProductShapes(bt, i, j, k);
    for (const auto& [ad, bd, cd] : shapes) {
      const Tensor a = ref::RandomStridedTensor<T>(rng, ad);
      const Tensor b = ref::RandomStridedTensor<T>(rng, bd);
      Tensor want = ref::RandomStridedTensor<T>(rng, cd);
      const double alpha = round % 2 ? 1.5 : 1, beta = round % 3 == 0 ? 0 : -2;
      if constexpr (!std::is_integral_v<T>) {
        if (beta == 0) Set(std::numeric_limits<double>::quiet_NaN(), &want);  // never read
      }
      Tensor got = SamePatternOn(want, kGpu);
      AddProduct(alpha, beta, a, b, &want);
      AddProduct(alpha, beta, SamePatternOn(a, kGpu), SamePatternOn(b, kGpu), &got);
      ExpectSame<T>(got, want,
                    std::string("AddProduct ") + DTypeName(DTypeOf<T>) + " a " + ShapeString(ad) +
                        " b " + ShapeString(bd) + " c " + ShapeString(cd));
    }
  }
}

TEST(DenseGpuTest, AddProductFloat32) {
  TK_REQUIRE_GPU();
  CheckAddProduct<float>(61);
}
TEST(DenseGpuTest, AddProductFloat64) {
  TK_REQUIRE_GPU();
  CheckAddProduct<double>(62);
}
TEST(DenseGpuTest, AddProductFloat16) {
  TK_REQUIRE_GPU();
  CheckAddProduct<Half>(63);
}
TEST(DenseGpuTest, AddProductBFloat16) {
  TK_REQUIRE_GPU();
  CheckAddProduct<BFloat16>(64);
}
TEST(DenseGpuTest, AddProductInt32) {
  TK_REQUIRE_GPU();
  CheckAddProduct<int32_t>(65);
}

// The moved test of the staging days: mixed CPU/GPU operands, strided conversions across.
TEST(DenseGpuTest, DevicesMixOnlyThroughCopy) {
  TK_REQUIRE_GPU();
  Rng rng(81);
  Tensor a = ref::RandomStridedTensor<float>(rng, {5, 6});
  Tensor b = ref::RandomStridedTensor<float>(rng, {6});
  Tensor ga = a.To(kGpu), gb = b.To(kGpu);
  Tensor gc = Add(ga, gb);
  EXPECT_TRUE(gc.device().is_cuda());
  EXPECT_EQ(gc.ToVector<float>(), Add(a, b).ToVector<float>());
  Tensor gt = Tensor::Zeros({6, 5}, DType::kFloat64, kGpu);
  Tensor gtv = Transpose(gt, 0, 1);
  Copy(a, &gtv);  // CPU float32 -> strided GPU float64
  Tensor back = Tensor::Empty({5, 6}, DType::kFloat64);
  Copy(gtv, &back);  // strided GPU -> CPU
  Tensor want = Tensor::Empty({5, 6}, DType::kFloat64);
  Copy(a, &want);
  EXPECT_EQ(back.ToVector<double>(), want.ToVector<double>());
  ExpectError([&] { Add(a, gb); }, ErrorCode::kDeviceMismatch, {"Add", "cpu", "cuda:0", "To"});
  ExpectError([&] { AddProduct(1, 0, ga, b, &gc); }, ErrorCode::kDeviceMismatch,
              {"AddProduct", "cuda:0", "cpu"});
  // A strided device view to the host moves only its elements.
  Tensor big = Tensor::Zeros({1000, 1000}, DType::kFloat32, kGpu);
  Tensor corner = Slice(Slice(big, 0, 0, 3), 1, 999, 0, -400);
  EXPECT_EQ(corner.To(Device::Cpu()).ToVector<float>(), std::vector<float>(9, 0.0f));
}

TEST(DenseGpuTest, TensorRoundTrip) {
  TK_REQUIRE_GPU();
  Rng rng(14);
  for (int iter = 0; iter < 20; ++iter) {
    Tensor t = ref::RandomStridedTensor<float>(rng, ref::RandomDims(rng, 0, 4, 5));
    Tensor g = t.To(kGpu);
    EXPECT_TRUE(g.device().is_cuda());
    EXPECT_EQ(g.ToVector<float>(), ref::Elements<float>(t));
    EXPECT_EQ(ref::Elements<float>(g.To(Device::Cpu())), ref::Elements<float>(t));
    EXPECT_EQ(SamePatternOn(t, kGpu).ToVector<float>(), ref::Elements<float>(t));
  }
}

TEST(DenseGpuTest, OutOfMemoryIsResourceExhausted) {
  TK_REQUIRE_GPU();
  ExpectError([] { Tensor::Empty({int64_t{1} << 48}, DType::kFloat32, kGpu); },
              ErrorCode::kResourceExhausted, {"Storage::Allocate", "cuda:0"});
  // The device still works afterwards.
  EXPECT_EQ(Tensor::Zeros({3}, DType::kInt32, kGpu).ToVector<int32_t>(),
            std::vector<int32_t>(3, 0));
}

TEST(DenseGpuTest, StreamGuardAndSynchronize) {
  TK_REQUIRE_GPU();
  const cuda::Stream before = cuda::CurrentStream(kGpu);
  {
    // A null stream is CUDA's legacy default stream: a stream a framework may hand over.
    cuda::StreamGuard guard(kGpu, nullptr);
    EXPECT_EQ(cuda::CurrentStream(kGpu), nullptr);
    Tensor t = Tensor::Zeros({1000}, DType::kFloat32, kGpu);
    Set(2, &t);
    cuda::Synchronize(kGpu);
    EXPECT_EQ(Sum(t, {0}).ToVector<float>(), std::vector<float>{2000});
  }
  EXPECT_EQ(cuda::CurrentStream(kGpu), before);
  ExpectError([] { cuda::StreamGuard g(Device::Cuda(CudaDeviceCount() + 1), nullptr); },
              {"cuda::StreamGuard", "does not exist"});
}

TEST(DenseGpuTest, StringsStayOnTheCpu) {
  TK_REQUIRE_GPU();
  EXPECT_THROW(Storage::Allocate(DType::kString, 2, kGpu), Error);
  ExpectError([] { Tensor::FromVector<std::string>({"a"}).To(kGpu); }, {"string"});
}

}  // namespace
}  // namespace tensorkit
