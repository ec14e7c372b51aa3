// Allocation failures on a CUDA device (tests/api/alloc_failure_util.h's method): operations on
// device tensors run with their k-th allocation failing, the CUDA allocator's included, for
// k = 1, 2, ... until they succeed. Every failure must be an Error with kResourceExhausted and
// must leave no device memory in use (the pool's used bytes after the device is idle) nor CPU
// memory. Skipped with a message when no CUDA device is visible.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "api/alloc_failure_util.h"
#include "gpu/gpu_test_util.h"
#include "tensorkit/common/stream.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/features/embedding.h"
#include "tensorkit/features/jagged.h"
#include "tensorkit/features/segment.h"

namespace tensorkit {
namespace {

using testing::ExploreAllocationFailures;
using testing::FailureRun;

// The pool bytes in use on `device` once its work is done.
int64_t UsedBytes(Device device) {
  cuda::Synchronize(device);
  return CudaMemoryStatistics(device).used_bytes;
}

TEST(AllocationFailuresGpu, DeviceOperationsFailCleanly) {
  TK_REQUIRE_GPU();
  const Device gpu = Device::Cuda(0);
  const Tensor host = Tensor::FromVector(std::vector<float>(300 * 64, 0.25f), {300, 64});
  const Tensor table = host.To(gpu);
  const SparseTensor sparse = SparseTensor::Create(
      Tensor::FromVector(std::vector<int64_t>{2, 1, 0, 3, 2, 0, 1, 1}, {4, 2}).To(gpu),
      Tensor::FromVector(std::vector<float>{1, 2, 3, 4}).To(gpu), {3, 4});
  const JaggedTensor ids = JaggedTensor::FromLengths(
      Tensor::FromVector(std::vector<int64_t>{0, 5, 7, 299, 3, 3}).To(gpu),
      Tensor::FromVector(std::vector<int64_t>{2, 0, 3, 1}));
  struct Case {
    std::string name;
    std::function<void()> op;
  };
  const std::vector<Case> cases = {
      {"Tensor::Empty on the device", [&] { Tensor::Empty({1 << 20}, DType::kFloat32, gpu); }},
      {"Tensor::To the device", [&] { host.To(gpu); }},
      {"Tensor::To the CPU", [&] { table.To(Device::Cpu()); }},
      {"Exp on the device", [&] { Exp(table); }},
      {"SparseTensor::Coalesce on the device",
       [&] {
         SparseTensor s = sparse;
         s.Coalesce();
       }},
      {"SparseTensor::ToDense on the device", [&] { sparse.ToDense(); }},
      {"JaggedTensor::ToPadded on the device", [&] { ids.ToPadded(4, Scalar(-1)); }},
      {"EmbeddingBag on the device", [&] { EmbeddingBag(table, ids, Combiner::kMean); }},
      {"FillEmptyRows on the device", [&] { FillEmptyRows(sparse, Scalar(0.0f)); }},
  };
  int64_t points = 0;
  for (const Case& c : cases) {
    c.op();  // warm-up: the pool, the streams and the library handles exist from here on
    const int64_t used = UsedBytes(gpu);
    const FailureRun run = ExploreAllocationFailures(c.name, c.op, {}, false, [&](int64_t k) {
      EXPECT_EQ(UsedBytes(gpu), used)
          << c.name << ", allocation " << k << " failing: device memory left in use";
    });
    EXPECT_EQ(run.successes, 1) << c.name;
    EXPECT_GT(run.failure_points, 0) << c.name << " allocated nothing that could fail";
    points += run.failure_points;
    std::printf("  %-40s %3lld allocations\n", c.name.c_str(),
                static_cast<long long>(run.failure_points));
  }
  std::printf("  %lld failure points on the device\n", static_cast<long long>(points));
}

}  // namespace
}  // namespace tensorkit
