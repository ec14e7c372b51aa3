// TFRecord framing and tf.Example parsing: CRC-32C (hardware and table) and the framing readers
// against memcpy of the same bytes (the machine's read bandwidth from memory), and the parse of
// a batch of Criteo-like Examples (13 float + 26 bytes features and an int64 label).
// bench/peers/tfrecord_peers.py times tf.io.parse_example on the same kind of batch.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "tensorkit/common/parallel.h"
#include "tensorkit/io/crc32c.h"
#include "tensorkit/io/tf_example.h"
#include "tensorkit/io/tfrecord.h"

namespace tensorkit {
namespace {

constexpr int64_t kFramedBytes = int64_t{64} << 20;

// ~64 MiB of framed records of `record_bytes` each (random bytes).
const std::string& Framed(int64_t record_bytes) {
  static std::map<int64_t, std::string> cache;
  std::string& s = cache[record_bytes];
  if (s.empty()) {
    std::mt19937_64 rng(1);
    std::string rec(static_cast<size_t>(record_bytes), '\0');
    std::vector<std::string> records;
    for (int64_t n = 0; n < kFramedBytes; n += record_bytes + 16) {
      for (char& c : rec) c = static_cast<char>(rng());
      records.push_back(rec);
    }
    s = io::FrameTFRecords(std::vector<std::string_view>(records.begin(), records.end()));
  }
  return s;
}

void BM_Memcpy(benchmark::State& state) {
  const std::string& src = Framed(1024);
  std::string dst(src.size(), '\0');
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), src.size());
    benchmark::DoNotOptimize(dst.data());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(src.size()));
}
BENCHMARK(BM_Memcpy)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Crc32c(benchmark::State& state) {
  const std::string& src = Framed(1024);
  const bool portable = state.range(0) == 1;
  for (auto _ : state) {
    benchmark::DoNotOptimize(portable ? io::Crc32cPortable(0, src.data(), src.size())
                                      : io::Crc32c(src.data(), src.size()));
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(src.size()));
  state.SetLabel(portable ? "table" : (io::Crc32cIsHardware() ? "sse4.2 x3" : "table"));
}
BENCHMARK(BM_Crc32c)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

// TFRecordReader::Next over framed bytes in memory: both CRCs, zero-copy views.
void BM_TFRecordNext(benchmark::State& state) {
  const std::string& src = Framed(state.range(0));
  for (auto _ : state) {
    auto reader = io::TFRecordReader::FromMemory(src.data(), src.size(), "bench");
    std::string_view r;
    int64_t n = 0;
    while (reader.Next(&r)) n += static_cast<int64_t>(r.size());
    benchmark::DoNotOptimize(n);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(src.size()));
}
BENCHMARK(BM_TFRecordNext)
    ->Arg(100)
    ->Arg(1024)
    ->Arg(65536)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// ReadTFRecordBatch from memory: header walk, then CRC + copy in parallel (threads = arg 1);
// arg 2: 1 reuses one batch (as memcpy reuses its destination), 0 allocates a fresh one.
void BM_TFRecordBatch(benchmark::State& state) {
  const std::string& src = Framed(state.range(0));
  const int saved = GetNumThreads();
  SetNumThreads(static_cast<int>(state.range(1)));
  io::TFRecordBatch reused;
  for (auto _ : state) {
    if (state.range(2) == 1) {
      io::ReadTFRecordBatchFromMemory(src.data(), src.size(), "bench", {}, &reused);
      benchmark::DoNotOptimize(reused.bytes.data());
    } else {
      io::TFRecordBatch b = io::ReadTFRecordBatchFromMemory(src.data(), src.size(), "bench");
      benchmark::DoNotOptimize(b.bytes.data());
    }
  }
  SetNumThreads(saved);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(src.size()));
}
BENCHMARK(BM_TFRecordBatch)
    ->Args({1024, 1, 0})
    ->Args({1024, 1, 1})
    ->Args({1024, 2, 1})
    ->Args({65536, 1, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// "I3": built by append (GCC 12 warns falsely, -Wrestrict, on "I" + std::to_string(f)).
std::string Name(const char* prefix, int f) {
  return std::string(prefix).append(std::to_string(f));
}

// Criteo-like records: label (int64), I1..I13 (float), C1..C26 (8 hex chars).
std::vector<std::string> CriteoRecords(int64_t n) {
  std::mt19937_64 rng(3);
  Tensor label = Tensor::Empty({n, 1}, DType::kInt64);
  std::vector<std::pair<std::string, Tensor>> fixed = {{"label", label}};
  for (int64_t i = 0; i < n; ++i) label.data<int64_t>()[i] = static_cast<int64_t>(rng() & 1);
  for (int f = 1; f <= 13; ++f) {
    Tensor t = Tensor::Empty({n}, DType::kFloat32);
    for (int64_t i = 0; i < n; ++i) t.data<float>()[i] = static_cast<float>(rng() % 1000);
    fixed.emplace_back(Name("I", f), t);
  }
  for (int f = 1; f <= 26; ++f) {
    Tensor t = Tensor::Empty({n}, DType::kString);
    char buf[16];
    for (int64_t i = 0; i < n; ++i) {
      std::snprintf(buf, sizeof buf, "%08x", static_cast<unsigned>(rng()));
      t.data<std::string>()[i] = buf;
    }
    fixed.emplace_back(Name("C", f), t);
  }
  return io::SerializeExamples(fixed, {});
}

io::ExampleSpec CriteoSpec(bool var_len_categorical) {
  io::ExampleSpec spec;
  spec.fixed.push_back({"label", DType::kInt64, {}, {}});
  for (int f = 1; f <= 13; ++f) {
    spec.fixed.push_back({Name("I", f), DType::kFloat32, {}, Tensor::FromScalar(0.0f)});
  }
  for (int f = 1; f <= 26; ++f) {
    if (var_len_categorical) {
      spec.var_len.push_back({Name("C", f), DType::kString});
    } else {
      spec.fixed.push_back({Name("C", f), DType::kString, {}, {}});
    }
  }
  return spec;
}

// Parse of 8192 Criteo-like records; arg 0: categoricals as VarLen (1) or FixedLen (0); arg 1:
// threads.
void BM_ParseCriteo(benchmark::State& state) {
  static const std::vector<std::string> records = CriteoRecords(8192);
  const std::vector<std::string_view> views(records.begin(), records.end());
  const io::ExampleSpec spec = CriteoSpec(state.range(0) == 1);
  const int saved = GetNumThreads();
  SetNumThreads(static_cast<int>(state.range(1)));
  for (auto _ : state) {
    io::ParsedExamples p = io::ParseExamples(views, spec);
    benchmark::DoNotOptimize(p.fixed.data());
  }
  SetNumThreads(saved);
  int64_t bytes = 0;
  for (const auto& r : records) bytes += static_cast<int64_t>(r.size());
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(records.size()));
  state.SetBytesProcessed(state.iterations() * bytes);
}
BENCHMARK(BM_ParseCriteo)
    ->Args({0, 1})
    ->Args({1, 1})
    ->Args({0, 2})
    ->Args({1, 2})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace tensorkit

BENCHMARK_MAIN();
