// Dense kernel engine benchmarks: copies, elementwise, transposes, sums and products, float32.
// bench/peers/dense_peers.py runs the same operations in NumPy and PyTorch; the names here are
// what it filters on. Threads: TENSORKIT_NUM_THREADS.
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "tensorkit/dense/ops.h"
#include "tensorkit/dense/views.h"

namespace tensorkit {
namespace {

constexpr int64_t kN = 4096;

Tensor Filled(const std::vector<int64_t>& dims, float v) {
  Tensor t = Tensor::Empty(dims, DType::kFloat32);
  Set(v, &t);
  return t;
}

// Bytes moved per iteration, for Google Benchmark's bytes/s counter.
void SetBytes(benchmark::State& state, int64_t bytes) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * bytes);
}

void BM_Memcpy(benchmark::State& state) {
  std::vector<float> a(kN * kN, 1.0f), b(kN * kN);
  for (auto _ : state) {
    std::memcpy(b.data(), a.data(), a.size() * sizeof(float));
    benchmark::ClobberMemory();
  }
  SetBytes(state, 2 * kN * kN * 4);
}

void BM_Copy(benchmark::State& state) {
  Tensor a = Filled({kN, kN}, 1), b = Filled({kN, kN}, 0);
  for (auto _ : state) Copy(a, &b);
  SetBytes(state, 2 * kN * kN * 4);
}

void BM_BroadcastAdd(benchmark::State& state) {
  Tensor a = Filled({kN, kN}, 1), row = Filled({kN}, 2), c = Filled({kN, kN}, 0);
  for (auto _ : state) Add(a, row, &c);
  SetBytes(state, 2 * kN * kN * 4);
}

void BM_Scale(benchmark::State& state) {
  Tensor a = Filled({kN, kN}, 1);
  for (auto _ : state) Scale(1.0, &a);
  SetBytes(state, 2 * kN * kN * 4);
}

void BM_Exp(benchmark::State& state) {
  Tensor a = Filled({kN, kN}, 0.5f), c = Filled({kN, kN}, 0);
  for (auto _ : state) Exp(a, &c);
  SetBytes(state, 2 * kN * kN * 4);
}

// The other transcendental unary ops, over inputs where each is cheap to check by eye.
void BM_Log(benchmark::State& state) {
  Tensor a = Filled({kN, kN}, 1.5f), c = Filled({kN, kN}, 0);
  for (auto _ : state) Log(a, &c);
  SetBytes(state, 2 * kN * kN * 4);
}

void BM_Sigmoid(benchmark::State& state) {
  Tensor a = Filled({kN, kN}, 0.5f), c = Filled({kN, kN}, 0);
  for (auto _ : state) Sigmoid(a, &c);
  SetBytes(state, 2 * kN * kN * 4);
}

void BM_Tanh(benchmark::State& state) {
  Tensor a = Filled({kN, kN}, 0.5f), c = Filled({kN, kN}, 0);
  for (auto _ : state) Tanh(a, &c);
  SetBytes(state, 2 * kN * kN * 4);
}

// The memory-bound unary ops: one input and one output stream each, like a copy.
template <typename Op>
void UnaryOverMatrix(benchmark::State& state, float fill, Op op) {
  Tensor a = Filled({kN, kN}, fill), c = Filled({kN, kN}, 0);
  for (auto _ : state) op(a, &c);
  SetBytes(state, 2 * kN * kN * 4);
}

void BM_Sqrt(benchmark::State& state) {
  UnaryOverMatrix(state, 2.0f, [](const Tensor& a, Tensor* c) { Sqrt(a, c); });
}

void BM_Abs(benchmark::State& state) {
  UnaryOverMatrix(state, -2.0f, [](const Tensor& a, Tensor* c) { Abs(a, c); });
}

void BM_Relu(benchmark::State& state) {
  UnaryOverMatrix(state, -2.0f, [](const Tensor& a, Tensor* c) { Relu(a, c); });
}

void BM_Neg(benchmark::State& state) {
  UnaryOverMatrix(state, 2.0f, [](const Tensor& a, Tensor* c) { Neg(a, c); });
}

void BM_Transpose2D(benchmark::State& state) {
  Tensor a = Filled({kN, kN}, 1), c = Filled({kN, kN}, 0);
  Tensor at = Transpose(a, 0, 1);
  for (auto _ : state) Copy(at, &c);
  SetBytes(state, 2 * kN * kN * 4);
}

void BM_Permute4D(benchmark::State& state) {
  Tensor a = Filled({64, 64, 64, 64}, 1), c = Filled({64, 64, 64, 64}, 0);
  Tensor p = Permute(a, {0, 2, 3, 1});
  for (auto _ : state) Copy(p, &c);
  SetBytes(state, 2 * int64_t{64 * 64 * 64 * 64} * 4);
}

void BM_SumAxis0(benchmark::State& state) {
  Tensor a = Filled({kN, kN}, 1), s = Filled({1, kN}, 0);
  for (auto _ : state) Copy(a, &s);
  SetBytes(state, kN * kN * 4);
}

void BM_SumAxis1(benchmark::State& state) {
  Tensor a = Filled({kN, kN}, 1), s = Filled({kN, 1}, 0);
  for (auto _ : state) Copy(a, &s);
  SetBytes(state, kN * kN * 4);
}

// Every element into one: the nest is a single summed axis.
void BM_SumAll(benchmark::State& state) {
  Tensor a = Filled({kN, kN}, 1), s = Filled({1, 1}, 0);
  for (auto _ : state) Copy(a, &s);
  SetBytes(state, kN * kN * 4);
}

void BM_Gemm(benchmark::State& state) {
  const int64_t n = 2048;
  Tensor a = Filled({n, n, 1}, 1), b = Filled({1, n, n}, 1), c = Filled({n, 1, n}, 0);
  for (auto _ : state) AddProduct(1, 0, a, b, &c);
  state.counters["GFLOPS"] = benchmark::Counter(
      2.0 * n * n * n * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_BatchedGemm(benchmark::State& state) {
  const int64_t bt = 64, n = 256;
  Tensor a = Filled({bt, n, n, 1}, 1), b = Filled({bt, 1, n, n}, 1), c = Filled({bt, n, 1, n}, 0);
  for (auto _ : state) AddProduct(1, 0, a, b, &c);
  state.counters["GFLOPS"] = benchmark::Counter(
      2.0 * bt * n * n * n * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

BENCHMARK(BM_Memcpy)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Copy)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BroadcastAdd)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Scale)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Exp)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Log)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Sigmoid)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Tanh)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Sqrt)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Abs)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Relu)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Neg)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Transpose2D)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Permute4D)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SumAxis0)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SumAxis1)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SumAll)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Gemm)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BatchedGemm)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tensorkit

BENCHMARK_MAIN();
