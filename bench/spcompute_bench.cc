// Sparse compute benchmarks (bench/peers/spcompute_peers.py runs the same sizes in SciPy and
// PyTorch). Inputs are uniform random entries, generated once per process.
//
// Benchmarks (names are what the peers script filters on):
//   SpMV/float32            CSR [1000000, 64000] with 10M entries @ x [64000]
//   SpMVCoo/float32         the same product from the COO SparseTensor (straight from the entries)
//   SpMM64/float32          the same matrix @ X [64000, 64] (row-major)
//   CooToCsr/float32        CsrMatrix::FromSparse of the same entries in random order
//   CooToCsrSorted/float32  the same entries already sorted, order {0, 1} (the fast path)
//   SpGEMM/float64          two random [100000, 100000] matrices with 1M entries each
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "tensorkit/sparse/compressed.h"
#include "tensorkit/sparse/products.h"

namespace tensorkit {
namespace {

constexpr int64_t kRows = 1000000, kCols = 64000, kNnz = 10000000, kN = 64;
constexpr int64_t kGemmDim = 100000, kGemmNnz = 1000000;

// Uniform random entries of a [rows, cols] matrix (random order, float values in [-1, 1)).
template <typename T>
SparseTensor RandomMatrix(int64_t rows, int64_t cols, int64_t nnz, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> val(-1.0, 1.0);
  Tensor idx = Tensor::Empty({nnz, 2}, DType::kInt64);
  Tensor values = Tensor::Empty({nnz}, DTypeOf<T>);
  int64_t* ip = idx.data<int64_t>();
  T* vp = values.data<T>();
  for (int64_t e = 0; e < nnz; ++e) {
    ip[2 * e] = static_cast<int64_t>(rng() % rows);
    ip[2 * e + 1] = static_cast<int64_t>(rng() % cols);
    vp[e] = static_cast<T>(val(rng));
  }
  return SparseTensor::Create(idx, values, {rows, cols});
}

Tensor RandomDense(const std::vector<int64_t>& dims) {
  Tensor t = Tensor::Empty(dims, DType::kFloat32);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> val(-1.0f, 1.0f);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.NumElements(); ++i) p[i] = val(rng);
  return t;
}

const SparseTensor& BigCoo() {
  static const SparseTensor st = RandomMatrix<float>(kRows, kCols, kNnz, 1);
  return st;
}

const CsrMatrix& BigCsr() {
  static const CsrMatrix m = CsrMatrix::FromSparse(BigCoo());
  return m;
}

void BM_SpMV(benchmark::State& state) {
  const CsrMatrix& a = BigCsr();
  Tensor x = RandomDense({kCols});
  Tensor y = Tensor::Empty({kRows}, DType::kFloat32);
  for (auto _ : state) {
    SparseDenseProduct(1, 0, a, x, &y);
    benchmark::DoNotOptimize(y.raw_data());
  }
}
BENCHMARK(BM_SpMV)->Name("SpMV/float32")->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_SpMVCoo(benchmark::State& state) {
  const SparseTensor& a = BigCoo();
  Tensor x = RandomDense({kCols});
  Tensor y = Tensor::Empty({kRows}, DType::kFloat32);
  for (auto _ : state) {
    SparseDenseProduct(1, 0, a, x, &y);
    benchmark::DoNotOptimize(y.raw_data());
  }
}
BENCHMARK(BM_SpMVCoo)->Name("SpMVCoo/float32")->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_SpMM(benchmark::State& state) {
  const CsrMatrix& a = BigCsr();
  Tensor x = RandomDense({kCols, kN});
  Tensor y = Tensor::Empty({kRows, kN}, DType::kFloat32);
  for (auto _ : state) {
    SparseDenseProduct(1, 0, a, x, &y);
    benchmark::DoNotOptimize(y.raw_data());
  }
}
BENCHMARK(BM_SpMM)->Name("SpMM64/float32")->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_CooToCsr(benchmark::State& state) {
  const SparseTensor& st = BigCoo();
  for (auto _ : state) {
    CsrMatrix m = CsrMatrix::FromSparse(st);
    benchmark::DoNotOptimize(m.values().raw_data());
  }
}
BENCHMARK(BM_CooToCsr)->Name("CooToCsr/float32")->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_CooToCsrSorted(benchmark::State& state) {
  static const SparseTensor sorted = [] {
    SparseTensor s = BigCsr().ToSparse();
    return SparseTensor::Create(s.indices(), s.values(), s.shape(), {0, 1});
  }();
  for (auto _ : state) {
    CsrMatrix m = CsrMatrix::FromSparse(sorted);
    benchmark::DoNotOptimize(m.values().raw_data());
  }
}
BENCHMARK(BM_CooToCsrSorted)
    ->Name("CooToCsrSorted/float32")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_SpGEMM(benchmark::State& state) {
  static const CsrMatrix a =
      CsrMatrix::FromSparse(RandomMatrix<double>(kGemmDim, kGemmDim, kGemmNnz, 2));
  static const CsrMatrix b =
      CsrMatrix::FromSparse(RandomMatrix<double>(kGemmDim, kGemmDim, kGemmNnz, 3));
  int64_t nnz = 0;
  for (auto _ : state) {
    CsrMatrix c = SparseSparseProduct(a, b);
    nnz = c.nnz();
  }
  state.counters["nnz"] = static_cast<double>(nnz);
}
BENCHMARK(BM_SpGEMM)->Name("SpGEMM/float64")->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace tensorkit

BENCHMARK_MAIN();
