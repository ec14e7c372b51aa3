// Segment reductions and FillEmptyRows at feature-pipeline sizes. SparseSegmentReduce: 5M
// random row indices into float32 data [1M, 64] (256 MiB), sorted ids into 64K segments;
// FillEmptyRows: 5M entries of [1M, 1000] with 10% of the rows empty, unsorted and sorted.
// Run with TENSORKIT_NUM_THREADS=2 to compare with tf.raw_ops at TensorFlow's 2 intra-op
// threads.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <random>
#include <vector>

#include "tensorkit/tensorkit.h"

namespace tensorkit {
namespace {

constexpr int64_t kRows = 1000000, kDim = 64, kIndices = 5000000, kSegments = 65536;

struct SegmentInputs {
  Tensor data, indices, ids;
};

const SegmentInputs& Inputs() {
  static const SegmentInputs in = [] {
    SegmentInputs s;
    s.data = Tensor::Empty({kRows, kDim}, DType::kFloat32);
    float* d = s.data.data<float>();
    for (int64_t i = 0; i < kRows * kDim; ++i) d[i] = static_cast<float>(i * 7919 % 1000) / 100;
    s.indices = Tensor::Empty({kIndices}, DType::kInt32);
    s.ids = Tensor::Empty({kIndices}, DType::kInt32);
    int32_t* idx = s.indices.data<int32_t>();
    int32_t* ids = s.ids.data<int32_t>();
    std::mt19937_64 rng(7);
    for (int64_t k = 0; k < kIndices; ++k) {
      idx[k] = static_cast<int32_t>(rng() % kRows);
      ids[k] = static_cast<int32_t>(rng() % kSegments);
    }
    std::sort(ids, ids + kIndices);
    return s;
  }();
  return in;
}

void BM_SparseSegment(benchmark::State& state, Combiner c) {
  const SegmentInputs& in = Inputs();
  for (auto _ : state) {
    Tensor out = SparseSegmentReduce(in.data, in.indices, in.ids, kSegments, c);
    benchmark::DoNotOptimize(out.raw_data());
  }
  // Gathered rows plus indices and ids.
  state.SetBytesProcessed(state.iterations() * kIndices * (kDim * 4 + 8));
  state.SetItemsProcessed(state.iterations() * kIndices);
}
BENCHMARK_CAPTURE(BM_SparseSegment, Sum, Combiner::kSum)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_SparseSegment, Mean, Combiner::kMean)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

constexpr int64_t kFillRows = 1000000, kFillCols = 1000, kFillNnz = 5000000;

// kFillNnz entries of [kFillRows, kFillCols] in random rows, a tenth of the rows never used.
SparseTensor FillInput(bool sorted) {
  Tensor indices = Tensor::Empty({kFillNnz, 2}, DType::kInt64);
  Tensor values = Tensor::Empty({kFillNnz}, DType::kFloat32);
  int64_t* idx = indices.data<int64_t>();
  float* val = values.data<float>();
  std::mt19937_64 rng(11);
  for (int64_t i = 0; i < kFillNnz; ++i) {
    int64_t r = static_cast<int64_t>(rng() % kFillRows);
    if (r % 10 == 3) r = (r + 1) % kFillRows;  // rows 3, 13, 23, ... stay empty
    idx[2 * i] = r;
    idx[2 * i + 1] = static_cast<int64_t>(rng() % kFillCols);
    val[i] = static_cast<float>(i % 1000);
  }
  SparseTensor st = SparseTensor::Create(indices, values, {kFillRows, kFillCols});
  if (sorted) st.Reorder({0, 1});
  return st;
}

void BM_FillEmptyRows(benchmark::State& state, bool sorted) {
  static const SparseTensor unsorted_in = FillInput(false);
  static const SparseTensor sorted_in = FillInput(true);
  const SparseTensor& st = sorted ? sorted_in : unsorted_in;
  for (auto _ : state) {
    FillEmptyRowsResult r = FillEmptyRows(st, 0.0f);
    benchmark::DoNotOptimize(r.output.values().raw_data());
  }
  // Entries in (indices and values) and out (plus the reverse map).
  state.SetBytesProcessed(state.iterations() * kFillNnz * (20 + 28));
  state.SetItemsProcessed(state.iterations() * kFillNnz);
}
BENCHMARK_CAPTURE(BM_FillEmptyRows, Unsorted, false)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_FillEmptyRows, Sorted, true)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace tensorkit

BENCHMARK_MAIN();
