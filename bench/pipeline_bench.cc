// The Criteo-like pipeline end to end (examples/criteo_pipeline.h): read a TFRecord file of
// 131072 tf.Example records, then per batch of 4096 records parse, hash, cross, bucketize, fill
// empty rows and pool embedding bags. bench/peers/pipeline_peers.py runs the same file through
// the same steps in TensorFlow and prints rows/s side by side.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "tensorkit/common/file_util.h"
#include "tensorkit/examples/criteo_pipeline.h"

namespace tensorkit {
namespace {

constexpr int64_t kRows = 131072;
constexpr int64_t kBatch = 4096;

std::string PipelineFile() {
  const char* d = std::getenv("TENSORKIT_BENCH_DIR");
  const std::string dir = d && *d ? d : "/tmp/tensorkit_io_bench";
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/criteo_131072.tfrecord";
  if (!io::FileExists(path)) {
    const std::vector<std::string> records = criteo::MakeRecords(kRows, 26);
    io::WriteTFRecords(path, std::vector<std::string_view>(records.begin(), records.end()));
  }
  return path;
}

void BM_CriteoPipeline(benchmark::State& state) {
  const std::string path = PipelineFile();
  const io::ExampleSpec spec = criteo::Spec();
  const std::vector<Tensor> tables = criteo::MakeTables();
  const std::vector<float> boundaries = criteo::DenseBoundaries();
  for (auto _ : state) {
    // Records as views into the mapped file, CRCs checked as they come (no copy), a batch at
    // a time: the way a training loop reads.
    io::TFRecordReader reader = io::TFRecordReader::Open(path);
    std::vector<std::string_view> records;
    std::string_view r;
    bool more = true;
    while (more) {
      records.clear();
      while (static_cast<int64_t>(records.size()) < kBatch && (more = reader.Next(&r))) {
        records.push_back(r);
      }
      if (records.empty()) break;
      const std::vector<Tensor> pooled = criteo::Run(records, spec, tables, boundaries);
      benchmark::DoNotOptimize(pooled.back().raw_data());
    }
  }
  state.SetItemsProcessed(state.iterations() * kRows);
}
BENCHMARK(BM_CriteoPipeline)->Unit(benchmark::kMillisecond)->UseRealTime();

// The parts: reading the file into one batch (framing, CRCs and a copy), and parsing batches.
void BM_CriteoRead(benchmark::State& state) {
  const std::string path = PipelineFile();
  for (auto _ : state) benchmark::DoNotOptimize(io::ReadTFRecordBatch(path).size());
  state.SetItemsProcessed(state.iterations() * kRows);
}
BENCHMARK(BM_CriteoRead)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_CriteoParse(benchmark::State& state) {
  const io::TFRecordBatch all = io::ReadTFRecordBatch(PipelineFile());
  const io::ExampleSpec spec = criteo::Spec();
  for (auto _ : state) {
    for (int64_t b = 0; b < all.size(); b += kBatch) {
      std::vector<std::string_view> records;
      for (int64_t i = b; i < std::min(all.size(), b + kBatch); ++i) records.push_back(all[i]);
      benchmark::DoNotOptimize(io::ParseExamples(records, spec).var_len.size());
    }
  }
  state.SetItemsProcessed(state.iterations() * kRows);
}
BENCHMARK(BM_CriteoParse)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace tensorkit

BENCHMARK_MAIN();
