// Shared by the GPU benchmarks, which are one program, bench_gpu (bench/gpu_bench.cc holds its
// main and the dense benchmarks; bench/gpu/*.cc add theirs): timing with CUDA events on the
// current stream, and the bandwidth and FLOP counters that scripts/gpu-check.sh tabulates.
#ifndef TENSORKIT_BENCH_GPU_BENCH_UTIL_H_
#define TENSORKIT_BENCH_GPU_BENCH_UTIL_H_

#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "common/cuda/libraries.h"
#include "tensorkit/common/device.h"
#include "tensorkit/common/error.h"
#include "tensorkit/common/stream.h"

namespace tensorkit::gpu_bench {

inline const Device kGpu = Device::Cuda(0);

// The device's peak memory bandwidth in bytes/s: double data rate over the bus width.
inline double PeakBytesPerSecond() {
  int clock_khz = 0, bus_bits = 0;
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, 0);
  cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, 0);
  return 2.0 * clock_khz * 1e3 * bus_bits / 8.0;
}

// Runs f once to warm up, then times every iteration with CUDA events on the current stream;
// returns the median milliseconds. An Error from the warm-up (cuBLAS or cuSPARSE that cannot be
// loaded, say) skips the benchmark with its message, so the other rows still run.
template <typename F>
double TimeOnDevice(benchmark::State& state, F&& f) {
  cudaStream_t s = cuda::CurrentStream(kGpu);
  try {
    f();
    cuda::Synchronize(kGpu);
  } catch (const Error& e) {
    state.SkipWithError(e.what());
    return 0.0;
  }
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  std::vector<double> ms;
  for (auto _ : state) {
    cudaEventRecord(start, s);
    f();
    cudaEventRecord(stop, s);
    cudaEventSynchronize(stop);
    float t = 0;
    cudaEventElapsedTime(&t, start, stop);
    state.SetIterationTime(t / 1e3);
    ms.push_back(t);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(ms.begin(), ms.end());
  return ms.empty() ? 0.0 : ms[ms.size() / 2];
}

// GB/s and the fraction of peak bandwidth for `bytes` moved per iteration.
inline void SetBandwidth(benchmark::State& state, int64_t bytes) {
  const double total = static_cast<double>(bytes) * static_cast<double>(state.iterations());
  state.counters["GB/s"] = benchmark::Counter(total / 1e9, benchmark::Counter::kIsRate);
  state.counters["peak_frac"] =
      benchmark::Counter(total / PeakBytesPerSecond(), benchmark::Counter::kIsRate);
}

// The raw baselines call cuBLAS and cuSPARSE through tensorkit's on-demand tables, so the
// program starts (and its other rows run) where a library is missing; such a row is skipped with
// the loader's reason. nullptr after a skip.
template <typename Api>
const Api* Loaded(benchmark::State& state, const Api& (*load)(const char*), const char* what) {
  try {
    return &load(what);
  } catch (const Error& e) {
    state.SkipWithError(e.what());
    return nullptr;
  }
}
inline const common_cuda::CublasApi* Cublas(benchmark::State& state) {
  return Loaded(state, &common_cuda::CublasLibrary, "bench_gpu raw cuBLAS baseline");
}
inline const common_cuda::CusparseApi* Cusparse(benchmark::State& state) {
  return Loaded(state, &common_cuda::CusparseLibrary, "bench_gpu raw cuSPARSE baseline");
}

inline void SetFlops(benchmark::State& state, double flops) {
  state.counters["TFLOP/s"] = benchmark::Counter(
      flops * static_cast<double>(state.iterations()) / 1e12, benchmark::Counter::kIsRate);
}

// The program's main: `--device cuda` is required (and removed before Google Benchmark parses
// the rest); without it the program says so and succeeds, without a device it fails.
inline int Main(const char* name, int argc, char** argv) {
  std::vector<char*> args;
  bool cuda = false;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
      cuda = std::strcmp(argv[i + 1], "cuda") == 0;
      ++i;
    } else if (std::strcmp(argv[i], "--device=cuda") == 0) {
      cuda = true;
    } else {
      args.push_back(argv[i]);
    }
  }
  if (!cuda) {
    std::printf("%s: pass --device cuda to run the GPU benchmarks\n", name);
    return 0;
  }
  if (CudaDeviceCount() == 0) {
    std::fprintf(stderr, "%s: --device cuda given but no CUDA device is visible\n", name);
    return 1;
  }
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace tensorkit::gpu_bench

#endif  // TENSORKIT_BENCH_GPU_BENCH_UTIL_H_
