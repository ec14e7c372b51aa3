// Manifests: recording each input of a batch, resuming from them, and their merged summary.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <type_traits>

#include "tensorkit/common/file_util.h"
#include "tensorkit/tools/batch.h"
#include "tensorkit/tools/json.h"

namespace tensorkit::tools {
namespace {

namespace fs = std::filesystem;

int64_t SizeOr0(const std::string& path) {
  std::error_code ec;
  const auto n = fs::file_size(path, ec);
  return ec ? 0 : static_cast<int64_t>(n);
}

std::string Key(const std::string& input, const std::string& output) {
  return input + '\0' + output;
}

// The stop hook's N, or -1.
int64_t StopAfter() {
  const char* v = std::getenv("TENSORKIT_BATCH_STOP_AFTER");
  if (v == nullptr || *v == '\0') return -1;
  char* end = nullptr;
  const long long n = std::strtoll(v, &end, 10);
  return (end != v && *end == '\0' && n > 0) ? n : -1;
}

// A record from a parsed line; false when a required field is missing or has the wrong kind.
bool ToRecord(const std::map<std::string, JsonValue>& m, ManifestRecord* r) {
  const auto text = [&](const char* k, std::string* out, bool required) {
    auto it = m.find(k);
    if (it == m.end() || it->second.kind == JsonValue::Kind::kNull) return !required;
    if (it->second.kind != JsonValue::Kind::kString) return false;
    *out = it->second.text;
    return true;
  };
  const auto number = [&](const char* k, auto* out) {
    auto it = m.find(k);
    if (it == m.end()) return true;
    using T = std::remove_pointer_t<decltype(out)>;
    const double v = it->second.number;
    if (it->second.kind != JsonValue::Kind::kNumber) return false;
    if (std::is_integral_v<T> && !(std::abs(v) < 9e18)) return false;  // the cast would be UB
    *out = static_cast<T>(v);
    return true;
  };
  return text("input", &r->input, true) && text("output", &r->output, true) &&
         text("status", &r->status, true) && text("error", &r->error, false) &&
         text("shard", &r->shard, false) && number("bytes_read", &r->bytes_read) &&
         number("bytes_written", &r->bytes_written) && number("start", &r->start) &&
         number("seconds", &r->seconds);
}

// ---------------------------------------------------------------------------------------------
// manifest summary
// ---------------------------------------------------------------------------------------------

struct SummaryArgs {
  std::vector<std::string> files;
  bool json = false;
};

struct Totals {
  size_t files = 0, records = 0, inputs = 0, converted = 0, failed = 0;
  int64_t skipped_lines = 0, bytes_read = 0, bytes_written = 0;
  double span = 0, busy = 0, summed = 0;
  std::vector<const ManifestRecord*> failures;  // the final record of each failed input
};

// Seconds during which at least one conversion ran: the union of [start, start + seconds].
double BusySeconds(std::vector<std::pair<double, double>> spans) {
  std::sort(spans.begin(), spans.end());
  double busy = 0, lo = 0, hi = -1;
  for (auto [s, e] : spans) {
    if (s > hi) {
      busy += std::max(0.0, hi - lo);
      lo = s;
      hi = e;
    } else {
      hi = std::max(hi, e);
    }
  }
  return busy + std::max(0.0, hi - lo);
}

Totals Summarize(const std::vector<ManifestRecord>& records) {
  Totals t;
  t.records = records.size();
  // Each (input, output)'s latest record is its state; ties go to the later line.
  std::unordered_map<std::string, size_t> latest;
  std::vector<std::pair<double, double>> spans;
  double first = 0, last = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    const ManifestRecord& r = records[i];
    auto [it, fresh] = latest.emplace(Key(r.input, r.output), i);
    if (!fresh && r.start >= records[it->second].start) it->second = i;
    t.bytes_read += r.bytes_read;
    t.bytes_written += r.bytes_written;
    t.summed += r.seconds;
    spans.emplace_back(r.start, r.start + r.seconds);
    first = i == 0 ? r.start : std::min(first, r.start);
    last = i == 0 ? r.start + r.seconds : std::max(last, r.start + r.seconds);
  }
  t.span = last - first;
  t.busy = BusySeconds(std::move(spans));
  t.inputs = latest.size();
  std::vector<size_t> order;
  for (const auto& [key, i] : latest) {
    if (records[i].converted()) {
      ++t.converted;
    } else {
      ++t.failed;
      order.push_back(i);
    }
  }
  std::sort(order.begin(), order.end());  // failures in manifest order
  for (size_t i : order) t.failures.push_back(&records[i]);
  return t;
}

int RunSummary(const SummaryArgs& a) {
  std::vector<ManifestRecord> records;
  Totals t;
  for (const std::string& f : a.files) {
    int64_t skipped = 0;
    std::vector<ManifestRecord> r = ReadManifest(f, &skipped);
    records.insert(records.end(), std::make_move_iterator(r.begin()),
                   std::make_move_iterator(r.end()));
    t.skipped_lines += skipped;
  }
  const int64_t skipped_lines = t.skipped_lines;
  t = Summarize(records);
  t.files = a.files.size();
  t.skipped_lines = skipped_lines;
  const double mb = 1e6;
  const auto rate = [&](double x) { return t.busy > 0 ? x / t.busy : 0.0; };
  char buf[512];
  if (a.json) {
    std::string out = "{";
    std::snprintf(buf, sizeof(buf),
                  "\"manifests\": %zu, \"records\": %zu, \"skipped_lines\": %lld, \"inputs\": %zu, "
                  "\"converted\": %zu, \"failed\": %zu, \"bytes_read\": %lld, "
                  "\"bytes_written\": %lld, \"span_seconds\": %.6f, \"busy_seconds\": %.6f, "
                  "\"summed_seconds\": %.6f, \"files_per_second\": %.3f, "
                  "\"read_mb_per_second\": %.3f, \"written_mb_per_second\": %.3f, \"failures\": [",
                  t.files, t.records, static_cast<long long>(t.skipped_lines), t.inputs,
                  t.converted, t.failed, static_cast<long long>(t.bytes_read),
                  static_cast<long long>(t.bytes_written), t.span, t.busy, t.summed,
                  rate(static_cast<double>(t.records)), rate(t.bytes_read / mb),
                  rate(t.bytes_written / mb));
    out += buf;
    for (size_t i = 0; i < t.failures.size(); ++i) {
      out += (i ? ", " : "") + std::string("{\"input\": ") + JsonQuote(t.failures[i]->input) +
             ", \"error\": " + JsonQuote(t.failures[i]->error) + "}";
    }
    std::cout << out << "]}\n";
  } else {
    std::snprintf(buf, sizeof(buf),
                  "%zu manifest(s), %zu record(s) of %zu input(s)\n"
                  "inputs: converted %zu, failed %zu\n"
                  "data: read %.1f MB, wrote %.1f MB\n"
                  "time: %.2f s from the first start to the last finish, %.2f s with a "
                  "conversion running, %.2f s summed over conversions\n"
                  "throughput: %.1f files/s, %.1f MB/s read, %.1f MB/s written (while running)\n",
                  t.files, t.records, t.inputs, t.converted, t.failed, t.bytes_read / mb,
                  t.bytes_written / mb, t.span, t.busy, t.summed,
                  rate(static_cast<double>(t.records)), rate(t.bytes_read / mb),
                  rate(t.bytes_written / mb));
    std::cout << buf;
    if (t.skipped_lines > 0) std::cout << "skipped " << t.skipped_lines << " line(s) not records\n";
    if (!t.failures.empty()) {
      std::cout << "failures:\n";
      for (const ManifestRecord* r : t.failures)
        std::cout << "  " << r->input << ": " << r->error << "\n";
    }
  }
  return t.failed == 0 ? kExitOk : kExitFailed;
}

}  // namespace

ManifestRecord ConvertRecorded(const std::string& in, const std::string& out,
                               const ConvertOptions& options, const Shard& shard) {
  ManifestRecord r;
  r.input = in;
  r.output = out;
  r.shard = shard.Text();
  r.start =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const auto t0 = std::chrono::steady_clock::now();
  r.bytes_read = SizeOr0(in);
  try {
    ConvertFile(in, out, options);
    r.status = "converted";
    r.bytes_written = SizeOr0(out);
  } catch (const std::exception& ex) {  // the batch keeps going: the record holds the reason
    r.status = "failed";
    r.error = ex.what();
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

std::string ManifestLine(const ManifestRecord& r) {
  char nums[160];
  std::snprintf(nums, sizeof(nums),
                ", \"bytes_read\": %lld, \"bytes_written\": %lld, \"start\": %.6f, "
                "\"seconds\": %.6f, \"shard\": ",
                static_cast<long long>(r.bytes_read), static_cast<long long>(r.bytes_written),
                r.start, r.seconds);
  return "{\"input\": " + JsonQuote(r.input) + ", \"output\": " + JsonQuote(r.output) +
         ", \"status\": " + JsonQuote(r.status) + nums + JsonQuote(r.shard) +
         ", \"error\": " + (r.error.empty() ? std::string("null") : JsonQuote(r.error)) + "}\n";
}

std::vector<ManifestRecord> ReadManifest(const std::string& path, int64_t* skipped) {
  const std::vector<uint8_t> bytes = io::ReadWholeFile(path);
  const std::string_view all(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  std::vector<ManifestRecord> records;
  int64_t line_no = 0;
  for (size_t at = 0; at < all.size();) {
    size_t nl = all.find('\n', at);
    if (nl == std::string_view::npos) nl = all.size();
    const std::string_view line = all.substr(at, nl - at);
    at = nl + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    std::map<std::string, JsonValue> m;
    std::string why;
    ManifestRecord r;
    if (!ParseFlatJsonObject(line, &m, &why)) {
      ++*skipped;
      std::cerr << "tensorkit: manifest '" << path << "' line " << line_no << ": not a record ("
                << why << "; a write was interrupted?); skipped\n";
    } else if (!ToRecord(m, &r)) {
      ++*skipped;
      std::cerr << "tensorkit: manifest '" << path << "' line " << line_no
                << ": a record needs the strings input, output and status and numeric sizes "
                   "and times; skipped\n";
    } else {
      records.push_back(std::move(r));
    }
  }
  return records;
}

Manifest::Manifest(const std::string& path, bool resume) : path_(path), stop_after_(StopAfter()) {
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  TK_CHECK(fd_ >= 0, kIo, "convert: cannot open the manifest '", path,
           "' for appending: ", std::strerror(errno), " (does its folder exist?)");
  // A line cut short by a crash must not swallow the next record: end it first.
  const off_t size = ::lseek(fd_, 0, SEEK_END);
  char last = '\n';
  if (size > 0 && ::pread(fd_, &last, 1, size - 1) == 1 && last != '\n') {
    if (::write(fd_, "\n", 1) != 1) {
      const int err = errno;
      ::close(fd_);
      Throw(ErrorCode::kIo, "convert: cannot append to the manifest '", path,
            "': ", std::strerror(err));
    }
  }
  if (!resume) return;
  int64_t skipped = 0;
  std::unordered_map<std::string, std::pair<double, const ManifestRecord*>> latest;
  const std::vector<ManifestRecord> records = ReadManifest(path, &skipped);
  for (const ManifestRecord& r : records) {
    auto [it, fresh] = latest.emplace(Key(r.input, r.output), std::make_pair(r.start, &r));
    if (!fresh && r.start >= it->second.first) it->second = {r.start, &r};
  }
  for (const auto& [key, v] : latest) {
    if (v.second->converted()) done_.emplace(key, v.second->bytes_written);
  }
}

Manifest::~Manifest() {
  if (fd_ >= 0) ::close(fd_);
}

bool Manifest::Done(const std::string& input, const std::string& output) const {
  auto it = done_.find(Key(input, output));
  if (it == done_.end()) return false;
  std::error_code ec;
  const auto size = fs::file_size(output, ec);
  return !ec && static_cast<int64_t>(size) == it->second;
}

void Manifest::Append(const ManifestRecord& r) {
  const std::string line = ManifestLine(r);
  // One write: with O_APPEND the kernel places it at the end as a whole, so the lines of
  // threads (and of processes sharing a local file) never interleave. A short write (a full
  // disk) is finished rather than left as half a line.
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    TK_CHECK(n > 0, kIo, "convert: cannot append to the manifest '", path_,
             "': ", std::strerror(errno),
             "; the outputs written so far are complete, rerun with "
             "--resume once the manifest's disk has room");
    done += static_cast<size_t>(n);
  }
  if (stop_after_ > 0 && ++appended_ == stop_after_) ::raise(SIGSTOP);
}

Subcommand AddManifest(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("manifest", "Work with the manifests of batch conversions");
  sub->require_subcommand(1);
  auto args = std::make_shared<SummaryArgs>();
  CLI::App* summary = sub->add_subcommand(
      "summary", "Merge manifests (e.g. one per shard): counts, failures and throughput");
  summary->add_option("files", args->files, "The manifests (.jsonl)")->required();
  summary->add_flag("--json", args->json, "Print one JSON object");
  const char* footer =
      "An input's latest record is its state (a rerun's record replaces a failure). Throughput "
      "is over the time at least one conversion ran.\nExit codes: 0 every input converted, 1 "
      "an input failed or a manifest is unreadable, 2 usage error.";
  sub->footer(footer);
  summary->footer(footer);
  return {sub, [args]() { return RunSummary(*args); }};
}

}  // namespace tensorkit::tools
