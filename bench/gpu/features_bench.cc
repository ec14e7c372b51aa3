// GPU benchmarks of features/: EmbeddingBag sum and mean of a float32 table [1M, 64] over 64k
// bags of about 40 ids (the CPU benchmark's shape, bench/embedding_bench.cc), a table-batched
// EmbeddingBags of 8 such tables, and SparseSegmentSum / Mean of 5M gathered rows; GB/s counts the
// bytes that must move (each id's table row, the ids, the offsets, the output) and the fraction of
// the device's peak memory bandwidth (the goal is 65%). Run with --device cuda
// (scripts/gpu-check.sh does); part of bench_gpu.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "bench/gpu/bench_util.h"
#include "tensorkit/features/embedding.h"
#include "tensorkit/features/segment.h"

namespace tensorkit {
namespace {

using gpu_bench::kGpu;
using gpu_bench::SetBandwidth;
using gpu_bench::TimeOnDevice;

constexpr int64_t kRows = 1 << 20, kDim = 64, kBags = 1 << 16, kMeanLength = 40;

Tensor Table(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> x(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(kRows * kDim));
  for (float& e : v) e = x(rng);
  return Tensor::FromVector(std::move(v), {kRows, kDim}).To(kGpu);
}

// Bag lengths uniform in [20, 60], ids uniform over the table's rows.
void RandomBags(uint64_t seed, std::vector<int64_t>* ids, std::vector<int64_t>* lengths) {
  std::mt19937_64 rng(seed);
  for (int64_t b = 0; b < kBags; ++b) {
    const int64_t n = kMeanLength - 20 + static_cast<int64_t>(rng() % 41);
    for (int64_t j = 0; j < n; ++j) ids->push_back(static_cast<int64_t>(rng() % kRows));
    lengths->push_back(n);
  }
}

int64_t BytesMoved(int64_t num_ids, int64_t bags, int64_t dims) {
  return num_ids * (kDim * 4 + 8) + 8 * (bags + 1) + bags * dims * 4;
}

void BM_GpuEmbeddingBag(benchmark::State& state) {
  const Combiner combiner = static_cast<Combiner>(state.range(0));
  static const Tensor table = Table(1);
  std::vector<int64_t> ids, lengths;
  RandomBags(2, &ids, &lengths);
  const int64_t n = static_cast<int64_t>(ids.size());
  const JaggedTensor bags = JaggedTensor::FromLengths(
      Tensor::FromVector(std::move(ids)).To(kGpu), Tensor::FromVector(std::move(lengths)).To(kGpu));
  TimeOnDevice(state, [&] { benchmark::DoNotOptimize(EmbeddingBag(table, bags, combiner)); });
  SetBandwidth(state, BytesMoved(n, kBags, kDim));
  state.SetLabel(CombinerName(combiner));
}

// 8 features, each with its own [1M, 64] table, into one [64k, 512] output.
void BM_GpuEmbeddingBags(benchmark::State& state) {
  constexpr int kFeatures = 8;
  static const std::vector<Tensor> tables = [] {
    std::vector<Tensor> t;
    for (int f = 0; f < kFeatures; ++f) t.push_back(Table(10 + f));
    return t;
  }();
  std::vector<int64_t> ids, lengths;
  for (int f = 0; f < kFeatures; ++f) RandomBags(20 + f, &ids, &lengths);
  const int64_t n = static_cast<int64_t>(ids.size());
  std::vector<std::string> keys;
  for (int f = 0; f < kFeatures; ++f) keys.push_back(std::string(1, static_cast<char>('a' + f)));
  const KeyedJaggedTensor kjt(keys, Tensor::FromVector(std::move(ids)).To(kGpu),
                              Tensor::FromVector(std::move(lengths), {kFeatures, kBags}).To(kGpu));
  const std::vector<Combiner> combiners(kFeatures, Combiner::kSum);
  TimeOnDevice(state, [&] { benchmark::DoNotOptimize(EmbeddingBags(tables, kjt, combiners)); });
  SetBandwidth(state, BytesMoved(n, int64_t{kFeatures} * kBags, kDim));
}

// SparseSegmentSum / Mean of 5M rows gathered from [1M, 64] float32 into 64k segments (the CPU
// peers table's shape): the gathered rows, the indices and ids, the output.
void BM_GpuSparseSegmentReduce(benchmark::State& state) {
  const Combiner combiner = static_cast<Combiner>(state.range(0));
  static const Tensor data = Table(3);
  constexpr int64_t kEntries = 5'000'000, kSegments = 1 << 16;
  std::mt19937_64 rng(4);
  std::vector<int64_t> idx(kEntries), ids(kEntries);
  for (int64_t k = 0; k < kEntries; ++k) {
    idx[k] = static_cast<int64_t>(rng() % kRows);
    ids[k] = k * kSegments / kEntries;
  }
  const Tensor idx_t = Tensor::FromVector(std::move(idx)).To(kGpu);
  const Tensor ids_t = Tensor::FromVector(std::move(ids)).To(kGpu);
  TimeOnDevice(state, [&] {
    benchmark::DoNotOptimize(SparseSegmentReduce(data, idx_t, ids_t, kSegments, combiner));
  });
  SetBandwidth(state, kEntries * (kDim * 4 + 16) + kSegments * kDim * 4);
  state.SetLabel(CombinerName(combiner));
}

BENCHMARK(BM_GpuSparseSegmentReduce)
    ->Arg(static_cast<int>(Combiner::kSum))
    ->Arg(static_cast<int>(Combiner::kMean))
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GpuEmbeddingBag)
    ->Arg(static_cast<int>(Combiner::kSum))
    ->Arg(static_cast<int>(Combiner::kMean))
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GpuEmbeddingBags)->UseManualTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace tensorkit
