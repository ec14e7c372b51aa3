// GPU benchmarks of the dense engine: bandwidth of copy, broadcast add, exp, transpose copy and
// sums over each axis of a [16384, 16384] float32 tensor (GB/s and the fraction of the device's
// peak memory bandwidth, from its properties), the copy's bytes through cudaMemcpyAsync, and
// 8192^3 GEMMs through AddProduct beside a raw cublasGemmEx on the same data (TFLOP/s). The raw
// library calls go through tensorkit's on-demand tables (common/cuda/libraries.h), so the
// program starts where cuBLAS or cuSPARSE is missing and those rows say why. Run with --device cuda
// (scripts/gpu-check.sh does); without a device the program says so and exits with status 1
// (gpu_bench::Main). Times come from CUDA events around each iteration on the current stream. The
// sparse GPU benchmarks (bench/gpu/*.cc) are linked into the same program, so the bundle carries
// one copy of tensorkit for all of them.
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "bench/gpu/bench_util.h"
#include "tensorkit/common/stream.h"
#include "tensorkit/dense/ops.h"
#include "tensorkit/dense/views.h"

namespace tensorkit {
namespace {

constexpr int64_t kN = 16384;  // elementwise and reduction tensors: kN x kN float32
constexpr int64_t kG = 8192;   // GEMM: kG x kG x kG
using gpu_bench::kGpu;
using gpu_bench::SetBandwidth;
using gpu_bench::SetFlops;
using gpu_bench::TimeOnDevice;

Tensor Filled(const std::vector<int64_t>& dims, DType dtype, double v) {
  Tensor t = Tensor::Empty(dims, dtype, kGpu);
  Set(v, &t);
  return t;
}

constexpr int64_t kBytes = kN * kN * 4;

void BM_GpuCopy(benchmark::State& state) {
  Tensor a = Filled({kN, kN}, DType::kFloat32, 1), b = Filled({kN, kN}, DType::kFloat32, 0);
  TimeOnDevice(state, [&] { Copy(a, &b); });
  SetBandwidth(state, 2 * kBytes);
}

// The bytes of BM_GpuCopy moved by cudaMemcpyAsync: the ceiling a device-to-device Copy is
// measured against (scripts/gpu-check.sh prints the ratio).
void BM_GpuRawMemcpy(benchmark::State& state) {
  Tensor a = Filled({kN, kN}, DType::kFloat32, 1), b = Filled({kN, kN}, DType::kFloat32, 0);
  cudaStream_t s = cuda::CurrentStream(kGpu);
  TimeOnDevice(state, [&] {
    cudaMemcpyAsync(b.raw_data(), a.raw_data(), kBytes, cudaMemcpyDeviceToDevice, s);
  });
  SetBandwidth(state, 2 * kBytes);
}

void BM_GpuBroadcastAdd(benchmark::State& state) {
  Tensor a = Filled({kN, kN}, DType::kFloat32, 1), row = Filled({kN}, DType::kFloat32, 2);
  Tensor c = Filled({kN, kN}, DType::kFloat32, 0);
  TimeOnDevice(state, [&] { Add(a, row, &c); });
  SetBandwidth(state, 2 * kBytes);
}

void BM_GpuExp(benchmark::State& state) {
  Tensor a = Filled({kN, kN}, DType::kFloat32, 0.5), b = Filled({kN, kN}, DType::kFloat32, 0);
  TimeOnDevice(state, [&] { Exp(a, &b); });
  SetBandwidth(state, 2 * kBytes);
}

void BM_GpuTransposeCopy(benchmark::State& state) {
  Tensor a = Filled({kN, kN}, DType::kFloat32, 1), b = Filled({kN, kN}, DType::kFloat32, 0);
  Tensor at = Transpose(a, 0, 1);
  TimeOnDevice(state, [&] { Copy(at, &b); });
  SetBandwidth(state, 2 * kBytes);
}

// Sum over axis `state.range(0)` into a dim-1 output.
void BM_GpuSumAxis(benchmark::State& state) {
  const int axis = static_cast<int>(state.range(0));
  Tensor a = Filled({kN, kN}, DType::kFloat32, 1);
  Tensor out = Filled(axis == 0 ? std::vector<int64_t>{1, kN} : std::vector<int64_t>{kN, 1},
                      DType::kFloat32, 0);
  TimeOnDevice(state, [&] { Copy(a, &out); });
  SetBandwidth(state, kBytes);
}

// c [kG, 1, kG] = a [kG, kG, 1] * b [1, kG, kG] summed over the middle axis: one GEMM.
void BM_GpuGemmAddProduct(benchmark::State& state) {
  const DType dtype = static_cast<DType>(state.range(0));
  Tensor a = Filled({kG, kG}, dtype, 0.5), b = Filled({kG, kG}, dtype, 0.25);
  Tensor c = Filled({kG, 1, kG}, dtype, 0);
  Tensor ua = Unsqueeze(a, 2), ub = Unsqueeze(b, 0);
  TimeOnDevice(state, [&] { AddProduct(1, 0, ua, ub, &c); });
  SetFlops(state, 2.0 * kG * kG * kG);
  state.SetLabel(DTypeName(dtype));
}

// The same product as one cublasGemmEx call of a handle of its own, on the same data.
void BM_GpuGemmRawCublas(benchmark::State& state) {
  const common_cuda::CublasApi* api = gpu_bench::Cublas(state);
  if (api == nullptr) return;
  const DType dtype = static_cast<DType>(state.range(0));
  Tensor a = Filled({kG, kG}, dtype, 0.5), b = Filled({kG, kG}, dtype, 0.25);
  Tensor c = Filled({kG, kG}, dtype, 0);
  const cudaDataType_t type = dtype == DType::kFloat32 ? CUDA_R_32F : CUDA_R_16BF;
  cublasHandle_t handle;
  api->cublasCreate_v2(&handle);
  api->cublasSetStream_v2(handle, cuda::CurrentStream(kGpu));
  const float alpha = 1, beta = 0;
  TimeOnDevice(state, [&] {
    api->cublasGemmEx_64(handle, CUBLAS_OP_N, CUBLAS_OP_N, kG, kG, kG, &alpha, b.raw_data(), type,
                         kG, a.raw_data(), type, kG, &beta, c.raw_data(), type, kG,
                         CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  });
  api->cublasDestroy_v2(handle);
  SetFlops(state, 2.0 * kG * kG * kG);
  state.SetLabel(DTypeName(dtype));
}

BENCHMARK(BM_GpuCopy)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GpuRawMemcpy)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GpuBroadcastAdd)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GpuExp)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GpuTransposeCopy)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GpuSumAxis)->Arg(0)->Arg(1)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GpuGemmAddProduct)
    ->Arg(static_cast<int>(DType::kFloat32))
    ->Arg(static_cast<int>(DType::kBFloat16))
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GpuGemmRawCublas)
    ->Arg(static_cast<int>(DType::kFloat32))
    ->Arg(static_cast<int>(DType::kBFloat16))
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tensorkit

int main(int argc, char** argv) { return tensorkit::gpu_bench::Main("bench_gpu", argc, argv); }
