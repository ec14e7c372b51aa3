// The structure-aware API fuzzers (tests/fuzz/api_fuzz.h) under ctest: every input of their
// checked-in corpora, then a fixed stream of random inputs, must end in a checked result or a
// tensorkit::Error (a wrong result aborts the test program).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "fuzz/api_fuzz.h"

namespace tensorkit {
namespace {

std::vector<std::vector<uint8_t>> Corpus(const std::string& name) {
  std::vector<std::vector<uint8_t>> out;
  const std::filesystem::path dir =
      std::filesystem::path(TENSORKIT_SOURCE_DIR) / "tests/fuzz/corpus" / name;
  if (!std::filesystem::is_directory(dir)) return out;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ifstream f(entry.path(), std::ios::binary);
    out.emplace_back(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  return out;
}

// Runs every corpus input and 3000 random ones; returns how many reached each result of `fuzz`.
template <typename Fuzz>
std::map<int, int64_t> Replay(const std::string& name, const Fuzz& fuzz) {
  std::map<int, int64_t> reached;
  for (const auto& input : Corpus(name)) ++reached[fuzz(input.data(), input.size())];
  std::mt19937 rng(20261204);
  for (int i = 0; i < 3000; ++i) {
    std::vector<uint8_t> input(rng() % 160);
    for (uint8_t& b : input) b = static_cast<uint8_t>(rng());
    ++reached[fuzz(input.data(), input.size())];
  }
  return reached;
}

TEST(ApiFuzzReplay, SparseApi) {
  const std::map<int, int64_t> reached = Replay("sparse_api", fuzz::FuzzSparseApi);
  // Every stage is reached by some inputs, the fully checked one (3) included.
  for (int stage = 0; stage <= 3; ++stage) EXPECT_GT(reached.count(stage), 0u) << stage;
}

TEST(ApiFuzzReplay, PatternViews) {
  const std::map<int, int64_t> reached = Replay("pattern_views", fuzz::FuzzPatternViews);
  int64_t checked = 0;
  for (const auto& [views, inputs] : reached) checked += views * inputs;
  EXPECT_GT(checked, 1000);
}

}  // namespace
}  // namespace tensorkit
