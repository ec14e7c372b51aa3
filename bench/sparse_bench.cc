// Sparse core benchmarks; bench/peers/sparse_peers.py runs the same sizes in PyTorch, SciPy and
// NumPy. Sizes: Reorder/Coalesce/group over shape [1000000, 1000, 64] with 10M random entries;
// Reorder/Coalesce/ToDense/FromDense on [4096, 4096] with 1M entries; Concat of 5 inputs of
// [200000, 64000] with 2M entries each.
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "tensorkit/tensorkit.h"

namespace tensorkit {
namespace {

// A small fast generator (splitmix64), so that setup stays cheap next to the timed work.
struct SplitMix {
  uint64_t s;
  uint64_t operator()() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};

// nnz random entries (repeats allowed) of `shape` with float32 values, unknown order.
SparseTensor RandomSparse(const std::vector<int64_t>& shape, int64_t nnz, uint64_t seed) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  Tensor indices = Tensor::Empty({nnz, rank}, DType::kInt64);
  Tensor values = Tensor::Empty({nnz}, DType::kFloat32);
  int64_t* idx = indices.data<int64_t>();
  float* val = values.data<float>();
  ParallelChunks(nnz, 1 << 16, [&](int64_t c, int64_t b, int64_t e) {
    SplitMix rng{seed * 1000003 + static_cast<uint64_t>(c)};
    for (int64_t i = b; i < e; ++i) {
      for (int64_t a = 0; a < rank; ++a) idx[i * rank + a] = static_cast<int64_t>(rng() % shape[a]);
      val[i] = static_cast<float>(rng() % 1000) / 100.0f;
    }
  });
  return SparseTensor::Create(indices, values, shape);
}

const std::vector<int64_t> kShape3 = {1000000, 1000, 64};
constexpr int64_t kNnz3 = 10000000;

const SparseTensor& Unsorted3() {
  static const SparseTensor st = RandomSparse(kShape3, kNnz3, 1);
  return st;
}

const SparseTensor& Sorted3() {
  static const SparseTensor st = [] {
    SparseTensor s = Unsorted3();
    s.Reorder({0, 1, 2});
    return s;
  }();
  return st;
}

// Full reorder of the unsorted 10M-entry tensor (Reorder replaces handles, so the shared input
// stays unsorted for the next iteration).
void BM_Reorder3D(benchmark::State& state) {
  const SparseTensor& base = Unsorted3();
  for (auto _ : state) {
    SparseTensor st = base;
    st.Reorder({0, 1, 2});
    benchmark::DoNotOptimize(st.values().raw_data());
  }
  state.SetItemsProcessed(state.iterations() * kNnz3);
}
BENCHMARK(BM_Reorder3D)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Coalesce3D(benchmark::State& state) {
  const SparseTensor& base = Unsorted3();
  for (auto _ : state) {
    SparseTensor st = base;
    st.Coalesce();
    benchmark::DoNotOptimize(st.values().raw_data());
  }
  state.SetItemsProcessed(state.iterations() * kNnz3);
}
BENCHMARK(BM_Coalesce3D)->Unit(benchmark::kMillisecond)->UseRealTime();

// Sum of values per group of dim 0 over the sorted tensor, through group()'s views.
void BM_GroupSum3D(benchmark::State& state) {
  const SparseTensor& st = Sorted3();
  std::vector<float> sums;
  for (auto _ : state) {
    sums.clear();
    for (const auto& g : st.group({0})) {
      const Tensor v = g.values();
      const float* p = v.data<float>();
      float s = 0;
      for (int64_t i = 0; i < g.size(); ++i) s += p[i];
      sums.push_back(s);
    }
    benchmark::DoNotOptimize(sums.data());
  }
  state.SetItemsProcessed(state.iterations() * kNnz3);
}
BENCHMARK(BM_GroupSum3D)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same through Group::value_span (no Tensor per group).
void BM_GroupSum3DSpan(benchmark::State& state) {
  const SparseTensor& st = Sorted3();
  std::vector<float> sums;
  for (auto _ : state) {
    sums.clear();
    for (const auto& g : st.group({0})) {
      float s = 0;
      for (float v : g.value_span<float>()) s += v;
      sums.push_back(s);
    }
    benchmark::DoNotOptimize(sums.data());
  }
  state.SetItemsProcessed(state.iterations() * kNnz3);
}
BENCHMARK(BM_GroupSum3DSpan)->Unit(benchmark::kMillisecond)->UseRealTime();

const SparseTensor& Unsorted2() {
  static const SparseTensor st = RandomSparse({4096, 4096}, 1000000, 2);
  return st;
}

// Sorting the 1M-entry matrix by rows (SciPy's tocsr and torch's coalesce also sum repeats).
void BM_Reorder2D(benchmark::State& state) {
  const SparseTensor& base = Unsorted2();
  for (auto _ : state) {
    SparseTensor st = base;
    st.Reorder({0, 1});
    benchmark::DoNotOptimize(st.values().raw_data());
  }
}
BENCHMARK(BM_Reorder2D)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Coalesce2D(benchmark::State& state) {
  const SparseTensor& base = Unsorted2();
  for (auto _ : state) {
    SparseTensor st = base;
    st.Coalesce();
    benchmark::DoNotOptimize(st.values().raw_data());
  }
}
BENCHMARK(BM_Coalesce2D)->Unit(benchmark::kMillisecond)->UseRealTime();

const SparseTensor& Coalesced2() {
  static const SparseTensor st = [] {
    SparseTensor s = Unsorted2();
    s.Coalesce();
    return s;
  }();
  return st;
}

void BM_ToDense2D(benchmark::State& state) {
  const SparseTensor& st = Coalesced2();
  for (auto _ : state) {
    Tensor dense = st.ToDense();
    benchmark::DoNotOptimize(dense.raw_data());
  }
}
BENCHMARK(BM_ToDense2D)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_FromDense2D(benchmark::State& state) {
  const Tensor dense = Coalesced2().ToDense();
  for (auto _ : state) {
    SparseTensor st = SparseTensor::FromDense(dense);
    benchmark::DoNotOptimize(st.values().raw_data());
  }
}
BENCHMARK(BM_FromDense2D)->Unit(benchmark::kMillisecond)->UseRealTime();

const std::vector<int64_t> kConcatShape = {200000, 64000};
constexpr int64_t kConcatNnz = 2000000;

const std::vector<SparseTensor>& ConcatInputs() {
  static const std::vector<SparseTensor> inputs = [] {
    std::vector<SparseTensor> v;
    for (int k = 0; k < 5; ++k) {
      SparseTensor s = RandomSparse(kConcatShape, kConcatNnz, 10 + k);
      s.Reorder({0, 1});
      v.push_back(s);
    }
    return v;
  }();
  return inputs;
}

void BM_ConcatAxis0(benchmark::State& state) {
  const std::vector<SparseTensor>& inputs = ConcatInputs();
  for (auto _ : state) {
    SparseTensor out = SparseTensor::Concat(inputs);
    benchmark::DoNotOptimize(out.values().raw_data());
  }
  state.SetItemsProcessed(state.iterations() * 5 * kConcatNnz);
}
BENCHMARK(BM_ConcatAxis0)->Unit(benchmark::kMillisecond)->UseRealTime();

// Baseline: a parallel memcpy of every input's indices and values into output buffers allocated
// once (so their pages are already mapped): the least any concatenation can cost.
void BM_ConcatCopyBaseline(benchmark::State& state) {
  const std::vector<SparseTensor>& inputs = ConcatInputs();
  Tensor idx = Tensor::Empty({5 * kConcatNnz, 2}, DType::kInt64);
  Tensor val = Tensor::Empty({5 * kConcatNnz}, DType::kFloat32);
  for (auto _ : state) {
    for (int k = 0; k < 5; ++k) {
      const int64_t* si = inputs[k].indices().data<int64_t>();
      const float* sv = inputs[k].values().data<float>();
      int64_t* di = idx.data<int64_t>() + k * kConcatNnz * 2;
      float* dv = val.data<float>() + k * kConcatNnz;
      ParallelFor(0, kConcatNnz, GrainFor(20), [&](int64_t b, int64_t e) {
        std::memcpy(di + 2 * b, si + 2 * b, static_cast<size_t>(e - b) * 16);
        std::memcpy(dv + b, sv + b, static_cast<size_t>(e - b) * 4);
      });
    }
    benchmark::DoNotOptimize(val.raw_data());
  }
  state.SetItemsProcessed(state.iterations() * 5 * kConcatNnz);
}
BENCHMARK(BM_ConcatCopyBaseline)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace tensorkit

BENCHMARK_MAIN();
