// tensorkit/tools/batch.h: a batch conversion split over processes and machines.
//
// Glossary
//   input list  the batch's inputs: the command line's files, then those of --inputs-from FILE
//               (`-`: standard input), one path a line; every shard is given the same list.
//   shard K/N   this process converts the inputs with ShardOf(path, N) == K, so N processes
//               with K = 0..N-1 convert every input exactly once. The hash is of the path's
//               bytes alone: a path's shard does not depend on the order of the list or on the
//               other paths in it (tools/README.md says why not the position in a sorted list).
//   plan        every input's output (OUTDIR/<stem>.EXT), checked over the whole list before
//               any work: two inputs with one output (also one input listed twice) are refused,
//               so that shards can never race on a file. (An output that is another input has
//               that input's stem and extension in OUTDIR, so it is that input's output too.)
//   manifest    JSON Lines, one record per finished input, appended by a single O_APPEND write
//               after the output was committed (a record "converted" means the output is
//               complete). With --resume, an input is skipped when the manifest's latest record
//               for it says converted to the same output and that file still has the recorded
//               size; an output without a record is converted again (it may be stale).
//   stop hook   TENSORKIT_BATCH_STOP_AFTER=N stops the process (SIGSTOP) right after its N-th
//               record, so that tests can kill a shard at a known point.
#ifndef TENSORKIT_TOOLS_BATCH_H_
#define TENSORKIT_TOOLS_BATCH_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tensorkit/tools/tool.h"

namespace tensorkit::tools {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

struct BatchOptions {
  std::string shard;        // "K/N", "auto" or "auto/N"; empty: the whole list
  std::string inputs_from;  // a file of paths, or "-" for standard input
  std::string manifest;     // the JSON Lines file to append records to
  // True when any batch-only option was given (they imply a batch).
  bool Requested() const { return !shard.empty() || !inputs_from.empty() || !manifest.empty(); }
};

// Adds --shard, --inputs-from and --manifest to `convert`.
void AddBatchOptions(CLI::App* convert, BatchOptions* options);

struct Shard {
  int64_t index = 0;
  int64_t count = 1;
  std::string Text() const { return std::to_string(index) + "/" + std::to_string(count); }
};

// --shard's value. "auto" takes the index (and count) from the scheduler's environment: Slurm's
// SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN of SLURM_ARRAY_TASK_COUNT, or Kubernetes'
// JOB_COMPLETION_INDEX of the N in "auto/N". Throws UsageError naming the values.
Shard ParseShard(const std::string& spec);

// Appends the paths of `from` (a file, or "-" for standard input), one a line (blank lines and
// a trailing '\r' ignored); a NUL byte is an Error naming the line.
void ReadInputList(const std::string& from, std::vector<std::string>* paths);

// The shard of `path` among `count`: SplitMix64's finalizer of FNV-1a-64 of the bytes, mod count.
int64_t ShardOf(std::string_view path, int64_t count);

struct BatchPlan {
  Shard shard;
  size_t total = 0;                  // inputs in the whole list
  std::vector<std::string> inputs;   // this shard's, in list order
  std::vector<std::string> outputs;  // inputs[i]'s output
};

// Reads the input list, checks every output of the whole list (UsageError naming each clash)
// and keeps this shard's inputs. Touches no file.
BatchPlan PlanBatch(const std::vector<std::string>& files, const BatchOptions& options,
                    const std::string& out_dir, const std::string& ext);

// One manifest line.
struct ManifestRecord {
  std::string input;
  std::string output;
  std::string status;         // "converted" or "failed"
  int64_t bytes_read = 0;     // the input's size
  int64_t bytes_written = 0;  // the output's size
  double start = 0;           // Unix time when the conversion began
  double seconds = 0;         // its wall time
  std::string shard;          // "K/N"
  std::string error;          // empty unless failed
  bool converted() const { return status == "converted"; }
};

// Converts `in` to `out`, timing it; a failure is caught into the record.
ManifestRecord ConvertRecorded(const std::string& in, const std::string& out,
                               const ConvertOptions& options, const Shard& shard);

// The record as one JSON object and a newline.
std::string ManifestLine(const ManifestRecord& r);

// The records of a manifest file in order; lines that are not records (an interrupted write)
// are skipped with a warning on stderr and counted in *skipped. Throws Error(kIo).
std::vector<ManifestRecord> ReadManifest(const std::string& path, int64_t* skipped);

class Manifest {
 public:
  // Opens `path` for appending (creating it); with `resume`, first reads its records.
  Manifest(const std::string& path, bool resume);
  ~Manifest();
  Manifest(const Manifest&) = delete;
  Manifest& operator=(const Manifest&) = delete;

  // True when the latest record of (input, output) says converted and the output still has
  // the recorded size.
  bool Done(const std::string& input, const std::string& output) const;
  // Appends the record with one write (thread-safe); throws Error(kIo) when it fails.
  void Append(const ManifestRecord& r);

 private:
  std::string path_;
  int fd_ = -1;
  std::unordered_map<std::string, int64_t> done_;  // input '\0' output -> bytes written
  int64_t stop_after_ = -1;                        // the stop hook, -1 when off
  std::atomic<int64_t> appended_{0};
};

// `tensorkit manifest summary [--json] FILE...`.
Subcommand AddManifest(CLI::App& app);

}  // namespace tensorkit::tools

#endif  // TENSORKIT_TOOLS_BATCH_H_
