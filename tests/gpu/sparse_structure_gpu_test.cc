// Structural sparse operations on a CUDA device against the CPU (the specification): random
// tensors of ranks 1-4 with repeats, nnz 0 and 1, every value byte width and random orders;
// results must stay on the device and be bit-equal to the CPU's, and bad inputs must give the
// CPU's Error codes and messages. Skipped with a message when no CUDA device is visible.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gpu_test_util.h"
#include "sparse/sparse_test_util.h"
#include "tensorkit/sparse/compressed.h"
#include "tensorkit/sparse/sparse_ops.h"
#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit {
namespace {

using testing::MakeSparse;
using testing::Rows;

const Device kGpu = Device::Cuda(0);

// Bytes of a tensor's elements in C order (bit-equality for every dtype, NaN included).
std::vector<unsigned char> Bytes(const Tensor& t) {
  const Tensor host = t.To(Device::Cpu());
  const unsigned char* p = static_cast<const unsigned char*>(host.raw_data());
  return {p, p + host.NumElements() * DTypeSize(host.dtype())};
}

// Expects `dev` (computed on the GPU) to be on the GPU and equal to `cpu` bit for bit.
void ExpectSameSparse(const SparseTensor& dev, const SparseTensor& cpu, const std::string& what) {
  EXPECT_EQ(dev.indices().device(), kGpu) << what;
  EXPECT_EQ(dev.values().device(), kGpu) << what;
  EXPECT_EQ(dev.shape(), cpu.shape()) << what;
  EXPECT_EQ(dev.order(), cpu.order()) << what;
  EXPECT_EQ(Rows(dev), Rows(cpu)) << what;
  EXPECT_EQ(Bytes(dev.values()), Bytes(cpu.values())) << what;
}

// Runs f on the CPU and on the device; both must throw Errors with the same code and message.
void ExpectSameError(const std::function<void(bool on_gpu)>& f, const std::string& what) {
  std::string cpu_msg, gpu_msg;
  ErrorCode cpu_code = ErrorCode::kInternal, gpu_code = ErrorCode::kInternal;
  try {
    f(false);
    ADD_FAILURE() << what << ": no Error on the CPU";
  } catch (const Error& e) {
    cpu_code = e.code();
    cpu_msg = e.what();
  }
  try {
    f(true);
    ADD_FAILURE() << what << ": no Error on the device";
  } catch (const Error& e) {
    gpu_code = e.code();
    gpu_msg = e.what();
  }
  EXPECT_EQ(gpu_code, cpu_code) << what;
  EXPECT_EQ(gpu_msg, cpu_msg) << what;
}

// Random values of T: few distinct ones (so sums of repeats are exact or wrap), zeros included.
template <typename T>
std::vector<T> RandomValuesOf(std::mt19937_64& rng, int64_t n) {
  std::vector<T> v;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t x = static_cast<int64_t>(rng() % 7) - 2;
    if constexpr (std::is_same_v<T, bool>) {
      v.push_back(x > 0);
    } else if constexpr (std::is_integral_v<T>) {
      v.push_back(static_cast<T>(x * 1000003));  // large: integer sums wrap in narrow types
    } else {
      v.push_back(static_cast<T>(static_cast<float>(x) * 0.37f));
    }
  }
  return v;
}

// A random shape of rank 1-4 (dims 1-9) and a random CPU tensor on it with repeats.
template <typename T>
SparseTensor RandomSparse(std::mt19937_64& rng, int64_t nnz, int rank) {
  std::vector<int64_t> shape;
  for (int a = 0; a < rank; ++a) shape.push_back(1 + static_cast<int64_t>(rng() % 9));
  return MakeSparse<T>(testing::RandomRows(rng, nnz, shape), RandomValuesOf<T>(rng, nnz), shape);
}

std::vector<int> RandomOrder(std::mt19937_64& rng, int rank) {
  std::vector<int> order(static_cast<size_t>(rank));
  for (int a = 0; a < rank; ++a) order[a] = a;
  std::shuffle(order.begin(), order.end(), rng);
  return order;
}

template <typename T>
class SparseStructureGpu : public ::testing::Test {};
// One dtype of every value width (1, 2, 4, 8 bytes), integer and floating.
using ValueTypes = ::testing::Types<bool, int8_t, Half, int16_t, float, int32_t, double, int64_t>;
TYPED_TEST_SUITE(SparseStructureGpu, ValueTypes);

TYPED_TEST(SparseStructureGpu, ReorderCoalesceAndValidationMatchTheCpu) {
  TK_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937_64 rng(101);
  for (int rank = 1; rank <= 4; ++rank) {
    for (int64_t nnz : {0, 1, 2, 37, 3000}) {
      const SparseTensor cpu = RandomSparse<T>(rng, nnz, rank);
      const std::string what = "rank " + std::to_string(rank) + " nnz " + std::to_string(nnz);
      const SparseTensor dev = cpu.To(kGpu);
      EXPECT_EQ(dev.IndicesValid(), cpu.IndicesValid()) << what;
      const std::vector<int> order = RandomOrder(rng, rank);
      SparseTensor a = cpu, b = dev;
      a.Reorder(order);
      b.Reorder(order);
      ExpectSameSparse(b, a, what + " Reorder");
      EXPECT_EQ(b.IndicesValid(), a.IndicesValid()) << what;
      const std::vector<int> other = RandomOrder(rng, rank);
      EXPECT_EQ(dev.SortedIn(order), cpu.SortedIn(order)) << what;
      EXPECT_EQ(b.SortedIn(other), a.SortedIn(other)) << what;
      EXPECT_TRUE(b.SortedIn(order)) << what;
      SparseTensor c = cpu, d = dev;
      c.Coalesce();
      d.Coalesce();
      ExpectSameSparse(d, c, what + " Coalesce");
      EXPECT_TRUE(d.IndicesValid()) << what;
      if (!cpu.IndicesValid()) {
        ExpectSameError([&](bool g) { (g ? dev : cpu).ValidateIndices(); },
                        what + " unknown order");
        ExpectSameError([&](bool g) { (g ? b : a).ValidateIndices(); }, what + " known order");
      }
    }
  }
}

TYPED_TEST(SparseStructureGpu, DenseConversionsMatchTheCpu) {
  TK_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937_64 rng(202);
  for (int rank = 1; rank <= 4; ++rank) {
    for (int64_t nnz : {0, 1, 50, 2000}) {
      const SparseTensor cpu = RandomSparse<T>(rng, nnz, rank);
      const std::string what = "rank " + std::to_string(rank) + " nnz " + std::to_string(nnz);
      const SparseTensor dev = cpu.To(kGpu);
      const Tensor want = cpu.ToDense();
      const Tensor got = dev.ToDense();
      EXPECT_EQ(got.device(), kGpu) << what;
      EXPECT_EQ(Bytes(got), Bytes(want)) << what << " ToDense (repeats: the last wins)";
      // A strided target (every second element of a wider last axis) keeps what was there
      // when not initialised.
      std::vector<int64_t> wide = cpu.shape();
      wide[rank - 1] *= 2;
      Tensor host_target = Tensor::Zeros(wide, cpu.dtype());
      Set(1, &host_target);
      Tensor dev_target = host_target.To(kGpu);
      Tensor host_view = Slice(host_target, rank - 1, 0, wide[rank - 1], 2);
      Tensor dev_view = Slice(dev_target, rank - 1, 0, wide[rank - 1], 2);
      cpu.ToDense(&host_view, /*initialize=*/false);
      dev.ToDense(&dev_view, /*initialize=*/false);
      EXPECT_EQ(Bytes(dev_target), Bytes(host_target)) << what << " strided ToDense";
      const SparseTensor back_cpu = SparseTensor::FromDense(want);
      const SparseTensor back_dev = SparseTensor::FromDense(got);
      ExpectSameSparse(back_dev, back_cpu, what + " FromDense");
      const SparseTensor strided_cpu = SparseTensor::FromDense(host_view);
      const SparseTensor strided_dev = SparseTensor::FromDense(dev_view);
      ExpectSameSparse(strided_dev, strided_cpu, what + " FromDense of a strided view");
    }
  }
}

TEST(SparseStructureGpuMore, FromDenseKeepsNanAndDropsSignedZeros) {
  TK_REQUIRE_GPU();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor host = Tensor::FromVector<float>({0.f, -0.f, nan, 2.f, 0.f, -1.f}, {2, 3});
  ExpectSameSparse(SparseTensor::FromDense(host.To(kGpu)), SparseTensor::FromDense(host),
                   "FromDense float");
}

TYPED_TEST(SparseStructureGpu, CompressedConversionsMatchTheCpu) {
  TK_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937_64 rng(303);
  for (int64_t nnz : {0, 1, 40, 5000}) {
    const SparseTensor cpu = RandomSparse<T>(rng, nnz, 2);
    const SparseTensor dev = cpu.To(kGpu);
    const std::string what = "nnz " + std::to_string(nnz);
    const CsrMatrix a = CsrMatrix::FromSparse(cpu), b = CsrMatrix::FromSparse(dev);
    EXPECT_EQ(b.row_ptr().device(), kGpu) << what;
    EXPECT_EQ(b.row_ptr().ToVector<int64_t>(), a.row_ptr().ToVector<int64_t>()) << what;
    EXPECT_EQ(b.col_indices().ToVector<int64_t>(), a.col_indices().ToVector<int64_t>()) << what;
    EXPECT_EQ(Bytes(b.values()), Bytes(a.values())) << what;
    const CscMatrix c = CscMatrix::FromSparse(cpu), d = CscMatrix::FromSparse(dev);
    EXPECT_EQ(d.col_ptr().device(), kGpu) << what;
    EXPECT_EQ(d.col_ptr().ToVector<int64_t>(), c.col_ptr().ToVector<int64_t>()) << what;
    EXPECT_EQ(d.row_indices().ToVector<int64_t>(), c.row_indices().ToVector<int64_t>()) << what;
    EXPECT_EQ(Bytes(d.values()), Bytes(c.values())) << what;
    EXPECT_EQ(b.To(Device::Cpu()).row_ptr().device(), Device::Cpu());
  }
}

TYPED_TEST(SparseStructureGpu, ViewsAndJoinsMatchTheCpu) {
  TK_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937_64 rng(404);
  for (int rank = 1; rank <= 4; ++rank) {
    for (int64_t nnz : {0, 1, 300}) {
      SparseTensor cpu = RandomSparse<T>(rng, nnz, rank);
      const std::vector<int> order = RandomOrder(rng, rank);
      cpu.Reorder(order);
      const SparseTensor dev = cpu.To(kGpu);
      const std::string what = "rank " + std::to_string(rank) + " nnz " + std::to_string(nnz);
      const std::vector<int> perm = RandomOrder(rng, rank);
      ExpectSameSparse(Permute(dev, perm), Permute(cpu, perm), what + " Permute");
      std::vector<int64_t> start, size;
      for (int64_t d : cpu.shape()) {
        start.push_back(static_cast<int64_t>(rng() % static_cast<uint64_t>(d)));
        size.push_back(-1);
      }
      size[0] = (cpu.shape()[0] - start[0]) / 2;
      ExpectSameSparse(Slice(dev, start, size), Slice(cpu, start, size), what + " Slice");
      const int axis = static_cast<int>(rng() % static_cast<uint64_t>(rank));
      const int64_t pieces = 1 + static_cast<int64_t>(rng() % 3);
      const std::vector<SparseTensor> sc = Split(cpu, axis, pieces), sd = Split(dev, axis, pieces);
      ASSERT_EQ(sd.size(), sc.size()) << what;
      for (size_t p = 0; p < sc.size(); ++p) ExpectSameSparse(sd[p], sc[p], what + " Split");
      // Concat along `axis`: the other input must agree on the other dims.
      std::vector<int64_t> shape2 = cpu.shape();
      shape2[axis] += 2;
      const SparseTensor second = MakeSparse<T>(testing::RandomRows(rng, nnz / 3, shape2),
                                                RandomValuesOf<T>(rng, nnz / 3), shape2);
      ExpectSameSparse(SparseTensor::Concat({dev, second.To(kGpu)}, axis),
                       SparseTensor::Concat({cpu, second}, axis), what + " Concat(axis)");
      ExpectSameSparse(SparseTensor::Concat({dev, dev}), SparseTensor::Concat({cpu, cpu}),
                       what + " Concat");
      // group: the same boundaries and coordinates; views on the device.
      const int num_dims = 1 + static_cast<int>(rng() % static_cast<uint64_t>(rank));
      const std::vector<int> dims(order.begin(), order.begin() + num_dims);
      std::vector<std::vector<int64_t>> want;
      for (const auto& g : cpu.group(dims)) {
        std::vector<int64_t> rec = g.group();
        rec.push_back(g.begin());
        rec.push_back(g.end());
        want.push_back(rec);
      }
      std::vector<std::vector<int64_t>> got;
      const std::vector<int64_t> cpu_rows = Rows(cpu);
      const auto groups = dev.group(dims);
      for (const auto& g : groups) {
        std::vector<int64_t> rec = g.group();
        rec.push_back(g.begin());
        rec.push_back(g.end());
        got.push_back(rec);
        EXPECT_EQ(g.indices().device(), kGpu);
        EXPECT_EQ(g.values().device(), kGpu);
        EXPECT_EQ(g.indices().ToVector<int64_t>(),
                  std::vector<int64_t>(cpu_rows.begin() + g.begin() * rank,
                                       cpu_rows.begin() + g.end() * rank));
        EXPECT_THROW((void)g.index_span(), Error);
      }
      EXPECT_EQ(got, want) << what << " group";
      EXPECT_EQ(groups.size(), static_cast<int64_t>(want.size())) << what;
    }
  }
}

TEST(SparseStructureGpuErrors, BadInputsGiveTheCpuErrors) {
  TK_REQUIRE_GPU();
  // Entry 2 lies outside the shape on axis 1; entry 3 is negative on axis 0.
  const SparseTensor cpu =
      MakeSparse<float>({0, 1, 1, 2, 0, 9, -1, 0}, {1.f, 2.f, 3.f, 4.f}, {3, 4});
  const SparseTensor dev = cpu.To(kGpu);
  auto pick = [&](bool g) { return g ? dev : cpu; };
  ExpectSameError([&](bool g) { pick(g).ValidateIndices(); }, "ValidateIndices bounds");
  EXPECT_FALSE(dev.IndicesValid());
  ExpectSameError([&](bool g) { pick(g).Reorder({1, 0}); }, "Reorder bounds");
  ExpectSameError([&](bool g) { pick(g).Coalesce(); }, "Coalesce bounds");
  ExpectSameError([&](bool g) { (void)pick(g).ToDense(); }, "ToDense bounds");
  ExpectSameError([&](bool g) { (void)CsrMatrix::FromSparse(pick(g)); }, "FromSparse bounds");
  ExpectSameError([&](bool g) { (void)Split(pick(g), 1, 2); }, "Split bounds");
  // Along axis 0 too: entry 2 is outside on another axis than the split one.
  ExpectSameError([&](bool g) { (void)Split(pick(g), 0, 3); }, "Split bounds off its axis");
  // Sortedness and repeats with a known order name the same entries.
  const SparseTensor unsorted = MakeSparse<int32_t>({0, 1, 2, 0, 1, 3}, {1, 2, 3}, {3, 4}, {0, 1});
  ExpectSameError([&](bool g) { (g ? unsorted.To(kGpu) : unsorted).ValidateIndices(); },
                  "unsorted");
  const SparseTensor repeat = MakeSparse<int32_t>({0, 1, 0, 1}, {1, 2}, {3, 4}, {0, 1});
  ExpectSameError([&](bool g) { (g ? repeat.To(kGpu) : repeat).ValidateIndices(); }, "repeat");
  // Mixed devices.
  Tensor host_dense = Tensor::Zeros({3, 4}, DType::kFloat32);
  SparseTensor ok = MakeSparse<float>({0, 1}, {1.f}, {3, 4});
  try {
    ok.To(kGpu).ToDense(&host_dense);
    ADD_FAILURE() << "ToDense into a CPU tensor from the device";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kDeviceMismatch);
  }
  try {
    (void)SparseTensor::Concat({ok, ok.To(kGpu)}, 0);
    ADD_FAILURE() << "Concat across devices";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kDeviceMismatch);
  }
  // String values stay on the CPU.
  const SparseTensor strings = MakeSparse<std::string>({0, 1}, {"a"}, {3, 4});
  try {
    (void)strings.To(kGpu);
    ADD_FAILURE() << "string values moved to the device";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("To(Device::Cpu())"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tensorkit
