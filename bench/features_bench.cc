// Feature pipeline benchmarks: jagged conversions and keyed jagged gathers at recommender sizes,
// each next to a memcpy of the same byte count in the same program.
//
// Sizes: a batch of B = 65536 rows of 20..60 int64 ids (about 40, 2.6M ids), as
// TensorFlow's VarLenFeature layout [B, 64] (sorted: BM_FromSparse/1, and with the entries
// shuffled: /0) and as a jagged tensor padded to its longest row; a KeyedJaggedTensor of 26
// features over the same batch, 0..20 ids per feature row (about 10, 17M ids) with float32 weights,
// permuted in reverse. Bytes per iteration (SetBytesProcessed): FromSparse the input indices and
// values, ToPadded the output, Permute the output values and weights. BM_Memcpy/<bytes>/0 copies as
// many bytes with one memcpy call into a reused buffer; BM_Memcpy/<bytes>/1 splits the same copy
// over tensorkit's threads (TENSORKIT_NUM_THREADS).
#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tensorkit/tensorkit.h"

namespace tensorkit {
namespace {

using Rng = std::mt19937_64;

constexpr int64_t kBatch = 65536;
constexpr int64_t kMaxLen = 64;
constexpr int kNumKeys = 26;

// Lengths of n rows, each in [lo, hi].
std::vector<int64_t> Lengths(int64_t n, int64_t lo, int64_t hi, uint64_t seed) {
  Rng rng(seed);
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (auto& l : out) l = lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
  return out;
}

// n random int64 ids.
Tensor Ids(int64_t n, uint64_t seed) {
  Tensor t = Tensor::Empty({n}, DType::kInt64);
  int64_t* p = t.data<int64_t>();
  Rng rng(seed);
  for (int64_t i = 0; i < n; ++i) p[i] = static_cast<int64_t>(rng() >> 20);
  return t;
}

// The batch as a VarLenFeature SparseTensor, entries in order {0, 1} or shuffled.
SparseTensor VarLen(bool sorted) {
  const std::vector<int64_t> lengths = Lengths(kBatch, 20, 60, 1);
  int64_t nnz = 0;
  for (int64_t l : lengths) nnz += l;
  Tensor indices = Tensor::Empty({nnz, 2}, DType::kInt64);
  int64_t* idx = indices.data<int64_t>();
  int64_t e = 0;
  for (int64_t r = 0; r < kBatch; ++r) {
    for (int64_t j = 0; j < lengths[r]; ++j, ++e) {
      idx[2 * e] = r;
      idx[2 * e + 1] = j;
    }
  }
  Tensor values = Ids(nnz, 2);
  if (!sorted) {  // Fisher-Yates over whole entries
    int64_t* val = values.data<int64_t>();
    Rng rng(3);
    for (int64_t i = nnz - 1; i > 0; --i) {
      const int64_t k = static_cast<int64_t>(rng() % static_cast<uint64_t>(i + 1));
      std::swap(idx[2 * i], idx[2 * k]);
      std::swap(idx[2 * i + 1], idx[2 * k + 1]);
      std::swap(val[i], val[k]);
    }
  }
  return SparseTensor::Create(indices, values, {kBatch, kMaxLen});
}

const SparseTensor& SortedVarLen() {
  static const SparseTensor st = VarLen(true);
  return st;
}

const SparseTensor& UnsortedVarLen() {
  static const SparseTensor st = VarLen(false);
  return st;
}

const JaggedTensor& Batch() {
  static const JaggedTensor jt = JaggedTensor::FromSparse(SortedVarLen());
  return jt;
}

const KeyedJaggedTensor& Kjt() {
  static const KeyedJaggedTensor kjt = [] {
    std::vector<std::string> keys;
    for (int f = 0; f < kNumKeys; ++f) keys.push_back("feature_" + std::to_string(f));
    const std::vector<int64_t> lengths = Lengths(kNumKeys * kBatch, 0, 20, 4);
    int64_t n = 0;
    for (int64_t l : lengths) n += l;
    Tensor weights = Tensor::Empty({n}, DType::kFloat32);
    float* w = weights.data<float>();
    for (int64_t i = 0; i < n; ++i) w[i] = static_cast<float>(i % 7) * 0.25f;
    return KeyedJaggedTensor(keys, Ids(n, 5),
                             Tensor::FromVector<int64_t>(lengths, {kNumKeys, kBatch}), weights);
  }();
  return kjt;
}

std::vector<std::string> ReversedKeys() {
  std::vector<std::string> keys = Kjt().keys();
  return {keys.rbegin(), keys.rend()};
}

int64_t FromSparseBytes() { return SortedVarLen().nnz() * (16 + 8); }
int64_t ToPaddedBytes() { return Batch().ToPadded(-1, 0).NumElements() * 8; }
int64_t PermuteBytes() { return Kjt().values().NumElements() * (8 + 4); }

// range(0) == 1: entries sorted in order {0, 1}; 0: shuffled.
void BM_FromSparse(benchmark::State& state) {
  const SparseTensor& st = state.range(0) == 1 ? SortedVarLen() : UnsortedVarLen();
  for (auto _ : state) {
    JaggedTensor jt = JaggedTensor::FromSparse(st);
    benchmark::DoNotOptimize(jt.values().raw_data());
  }
  state.SetBytesProcessed(state.iterations() * FromSparseBytes());
}
BENCHMARK(BM_FromSparse)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ToPadded(benchmark::State& state) {
  const JaggedTensor& jt = Batch();
  for (auto _ : state) {
    Tensor t = jt.ToPadded(-1, 0);
    benchmark::DoNotOptimize(t.raw_data());
  }
  state.SetBytesProcessed(state.iterations() * ToPaddedBytes());
}
BENCHMARK(BM_ToPadded)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_KjtPermute(benchmark::State& state) {
  const KeyedJaggedTensor& kjt = Kjt();
  const std::vector<std::string> keys = ReversedKeys();
  for (auto _ : state) {
    KeyedJaggedTensor out = kjt.Permute(keys);
    benchmark::DoNotOptimize(out.values().raw_data());
  }
  state.SetBytesProcessed(state.iterations() * PermuteBytes());
}
BENCHMARK(BM_KjtPermute)->Unit(benchmark::kMillisecond)->UseRealTime();

// The baselines: the same bytes with memcpy into a reused (already faulted-in) buffer, in one
// call (range(1) == 0) or split over tensorkit's threads in 1 MiB chunks (range(1) == 1).
void BM_Memcpy(benchmark::State& state) {
  const int64_t bytes = state.range(0);
  const int64_t chunk = state.range(1) == 0 ? bytes : int64_t{1} << 20;
  std::vector<char> src(static_cast<size_t>(bytes), 1), dst(static_cast<size_t>(bytes), 0);
  for (auto _ : state) {
    ParallelChunks(bytes, chunk, [&](int64_t, int64_t b, int64_t e) {
      std::memcpy(dst.data() + b, src.data() + b, static_cast<size_t>(e - b));
    });
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}

// The baselines, registered from main: their byte counts come from the generated data.
void RegisterBaselines() {
  for (int64_t bytes : {FromSparseBytes(), ToPaddedBytes(), PermuteBytes()}) {
    for (int64_t split : {0, 1}) {
      benchmark::RegisterBenchmark("BM_Memcpy", BM_Memcpy)
          ->Args({bytes, split})
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
  }
}

}  // namespace
}  // namespace tensorkit

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  tensorkit::RegisterBaselines();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
