// GPU benchmarks of the structural sparse operations: Reorder and Coalesce of 100M 3-D entries,
// ToDense of 10M entries into [16384, 16384] float32 and COO -> CSR of 100M entries, each as GB/s
// of the bytes that must move and the fraction of the device's peak memory bandwidth (from its
// properties). Reorder also reports vs_raw_sort: the time of a raw cub::DeviceRadixSort::SortPairs
// of the same key words (timed in the same run) over Reorder's time. Run with --device cuda
// (scripts/gpu-check.sh does): part of bench_gpu (bench/gpu_bench.cc has the main).
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench/gpu/bench_util.h"
#include "bench/gpu/sparse_raw_sort.h"
#include "tensorkit/common/stream.h"
#include "tensorkit/sparse/compressed.h"
#include "tensorkit/sparse/keys.h"
#include "tensorkit/sparse/sparse_tensor.h"

namespace tensorkit {
namespace {

using gpu_bench::kGpu;
using gpu_bench::SetBandwidth;
using gpu_bench::TimeOnDevice;
constexpr int64_t kBig = 100'000'000;  // entries of Reorder, Coalesce and COO -> CSR
constexpr int64_t kScatter = 10'000'000;
constexpr int64_t kSide = 16384;

// n random float32 entries in `shape` (host-generated once, then kept on the device).
SparseTensor RandomOnDevice(const std::vector<int64_t>& shape, int64_t n, uint64_t seed) {
  const int rank = static_cast<int>(shape.size());
  std::vector<int64_t> rows(static_cast<size_t>(n * rank));
  std::vector<float> vals(static_cast<size_t>(n));
  std::mt19937_64 rng(seed);
  for (int64_t i = 0; i < n; ++i) {
    for (int a = 0; a < rank; ++a) rows[i * rank + a] = static_cast<int64_t>(rng() % shape[a]);
    vals[i] = static_cast<float>(i % 1000);
  }
  return SparseTensor::Create(Tensor::FromVector(std::move(rows), {n, rank}).To(kGpu),
                              Tensor::FromVector(std::move(vals), {n}).To(kGpu), shape);
}

const std::vector<int64_t> kShape3 = {4096, 4096, 4096};  // 36 key bits: one word
const std::vector<int64_t> kShapeDup = {512, 512, 512};   // 134M cells: many repeats

const SparseTensor& Entries3() {
  static const SparseTensor st = RandomOnDevice(kShape3, kBig, 1);
  return st;
}

// Reorder reads and writes every index row and value once: 2 * (24 + 4) bytes an entry.
void BM_SparseReorder(benchmark::State& state) {
  const SparseTensor& base = Entries3();
  const std::vector<int> order = {0, 1, 2};
  const double ms = TimeOnDevice(state, [&] {
    SparseTensor t = base;
    t.Reorder(order);
  });
  SetBandwidth(state, kBig * 2 * (24 + 4));
  // The same key words as Reorder sorts, sorted raw (measured once, in this run).
  static const double raw = [&] {
    const sparse_keys::KeyWords kw = sparse_keys::MakeKeyWords(kShape3, order);
    const std::vector<int64_t> rows = base.indices().ToVector<int64_t>();
    std::vector<int64_t> keys(static_cast<size_t>(kBig));
    for (int64_t i = 0; i < kBig; ++i) {
      keys[i] = static_cast<int64_t>(
          sparse_keys::PackWord(rows.data() + 3 * i, 3, kw.word.data(), kw.shift.data(), 0));
    }
    const Tensor dev_keys = Tensor::FromVector(std::move(keys), {kBig}).To(kGpu);
    return bench::RawSortPairsMs(static_cast<const uint64_t*>(dev_keys.raw_data()), kBig,
                                 kw.bits[0], 5, cuda::CurrentStream(kGpu));
  }();
  state.counters["raw_sort_ms"] = raw;
  state.counters["vs_raw_sort"] = ms > 0 ? raw / ms : 0;
}
BENCHMARK(BM_SparseReorder)->UseManualTime()->Unit(benchmark::kMillisecond);

void BM_SparseCoalesce(benchmark::State& state) {
  static const SparseTensor base = RandomOnDevice(kShapeDup, kBig, 2);
  TimeOnDevice(state, [&] {
    SparseTensor t = base;
    t.Coalesce();
  });
  SetBandwidth(state, kBig * 2 * (24 + 4));
}
BENCHMARK(BM_SparseCoalesce)->UseManualTime()->Unit(benchmark::kMillisecond);

// ToDense writes the whole dense tensor and reads every entry once.
void BM_SparseToDense(benchmark::State& state) {
  static const SparseTensor base = RandomOnDevice({kSide, kSide}, kScatter, 3);
  Tensor dense = Tensor::Empty({kSide, kSide}, DType::kFloat32, kGpu);
  TimeOnDevice(state, [&] { base.ToDense(&dense); });
  SetBandwidth(state, kSide * kSide * 4 + kScatter * (16 + 4));
}
BENCHMARK(BM_SparseToDense)->UseManualTime()->Unit(benchmark::kMillisecond);

// COO -> CSR reads every entry and writes columns, values and the row pointers.
void BM_SparseCooToCsr(benchmark::State& state) {
  const std::vector<int64_t> shape = {10'000'000, 1'000'000};
  static const SparseTensor base = RandomOnDevice(shape, kBig, 4);
  TimeOnDevice(state, [&] { benchmark::DoNotOptimize(CsrMatrix::FromSparse(base)); });
  SetBandwidth(state, kBig * (16 + 4 + 8 + 4) + (shape[0] + 1) * 8);
}
BENCHMARK(BM_SparseCooToCsr)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tensorkit
