// tensorkit convert IN OUT [--reorder] [--coalesce]
// tensorkit convert --to EXT -o OUTDIR [--resume] IN...   (batch, files in parallel)
//     [--shard K/N|auto] [--inputs-from FILE|-] [--manifest FILE]  (see tools/batch.h)
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>

#include "tensorkit/common/file_util.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/tools/batch.h"
#include "tensorkit/tools/tool.h"

namespace tensorkit::tools {
namespace {

struct Args {
  std::vector<std::string> files;
  std::string to;
  std::string out_dir;
  bool resume = false;
  ConvertOptions options;
  BatchOptions batch;
};

// One line per finished file, or a redrawn bar when stderr is a terminal.
class Progress {
 public:
  explicit Progress(size_t total) : total_(total), tty_(::isatty(STDERR_FILENO) == 1) {}

  void Done(const std::string& in, const std::string& out, const char* what) {
    std::lock_guard<std::mutex> lock(mu_);
    ++done_;
    if (tty_) {
      constexpr int kWidth = 30;
      const int filled = static_cast<int>(kWidth * done_ / std::max<size_t>(total_, 1));
      std::fprintf(stderr, "\r\033[K[%s%s] %zu/%zu %s", std::string(filled, '#').c_str(),
                   std::string(kWidth - filled, '.').c_str(), done_, total_, in.c_str());
      if (done_ == total_) std::fprintf(stderr, "\n");
    } else {
      std::fprintf(stderr, "[%zu/%zu] %s %s -> %s\n", done_, total_, what, in.c_str(), out.c_str());
    }
    std::fflush(stderr);
  }

 private:
  size_t total_;
  bool tty_;
  std::mutex mu_;
  size_t done_ = 0;
};

enum class Outcome { kConverted, kSkipped, kFailed };

int RunSingle(const Args& a) {
  if (a.files.size() != 2) {
    throw UsageError("convert needs IN OUT, or --to EXT -o OUTDIR IN... for a batch (got " +
                     std::to_string(a.files.size()) + " file arguments)");
  }
  if (a.resume) io::RemoveStaleTemporaries({a.files[1]});  // what a killed run left
  if (a.resume && io::FileExists(a.files[1])) {
    std::cerr << "skipped " << a.files[0] << ": " << a.files[1] << " exists (--resume)\n";
    return kExitOk;
  }
  ConvertFile(a.files[0], a.files[1], a.options);
  return kExitOk;
}

int RunBatch(const Args& a) {
  const std::string ext = NormalizeExtension(a.to);
  if (a.out_dir.empty()) throw UsageError("a batch (--to) needs an output folder: -o OUTDIR");
  const BatchPlan plan = PlanBatch(a.files, a.batch, a.out_dir, ext);  // refuses clashes first
  const std::vector<std::string>& files = plan.inputs;
  const std::vector<std::string>& outs = plan.outputs;
  std::error_code ec;
  std::filesystem::create_directories(a.out_dir, ec);
  TK_CHECK(!ec, kIo, "convert: cannot create the output folder '", a.out_dir, "': ", ec.message());
  std::unique_ptr<Manifest> manifest;
  if (!a.batch.manifest.empty()) manifest = std::make_unique<Manifest>(a.batch.manifest, a.resume);
  const size_t n = files.size();
  std::vector<std::string> errors(n);
  std::vector<Outcome> outcome(n, Outcome::kConverted);
  if (a.resume) io::RemoveStaleTemporaries(outs);  // what a killed run left
  Progress progress(n);
  ParallelFor(0, static_cast<int64_t>(n), 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      // With a manifest, --resume trusts its records rather than the outputs' existence.
      if (a.resume && (manifest ? manifest->Done(files[i], outs[i]) : io::FileExists(outs[i]))) {
        outcome[i] = Outcome::kSkipped;
      } else {
        ManifestRecord r = ConvertRecorded(files[i], outs[i], a.options, plan.shard);
        if (!r.converted()) {  // keep going: report it at the end
          outcome[i] = Outcome::kFailed;
          errors[i] = r.error;
        }
        if (manifest) manifest->Append(r);
      }
      static const char* kWhat[] = {"converted", "skipped (done)", "FAILED"};
      progress.Done(files[i], outs[i], kWhat[static_cast<int>(outcome[i])]);
    }
  });
  size_t counts[3] = {0, 0, 0};
  for (Outcome o : outcome) ++counts[static_cast<int>(o)];
  std::cout << "converted " << counts[0] << ", skipped " << counts[1] << ", failed " << counts[2]
            << " of " << n << " file(s)"
            << (a.batch.shard.empty() ? ""
                                      : " (shard " + plan.shard.Text() + " of " +
                                            std::to_string(plan.total) + " inputs)")
            << " into " << a.out_dir << "\n";
  if (counts[2] == 0) return kExitOk;
  std::cerr << "failures:\n";
  for (size_t i = 0; i < n; ++i) {
    if (outcome[i] == Outcome::kFailed) std::cerr << "  " << files[i] << ": " << errors[i] << "\n";
  }
  return kExitFailed;
}

}  // namespace

Subcommand AddConvert(CLI::App& app) {
  auto args = std::make_shared<Args>();
  CLI::App* sub = app.add_subcommand(
      "convert",
      "Convert IN to OUT (formats from the extensions), or with --to a batch of files into "
      "OUTDIR in parallel");
  sub->add_option("files", args->files, "IN OUT, or the inputs of a batch");
  sub->add_option("--to", args->to,
                  "Batch mode: the output format (" + io::FormatList("", ", ", ", ") + ")");
  sub->add_option("-o,--output-dir", args->out_dir, "Batch mode: the output folder");
  sub->add_flag("--resume", args->resume,
                "Skip outputs that already exist (with --manifest: inputs it records as done)");
  sub->add_flag("--reorder", args->options.reorder,
                "Sort sparse entries in C order (row-major) before writing");
  sub->add_flag("--coalesce", args->options.coalesce,
                "Sort sparse entries and sum duplicates before writing");
  sub->add_flag("--compress", args->options.compress, "Deflate .npz members");
  const std::map<std::string, io::IndexBase> bases = {
      {"auto", io::IndexBase::kAuto}, {"zero", io::IndexBase::kZero}, {"one", io::IndexBase::kOne}};
  sub->add_option("--index-base", args->options.index_base,
                  "How .svm indices count: auto (scikit-learn's rule: 1-based when no index is "
                  "0), zero or one")
      ->transform(CLI::CheckedTransformer(bases, CLI::ignore_case));
  sub->add_flag("--multilabel", args->options.multilabel,
                ".svm inputs: labels are comma-separated lists (scikit-learn's multilabel)");
  sub->add_option("--compression", args->options.compression,
                  "TFRecord inputs: auto (told from the first bytes), NONE, GZIP or ZLIB")
      ->check(CLI::IsMember({"auto", "NONE", "GZIP", "ZLIB"}));
  AddBatchOptions(sub, &args->batch);
  sub->footer(
      "Dense inputs become sparse for .mtx/.tns outputs (nonzeros); sparse inputs become dense "
      "for .npy outputs.\nA batch keeps going past failures, lists them at the end and exits 1 "
      "if any failed.\nExit codes: 0 ok, 1 failed, 2 usage error.");
  return {sub, [args]() {
            const bool batch =
                !args->to.empty() || !args->out_dir.empty() || args->batch.Requested();
            return batch ? RunBatch(*args) : RunSingle(*args);
          }};
}

}  // namespace tensorkit::tools
