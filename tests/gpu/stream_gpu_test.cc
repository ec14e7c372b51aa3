// GPU tests of the runtime under real use (common/stream.h Note [tensors across streams and
// threads]): frees after a StreamGuard, tensors handed between threads, two threads' GEMMs on
// their own streams and handles, the memory pool's statistics, and the host waits of the main
// operations. Built always; they need a device (and a CUDA build, for their own streams).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include "gpu/gpu_test_util.h"
#include "reference/reference.h"
#include "sparse/spcompute_test_util.h"
#include "tensorkit/common/storage.h"
#include "tensorkit/common/stream.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/sparse/compressed.h"
#include "tensorkit/sparse/products.h"
#include "tensorkit/sparse/sparse_tensor.h"
#include "test_util.h"

#if defined(TENSORKIT_TEST_HAVE_CUDA)
#include <cuda_runtime.h>

#include "tensorkit/common/cuda/backend.h"
#endif

namespace tensorkit {
namespace {

const Device kGpu = Device::Cuda(0);
constexpr int64_t kMiB = int64_t{1} << 20;

// Host waits of `f` (the runtime's counter, common/stream.h).
template <typename F>
uint64_t HostWaits(F&& f) {
  const uint64_t before = cuda::SynchronizationCount();
  f();
  return cuda::SynchronizationCount() - before;
}

#if defined(TENSORKIT_TEST_HAVE_CUDA)

// Keeps the current stream busy for a while (tens of milliseconds on any GPU), so that work
// enqueued after it on that stream runs late and a missing order shows.
void BusyWork(Tensor* scratch) {
  const Tensor a = Tensor::Zeros({2048, 2048}, DType::kFloat32, kGpu);
  for (int i = 0; i < 24; ++i) AddProduct(1, 0, a, a, scratch);
}

int64_t SumOf(const Tensor& t) { return Sum(t, {0}).ToVector<int64_t>()[0]; }

// The use-after-free of a tensor read under a StreamGuard and dropped after it: its memory must
// not go to a new allocation (filled at once on the default stream) before the guarded stream
// has read it.
TEST(StreamGpuTest, ATensorReadUnderAGuardIsFreedAfterTheGuardedRead) {
  TK_REQUIRE_GPU();
  cudaStream_t side = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking), cudaSuccess);
  const int64_t n = 16 * kMiB;
  Tensor out;
  {
    Tensor a = Tensor::Empty({n}, DType::kInt64, kGpu);
    Set(3, &a);
    Tensor scratch = Tensor::Empty({2048, 2048}, DType::kFloat32, kGpu);
    cuda::StreamGuard guard(kGpu, side);
    BusyWork(&scratch);  // the side stream is busy: the copy below runs late
    out = Tensor::Empty({n}, DType::kInt64, kGpu);
    Copy(a, &out);
  }  // the guard ends, then `a` goes
  std::vector<Tensor> fillers;
  for (int i = 0; i < 4; ++i) {
    Tensor f = Tensor::Empty({n}, DType::kInt64, kGpu);
    Set(7, &f);
    fillers.push_back(f);
  }
  ASSERT_EQ(cudaStreamSynchronize(side), cudaSuccess);
  cuda::Synchronize(kGpu);
  EXPECT_EQ(SumOf(out), 3 * n);
  out = Tensor();
  fillers.clear();
  cuda::Synchronize(kGpu);
  ASSERT_EQ(cudaStreamDestroy(side), cudaSuccess);
}

// Made and filled (late) in one thread, handed to another that reads and drops it: the reader
// sees the whole fill, and the memory survives until its read.
TEST(StreamGpuTest, ATensorHandedToAnotherThreadIsCompleteAndFreedAfterItsUse) {
  TK_REQUIRE_GPU();
  const int64_t n = 16 * kMiB;
  Tensor scratch = Tensor::Empty({2048, 2048}, DType::kFloat32, kGpu);
  BusyWork(&scratch);
  Tensor t = Tensor::Empty({n}, DType::kInt64, kGpu);
  Set(5, &t);  // still pending when the other thread starts
  const cuda::Stream mine = cuda::CurrentStream(kGpu);
  int64_t seen = 0;
  cuda::Stream theirs = nullptr;
  std::thread reader([&, t = std::move(t)]() mutable {
    theirs = cuda::CurrentStream(kGpu);
    Tensor copy = Tensor::Empty({n}, DType::kInt64, kGpu);
    Copy(t, &copy);
    t = Tensor();  // dropped in this thread, on this thread's stream
    Tensor filler = Tensor::Empty({n}, DType::kInt64, kGpu);
    Set(9, &filler);
    seen = SumOf(copy);
  });
  reader.join();
  EXPECT_NE(theirs, mine);  // each thread has its own stream
  EXPECT_EQ(seen, 5 * n);
}

// Two threads running the same float32 GEMM, each on its own stream with its own handle and
// workspace, get the same bits as one thread alone.
TEST(StreamGpuTest, TwoThreadsGemmOnTwoStreamsBitEqual) {
  TK_REQUIRE_GPU();
  ref::Rng rng(5);
  const Tensor a = ref::RandomTensor<float>(rng, {1024, 768}).To(kGpu);
  const Tensor b = ref::RandomTensor<float>(rng, {768, 512}).To(kGpu);
  Tensor want = Tensor::Empty({1024, 512}, DType::kFloat32, kGpu);
  AddProduct(1, 0, a, b, &want);
  const std::vector<float> w = want.ToVector<float>();
  std::vector<std::vector<float>> got(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      Tensor c = Tensor::Empty({1024, 512}, DType::kFloat32, kGpu);
      for (int i = 0; i < 20; ++i) AddProduct(1, 0, a, b, &c);
      got[t] = c.ToVector<float>();
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(got[0], w);
  EXPECT_EQ(got[1], w);
  const common_cuda::LibraryHandleCounts counts = common_cuda::LibraryHandles(0);
  EXPECT_GE(counts.cublas_workspaces, 3u);  // this thread's stream and the two others'
  EXPECT_LE(counts.cublas, 3u);             // at most one handle per thread at once
}

TEST(StreamGpuTest, AStreamOfAnotherDeviceIsRefusedAtOnce) {
  TK_REQUIRE_GPU();
  if (CudaDeviceCount() < 2) GTEST_SKIP() << "needs two CUDA devices";
  cudaStream_t other = nullptr;
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  ASSERT_EQ(cudaStreamCreate(&other), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  testing::ExpectError([&] { cuda::StreamGuard g(kGpu, other); },
                       {"cuda::StreamGuard", "cuda:1", "not to cuda:0"});
  cudaStreamDestroy(other);
}

// Between two devices, the copy waits for the source's pending fill, and the source's memory
// outlives the copy even when dropped at once.
TEST(StreamGpuTest, CopiesBetweenDevicesAreOrderedBothWays) {
  TK_REQUIRE_GPU();
  if (CudaDeviceCount() < 2) GTEST_SKIP() << "needs two CUDA devices";
  const int64_t n = 16 * kMiB;
  Tensor scratch = Tensor::Empty({2048, 2048}, DType::kFloat32, kGpu);
  BusyWork(&scratch);
  Tensor src = Tensor::Empty({n}, DType::kInt64, kGpu);
  Set(4, &src);
  Tensor dst = src.To(Device::Cuda(1));
  src = Tensor();
  Tensor filler = Tensor::Empty({n}, DType::kInt64, kGpu);
  Set(8, &filler);
  EXPECT_EQ(SumOf(dst), 4 * n);
}

// Host memory: a pageable source is staged by the driver (no wait), a pinned one is waited for
// (its memory is read later by the copy engine).
TEST(StreamGpuTest, CopiesFromPageableHostMemoryDoNotWait) {
  TK_REQUIRE_GPU();
  const Tensor host = Tensor::Zeros({kMiB}, DType::kFloat32);
  Tensor dev;
  EXPECT_EQ(HostWaits([&] { dev = host.To(kGpu); }), 0u);
  void* pinned = nullptr;
  ASSERT_EQ(cudaMallocHost(&pinned, 4 * kMiB), cudaSuccess);
  EXPECT_EQ(
      HostWaits([&] { CopyBytes(dev.storage()->data(), kGpu, pinned, Device::Cpu(), 4 * kMiB); }),
      1u);
  cudaFreeHost(pinned);
  EXPECT_EQ(HostWaits([&] { (void)dev.ToVector<float>(); }), 1u);  // the host reads
}

#endif  // TENSORKIT_TEST_HAVE_CUDA

// The pool keeps freed memory for the next allocation until ReleaseCachedCudaMemory.
TEST(StreamGpuTest, ThePoolKeepsFreedMemoryUntilReleased) {
  TK_REQUIRE_GPU();
  ReleaseCachedCudaMemory();
  const int64_t bytes = 256 * kMiB;
  {
    Tensor t = Tensor::Empty({bytes / 4}, DType::kFloat32, kGpu);
    const CudaMemoryStats live = CudaMemoryStatistics(kGpu);
    EXPECT_GE(live.used_bytes, bytes);
    EXPECT_GE(live.reserved_bytes, live.used_bytes);
    EXPECT_GE(live.used_peak_bytes, live.used_bytes);
  }
  cuda::Synchronize(kGpu);
  const CudaMemoryStats kept = CudaMemoryStatistics(kGpu);
  EXPECT_GE(kept.reserved_bytes, bytes);  // not handed back at the synchronisation
  EXPECT_LT(kept.used_bytes, bytes);
  ReleaseCachedCudaMemory();
  const CudaMemoryStats released = CudaMemoryStatistics(kGpu);
  EXPECT_LE(released.reserved_bytes, kept.reserved_bytes - bytes);
  ResetCudaMemoryPeaks(kGpu);
  EXPECT_LT(CudaMemoryStatistics(kGpu).used_peak_bytes, bytes);
  testing::ExpectError([] { CudaMemoryStatistics(Device::Cpu()); },
                       {"CudaMemoryStatistics", "cpu"});
}

// The host waits of the main operations (the budgets stated in dense/README.md and
// sparse/README.md): none for GEMM, elementwise work, sums and SpMV of a CSR matrix; one for the
// verdict of an index check that must raise before anything is written (Reorder, ToDense, SpMV
// of a COO tensor); one more where a count sizes the output (Coalesce).
TEST(StreamGpuTest, HostWaitsPerOperation) {
  TK_REQUIRE_GPU();
  std::mt19937 rng(11);
  ref::Rng vr(11);
  const Tensor a = ref::RandomTensor<float>(vr, {256, 128}).To(kGpu);
  const Tensor b = ref::RandomTensor<float>(vr, {128, 64}).To(kGpu);
  Tensor c = Tensor::Empty({256, 64}, DType::kFloat32, kGpu);
  AddProduct(1, 0, a, b, &c);  // loads cuBLAS and makes this stream's workspace first
  EXPECT_EQ(HostWaits([&] { AddProduct(1, 0, a, b, &c); }), 0u) << "GEMM";
  Tensor c2 = Tensor::Empty({256, 64}, DType::kFloat32, kGpu);
  EXPECT_EQ(HostWaits([&] { Copy(c, &c2); }), 0u) << "Copy";
  EXPECT_EQ(HostWaits([&] { AddTo(c, &c2); }), 0u) << "AddTo";
  Tensor sums;
  EXPECT_EQ(HostWaits([&] { sums = Sum(c, {0}); }), 0u) << "Sum";
  EXPECT_EQ(HostWaits([&] { (void)sums.ToVector<float>(); }), 1u) << "ToVector";

  const SparseTensor coo =
      spcompute_testing::RandomCoo<float>(rng, {500, 300}, 4000, /*dups=*/true).To(kGpu);
  SparseTensor sorted = coo;
  EXPECT_EQ(HostWaits([&] { sorted.Reorder({0, 1}); }), 1u) << "Reorder";
  SparseTensor merged = sorted;
  EXPECT_EQ(HostWaits([&] { merged.Coalesce(); }), 2u) << "Coalesce";
  Tensor dense = Tensor::Empty({500, 300}, DType::kFloat32, kGpu);
  EXPECT_EQ(HostWaits([&] { merged.ToDense(&dense); }), 1u) << "ToDense";
  const Tensor x = ref::RandomTensor<float>(vr, {300}).To(kGpu);
  Tensor y = Tensor::Empty({500}, DType::kFloat32, kGpu);
  SparseDenseProduct(1, 0, merged, x, &y);  // loads cuSPARSE first
  EXPECT_EQ(HostWaits([&] { SparseDenseProduct(1, 0, merged, x, &y); }), 1u) << "SpMV of COO";
  const CsrMatrix csr = CsrMatrix::FromSparse(merged);
  EXPECT_EQ(HostWaits([&] { SparseDenseProduct(1, 0, csr, x, &y); }), 0u) << "SpMV of CSR";
}

}  // namespace
}  // namespace tensorkit
