// GEMM benchmarks: tensorkit's backend (dense/gemm.h), and the other Debian BLAS candidates side
// by side at the same sizes and thread count (TENSORKIT_NUM_THREADS), for the choice explained
// at the top of dense/gemm.cc.
//
//   bench_gemm [--openblas_coretype=NAME] [Google Benchmark flags]
//
// Benchmarks (names are what bench/peers/gemm_peers.py filters on):
//   Gemm/<dtype>/<n>            n x n x n product through tensorkit::gemm::Gemm
//   GemmBatched/float32/64x256  64 products of 256^3 through GemmBatched
//   Backend/<name>/float32/2048 the candidates called directly: openblas (its kernels named in the
//                               label; --openblas_coretype sets OPENBLAS_CORETYPE before loading
//                               it) and dnnl (dnnl_sgemm), loaded with dlopen when installed, so
//                               that their cblas_* symbols cannot clash with the library's.
#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tensorkit/common/parallel.h"
#include "tensorkit/dense/gemm.h"

namespace tensorkit {
namespace {

constexpr int64_t kBatch = 64;
constexpr int64_t kBatchSize = 256;

std::vector<float> RandomFloats(int64_t n) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

void SetFlops(benchmark::State& state, double flops) {
  state.counters["GFLOPS"] =
      benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

template <typename T>
void BM_Gemm(benchmark::State& state) {
  const int64_t n = state.range(0);
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<T> a(n * n), b(n * n), c(n * n);
  for (auto& x : a) x = static_cast<T>(dist(rng));
  for (auto& x : b) x = static_cast<T>(dist(rng));
  const DType dtype = std::is_same_v<T, float> ? DType::kFloat32 : DType::kFloat64;
  for (auto _ : state) {
    gemm::Gemm(dtype, false, false, n, n, n, 1.0, a.data(), n, b.data(), n, 0.0, c.data(), n);
    benchmark::DoNotOptimize(c.data());
  }
  SetFlops(state, 2.0 * n * n * n);
  state.SetLabel(gemm::BackendName());
}

void BM_GemmBatched(benchmark::State& state) {
  const int64_t n = kBatchSize, mat = n * n;
  const std::vector<float> a = RandomFloats(kBatch * mat), b = RandomFloats(kBatch * mat);
  std::vector<float> c(kBatch * mat);
  for (auto _ : state) {
    gemm::GemmBatched(DType::kFloat32, false, false, n, n, n, 1.0, a.data(), n, mat, b.data(), n,
                      mat, 0.0, c.data(), n, mat, kBatch);
    benchmark::DoNotOptimize(c.data());
  }
  SetFlops(state, 2.0 * kBatch * n * n * n);
  state.SetLabel(gemm::BackendName());
}

// ---- the other candidates, called directly -------------------------------------------------

// Row-major C = A * B for n x n float matrices with `threads` threads.
using SgemmFn = void (*)(int64_t n, const float* a, const float* b, float* c, int threads);

struct OpenBlas {
  void (*sgemm)(int, int, int, int, int, int, float, const float*, int, const float*, int, float,
                float*, int) = nullptr;
  void (*set_threads)(int) = nullptr;
  const char* (*corename)() = nullptr;
};
OpenBlas g_openblas;

void OpenBlasSgemm(int64_t n, const float* a, const float* b, float* c, int threads) {
  constexpr int kRowMajor = 101, kNoTrans = 111;  // CblasRowMajor, CblasNoTrans
  g_openblas.set_threads(threads);
  const int ni = static_cast<int>(n);
  g_openblas.sgemm(kRowMajor, kNoTrans, kNoTrans, ni, ni, ni, 1.0f, a, ni, b, ni, 0.0f, c, ni);
}

using DnnlSgemm = int (*)(char, char, int64_t, int64_t, int64_t, float, const float*, int64_t,
                          const float*, int64_t, float, float*, int64_t);
DnnlSgemm g_dnnl_sgemm = nullptr;
void (*g_omp_set_num_threads)(int) = nullptr;

void DnnlSgemmCall(int64_t n, const float* a, const float* b, float* c, int threads) {
  // oneDNN's OpenMP runtime uses the calling thread's OpenMP thread count.
  if (g_omp_set_num_threads != nullptr) g_omp_set_num_threads(threads);
  g_dnnl_sgemm('N', 'N', n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
}

void BM_Backend(benchmark::State& state, SgemmFn fn, std::string label) {
  const int64_t n = state.range(0);
  const std::vector<float> a = RandomFloats(n * n), b = RandomFloats(n * n);
  std::vector<float> c(n * n);
  const int threads = GetNumThreads();
  for (auto _ : state) {
    fn(n, a.data(), b.data(), c.data(), threads);
    benchmark::DoNotOptimize(c.data());
  }
  SetFlops(state, 2.0 * n * n * n);
  state.SetLabel(label);
}

// Loads OpenBLAS privately (RTLD_DEEPBIND: its own symbols first); false when not installed.
bool LoadOpenBlas(const std::string& coretype) {
  if (!coretype.empty()) setenv("OPENBLAS_CORETYPE", coretype.c_str(), 1);
  void* h = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  if (h == nullptr) return false;
  g_openblas.sgemm = reinterpret_cast<decltype(g_openblas.sgemm)>(dlsym(h, "cblas_sgemm"));
  g_openblas.set_threads =
      reinterpret_cast<decltype(g_openblas.set_threads)>(dlsym(h, "openblas_set_num_threads"));
  g_openblas.corename =
      reinterpret_cast<decltype(g_openblas.corename)>(dlsym(h, "openblas_get_corename"));
  return g_openblas.sgemm && g_openblas.set_threads && g_openblas.corename;
}

bool LoadDnnl() {
  void* h = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) return false;
  g_dnnl_sgemm = reinterpret_cast<DnnlSgemm>(dlsym(h, "dnnl_sgemm"));
  g_omp_set_num_threads =
      reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  return g_dnnl_sgemm != nullptr;
}

void RegisterAll(const std::string& openblas_coretype) {
  benchmark::RegisterBenchmark("Gemm/float32", BM_Gemm<float>)
      ->Arg(256)
      ->Arg(1024)
      ->Arg(2048)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("Gemm/float64", BM_Gemm<double>)
      ->Arg(1024)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("GemmBatched/float32/64x256", BM_GemmBatched)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  if (LoadOpenBlas(openblas_coretype)) {
    benchmark::RegisterBenchmark("Backend/openblas/float32", BM_Backend, OpenBlasSgemm,
                                 std::string("openblas(") + g_openblas.corename() + ")")
        ->Arg(2048)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  if (LoadDnnl()) {
    benchmark::RegisterBenchmark("Backend/dnnl/float32", BM_Backend, DnnlSgemmCall,
                                 std::string("dnnl_sgemm"))
        ->Arg(2048)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace
}  // namespace tensorkit

int main(int argc, char** argv) {
  // Our own flag first; Google Benchmark rejects flags it does not know.
  std::string coretype;
  const char* prefix = "--openblas_coretype=";
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], prefix, std::strlen(prefix)) == 0) {
      coretype = argv[i] + std::strlen(prefix);
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  tensorkit::RegisterAll(coretype);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
