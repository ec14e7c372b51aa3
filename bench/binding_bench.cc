// The C++ side of the Python binding's cost (bench/peers/python_peers.py times the same calls
// from Python): tiny inputs, so that the call itself is what is measured. HashBucketFast of one
// int64 (TensorFlow's Fingerprint64 of "12345"), Bucketize of one float32 against 4 boundaries.
#include <benchmark/benchmark.h>

#include <vector>

#include "tensorkit/features/bucketize.h"
#include "tensorkit/features/hash.h"

namespace tensorkit {
namespace {

void BM_TinyHashBucketFast(benchmark::State& state) {
  const Tensor values = Tensor::FromVector<int64_t>({12345});
  for (auto _ : state) benchmark::DoNotOptimize(HashBucketFast(values, 100));
}
BENCHMARK(BM_TinyHashBucketFast);

void BM_TinyBucketize(benchmark::State& state) {
  const Tensor values = Tensor::FromVector<float>({42.0f});
  const std::vector<float> boundaries = {1, 10, 100, 1000};
  for (auto _ : state) benchmark::DoNotOptimize(Bucketize(values, boundaries));
}
BENCHMARK(BM_TinyBucketize);

}  // namespace
}  // namespace tensorkit

BENCHMARK_MAIN();
