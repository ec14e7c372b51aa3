// The input list of a batch, its partition into shards, and the check of its outputs.
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>

#include "tensorkit/tools/batch.h"

namespace tensorkit::tools {
namespace {

namespace fs = std::filesystem;

// A whole decimal number >= 0, or nothing.
std::optional<int64_t> ParseCount(std::string_view s) {
  int64_t v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size() || v < 0) return {};
  return v;
}

const char* Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

// An environment variable that must hold a whole number.
int64_t EnvCount(const char* name) {
  const char* v = Env(name);
  std::optional<int64_t> n = v ? ParseCount(v) : std::nullopt;
  if (!n) {
    throw UsageError(std::string("--shard auto: ") + name + (v ? "='" + std::string(v) + "'" : "") +
                     (v ? " is not a whole number" : " is not set") +
                     "; give the shard explicitly as --shard K/N");
  }
  return *n;
}

// The shard of a Slurm job array task. Only a contiguous array (--array=A-B) numbers its tasks
// 0..COUNT-1 from the minimum; a step or a list would leave some inputs to no task.
Shard SlurmShard(std::optional<int64_t> count) {
  const int64_t id = EnvCount("SLURM_ARRAY_TASK_ID");
  const int64_t min = EnvCount("SLURM_ARRAY_TASK_MIN");
  const int64_t n = EnvCount("SLURM_ARRAY_TASK_COUNT");
  const char* step = Env("SLURM_ARRAY_TASK_STEP");
  const char* max = Env("SLURM_ARRAY_TASK_MAX");
  const bool contiguous = (step == nullptr || std::string_view(step) == "1") &&
                          (max == nullptr || ParseCount(max) == min + n - 1);
  if (!contiguous || id < min || id - min >= n) {
    throw UsageError("--shard auto: the Slurm job array is not a contiguous range (task " +
                     std::to_string(id) + ", min " + std::to_string(min) + ", max " +
                     (max ? max : "?") + ", count " + std::to_string(n) + ", step " +
                     (step ? step : "1") + "); submit it as --array=0-" +
                     std::to_string(std::max<int64_t>(n, 1) - 1) + " (a %limit is fine)");
  }
  if (count && *count != n) {
    throw UsageError("--shard auto/" + std::to_string(*count) + ": the Slurm job array has " +
                     std::to_string(n) + " tasks; give --shard auto, or auto/" + std::to_string(n));
  }
  return Shard{id - min, n};
}

// The shard of a Kubernetes Indexed Job's pod; the pod is not told the completion count.
Shard KubernetesShard(std::optional<int64_t> count) {
  const int64_t index = EnvCount("JOB_COMPLETION_INDEX");
  if (!count) {
    throw UsageError("--shard auto: JOB_COMPLETION_INDEX=" + std::to_string(index) +
                     " (a Kubernetes Indexed Job) gives no count of shards; give it as "
                     "--shard auto/N with N the Job's spec.completions");
  }
  if (index >= *count) {
    throw UsageError("--shard auto/" + std::to_string(*count) + ": JOB_COMPLETION_INDEX=" +
                     std::to_string(index) + " is not below the count " + std::to_string(*count) +
                     "; N must be the Job's spec.completions");
  }
  return Shard{index, *count};
}

// std::filesystem::path(p).stem() without building a path: the file name up to its last dot,
// unless the name is "." or "..", or its only dot is the first character.
std::string_view StemOf(std::string_view p) {
  const size_t slash = p.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? p : p.substr(slash + 1);
  if (name == "." || name == "..") return name;
  const size_t dot = name.rfind('.');
  return dot == std::string_view::npos || dot == 0 ? name : name.substr(0, dot);
}

}  // namespace

void ReadInputList(const std::string& from, std::vector<std::string>* paths) {
  const bool is_stdin = from == "-";
  const std::string name = is_stdin ? "standard input" : "'" + from + "'";
  std::FILE* f = is_stdin ? stdin : std::fopen(from.c_str(), "rb");
  TK_CHECK(f != nullptr, kIo, "convert: cannot open the input list ", name, ": ",
           std::strerror(errno));
  char* line = nullptr;
  size_t cap = 0;
  int64_t line_no = 0;
  ssize_t len = 0;
  std::string bad;
  while ((len = ::getline(&line, &cap, f)) >= 0) {
    ++line_no;
    std::string_view s(line, static_cast<size_t>(len));
    if (!s.empty() && s.back() == '\n') s.remove_suffix(1);
    if (!s.empty() && s.back() == '\r') s.remove_suffix(1);  // a list written on Windows
    if (s.empty()) continue;
    if (s.find('\0') != std::string_view::npos) {
      bad = "line " + std::to_string(line_no) + " holds a NUL byte, which no path can hold";
      break;
    }
    paths->emplace_back(s);
  }
  const bool failed = std::ferror(f) != 0;
  const int err = errno;
  std::free(line);
  if (!is_stdin) std::fclose(f);
  TK_CHECK(!failed, kIo, "convert: cannot read the input list ", name, ": ", std::strerror(err));
  TK_CHECK(bad.empty(), kInvalidArgument, "convert: the input list ", name, ": ", bad,
           " (is it a list of paths, one a line?)");
}

void AddBatchOptions(CLI::App* convert, BatchOptions* options) {
  convert->add_option("--shard", options->shard,
                      "Batch mode: convert only shard K of N (K/N, 0 <= K < N), or take it from "
                      "a Slurm job array or Kubernetes Indexed Job (auto, auto/N)");
  convert->add_option("--inputs-from", options->inputs_from,
                      "Batch mode: read input paths from FILE, one a line (- for standard input)");
  convert->add_option("--manifest", options->manifest,
                      "Batch mode: append one JSON line per input to FILE (with --resume, skip "
                      "what it records as converted)");
}

Shard ParseShard(const std::string& spec) {
  const size_t slash = spec.find('/');
  const std::string_view k = std::string_view(spec).substr(0, slash);
  std::optional<int64_t> n;
  if (slash != std::string::npos) {
    n = ParseCount(std::string_view(spec).substr(slash + 1));
    if (!n || *n == 0) {
      throw UsageError("--shard " + spec + ": the count N must be a whole number >= 1");
    }
  }
  if (k == "auto") {
    if (Env("SLURM_ARRAY_TASK_ID")) return SlurmShard(n);
    if (Env("JOB_COMPLETION_INDEX")) return KubernetesShard(n);
    throw UsageError(
        std::string("--shard auto: no scheduler's task index in the environment: neither "
                    "SLURM_ARRAY_TASK_ID (a Slurm job array) nor JOB_COMPLETION_INDEX (a "
                    "Kubernetes Indexed Job) is set") +
        (Env("SLURM_JOB_ID") ? "; this Slurm job is not an array (sbatch --array=0-N-1)" : "") +
        "; give the shard explicitly as --shard K/N");
  }
  const std::optional<int64_t> index = ParseCount(k);
  if (!n || !index || *index >= *n) {
    throw UsageError("--shard " + spec +
                     ": expected K/N with whole numbers 0 <= K < N (e.g. 0/4), auto or auto/N");
  }
  return Shard{*index, *n};
}

int64_t ShardOf(std::string_view path, int64_t count) {
  uint64_t h = 14695981039346656037ull;  // FNV-1a 64
  for (unsigned char c : path) h = (h ^ c) * 1099511628211ull;
  // FNV-1a's low bits depend only on the bytes' low bits (the prime is odd), so names that
  // differ in one digit would fall into shards by parity; SplitMix64's finalizer mixes them.
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return static_cast<int64_t>(h % static_cast<uint64_t>(count));
}

BatchPlan PlanBatch(const std::vector<std::string>& files, const BatchOptions& options,
                    const std::string& out_dir, const std::string& ext) {
  BatchPlan plan;
  if (!options.shard.empty()) plan.shard = ParseShard(options.shard);
  std::vector<std::string> all = files;
  if (!options.inputs_from.empty()) ReadInputList(options.inputs_from, &all);
  if (all.empty()) {
    throw UsageError(
        "a batch needs at least one input file (on the command line or in "
        "--inputs-from)");
  }
  plan.total = all.size();
  const auto output_of = [&](const std::string& in) {
    return (fs::path(out_dir) / (std::string(StemOf(in)) + "." + ext)).string();
  };
  // Outputs differ exactly when stems do (one folder, one extension), so the map holds views of
  // the stems rather than a million output paths.
  std::unordered_map<std::string_view, size_t> owner;  // stem -> the first input with it
  owner.reserve(all.size());
  constexpr size_t kShown = 10;
  size_t clashes = 0;
  std::string shown;
  for (size_t i = 0; i < all.size(); ++i) {
    auto [it, fresh] = owner.emplace(StemOf(all[i]), i);
    if (fresh || ++clashes > kShown) continue;
    const size_t j = it->second;
    shown += "\n  " + output_of(all[i]) + ": written by both " + all[j] + " and " + all[i] +
             (all[i] == all[j] ? " (listed twice: entries " + std::to_string(j + 1) + " and " +
                                     std::to_string(i + 1) + ")"
                               : "");
  }
  if (clashes > 0) {
    throw UsageError(
        "convert: refusing the batch before converting anything: " + std::to_string(clashes) +
        " output(s) of the " + std::to_string(all.size()) +
        " inputs would be written by more than one input:" + shown +
        (clashes > kShown ? "\n  ... and " + std::to_string(clashes - kShown) + " more" : "") +
        "\nRename those inputs, convert them into separate folders (-o), or remove repeated "
        "entries from the list.");
  }
  for (size_t i = 0; i < all.size(); ++i) {
    if (ShardOf(all[i], plan.shard.count) != plan.shard.index) continue;
    plan.outputs.push_back(output_of(all[i]));
    plan.inputs.push_back(std::move(all[i]));
  }
  return plan;
}

}  // namespace tensorkit::tools
