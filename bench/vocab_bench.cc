// Vocabulary benchmarks at the size of issue 25: Lookup of 10M strings (or int64) in a vocabulary
// of 1M tokens, and counting 10M strings. bench/peers/tf_vocab_peers.py runs Keras's StringLookup
// and IntegerLookup on the same values beside these.
//
// Values (the peer builds the same ones): token i is "token_%07d" % i (or the integer i * 7919)
// for i in [0, 1M); query j is token (j * 2654435761) % 1.1M, so about 1 query in 11 is OOV.
// Threads: TENSORKIT_NUM_THREADS.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>
#include <vector>

#include "tensorkit/tensorkit.h"

namespace tensorkit {
namespace {

constexpr int64_t kVocab = 1000000;
constexpr int64_t kQueries = 10000000;
constexpr int64_t kRange = 1100000;  // query ids in [0, kRange): >= kVocab is OOV

std::string TokenName(int64_t i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "token_%07lld", static_cast<long long>(i));
  return buf;
}

int64_t QueryId(int64_t j) {
  return static_cast<int64_t>((static_cast<uint64_t>(j) * 2654435761ULL) % kRange);
}

const Vocabulary& StringVocab() {
  static const Vocabulary v = [] {
    std::vector<std::string> t(kVocab);
    for (int64_t i = 0; i < kVocab; ++i) t[i] = TokenName(i);
    return Vocabulary::FromTokens(t);
  }();
  return v;
}

const Tensor& StringQueries() {
  static const Tensor q = [] {
    Tensor t = Tensor::Empty({kQueries}, DType::kString);
    std::string* p = t.data<std::string>();
    for (int64_t j = 0; j < kQueries; ++j) p[j] = TokenName(QueryId(j));
    return t;
  }();
  return q;
}

void BM_LookupStrings(benchmark::State& state) {
  const Vocabulary& v = StringVocab();
  const Tensor& q = StringQueries();
  for (auto _ : state) benchmark::DoNotOptimize(v.Lookup(q));
  state.SetItemsProcessed(state.iterations() * kQueries);
}
BENCHMARK(BM_LookupStrings)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_LookupInt64(benchmark::State& state) {
  std::vector<int64_t> t(kVocab);
  for (int64_t i = 0; i < kVocab; ++i) t[i] = i * 7919;
  const Vocabulary v = Vocabulary::FromIntegers(t);
  Tensor q = Tensor::Empty({kQueries}, DType::kInt64);
  int64_t* p = q.data<int64_t>();
  for (int64_t j = 0; j < kQueries; ++j) p[j] = QueryId(j) * 7919;
  for (auto _ : state) benchmark::DoNotOptimize(v.Lookup(q));
  state.SetItemsProcessed(state.iterations() * kQueries);
}
BENCHMARK(BM_LookupInt64)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_CountStrings(benchmark::State& state) {
  const Tensor& q = StringQueries();
  for (auto _ : state) {
    VocabularyCounter c;
    c.Add(q);
    benchmark::DoNotOptimize(c.num_tokens());
  }
  state.SetItemsProcessed(state.iterations() * kQueries);
}
BENCHMARK(BM_CountStrings)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_FitStrings(benchmark::State& state) {
  VocabularyCounter c;
  c.Add(StringQueries());
  for (auto _ : state) benchmark::DoNotOptimize(Vocabulary::Fit(c).size());
}
BENCHMARK(BM_FitStrings)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace tensorkit

BENCHMARK_MAIN();
