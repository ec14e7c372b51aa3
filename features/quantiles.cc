// QuantileSketch: a deterministic compactor hierarchy (in the line of Manku, Rajagopalan and
// Lindsay's buffers and the KLL sketch, without KLL's random choices), whose error bound is the
// exact sum of what its compactions could have moved (quantiles.h states the guarantee).
#include "tensorkit/features/quantiles.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <utility>

#include "tensorkit/common/error.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/dense/views.h"
#include "tensorkit/features/features_internal.h"

namespace tensorkit {
namespace {

constexpr char kMagic[4] = {'T', 'K', 'Q', 'S'};
constexpr uint32_t kVersion = 1;
constexpr size_t kMaxLevels = 62;
// Values per piece of a chunk in FitQuantileBoundaries.
constexpr int64_t kPiece = int64_t{1}
                           << 20;  // 2^62 values of weight: more than an int64 count holds

// (value, weight) of every item, sorted by value.
std::vector<std::pair<double, int64_t>> SortedItems(
    const std::vector<std::vector<double>>& levels) {
  std::vector<std::pair<double, int64_t>> items;
  for (size_t l = 0; l < levels.size(); ++l) {
    for (double v : levels[l]) items.emplace_back(v, int64_t{1} << l);
  }
  std::sort(items.begin(), items.end());
  return items;
}

template <typename T>
void Put(std::string* out, T v) {
  char buf[sizeof(T)];
  std::memcpy(buf, &v, sizeof(T));  // x86-64 and every supported host are little-endian
  out->append(buf, sizeof(T));
}

// Reads the bytes of a serialised sketch in sequence; running past the end is kCorrupt.
struct Reader {
  const std::string& bytes;
  size_t pos = 0;
  template <typename T>
  T Get() {
    TK_CHECK(bytes.size() - pos >= sizeof(T), kCorrupt,
             "QuantileSketch::FromBytes: the bytes end at ", bytes.size(),
             " inside a field at offset ", pos, "; they are truncated");
    T v;
    std::memcpy(&v, bytes.data() + pos, sizeof(T));
    pos += sizeof(T);
    return v;
  }
};

void CheckCapacity(int64_t capacity, const char* op) {
  TK_CHECK(capacity >= 8 && capacity <= (1 << 24) && capacity % 2 == 0, kInvalidArgument, op,
           ": capacity ", capacity, " must be an even number in [8, 16777216]");
}

}  // namespace

QuantileSketch::QuantileSketch(int capacity) : capacity_(capacity) {
  CheckCapacity(capacity, "QuantileSketch");
  levels_.emplace_back();
  parity_.push_back(0);
}

void QuantileSketch::Add(double value) {
  if (std::isnan(value)) return;
  levels_[0].push_back(value);
  ++n_;
  if (levels_[0].size() >= static_cast<size_t>(capacity_)) Compress();
}

void QuantileSketch::Add(const Tensor& values) {
  const char* op = "QuantileSketch::Add";
  TK_CHECK(values.defined(), kInvalidArgument, op, ": values is an undefined tensor");
  features_internal::CheckOnCpu(values, "values", op);
  const Tensor in = values.HostContiguous();
  Dispatch<Bit(DType::kInt32) | Bit(DType::kInt64) | Bit(DType::kFloat32) | Bit(DType::kFloat64)>(
      in.dtype(), op, [&]<typename T>() {
        const T* v = in.data<T>();
        const int64_t n = in.NumElements();
        for (int64_t i = 0; i < n; ++i) Add(static_cast<double>(v[i]));
      });
}

void QuantileSketch::CompactLevel(size_t l) {
  if (l + 1 == levels_.size()) {
    TK_CHECK(levels_.size() < kMaxLevels, kOutOfRange, "QuantileSketch: more than 2^", kMaxLevels,
             " values");
    levels_.emplace_back();
    parity_.push_back(0);
  }
  std::vector<double>& level = levels_[l];
  if (l == 0) std::sort(level.begin(), level.end());
  // An odd item out (the largest) stays behind, so the weights still add up to n.
  const size_t m = level.size() & ~size_t{1};
  std::vector<double> up;
  up.reserve(m / 2);
  for (size_t i = parity_[l]; i < m; i += 2) up.push_back(level[i]);
  parity_[l] ^= 1;
  error_ += int64_t{1} << l;
  const double held = level.back();
  const bool odd = level.size() % 2 == 1;
  level.clear();
  if (odd) level.push_back(held);
  std::vector<double>& next = levels_[l + 1];
  const size_t mid = next.size();
  next.insert(next.end(), up.begin(), up.end());
  std::inplace_merge(next.begin(), next.begin() + static_cast<std::ptrdiff_t>(mid), next.end());
}

void QuantileSketch::Compress() {
  for (size_t l = 0; l < levels_.size(); ++l) {
    if (levels_[l].size() >= static_cast<size_t>(capacity_)) CompactLevel(l);
  }
}

void QuantileSketch::Merge(const QuantileSketch& other) {
  TK_CHECK(other.capacity_ == capacity_, kInvalidArgument, "QuantileSketch::Merge: capacities ",
           capacity_, " and ", other.capacity_, " differ; sketches to merge need the same one");
  if (&other == this) {
    const QuantileSketch copy = other;
    Merge(copy);
    return;
  }
  while (levels_.size() < other.levels_.size()) {
    levels_.emplace_back();
    parity_.push_back(0);
  }
  for (size_t l = 0; l < other.levels_.size(); ++l) {
    std::vector<double>& mine = levels_[l];
    const size_t mid = mine.size();
    mine.insert(mine.end(), other.levels_[l].begin(), other.levels_[l].end());
    if (l > 0) {
      std::inplace_merge(mine.begin(), mine.begin() + static_cast<std::ptrdiff_t>(mid), mine.end());
    }
  }
  n_ += other.n_;
  error_ += other.error_;
  Compress();
}

double QuantileSketch::Quantile(double q) const {
  TK_CHECK(q >= 0 && q <= 1, kInvalidArgument, "QuantileSketch::Quantile: q = ", q,
           " must be in [0, 1]");
  TK_CHECK(n_ > 0, kInvalidArgument, "QuantileSketch::Quantile: the sketch is empty");
  const std::vector<std::pair<double, int64_t>> items = SortedItems(levels_);
  const double target = q * static_cast<double>(n_);
  int64_t cum = 0;
  for (const auto& [v, w] : items) {
    cum += w;
    if (static_cast<double>(cum) >= target) return v;
  }
  return items.back().first;
}

std::vector<float> QuantileSketch::Boundaries(int num_buckets) const {
  TK_CHECK(num_buckets >= 1, kInvalidArgument, "QuantileSketch::Boundaries: num_buckets ",
           num_buckets, " must be at least 1");
  std::vector<float> out;
  if (n_ == 0) return out;
  const std::vector<std::pair<double, int64_t>> items = SortedItems(levels_);
  // Item j is the quantile at i / num_buckets when it is the first whose running weight reaches
  // i * n / num_buckets, compared as cum * num_buckets >= i * n in 128 bits (exact).
  using U = unsigned __int128;
  size_t j = 0;
  U cum = static_cast<U>(items[0].second);
  for (int i = 1; i < num_buckets; ++i) {
    const U target = static_cast<U>(i) * static_cast<U>(n_);
    while (cum * static_cast<U>(num_buckets) < target && j + 1 < items.size()) {
      ++j;
      cum += static_cast<U>(items[j].second);
    }
    const float b = static_cast<float>(items[j].first);
    if (out.empty() || out.back() < b) out.push_back(b);
  }
  return out;
}

std::string QuantileSketch::ToBytes() const {
  std::string out(kMagic, sizeof(kMagic));
  Put<uint32_t>(&out, kVersion);
  Put<uint32_t>(&out, static_cast<uint32_t>(capacity_));
  Put<int64_t>(&out, n_);
  Put<int64_t>(&out, error_);
  Put<uint32_t>(&out, static_cast<uint32_t>(levels_.size()));
  for (size_t l = 0; l < levels_.size(); ++l) {
    Put<uint8_t>(&out, parity_[l]);
    Put<uint64_t>(&out, levels_[l].size());
    for (double v : levels_[l]) Put<double>(&out, v);
  }
  return out;
}

QuantileSketch QuantileSketch::FromBytes(const std::string& bytes) {
  const char* op = "QuantileSketch::FromBytes";
  TK_CHECK(bytes.size() >= sizeof(kMagic) && std::memcmp(bytes.data(), kMagic, 4) == 0, kCorrupt,
           op, ": the bytes do not start with \"TKQS\"; they are not a QuantileSketch");
  Reader r{bytes, sizeof(kMagic)};
  const uint32_t version = r.Get<uint32_t>();
  TK_CHECK(version == kVersion, kCorrupt, op, ": version ", version, " is not supported (only ",
           kVersion, ")");
  const uint32_t capacity = r.Get<uint32_t>();
  TK_CHECK(capacity >= 8 && capacity <= (1u << 24) && capacity % 2 == 0, kCorrupt, op,
           ": capacity ", capacity, " is not an even number in [8, 16777216]");
  QuantileSketch s(static_cast<int>(capacity));
  s.n_ = r.Get<int64_t>();
  s.error_ = r.Get<int64_t>();
  TK_CHECK(s.n_ >= 0 && s.error_ >= 0, kCorrupt, op, ": count ", s.n_, " or error bound ", s.error_,
           " is negative");
  const uint32_t num_levels = r.Get<uint32_t>();
  TK_CHECK(num_levels >= 1 && num_levels <= kMaxLevels, kCorrupt, op, ": ", num_levels,
           " levels; a sketch has 1 to ", kMaxLevels);
  s.levels_.assign(num_levels, {});
  s.parity_.assign(num_levels, 0);
  int64_t weight = 0;
  for (uint32_t l = 0; l < num_levels; ++l) {
    s.parity_[l] = r.Get<uint8_t>();
    TK_CHECK(s.parity_[l] <= 1, kCorrupt, op, ": level ", l, " has parity ", +s.parity_[l]);
    const uint64_t size = r.Get<uint64_t>();
    TK_CHECK(size <= (bytes.size() - r.pos) / sizeof(double), kCorrupt, op, ": level ", l,
             " claims ", size, " items but only ", bytes.size() - r.pos, " bytes follow");
    std::vector<double>& level = s.levels_[l];
    level.resize(size);
    for (uint64_t i = 0; i < size; ++i) {
      level[i] = r.Get<double>();
      TK_CHECK(!std::isnan(level[i]), kCorrupt, op, ": item ", i, " of level ", l, " is NaN");
      TK_CHECK(l == 0 || i == 0 || !(level[i] < level[i - 1]), kCorrupt, op, ": level ", l,
               " is not sorted at item ", i);
    }
    TK_CHECK(size <= static_cast<uint64_t>((INT64_MAX - weight) >> l), kCorrupt, op,
             ": the weights of the levels overflow");
    weight += static_cast<int64_t>(size) << l;
  }
  TK_CHECK(weight == s.n_, kCorrupt, op, ": the items weigh ", weight, " but the count is ", s.n_);
  TK_CHECK(r.pos == bytes.size(), kCorrupt, op, ": ", bytes.size() - r.pos,
           " bytes follow the sketch");
  return s;
}

std::vector<float> FitQuantileBoundaries(const std::vector<Tensor>& chunks, int num_buckets,
                                         int capacity) {
  const char* op = "FitQuantileBoundaries";
  CheckCapacity(capacity, op);
  TK_CHECK(num_buckets >= 1, kInvalidArgument, op, ": num_buckets ", num_buckets,
           " must be at least 1");
  return features_internal::ReportingAllocationFailure(op, [&] {
    // Fixed pieces of every chunk (never cut by the thread count), one sketch each, built in
    // parallel and merged in sequence: the same sketch at any thread count.
    std::vector<Tensor> pieces;
    for (size_t i = 0; i < chunks.size(); ++i) {
      const Tensor& c = chunks[i];
      TK_CHECK(c.defined(), kInvalidArgument, op, ": chunk ", i, " is undefined");
      features_internal::CheckOnCpu(c, "a chunk", op);
      const int64_t n = c.NumElements();
      const std::optional<Tensor> flat = View(c.HostContiguous(), {n});
      TK_INTERNAL_CHECK(flat.has_value());
      // The first piece is pushed even when empty, so that an empty chunk's dtype is checked.
      pieces.push_back(Slice(*flat, 0, 0, std::min(n, kPiece)));
      for (int64_t b = kPiece; b < n; b += kPiece) {
        pieces.push_back(Slice(*flat, 0, b, std::min(n, b + kPiece)));
      }
    }
    std::vector<QuantileSketch> sketches(pieces.size(), QuantileSketch(capacity));
    ParallelFor(0, static_cast<int64_t>(pieces.size()), 1, [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p) sketches[p].Add(pieces[p]);
    });
    QuantileSketch all(capacity);
    for (const QuantileSketch& s : sketches) all.Merge(s);
    return all.Boundaries(num_buckets);
  });
}

}  // namespace tensorkit
