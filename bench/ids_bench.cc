// Id benchmarks: Bucketize, CountSparse and QuantileSketch at feature-pipeline sizes, each next to
// the plain loop TensorFlow's kernel runs, in the same program.
//
// Sizes: 10M normal float32 values over 1000 sorted boundaries (BM_Bucketize; BM_UpperBound is
// std::upper_bound per value on one thread, TensorFlow's search); 5M int64 ids as 100K rows of 50
// in [0, 1M) in the VarLenFeature layout [100K, 50] (BM_CountSparse/0 counts, /1 with float32
// weights, /2 binary); the same 10M values into a QuantileSketch of the default capacity
// (BM_QuantileSketchAdd). Threads: TENSORKIT_NUM_THREADS.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <random>
#include <vector>

#include "tensorkit/tensorkit.h"

namespace tensorkit {
namespace {

Tensor NormalValues(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> g(0, 1);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = g(rng);
  return Tensor::FromVector(std::move(v));
}

std::vector<float> SortedBoundaries(int n) {
  std::vector<float> b = NormalValues(n, 2).ToVector<float>();
  std::sort(b.begin(), b.end());
  return b;
}

void BM_Bucketize(benchmark::State& state) {
  const Tensor values = NormalValues(10'000'000, 1);
  const std::vector<float> b = SortedBoundaries(1000);
  Tensor out = Tensor::Empty(values.Dims(), DType::kInt32);
  for (auto _ : state) {
    Bucketize(values, b, &out);
    benchmark::DoNotOptimize(out.raw_data());
  }
  state.SetItemsProcessed(state.iterations() * values.NumElements());
}
BENCHMARK(BM_Bucketize)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_UpperBound(benchmark::State& state) {
  const Tensor values = NormalValues(10'000'000, 1);
  const std::vector<float> b = SortedBoundaries(1000);
  std::vector<int32_t> out(static_cast<size_t>(values.NumElements()));
  const float* v = values.data<float>();
  for (auto _ : state) {
    for (size_t i = 0; i < out.size(); ++i) {
      out[i] = static_cast<int32_t>(std::upper_bound(b.begin(), b.end(), v[i]) - b.begin());
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * values.NumElements());
}
BENCHMARK(BM_UpperBound)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_CountSparse(benchmark::State& state) {
  constexpr int64_t kRows = 100'000, kLen = 50, kN = kRows * kLen;
  Tensor indices = Tensor::Empty({kN, 2}, DType::kInt64);
  Tensor ids = Tensor::Empty({kN}, DType::kInt64);
  int64_t* idx = indices.data<int64_t>();
  int64_t* id = ids.data<int64_t>();
  std::mt19937_64 rng(3);
  for (int64_t e = 0; e < kN; ++e) {
    idx[2 * e] = e / kLen;
    idx[2 * e + 1] = e % kLen;
    id[e] = static_cast<int64_t>(rng() % 1'000'000);
  }
  const SparseTensor st = SparseTensor::Create(indices, ids, {kRows, kLen});
  const Tensor weights = state.range(0) == 1 ? NormalValues(kN, 4) : Tensor();
  for (auto _ : state) {
    const SparseTensor r = CountSparse(st, weights, state.range(0) == 2);
    benchmark::DoNotOptimize(r.nnz());
  }
  state.SetItemsProcessed(state.iterations() * kN);
}
BENCHMARK(BM_CountSparse)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_QuantileSketchAdd(benchmark::State& state) {
  const Tensor values = NormalValues(10'000'000, 1);
  for (auto _ : state) {
    QuantileSketch s;
    s.Add(values);
    benchmark::DoNotOptimize(s.RankErrorBound());
  }
  state.SetItemsProcessed(state.iterations() * values.NumElements());
}
BENCHMARK(BM_QuantileSketchAdd)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace tensorkit

BENCHMARK_MAIN();
