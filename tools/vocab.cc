// tensorkit vocab fit|merge|build|lookup: vocabularies over files, as a map-reduce over shards.
//
//   vocab fit -o COUNTS.tsv [--member NAME] [--shard K/N|auto|auto/N] [--inputs-from FILE|-] IN...
//   vocab merge -o COUNTS.tsv COUNTS.tsv...
//   vocab build -o VOCAB.txt [--min-frequency N] [--max-tokens K] [--ties ...] [--mask M] COUNTS...
//   vocab lookup --vocab VOCAB.txt -o OUT [--dtype string|int64] [--num-oov N] [--mask M] IN
//   vocab sketch -o SKETCH.qsketch [--capacity K] [--member NAME] [--shard ...] IN...
//   vocab sketch-merge -o SKETCH.qsketch SKETCH...
//   vocab boundaries --buckets N [-o BOUNDARIES.npy] SKETCH...
//
// The sketch commands are the same map-reduce for Bucketize's quantile boundaries: a
// QuantileSketch per shard, merged, then the boundaries of N about equally full buckets.
#include <charconv>
#include <iostream>
#include <memory>
#include <mutex>

#include "tensorkit/common/file_util.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/features/quantiles.h"
#include "tensorkit/features/vocabulary.h"
#include "tensorkit/tools/batch.h"
#include "tensorkit/tools/tool.h"

namespace tensorkit::tools {
namespace {

struct Args {
  std::string out;
  std::vector<std::string> files;
  // fit
  std::string member;
  std::string shard;
  std::string inputs_from;
  // build
  int64_t min_frequency = 1;
  int64_t max_tokens = -1;
  std::string ties = "ascending";
  // build and lookup
  std::string mask;
  bool has_mask = false;
  // lookup
  std::string vocab;
  std::string dtype = "string";
  int64_t num_oov = 1;
  std::string oov_method = "floormod";
  // sketch and boundaries
  int capacity = QuantileSketch::kDefaultCapacity;
  int buckets = 0;
};

// The input list of a fit: the command line's files, then --inputs-from's, then only this
// shard's (tools/batch.h: a path's shard depends on the path alone).
std::vector<std::string> FitInputs(const Args& a, Shard* shard) {
  std::vector<std::string> all = a.files;
  if (!a.inputs_from.empty()) ReadInputList(a.inputs_from, &all);
  if (all.empty()) throw UsageError("vocab fit needs input files (or --inputs-from FILE)");
  *shard = a.shard.empty() ? Shard{} : ParseShard(a.shard);
  std::vector<std::string> mine;
  for (const std::string& f : all) {
    if (shard->count == 1 || ShardOf(f, shard->count) == shard->index) mine.push_back(f);
  }
  return mine;
}

// Reads every file in parallel and calls fn(i, data) for file i from the reading thread; a file
// that fails (to read, or in fn) is collected, and all failures are thrown together at the end.
template <typename Fn>
void ForEachInput(const std::vector<std::string>& files, const std::string& member, const Fn& fn) {
  std::vector<std::string> errors(files.size());
  io::ReadOptions options;
  options.member = member;
  ParallelFor(0, static_cast<int64_t>(files.size()), 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      try {
        fn(i, io::Read(files[i], options));
      } catch (const std::exception& ex) {
        errors[i] = ex.what();
      }
    }
  });
  std::string all;
  int64_t failed = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    if (errors[i].empty()) continue;
    ++failed;
    all += "\n  " + files[i] + ": " + errors[i];
  }
  TK_CHECK(failed == 0, kInvalidArgument, "vocab: ", failed, " of ", files.size(),
           " input(s) failed, nothing was written:", all);
}

int RunFit(const Args& a) {
  Shard shard;
  const std::vector<std::string> files = FitInputs(a, &shard);
  VocabularyCounter total;
  std::mutex mu;
  std::vector<int> kind(files.size(), -1);  // 0 strings, 1 integers, -1 unread
  int merged = -1;                          // the kind in `total`
  // Counts are exact sums: merging the files' counters in whatever order they finish gives the
  // same counts, and the file is written sorted. A mix of kinds is reported after the reads, by
  // the files' list order, so the message does not depend on which file finished first.
  ForEachInput(files, a.member, [&](int64_t i, const io::TensorData& d) {
    VocabularyCounter c;
    if (d.is_sparse()) {
      c.Add(d.sparse);
    } else {
      c.Add(d.dense);
    }
    std::lock_guard<std::mutex> lock(mu);
    kind[i] = c.dtype() == DType::kString ? 0 : 1;
    if (merged < 0) merged = kind[i];
    if (merged == kind[i]) total.Merge(c);
  });
  std::string first[2];
  for (size_t i = 0; i < files.size(); ++i) {
    if (kind[i] >= 0 && first[kind[i]].empty()) first[kind[i]] = files[i];
  }
  TK_CHECK(first[0].empty() || first[1].empty(), kDTypeMismatch, "vocab fit: '", first[0],
           "' holds strings but '", first[1],
           "' integers; fit strings and integers into separate counts files");
  total.Save(a.out);
  std::cout << "counted " << total.total_count() << " values, " << total.num_tokens()
            << " distinct " << (total.dtype() == DType::kString ? "strings" : "integers")
            << ", from " << files.size() << " file(s)"
            << (a.shard.empty() ? "" : " (shard " + shard.Text() + ")") << " into " << a.out
            << "\n";
  return kExitOk;
}

// load(files[i]) for every file, in parallel (counts files, sketches).
template <typename T, typename Load>
std::vector<T> LoadAll(const std::vector<std::string>& files, const Load& load) {
  std::vector<T> parts(files.size());
  ParallelFor(0, static_cast<int64_t>(files.size()), 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) parts[i] = load(files[i]);
  });
  return parts;
}

// parts[first..] merged into `total` in the files' order (a fixed order: sketch merges compact),
// a failed merge naming its file after `what`.
template <typename T>
T MergeInOrder(T total, const std::vector<T>& parts, size_t first,
               const std::vector<std::string>& files, const char* what) {
  for (size_t i = first; i < parts.size(); ++i) {
    try {
      total.Merge(parts[i]);
    } catch (const Error& e) {
      Throw(e.code(), what, ": '", files[i], "': ", e.what());
    }
  }
  return total;
}

VocabularyCounter MergeCounts(const std::vector<std::string>& files) {
  if (files.empty()) throw UsageError("vocab merge and vocab build need counts files");
  const std::vector<VocabularyCounter> parts = LoadAll<VocabularyCounter>(
      files, [](const std::string& f) { return VocabularyCounter::Load(f); });
  return MergeInOrder(VocabularyCounter(), parts, 0, files, "vocab merge");
}

int RunMerge(const Args& a) {
  const VocabularyCounter total = MergeCounts(a.files);
  total.Save(a.out);
  std::cout << "merged " << a.files.size() << " counts file(s): " << total.num_tokens()
            << " distinct tokens, " << total.total_count() << " values, into " << a.out << "\n";
  return kExitOk;
}

// --mask for a vocabulary of `dtype`.
void SetMask(const Args& a, DType dtype, LookupOptions* o) {
  if (!a.has_mask) return;
  if (dtype == DType::kString) {
    o->mask_token = a.mask;
    return;
  }
  int64_t v = 0;
  const auto r = std::from_chars(a.mask.data(), a.mask.data() + a.mask.size(), v);
  if (a.mask.empty() || r.ec != std::errc() || r.ptr != a.mask.data() + a.mask.size()) {
    throw UsageError("--mask '" + a.mask + "' is not an int64, which integer tokens need");
  }
  o->mask_value = v;
}

int RunBuild(const Args& a) {
  const VocabularyCounter total = MergeCounts(a.files);
  VocabularyFitOptions fit;
  fit.min_frequency = a.min_frequency;
  fit.max_tokens = a.max_tokens;
  fit.ties = a.ties == "descending" ? TieOrder::kValueDescending : TieOrder::kValueAscending;
  LookupOptions lookup;
  SetMask(a, total.dtype(), &lookup);
  const Vocabulary v = Vocabulary::Fit(total, fit, lookup);
  v.Save(a.out);
  std::cout << "kept " << v.size() << " of " << total.num_tokens() << " tokens into " << a.out
            << "\n";
  return kExitOk;
}

int RunLookup(const Args& a) {
  if (a.files.size() != 1) throw UsageError("vocab lookup needs one input file");
  const DType dtype = a.dtype == "int64" ? DType::kInt64 : DType::kString;
  LookupOptions lookup;
  lookup.num_oov_indices = a.num_oov;
  lookup.oov_method = a.oov_method == "farmhash" ? OovMethod::kFarmHash : OovMethod::kFloorMod;
  SetMask(a, dtype, &lookup);
  const Vocabulary v = Vocabulary::Load(a.vocab, dtype, lookup);
  io::ReadOptions options;
  options.member = a.member;
  const io::TensorData in = io::Read(a.files[0], options);
  io::TensorData out;
  if (in.is_sparse()) {
    out.sparse = v.Lookup(in.sparse);
  } else {
    out.dense = v.Lookup(in.dense);
  }
  io::Write(a.out, out);
  return kExitOk;
}

// --- quantile sketches ------------------------------------------------------------------------

void SaveSketch(const QuantileSketch& s, const std::string& path) {
  io::AtomicFile file(path);
  file.Write(s.ToBytes());
  file.Commit();
}

QuantileSketch LoadSketch(const std::string& path) {
  const std::vector<uint8_t> bytes = io::ReadWholeFile(path);
  try {
    return QuantileSketch::FromBytes(std::string(bytes.begin(), bytes.end()));
  } catch (const Error& e) {
    Throw(e.code(), "vocab: '", path, "': ", e.what());
  }
}

// The sketches of `files`, merged in the files' order: merges compact, so a fixed order makes
// the result the same however the reads were scheduled.
QuantileSketch MergeSketches(const std::vector<QuantileSketch>& parts,
                             const std::vector<std::string>& files) {
  if (parts.empty()) return QuantileSketch();
  return MergeInOrder(parts[0], parts, 1, files, "vocab");
}

int RunSketch(const Args& a) {
  Shard shard;
  const std::vector<std::string> files = FitInputs(a, &shard);
  std::vector<QuantileSketch> parts(files.size(), QuantileSketch(a.capacity));
  ForEachInput(files, a.member, [&](int64_t i, const io::TensorData& d) {
    TK_CHECK(!d.is_sparse() || d.sparse.dtype() != DType::kString, kDTypeMismatch,
             "vocab sketch: strings have no quantiles");
    parts[i].Add(d.is_sparse() ? d.sparse.values() : d.dense);
  });
  // From an empty sketch of the capacity asked for, so a shard without inputs still merges.
  const QuantileSketch total = MergeInOrder(QuantileSketch(a.capacity), parts, 0, files, "vocab");
  SaveSketch(total, a.out);
  std::cout << "sketched " << total.count() << " values from " << files.size() << " file(s)"
            << (a.shard.empty() ? "" : " (shard " + shard.Text() + ")") << ", rank error at most "
            << total.RankErrorBound() << ", into " << a.out << "\n";
  return kExitOk;
}

std::vector<QuantileSketch> LoadSketches(const std::vector<std::string>& files) {
  if (files.empty()) throw UsageError("vocab sketch-merge and vocab boundaries need sketches");
  return LoadAll<QuantileSketch>(files, LoadSketch);
}

int RunSketchMerge(const Args& a) {
  const std::vector<QuantileSketch> parts = LoadSketches(a.files);
  const QuantileSketch total = MergeSketches(parts, a.files);
  SaveSketch(total, a.out);
  std::cout << "merged " << a.files.size() << " sketch(es): " << total.count()
            << " values, rank error at most " << total.RankErrorBound() << ", into " << a.out
            << "\n";
  return kExitOk;
}

int RunBoundaries(const Args& a) {
  const std::vector<QuantileSketch> parts = LoadSketches(a.files);
  const QuantileSketch total = MergeSketches(parts, a.files);
  const std::vector<float> b = total.Boundaries(a.buckets);
  if (!a.out.empty()) io::Write(a.out, Tensor::FromVector(b));
  std::cout << b.size() << " boundaries of " << a.buckets << " buckets over " << total.count()
            << " values (rank error at most " << total.RankErrorBound() << "):";
  for (float x : b) std::cout << " " << x;
  std::cout << "\n";
  return kExitOk;
}

// The subcommands of vocab, in the order help lists them; their options all set one Args.

// A required -o: the file the subcommand writes.
void CountsOutput(CLI::App* s, Args* args, const char* what) {
  s->add_option("-o,--output", args->out, what)->required();
}

CLI::App* AddFit(CLI::App* vocab, Args* args) {
  CLI::App* fit = vocab->add_subcommand(
      "fit", "Count the values of .npy/.npz files (strings or integers) into a counts file");
  CountsOutput(fit, args, "The counts file to write");
  fit->add_option("files", args->files, "Input files (dense or sparse; their values count)");
  fit->add_option("--member", args->member, ".npz: the array to read (default: the first)");
  fit->add_option("--shard", args->shard,
                  "Count only shard K of N of the inputs (K/N, auto, auto/N as for convert)");
  fit->add_option("--inputs-from", args->inputs_from,
                  "Read input paths from FILE, one a line (- for standard input)");
  return fit;
}

CLI::App* AddMerge(CLI::App* vocab, Args* args) {
  CLI::App* merge = vocab->add_subcommand("merge", "Add up counts files (the shards of a fit)");
  CountsOutput(merge, args, "The merged counts file to write");
  merge->add_option("files", args->files, "Counts files")->required();
  return merge;
}

CLI::App* AddBuild(CLI::App* vocab, Args* args) {
  CLI::App* build = vocab->add_subcommand(
      "build", "Write the vocabulary file (one token a line, TensorFlow's format) of counts");
  CountsOutput(build, args, "The vocabulary file to write");
  build->add_option("files", args->files, "Counts files (added up first)")->required();
  build
      ->add_option("--min-frequency", args->min_frequency,
                   "Keep tokens counted at least N times (default 1)")
      ->check(CLI::Range(int64_t{1}, INT64_MAX));
  build
      ->add_option("--max-tokens", args->max_tokens,
                   "Keep at most K tokens, the most frequent (default: all; the mask and OOV "
                   "ids do not count, unlike Keras's max_tokens)")
      ->check(CLI::Range(int64_t{0}, INT64_MAX));
  build
      ->add_option("--ties", args->ties,
                   "Order of tokens with equal counts: ascending (default) or descending "
                   "(Keras's adapt)")
      ->check(CLI::IsMember({"ascending", "descending"}));
  return build;
}

CLI::App* AddLookup(CLI::App* vocab, Args* args) {
  CLI::App* lookup = vocab->add_subcommand(
      "lookup", "Write the Keras StringLookup/IntegerLookup ids (int64) of a file's values");
  lookup->add_option("--vocab", args->vocab, "The vocabulary file")->required();
  CountsOutput(lookup, args, "The ids file to write (.npy, or .npz for a sparse input)");
  lookup->add_option("files", args->files, "The input file");
  lookup->add_option("--member", args->member, ".npz: the array to read (default: the first)");
  lookup->add_option("--dtype", args->dtype, "The vocabulary's tokens: string (default) or int64")
      ->check(CLI::IsMember({"string", "int64"}));
  lookup->add_option("--num-oov", args->num_oov, "OOV ids (num_oov_indices, default 1)")
      ->check(CLI::Range(int64_t{0}, INT64_MAX));
  lookup
      ->add_option("--oov-method", args->oov_method,
                   "Integer OOV buckets: floormod (default) or farmhash (Keras's oov_method)")
      ->check(CLI::IsMember({"floormod", "farmhash"}));
  return lookup;
}

CLI::App* AddSketch(CLI::App* vocab, Args* args) {
  CLI::App* sketch = vocab->add_subcommand(
      "sketch", "Summarise the numbers of .npy/.npz files in a quantile sketch (for Bucketize)");
  CountsOutput(sketch, args, "The sketch file to write");
  sketch->add_option("files", args->files, "Input files (dense or sparse; their values count)");
  sketch->add_option("--member", args->member, ".npz: the array to read (default: the first)");
  sketch->add_option("--shard", args->shard,
                     "Sketch only shard K of N of the inputs (K/N, auto, auto/N as for convert)");
  sketch->add_option("--inputs-from", args->inputs_from,
                     "Read input paths from FILE, one a line (- for standard input)");
  sketch
      ->add_option("--capacity", args->capacity,
                   "Items per level (even, 8..2^24, default 4096); sketches that merge need the "
                   "same capacity; the rank error shrinks as it grows")
      ->check(CLI::Range(8, 1 << 24));
  return sketch;
}

CLI::App* AddSketchMerge(CLI::App* vocab, Args* args) {
  CLI::App* sketch_merge =
      vocab->add_subcommand("sketch-merge", "Merge quantile sketches (the shards of a sketch)");
  CountsOutput(sketch_merge, args, "The merged sketch file to write");
  sketch_merge->add_option("files", args->files, "Sketch files")->required();
  return sketch_merge;
}

CLI::App* AddBoundaries(CLI::App* vocab, Args* args) {
  CLI::App* boundaries = vocab->add_subcommand(
      "boundaries", "Print (and write as float32 .npy) Bucketize boundaries from sketches");
  boundaries->add_option("-o,--output", args->out, "The .npy file of the boundaries to write");
  boundaries->add_option("files", args->files, "Sketch files (merged first)")->required();
  boundaries->add_option("--buckets", args->buckets, "The number of buckets")
      ->required()
      ->check(CLI::Range(1, 1 << 30));
  return boundaries;
}

}  // namespace

Subcommand AddVocab(CLI::App& app) {
  auto args = std::make_shared<Args>();
  CLI::App* vocab = app.add_subcommand(
      "vocab",
      "Vocabularies of string or integer values: count files (in shards), merge counts, "
      "build a TensorFlow vocabulary file, look values up");
  vocab->require_subcommand(1);
  CLI::App* fit = AddFit(vocab, args.get());
  CLI::App* merge = AddMerge(vocab, args.get());
  CLI::App* build = AddBuild(vocab, args.get());
  CLI::App* lookup = AddLookup(vocab, args.get());
  CLI::App* sketch = AddSketch(vocab, args.get());
  CLI::App* sketch_merge = AddSketchMerge(vocab, args.get());
  CLI::App* boundaries = AddBoundaries(vocab, args.get());
  for (CLI::App* s : {build, lookup}) {
    s->add_option("--mask", args->mask, "The mask token (id 0), never a token of the vocabulary")
        ->each([args](const std::string&) { args->has_mask = true; });
  }
  vocab->footer(
      "A map-reduce over many files: `vocab fit --shard K/N -o counts-K.tsv` on each worker, "
      "then `vocab build -o vocab.txt counts-*.tsv`.\nExit codes: 0 ok, 1 failed, 2 usage "
      "error.");
  return {vocab, [args, fit, merge, build, lookup, sketch, sketch_merge, boundaries]() {
            if (fit->parsed()) return RunFit(*args);
            if (sketch->parsed()) return RunSketch(*args);
            if (sketch_merge->parsed()) return RunSketchMerge(*args);
            if (boundaries->parsed()) return RunBoundaries(*args);
            if (merge->parsed()) return RunMerge(*args);
            if (build->parsed()) return RunBuild(*args);
            if (lookup->parsed()) return RunLookup(*args);
            return kExitUsage;
          }};
}

}  // namespace tensorkit::tools
