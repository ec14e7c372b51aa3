// File reading and writing: a 10M-entry Matrix Market file, the same entries as a scipy.sparse
// .npz (COO), a 256 MiB .npy, a FROSTT tensor; the zip CRC-32 kernels.
// The files are generated (by tensorkit's own writers) into $TENSORKIT_BENCH_DIR, default
// /tmp/tensorkit_io_bench, on first use and reused after; bench/peers/io_peers.py times SciPy,
// NumPy and a plain file copy on the very same files.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "tensorkit/common/file_util.h"
#include "tensorkit/io/crc32.h"
#include "tensorkit/io/io.h"
#include "tensorkit/io/libsvm.h"

namespace tensorkit {
namespace {

std::string BenchDir() {
  const char* d = std::getenv("TENSORKIT_BENCH_DIR");
  std::string dir = d && *d ? d : "/tmp/tensorkit_io_bench";
  std::filesystem::create_directories(dir);
  return dir;
}

// A random sparse tensor with `nnz` entries in `shape` (duplicates possible, order unknown).
SparseTensor RandomSparse(int64_t nnz, const std::vector<int64_t>& shape) {
  const int rank = static_cast<int>(shape.size());
  Tensor idx = Tensor::Empty({nnz, rank}, DType::kInt64);
  Tensor val = Tensor::Empty({nnz}, DType::kFloat64);
  std::mt19937_64 rng(42);
  int64_t* ip = idx.data<int64_t>();
  double* vp = val.data<double>();
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  for (int64_t i = 0; i < nnz; ++i) {
    for (int a = 0; a < rank; ++a) ip[i * rank + a] = static_cast<int64_t>(rng() % shape[a]);
    vp[i] = uni(rng);
  }
  return SparseTensor::Create(idx, val, shape);
}

// The path of a bench file, written by `make` when it does not exist yet.
template <typename Make>
std::string Ensure(const std::string& name, const Make& make) {
  const std::string path = BenchDir() + "/" + name;
  if (!io::FileExists(path)) make(path);
  return path;
}

std::string MtxFile() {
  return Ensure("mtx_10M.mtx", [](const std::string& p) {
    io::Write(p, RandomSparse(10'000'000, {1'000'000, 1'000'000}));
  });
}

std::string NpzFile() {
  return Ensure("coo_10M.npz", [](const std::string& p) {
    io::Write(p, RandomSparse(10'000'000, {1'000'000, 1'000'000}));
  });
}

std::string TnsFile() {
  return Ensure("tns_5M.tns", [](const std::string& p) {
    io::Write(p, RandomSparse(5'000'000, {2000, 3000, 4000}));
  });
}

std::string NpyFile() {
  return Ensure("npy_256MiB.npy", [](const std::string& p) {
    Tensor t = Tensor::Empty({8192, 8192}, DType::kFloat32);
    float* d = t.data<float>();
    for (int64_t i = 0; i < t.NumElements(); ++i) d[i] = static_cast<float>(i % 1000) * 0.5f;
    io::Write(p, t);
  });
}

void BM_ReadMtx10M(benchmark::State& state) {
  const std::string path = MtxFile();
  for (auto _ : state) {
    io::TensorData d = io::Read(path);
    benchmark::DoNotOptimize(d.sparse.nnz());
  }
  state.SetBytesProcessed(state.iterations() * std::filesystem::file_size(path));
}
BENCHMARK(BM_ReadMtx10M)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_WriteMtx10M(benchmark::State& state) {
  io::TensorData d = io::Read(MtxFile());
  const std::string out = BenchDir() + "/mtx_10M_out.mtx";
  for (auto _ : state) io::Write(out, d);
  std::filesystem::remove(out);
}
BENCHMARK(BM_WriteMtx10M)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same read and write once each, in a process that has read nothing yet: its memory is
// fresh (run alone with --benchmark_filter; bench/peers/io_peers.py starts one process a sample).
BENCHMARK(BM_ReadMtx10M)
    ->Name("BM_FreshReadMtx10M")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1)
    ->Repetitions(1);
BENCHMARK(BM_WriteMtx10M)
    ->Name("BM_FreshWriteMtx10M")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1)
    ->Repetitions(1);

void BM_ReadNpz10M(benchmark::State& state) {
  const std::string path = NpzFile();
  for (auto _ : state) {
    io::TensorData d = io::Read(path);
    benchmark::DoNotOptimize(d.sparse.nnz());
  }
  state.SetBytesProcessed(state.iterations() * std::filesystem::file_size(path));
}
BENCHMARK(BM_ReadNpz10M)->Unit(benchmark::kMillisecond)->UseRealTime();

// The .npz writer alone: the 10M entries of the .mtx as scipy COO members (int32 row and col,
// float64 data), stored.
void BM_WriteNpz10M(benchmark::State& state) {
  io::TensorData d = io::Read(MtxFile());
  const std::string out = BenchDir() + "/npz_10M_out.npz";
  for (auto _ : state) io::Write(out, d);
  state.SetBytesProcessed(state.iterations() * std::filesystem::file_size(out));
  std::filesystem::remove(out);
}
BENCHMARK(BM_WriteNpz10M)->Unit(benchmark::kMillisecond)->UseRealTime();

// CRC-32 of 64 MiB (out of cache) with each kernel this CPU has (0 zlib, 1 PCLMULQDQ,
// 2 VPCLMULQDQ on 512-bit registers), on one thread.
void BM_Crc32(benchmark::State& state) {
  const auto kernel = static_cast<io::Crc32Kernel>(state.range(0));
  if (!io::Crc32KernelSupported(kernel)) {
    state.SkipWithError("this CPU lacks the kernel");
    return;
  }
  std::vector<uint8_t> buf(size_t{64} << 20);
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<uint8_t>(i * 2654435761u >> 13);
  uint32_t crc = 0;
  for (auto _ : state) crc = io::Crc32ExtendWith(kernel, crc, buf.data(), buf.size());
  benchmark::DoNotOptimize(crc);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(buf.size()));
}
BENCHMARK(BM_Crc32)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ReadTns5M(benchmark::State& state) {
  const std::string path = TnsFile();
  for (auto _ : state) {
    io::TensorData d = io::Read(path);
    benchmark::DoNotOptimize(d.sparse.nnz());
  }
}
BENCHMARK(BM_ReadTns5M)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ReadNpy256MiB(benchmark::State& state) {
  const std::string path = NpyFile();
  for (auto _ : state) {
    io::TensorData d = io::Read(path);
    benchmark::DoNotOptimize(d.dense.raw_data());
  }
  state.SetBytesProcessed(state.iterations() * std::filesystem::file_size(path));
}
BENCHMARK(BM_ReadNpy256MiB)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_WriteNpy256MiB(benchmark::State& state) {
  Tensor t = io::Read(NpyFile()).dense;
  const std::string out = BenchDir() + "/npy_256MiB_out.npy";
  for (auto _ : state) io::Write(out, t);
  state.SetBytesProcessed(state.iterations() * t.NumElements() * 4);
  std::filesystem::remove(out);
}
BENCHMARK(BM_WriteNpy256MiB)->Unit(benchmark::kMillisecond)->UseRealTime();

// A Criteo-like libsvm file: 500k samples, 0-39 features each among 1M (sorted), short values
// (counts and eighths, as such sets hold), labels 0/1.
std::string LibsvmFile() {
  return Ensure("libsvm_500k.svm", [](const std::string& p) {
    std::mt19937_64 rng(26);
    const int64_t samples = 500'000;
    std::vector<int64_t> idx;
    std::vector<double> vals;
    std::vector<double> labels;
    for (int64_t r = 0; r < samples; ++r) {
      labels.push_back(static_cast<double>(rng() % 2));
      int64_t col = 0;
      const int64_t n = static_cast<int64_t>(rng() % 40);
      for (int64_t k = 0; k < n; ++k) {
        col += 1 + static_cast<int64_t>(rng() % 50000);
        if (col >= 1'000'000) break;
        idx.push_back(r);
        idx.push_back(col);
        vals.push_back(static_cast<double>(rng() % 4000) / 8.0);
      }
    }
    const int64_t nnz = static_cast<int64_t>(vals.size());
    io::LibsvmData d;
    d.features = SparseTensor::Create(Tensor::FromVector(idx, {nnz, 2}), Tensor::FromVector(vals),
                                      {samples, 1'000'000}, {0, 1});
    d.labels = Tensor::FromVector(labels);
    io::WriteLibsvm(p, d);
  });
}

void BM_ReadLibsvm500k(benchmark::State& state) {
  const std::string path = LibsvmFile();
  for (auto _ : state) {
    io::LibsvmData d = io::ReadLibsvm(path);
    benchmark::DoNotOptimize(d.features.nnz());
  }
  state.SetBytesProcessed(state.iterations() * std::filesystem::file_size(path));
}
BENCHMARK(BM_ReadLibsvm500k)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_WriteLibsvm500k(benchmark::State& state) {
  const io::LibsvmData d = io::ReadLibsvm(LibsvmFile());
  const std::string out = BenchDir() + "/libsvm_500k_out.svm";
  for (auto _ : state) io::WriteLibsvm(out, d);
  std::filesystem::remove(out);
}
BENCHMARK(BM_WriteLibsvm500k)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace tensorkit

BENCHMARK_MAIN();
