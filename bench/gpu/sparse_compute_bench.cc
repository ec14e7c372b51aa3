// GPU benchmarks of the sparse products: SpMV and SpMM (N = 64) of a float32 CSR matrix of
// [10M, 1M] with 100M entries (10 per row), through SparseDenseProduct beside the same
// cusparseSpMV / cusparseSpMM call made directly on the same device arrays (descriptors and
// work buffer made once, outside the timing; cuSPARSE through tensorkit's on-demand table, so a
// missing library skips these rows with the reason). GB/s counts the bytes that must move: the CSR
// arrays once, x or b once, y or c written once. Run with --device cuda (scripts/gpu-check.sh
// does; one of bench/gpu/*.cc, linked into bench_gpu). The matrix is built on the host
// (CsrMatrix::Create takes host arrays) and copied over.
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "bench/gpu/bench_util.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/sparse/products.h"

namespace tensorkit {
namespace {

using gpu_bench::kGpu;
using gpu_bench::SetBandwidth;
using gpu_bench::TimeOnDevice;

constexpr int64_t kRows = 10'000'000, kCols = 1'000'000, kPerRow = 10, kN = 64;
constexpr int64_t kNnz = kRows * kPerRow;
constexpr int64_t kCsrBytes = 8 * (kRows + 1) + (8 + 4) * kNnz;

// Row r holds one column in each tenth of [0, kCols), so columns are sorted within rows and
// reads of x are spread over the whole vector.
const CsrMatrix& Matrix() {
  static const CsrMatrix m = [] {
    Tensor ptr = Tensor::Empty({kRows + 1}, DType::kInt64);
    Tensor col = Tensor::Empty({kNnz}, DType::kInt64);
    Tensor val = Tensor::Empty({kNnz}, DType::kFloat32);
    int64_t* p = ptr.data<int64_t>();
    int64_t* c = col.data<int64_t>();
    float* v = val.data<float>();
    constexpr int64_t kBand = kCols / kPerRow;
    ParallelFor(0, kRows, GrainFor(kPerRow * 16), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        p[r] = r * kPerRow;
        for (int64_t j = 0; j < kPerRow; ++j) {
          const uint64_t h = static_cast<uint64_t>(r * kPerRow + j) * 0x9E3779B97F4A7C15ull;
          c[r * kPerRow + j] = j * kBand + static_cast<int64_t>((h >> 33) % kBand);
          v[r * kPerRow + j] = static_cast<float>((h >> 20) % 7) - 3.0f;
        }
      }
    });
    p[kRows] = kNnz;
    return CsrMatrix::Create(ptr, col, val, {kRows, kCols}).To(kGpu);
  }();
  return m;
}

Tensor Filled(const std::vector<int64_t>& dims, double v) {
  Tensor t = Tensor::Empty(dims, DType::kFloat32, kGpu);
  Set(v, &t);
  return t;
}

// The matrix's cuSPARSE descriptor over tensorkit's arrays, on a handle of the benchmark's own;
// `api` is null (and the benchmark skipped, saying why) when cuSPARSE cannot be loaded.
struct Raw {
  const common_cuda::CusparseApi* api = nullptr;
  cusparseHandle_t handle = nullptr;
  cusparseSpMatDescr_t mat = nullptr;
  explicit Raw(benchmark::State& state) : api(gpu_bench::Cusparse(state)) {
    if (api == nullptr) return;
    const CsrMatrix& m = Matrix();
    api->cusparseCreate(&handle);
    api->cusparseSetStream(handle, cuda::CurrentStream(kGpu));
    api->cusparseCreateCsr(&mat, kRows, kCols, kNnz, m.row_ptr().raw_data(),
                           m.col_indices().raw_data(), m.values().raw_data(), CUSPARSE_INDEX_64I,
                           CUSPARSE_INDEX_64I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F);
  }
  ~Raw() {
    if (api == nullptr) return;
    api->cusparseDestroySpMat(mat);
    api->cusparseDestroy(handle);
  }
};

struct Work {
  void* p = nullptr;
  explicit Work(size_t bytes) { cudaMalloc(&p, bytes > 0 ? bytes : 1); }
  ~Work() { cudaFree(p); }
};

void BM_SpmvTensorkit(benchmark::State& state) {
  const CsrMatrix& m = Matrix();
  Tensor x = Filled({kCols}, 0.5), y = Filled({kRows}, 0);
  TimeOnDevice(state, [&] { SparseDenseProduct(1, 0, m, x, &y); });
  SetBandwidth(state, kCsrBytes + 4 * (kCols + kRows));
}

void BM_SpmvRawCusparse(benchmark::State& state) {
  Tensor x = Filled({kCols}, 0.5), y = Filled({kRows}, 0);
  Raw raw(state);
  if (raw.api == nullptr) return;
  const common_cuda::CusparseApi& api = *raw.api;
  cusparseDnVecDescr_t vx, vy;
  api.cusparseCreateDnVec(&vx, kCols, x.raw_data(), CUDA_R_32F);
  api.cusparseCreateDnVec(&vy, kRows, y.raw_data(), CUDA_R_32F);
  const float alpha = 1, beta = 0;
  size_t bytes = 0;
  api.cusparseSpMV_bufferSize(raw.handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, raw.mat, vx,
                              &beta, vy, CUDA_R_32F, CUSPARSE_SPMV_CSR_ALG2, &bytes);
  Work work(bytes);
  TimeOnDevice(state, [&] {
    api.cusparseSpMV(raw.handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, raw.mat, vx, &beta, vy,
                     CUDA_R_32F, CUSPARSE_SPMV_CSR_ALG2, work.p);
  });
  api.cusparseDestroyDnVec(vx);
  api.cusparseDestroyDnVec(vy);
  SetBandwidth(state, kCsrBytes + 4 * (kCols + kRows));
}

// tensorkit zeroes c before a beta == 0 product (one cudaMemsetAsync of c: cuSPARSE does not
// promise to leave C unread), so its SpMM is compared with the raw call alone (range 0) and with
// the raw call after the same cudaMemsetAsync (range 1); gpu-check.sh prints both ratios.
void BM_SpmmTensorkit(benchmark::State& state) {
  const CsrMatrix& m = Matrix();
  Tensor b = Filled({kCols, kN}, 0.5), c = Filled({kRows, kN}, 0);
  TimeOnDevice(state, [&] { SparseDenseProduct(1, 0, m, b, &c); });
  SetBandwidth(state, kCsrBytes + 4 * kN * (kCols + kRows));
}

void BM_SpmmRawCusparse(benchmark::State& state) {
  const bool zero_first = state.range(0) != 0;
  Tensor b = Filled({kCols, kN}, 0.5), c = Filled({kRows, kN}, 0);
  Raw raw(state);
  if (raw.api == nullptr) return;
  const common_cuda::CusparseApi& api = *raw.api;
  cusparseDnMatDescr_t mb, mc;
  api.cusparseCreateDnMat(&mb, kCols, kN, kN, b.raw_data(), CUDA_R_32F, CUSPARSE_ORDER_ROW);
  api.cusparseCreateDnMat(&mc, kRows, kN, kN, c.raw_data(), CUDA_R_32F, CUSPARSE_ORDER_ROW);
  const float alpha = 1, beta = 0;
  const cusparseOperation_t n = CUSPARSE_OPERATION_NON_TRANSPOSE;
  size_t bytes = 0;
  api.cusparseSpMM_bufferSize(raw.handle, n, n, &alpha, raw.mat, mb, &beta, mc, CUDA_R_32F,
                              CUSPARSE_SPMM_CSR_ALG1, &bytes);
  Work work(bytes);
  cudaStream_t s = cuda::CurrentStream(kGpu);
  TimeOnDevice(state, [&] {
    if (zero_first) cudaMemsetAsync(c.raw_data(), 0, 4 * kRows * kN, s);
    api.cusparseSpMM(raw.handle, n, n, &alpha, raw.mat, mb, &beta, mc, CUDA_R_32F,
                     CUSPARSE_SPMM_CSR_ALG1, work.p);
  });
  api.cusparseDestroyDnMat(mb);
  api.cusparseDestroyDnMat(mc);
  SetBandwidth(state, kCsrBytes + 4 * kN * (kCols + kRows));
  state.SetLabel(zero_first ? "memset + SpMM" : "SpMM alone");
}

BENCHMARK(BM_SpmvTensorkit)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SpmvRawCusparse)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SpmmTensorkit)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SpmmRawCusparse)->Arg(0)->Arg(1)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tensorkit
