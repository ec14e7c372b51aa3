// GPU tests of the dense engine at the launch limits its kernels work around (dense/cuda/
// geometry.h): more rows or outputs than a grid's y dimension holds (65535), row sums longer than
// that, inner axes of 128 elements and more (the row and vectorised paths), float16 views that
// start one element into their storage (not aligned for paired loads), and more than 2^31
// elements (64-bit offsets) where the device's memory allows. Each result is compared with the
// CPU engine's on the same pattern. Skipped without a device.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/gpu_test_util.h"
#include "reference/reference.h"
#include "tensorkit/common/error.h"
#include "tensorkit/common/half.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/dense/views.h"

namespace tensorkit {
namespace {

using gpu_testing::ExpectSame;
using gpu_testing::SamePatternOn;
using ref::Rng;

const Device kGpu = Device::Cuda(0);
constexpr int64_t kGridY = 65535;

// Values are multiples of 1/8 in [-4, 4) (ref::RandomValue), so float32 sums of fewer than 2^19
// of them are exact in any order and the device's sums must equal the CPU's bit for bit.

// Sum of `t` over `axes` into a keepdims output, on the device and on the CPU.
void ExpectSumsMatch(const Tensor& t, const std::vector<int64_t>& out_dims,
                     const std::string& what) {
  Tensor want = Tensor::Zeros(out_dims, t.dtype());
  Copy(t, &want);
  Tensor got = Tensor::Zeros(out_dims, t.dtype(), kGpu);
  Copy(SamePatternOn(t, kGpu), &got);
  ExpectSame<float>(got, want, what);
}

TEST(DenseLimitsGpuTest, ElementwiseOverMoreRowsThanTheGridHolds) {
  TK_REQUIRE_GPU();
  Rng rng(1);
  for (const std::vector<int64_t>& dims :
       {std::vector<int64_t>{kGridY + 2, 3}, {3, kGridY + 2}, {2, kGridY + 7, 2}}) {
    // A transposed source and a broadcast operand: the strided (non-contiguous) kernel.
    std::vector<int64_t> rev(dims.rbegin(), dims.rend());
    const Tensor base = ref::RandomTensor<float>(rng, rev);
    Tensor a = base;
    for (int i = 0, j = a.NumAxes() - 1; i < j; ++i, --j) a = Transpose(a, i, j);
    std::vector<int64_t> bdims = dims;
    bdims.back() = 1;
    const Tensor b = ref::RandomTensor<float>(rng, bdims);
    Tensor want = Tensor::Zeros(dims, DType::kFloat32);
    Add(a, b, &want);
    Tensor got = Tensor::Zeros(dims, DType::kFloat32, kGpu);
    Add(SamePatternOn(a, kGpu), b.To(kGpu), &got);
    ExpectSame<float>(got, want, "Add over " + std::to_string(dims[0]) + " rows");
    // A reversed row order: negative strides over the long axis.
    const Tensor flipped = Slice(want, 0, dims[0] - 1, -1, -1);
    Tensor want_copy = Tensor::Zeros(dims, DType::kFloat32);
    Copy(flipped, &want_copy);
    Tensor got_copy = Tensor::Zeros(dims, DType::kFloat32, kGpu);
    Copy(Slice(got, 0, dims[0] - 1, -1, -1), &got_copy);
    ExpectSame<float>(got_copy, want_copy, "reversed Copy");
  }
}

TEST(DenseLimitsGpuTest, ReductionsWithMoreOutputsThanTheGridHolds) {
  TK_REQUIRE_GPU();
  Rng rng(2);
  // Row sums: 70001 outputs of 37 elements each (the row path, rows on grid y).
  ExpectSumsMatch(ref::RandomTensor<float>(rng, {kGridY + 4466, 37}), {kGridY + 4466, 1},
                  "row sums of 70001 rows");
  // Column sums: 70001 outputs (the column path).
  ExpectSumsMatch(ref::RandomTensor<float>(rng, {37, kGridY + 4466}), {1, kGridY + 4466},
                  "column sums of 70001 columns");
  // A middle axis summed with both outer axes kept: [300, 9, 300] -> [300, 1, 300].
  ExpectSumsMatch(ref::RandomTensor<float>(rng, {300, 9, 300}), {300, 1, 300},
                  "middle-axis sums with 90000 outputs");
}

TEST(DenseLimitsGpuTest, RowSumsLongerThanTheGridHolds) {
  TK_REQUIRE_GPU();
  Rng rng(3);
  for (const int64_t cols : {kGridY + 1, int64_t{200000}, int64_t{450001}}) {
    ExpectSumsMatch(ref::RandomTensor<float>(rng, {3, cols}), {3, 1},
                    "row sums of " + std::to_string(cols) + " columns");
    // The whole tensor into one element.
    ExpectSumsMatch(ref::RandomTensor<float>(rng, {1, cols}), {1, 1}, "a full sum");
  }
  // A strided long row: every other column of a wider tensor.
  const Tensor wide = ref::RandomTensor<float>(rng, {2, 2 * 140001});
  ExpectSumsMatch(Slice(wide, 1, 0, 2 * 140001, 2), {2, 1}, "row sums of a stepped view");
}

TEST(DenseLimitsGpuTest, InnerAxesOf128AndMore) {
  TK_REQUIRE_GPU();
  Rng rng(4);
  for (const int64_t inner :
       {int64_t{128}, int64_t{129}, int64_t{256}, int64_t{1000}, int64_t{4096}, int64_t{5003}}) {
    const std::vector<int64_t> dims = {17, inner};
    const Tensor a = ref::RandomTensor<float>(rng, dims);
    const Tensor row = ref::RandomTensor<float>(rng, {inner});
    const std::string what = "inner axis " + std::to_string(inner);
    // Contiguous elementwise (the vectorised path) with a broadcast row.
    Tensor want = Tensor::Zeros(dims, DType::kFloat32);
    Mul(a, row, &want);
    Tensor got = Tensor::Zeros(dims, DType::kFloat32, kGpu);
    Mul(a.To(kGpu), row.To(kGpu), &got);
    ExpectSame<float>(got, want, "Mul, " + what);
    // Row sums (the row path) and column sums of the same tensor.
    ExpectSumsMatch(a, {17, 1}, "row sums, " + what);
    ExpectSumsMatch(a, {1, inner}, "column sums, " + what);
    // A view that starts one element in: vector loads must not assume alignment.
    const Tensor shifted = Slice(a, 1, 1, inner);
    Tensor want_s = Tensor::Zeros({17, inner - 1}, DType::kFloat32);
    Neg(shifted, &want_s);
    Tensor got_s = Tensor::Zeros({17, inner - 1}, DType::kFloat32, kGpu);
    Neg(SamePatternOn(shifted, kGpu), &got_s);
    ExpectSame<float>(got_s, want_s, "Neg of a shifted view, " + what);
  }
}

TEST(DenseLimitsGpuTest, Float16ViewsOneElementIntoTheirStorage) {
  TK_REQUIRE_GPU();
  Rng rng(5);
  for (const int64_t n : {int64_t{2}, int64_t{3}, int64_t{130}, int64_t{4097}, int64_t{100001}}) {
    const Tensor base = ref::RandomTensor<Half>(rng, {n + 1});
    const Tensor other = ref::RandomTensor<Half>(rng, {n + 1});
    const Tensor a = Slice(base, 0, 1, n + 1), b = Slice(other, 0, 0, n);  // offsets 1 and 0
    const std::string what = "float16 of " + std::to_string(n) + " at offset 1";
    Tensor want = Tensor::Zeros({n}, DType::kFloat16);
    Add(a, b, &want);
    Tensor got = Tensor::Zeros({n}, DType::kFloat16, kGpu);
    Add(SamePatternOn(a, kGpu), SamePatternOn(b, kGpu), &got);
    ExpectSame<Half>(got, want, "Add, " + what);
    // The output at offset 1 too.
    Tensor want_out = Tensor::Zeros({n + 1}, DType::kFloat16);
    Tensor got_out = Tensor::Zeros({n + 1}, DType::kFloat16, kGpu);
    Tensor wv = Slice(want_out, 0, 1, n + 1), gv = Slice(got_out, 0, 1, n + 1);
    Copy(a, &wv);
    Copy(SamePatternOn(a, kGpu), &gv);
    ExpectSame<Half>(got_out, want_out, "Copy into an offset output, " + what);
    // Conversion both ways through the hardware instructions.
    Tensor want_f = Tensor::Zeros({n}, DType::kFloat32);
    Copy(a, &want_f);
    Tensor got_f = Tensor::Zeros({n}, DType::kFloat32, kGpu);
    Copy(SamePatternOn(a, kGpu), &got_f);
    ExpectSame<float>(got_f, want_f, "float16 -> float32, " + what);
    Tensor back = Tensor::Zeros({n + 1}, DType::kFloat16, kGpu);
    Tensor bv = Slice(back, 0, 1, n + 1);
    Copy(got_f, &bv);
    ExpectSame<Half>(bv, a, "float32 -> float16 into offset 1, " + what);
  }
}

// 2^31 + 3 bytes: positions past int32, so the 64-bit offset arithmetic runs (the 32-bit kind
// serves only tensors whose positions fit). Skipped when the device cannot hold two of them.
TEST(DenseLimitsGpuTest, MoreThanTwoToThe31Elements) {
  TK_REQUIRE_GPU();
  constexpr int64_t kN = (int64_t{1} << 31) + 3;
  // Host buffers are filled and read in place (no vector copies): 2 GiB each.
  Tensor host = Tensor::Empty({kN}, DType::kUInt8);
  uint8_t* h = host.data<uint8_t>();
  for (int64_t i = 0; i < kN; ++i) h[i] = static_cast<uint8_t>((i * 131) ^ (i >> 23));
  Tensor src, dst;
  try {
    src = host.To(kGpu);
    dst = Tensor::Empty({kN}, DType::kUInt8, kGpu);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kResourceExhausted) throw;
    GTEST_SKIP() << "the device cannot hold two tensors of 2^31 + 3 bytes: " << e.what();
  }
  // Reversed: every offset computed from a negative stride over the whole range.
  Copy(Slice(src, 0, kN - 1, -1, -1), &dst);
  {
    const Tensor back = dst.To(Device::Cpu());
    const uint8_t* g = back.data<uint8_t>();
    for (int64_t i = 0; i < kN; ++i) {
      ASSERT_EQ(g[i], h[kN - 1 - i]) << "reversed copy at " << i;
    }
  }
  // As [2, 2^30 + 1] transposed into [2^30 + 1, 2]: a 2-D pattern past 2^31 elements.
  const int64_t rows = (kN - 1) / 2;
  const Tensor m = *View(Slice(src, 0, 0, 2 * rows), {2, rows});
  Tensor t = *View(Slice(dst, 0, 0, 2 * rows), {rows, 2});
  Copy(Transpose(m, 0, 1), &t);
  const Tensor back = t.To(Device::Cpu());
  const uint8_t* g = back.data<uint8_t>();
  for (int64_t r = 0; r < rows; ++r) {
    ASSERT_EQ(g[2 * r], h[r]) << "transposed at row " << r;
    ASSERT_EQ(g[2 * r + 1], h[rows + r]) << "transposed at row " << r;
  }
}

}  // namespace
}  // namespace tensorkit
