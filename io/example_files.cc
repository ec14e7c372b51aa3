// TFRecord files of tf.Example records read a batch at a time: SummarizeExampleFile, and
// ConvertExamplesToNpz into an .npz of ragged feature arrays, in two passes over the records. Pass
// 1 (SummarizeExamples) finds every key, its list type and, per batch, its values and bytes, so
// every member's size and each batch's place in it are known; pass 2 parses each batch as
// VarLenFeatures and writes its pieces at their places (StreamedNpyMember). Memory: one batch of
// records and its parse.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tensorkit/common/alloc_fault.h"
#include "tensorkit/common/error.h"
#include "tensorkit/common/file_util.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/io/formats.h"
#include "tensorkit/io/tf_example.h"
#include "tensorkit/io/tfrecord.h"

namespace tensorkit::io {
namespace {

constexpr const char* kOp = "ConvertExamplesToNpz";
// A batch ends at whichever comes first: these records, or these bytes of them.
constexpr int64_t kBatchRecords = int64_t{1} << 16;
constexpr int64_t kBatchBytes = int64_t{64} << 20;

// The records of a TFRecord file a batch at a time (at least one record a batch until the file
// is done): views into the mapped file when it is uncompressed, whose pages are given back once
// the batch is done with; copies otherwise (a compressed reader's view lasts one record).
class RecordBatches {
 public:
  RecordBatches(const std::string& path, const TFRecordOptions& options)
      : reader_(TFRecordReader::Open(path, options)),
        copy_(options.compression != TFRecordCompression::kNone) {}

  // The next batch into records(); false when no record is left.
  bool Next() {
    reader_.ReleaseRead();  // the previous batch's pages
    views_.clear();
    buffer_.clear();
    std::vector<int64_t> ends;       // of the copies in buffer_
    alloc_fault::MaybeFailBuffer();  // the batch's buffers
    bytes_ = 0;
    std::string_view r;
    while (static_cast<int64_t>(views_.size()) < kBatchRecords && bytes_ < kBatchBytes &&
           reader_.Next(&r)) {
      bytes_ += static_cast<int64_t>(r.size());
      if (copy_) {
        buffer_.append(r);
        ends.push_back(static_cast<int64_t>(buffer_.size()));
      }
      views_.push_back(r);
    }
    for (size_t i = 0; copy_ && i < views_.size(); ++i) {  // buffer_ no longer moves
      const int64_t begin = i == 0 ? 0 : ends[i - 1];
      views_[i] = std::string_view(buffer_).substr(begin, ends[i] - begin);
    }
    return !views_.empty();
  }
  const std::vector<std::string_view>& records() const { return views_; }
  int64_t size() const { return static_cast<int64_t>(views_.size()); }
  int64_t bytes() const { return bytes_; }  // of the batch's records

 private:
  TFRecordReader reader_;
  bool copy_;
  std::string buffer_;
  std::vector<std::string_view> views_;
  int64_t bytes_ = 0;
};

// Runs body() on the batch whose first record is `first`, naming the records in an Error
// (the parsers count records from the batch's start).
template <typename Body>
void InBatch(const char* op, const std::string& path, int64_t first, int64_t n, const Body& body) {
  try {
    body();
  } catch (const Error& e) {
    Throw(e.code(), op, ": '", path, "' records ", first, " to ", first + n - 1,
          " (the record numbers below count from ", first, "): ", e.what());
  }
}

const char* ListName(DType dtype) {
  return dtype == DType::kInt64 ? "int64_list"
                                : (dtype == DType::kFloat32 ? "float_list" : "bytes_list");
}

// One feature's place in the output: per batch, its first value and first byte (exclusive
// running sums, totals last).
struct Plan {
  DType dtype = DType::kInt64;
  std::vector<int64_t> value0, byte0;
};

// Pass 1: every key's list type and where each batch's values go.
std::map<std::string, Plan> PlanFeatures(const std::string& path, const TFRecordOptions& options,
                                         std::vector<int64_t>* record0) {
  std::map<std::string, Plan> plans;
  RecordBatches batch(path, options);
  record0->assign(1, 0);
  for (size_t b = 0; batch.Next(); ++b) {
    std::vector<ExampleFeatureSummary> sums;
    InBatch(kOp, path, record0->back(), batch.size(),
            [&] { sums = SummarizeExamples(batch.records()); });
    for (const ExampleFeatureSummary& s : sums) {
      auto [it, added] = plans.try_emplace(s.key);
      Plan& p = it->second;
      if (added) p.dtype = s.dtype;
      TK_CHECK(!s.mixed_types && p.dtype == s.dtype, kInvalidArgument, kOp, ": '", path,
               "': feature '", Excerpt(s.key), "' is a ", ListName(p.dtype),
               " first and another list type in records ", record0->back(), " to ",
               record0->back() + batch.size() - 1,
               "; one array cannot hold two types: write that feature with one list type");
      p.value0.resize(b + 2, 0);  // batches before this one without the key hold nothing
      p.byte0.resize(b + 2, 0);
      p.value0[b + 1] = s.values;
      p.byte0[b + 1] = s.bytes;
    }
    record0->push_back(record0->back() + batch.size());
  }
  const size_t batches = record0->size() - 1;
  for (auto& [key, p] : plans) {
    p.value0.resize(batches + 1, 0);
    p.byte0.resize(batches + 1, 0);
    for (size_t b = 0; b < batches; ++b) {
      p.value0[b + 1] += p.value0[b];
      p.byte0[b + 1] += p.byte0[b];
    }
  }
  return plans;
}

// The members of one feature: row_splits, values and, for bytes, value_splits.
struct Members {
  StreamedNpyMember row_splits, values;
  std::optional<StreamedNpyMember> value_splits;
};

// The body of ConvertExamplesToNpz, whose standard containers may throw std::bad_alloc.
void ConvertUnguarded(const std::string& in, const std::string& out,
                      const TFRecordOptions& options);

}  // namespace

ExampleFileSummary SummarizeExampleFile(const std::string& path, const TFRecordOptions& options,
                                        bool count_lengths) {
  const std::string op = "SummarizeExampleFile: '" + path + "'";
  return alloc_fault::ReportingAllocationFailure(op.c_str(), [&] {
    ExampleFileSummary out;
    RecordBatches batch(path, options);
    while (batch.Next()) {
      InBatch("SummarizeExampleFile", path, out.records, batch.size(), [&] {
        MergeExampleSummaries(&out.features, SummarizeExamples(batch.records(), count_lengths));
      });
      out.records += batch.size();
      out.bytes += batch.bytes();
    }
    return out;
  });
}

void ConvertExamplesToNpz(const std::string& in, const std::string& out,
                          const TFRecordOptions& options) {
  const std::string op = std::string(kOp) + ": '" + in + "'";
  alloc_fault::ReportingAllocationFailure(op.c_str(), [&] { ConvertUnguarded(in, out, options); });
}

namespace {

// Each feature's members reserved in the archive (row_splits, values, and value_splits for
// bytes), in key order, and *spec made of the features as VarLenFeatures in the same order.
std::vector<Members> ReserveMembers(const std::map<std::string, Plan>& plans, int64_t records,
                                    size_t batches, ZipWriter* zip, AtomicFile* file,
                                    ExampleSpec* spec) {
  const std::string zero(8, '\0');  // the leading 0 of row_splits and value_splits
  std::vector<Members> members;
  members.reserve(plans.size());
  for (const auto& [key, p] : plans) {
    spec->var_len.push_back(VarLenFeature{key, p.dtype});
    const bool bytes = p.dtype == DType::kString;
    members.push_back(
        Members{StreamedNpyMember(zip, file, key + ".row_splits", DType::kInt64, records + 1, zero,
                                  batches),
                StreamedNpyMember(zip, file, key + ".values", bytes ? DType::kUInt8 : p.dtype,
                                  bytes ? p.byte0.back() : p.value0.back(), "", batches),
                std::nullopt});
    if (bytes) {
      members.back().value_splits.emplace(zip, file, key + ".value_splits", DType::kInt64,
                                          p.value0.back() + 1, zero, batches);
    }
  }
  return members;
}

// Batch b's pieces of feature `key` (parsed as j, `n` records from record `first`) put at their
// places in its members; a batch that differs from pass 1's plan is an Error.
void PutBatch(const std::string& in, const std::string& key, const Plan& p, const JaggedTensor& j,
              size_t b, int64_t first, int64_t n, Members* m) {
  const Tensor off = j.offsets().HostContiguous();
  const int64_t* o = off.data<int64_t>();
  std::vector<int64_t> ends(o + 1, o + 1 + n);
  for (int64_t& e : ends) e += p.value0[b];
  m->row_splits.Put(b, first, BytesOf(ends));
  TK_CHECK(o[n] == p.value0[b + 1] - p.value0[b], kCorrupt, kOp, ": '", in,
           "' changed while it was converted (feature '", Excerpt(key),
           "' holds other values on a second read)");
  const Tensor v = j.values().HostContiguous();
  if (p.dtype != DType::kString) {
    m->values.Put(b, p.value0[b],
                  std::string_view(static_cast<const char*>(v.raw_data()),
                                   static_cast<size_t>(v.NumElements()) * DTypeSize(p.dtype)));
    return;
  }
  const std::string* s = v.data<std::string>();
  std::string joined;
  joined.reserve(static_cast<size_t>(p.byte0[b + 1] - p.byte0[b]));
  std::vector<int64_t> value_ends(static_cast<size_t>(v.NumElements()));
  for (int64_t i = 0; i < v.NumElements(); ++i) {
    joined += s[i];
    value_ends[i] = p.byte0[b] + static_cast<int64_t>(joined.size());
  }
  TK_CHECK(static_cast<int64_t>(joined.size()) == p.byte0[b + 1] - p.byte0[b], kCorrupt, kOp, ": '",
           in, "' changed while it was converted");
  m->values.Put(b, p.byte0[b], joined);
  m->value_splits->Put(b, p.value0[b], BytesOf(value_ends));
}

void ConvertUnguarded(const std::string& in, const std::string& out,
                      const TFRecordOptions& options) {
  TK_CHECK(FormatFromPath(out) == Format::kNpz, kUnsupported, kOp, ": '", out,
           "' is not an .npz; tf.Example features are written as .npz members");
  std::vector<int64_t> record0;
  const std::map<std::string, Plan> plans = PlanFeatures(in, options, &record0);
  const size_t batches = record0.size() - 1;
  AtomicFile file(out);
  ZipWriter zip(&file);
  ExampleSpec spec;
  std::vector<Members> members = ReserveMembers(plans, record0.back(), batches, &zip, &file, &spec);
  // Pass 2: each batch parsed and its pieces written at their places.
  RecordBatches batch(in, options);
  for (size_t b = 0; b < batches; ++b) {
    const bool more = batch.Next();
    TK_CHECK(more && batch.size() == record0[b + 1] - record0[b], kCorrupt, kOp, ": '", in,
             "' changed while it was converted (its records differ between two reads)");
    InBatch(kOp, in, record0[b], batch.size(), [&] {
      const ParsedExamples parsed = ParseExamples(batch.records(), spec);
      ParallelFor(0, static_cast<int64_t>(members.size()), 1, [&](int64_t f0, int64_t f1) {
        for (int64_t f = f0; f < f1; ++f) {
          const std::string& key = spec.var_len[f].key;
          PutBatch(in, key, plans.at(key), parsed.var_len[f], b, record0[b], batch.size(),
                   &members[f]);
        }
      });
    });
  }
  for (Members& m : members) {
    m.row_splits.Seal();
    m.values.Seal();
    if (m.value_splits) m.value_splits->Seal();
  }
  zip.Finish();
  file.Commit();
}

}  // namespace

}  // namespace tensorkit::io
