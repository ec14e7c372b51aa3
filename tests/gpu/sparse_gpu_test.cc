// Sparse structural operations on device tensors (moved here from tests/sparse so that
// `ctest -L gpu` runs every GPU test). Skipped with a message when no CUDA device is visible.
#include <gtest/gtest.h>

#include "sparse/sparse_test_util.h"
#include "tensorkit/sparse/products.h"
#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit {
namespace {

using testing::MakeSparse;
using testing::Rows;

TEST(SparseGpu, OperationsOnDeviceTensorsMatchTheHost) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device visible; GPU test skipped";
  const Device gpu = Device::Cuda(0);
  const std::vector<int64_t> rows = {2, 1, 0, 3, 2, 1, 0, 0};
  SparseTensor host = MakeSparse<float>(rows, {1, 2, 3, 4}, {3, 4});
  SparseTensor dev = SparseTensor::Create(host.indices().To(gpu), host.values().To(gpu), {3, 4});
  EXPECT_FALSE(dev.IndicesValid());  // entry 2 repeats entry 0
  dev.Reorder({1, 0});
  host.Reorder({1, 0});
  EXPECT_EQ(dev.indices().device(), gpu);
  EXPECT_EQ(Rows(dev), Rows(host));
  Tensor dense = Tensor::Zeros({3, 4}, DType::kFloat32, gpu);
  dev.ToDense(&dense);
  EXPECT_EQ(dense.ToVector<float>(), host.ToDense().ToVector<float>());
  SparseTensor back = SparseTensor::FromDense(dense);
  EXPECT_EQ(back.values().device(), gpu);
  EXPECT_EQ(Rows(back), Rows(SparseTensor::FromDense(host.ToDense())));
  SparseTensor conc = SparseTensor::Concat({dev, dev}, 0);
  EXPECT_EQ(conc.indices().device(), gpu);
  EXPECT_EQ(conc.nnz(), 8);
  dev.Coalesce();
  EXPECT_EQ(dev.values().device(), gpu);
  EXPECT_TRUE(dev.IndicesValid());
  // Sparse compute runs on the CPU: a device operand is refused, not read from the host.
  Tensor x = Tensor::Zeros({4}, DType::kFloat32), y = Tensor::Zeros({3}, DType::kFloat32);
  EXPECT_THROW(SparseDenseProduct(1, 0, dev, x, &y), Error);
}

}  // namespace
}  // namespace tensorkit
