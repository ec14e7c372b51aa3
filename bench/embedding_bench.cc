// Embedding bags: a float32 table [1M, 64], 64k bags of 30..50 (about 40) random ids.
// bench/peers/embedding_peers.py times PyTorch's embedding_bag (and FBGEMM's table-batched
// embedding where it is installed) on the very same inputs: ids, lengths and table values come
// from the formulas below (splitmix64 of the position), which the script repeats in NumPy.
// GB/s count the bytes of the table rows read; BM_MemcpyBaseline copies the same number of
// bytes with a parallel memcpy, the ceiling of a pass that reads them in sequence. Threads:
// TENSORKIT_NUM_THREADS.
#include <benchmark/benchmark.h>

#include <cstring>
#include <memory>
#include <vector>

#include "tensorkit/common/parallel.h"
#include "tensorkit/dense/views.h"
#include "tensorkit/features/embedding.h"

namespace tensorkit {
namespace {

constexpr int64_t kRows = 1 << 20;
constexpr int64_t kDim = 64;
constexpr int64_t kBags = 1 << 16;

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

struct Input {
  Tensor table;      // float32 [kRows, kDim]: element i is (i % 1000) / 1000 - 0.5
  JaggedTensor ids;  // bag b has 30 + splitmix64(2^40 + b) % 21 ids, id j is splitmix64(j) % kRows
};

// Built once: the table alone is 256 MiB.
const Input& TheInput() {
  static const Input* input = [] {
    auto* in = new Input;
    in->table = Tensor::Empty({kRows, kDim}, DType::kFloat32);
    float* t = in->table.data<float>();
    for (int64_t i = 0; i < kRows * kDim; ++i) t[i] = static_cast<float>(i % 1000) / 1000 - 0.5f;
    std::vector<int64_t> lengths(kBags);
    int64_t n = 0;
    for (int64_t b = 0; b < kBags; ++b) {
      lengths[b] = 30 + static_cast<int64_t>(SplitMix64((uint64_t{1} << 40) + b) % 21);
      n += lengths[b];
    }
    std::vector<int64_t> ids(n);
    for (int64_t j = 0; j < n; ++j) ids[j] = static_cast<int64_t>(SplitMix64(j) % kRows);
    in->ids = JaggedTensor::FromLengths(Tensor::FromVector<int64_t>(ids),
                                        Tensor::FromVector<int64_t>(lengths));
    return in;
  }();
  return *input;
}

int64_t RowBytes(const Input& in) { return in.ids.num_values() * kDim * 4; }

void BM_EmbeddingBag(benchmark::State& state, Combiner combiner) {
  const Input& in = TheInput();
  for (auto _ : state) benchmark::DoNotOptimize(EmbeddingBag(in.table, in.ids, combiner));
  state.SetBytesProcessed(state.iterations() * RowBytes(in));
}
BENCHMARK_CAPTURE(BM_EmbeddingBag, sum, Combiner::kSum)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_EmbeddingBag, mean, Combiner::kMean)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_EmbeddingBag, max, Combiner::kMax)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The same ids as one feature of a KeyedJaggedTensor, split into four features of 16k bags
// over four quarter tables: the table-batched pass.
void BM_EmbeddingBags4(benchmark::State& state) {
  const Input& in = TheInput();
  std::vector<Tensor> tables;
  for (int f = 0; f < 4; ++f) {
    tables.push_back(Tensor::Empty({kRows / 4, kDim}, DType::kFloat32));
    std::memcpy(tables.back().data<float>(), in.table.data<float>() + f * (kRows / 4) * kDim,
                kRows / 4 * kDim * 4);
  }
  std::vector<int64_t> ids = in.ids.values().ToVector<int64_t>();
  for (int64_t& id : ids) id %= kRows / 4;
  const KeyedJaggedTensor kjt({"f0", "f1", "f2", "f3"}, Tensor::FromVector<int64_t>(ids),
                              *View(in.ids.lengths(), {4, kBags / 4}));
  const std::vector<Combiner> sums(4, Combiner::kSum);
  for (auto _ : state) benchmark::DoNotOptimize(EmbeddingBags(tables, kjt, sums));
  state.SetBytesProcessed(state.iterations() * RowBytes(in));
}
BENCHMARK(BM_EmbeddingBags4)->Unit(benchmark::kMillisecond)->UseRealTime();

// The gradient of the sum, added into a dense [1M, 64] gradient.
void BM_EmbeddingBagBackwardDense(benchmark::State& state) {
  const Input& in = TheInput();
  const Tensor grad = Tensor::Zeros({kBags, kDim}, DType::kFloat32);
  Tensor table_grad = Tensor::Zeros({kRows, kDim}, DType::kFloat32);
  for (auto _ : state) EmbeddingBagBackward(grad, in.ids, Combiner::kSum, &table_grad);
  state.SetBytesProcessed(state.iterations() * RowBytes(in));
}
BENCHMARK(BM_EmbeddingBagBackwardDense)->Unit(benchmark::kMillisecond)->UseRealTime();

// A parallel memcpy of as many bytes as the bags read (fixed chunks, like the library's tasks).
void BM_MemcpyBaseline(benchmark::State& state) {
  const int64_t bytes = RowBytes(TheInput());
  std::unique_ptr<char[]> src(new char[bytes]), dst(new char[bytes]);
  std::memset(src.get(), 1, bytes);
  std::memset(dst.get(), 0, bytes);
  for (auto _ : state) {
    ParallelChunks(bytes, 1 << 20, [&](int64_t, int64_t b, int64_t e) {
      std::memcpy(dst.get() + b, src.get() + b, static_cast<size_t>(e - b));
    });
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}
BENCHMARK(BM_MemcpyBaseline)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace tensorkit

BENCHMARK_MAIN();
